"""``microagg check``: verify k-anonymity, l-diversity and t-closeness of a table (exit 0
holds, 1 violated)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from microagg.cli.app import command, out
from microagg.cli.common import (
    DECIMAL,
    ENGINE_HELP,
    READS,
    SCHEDULER_HELP,
    STORAGE_OPTION_HELP,
    THOUSANDS,
    WORKERS_HELP,
    engine_is_dask,
    load,
    names,
    print_json,
    schema_of,
)

if TYPE_CHECKING:
    from microagg.evaluation.check import TableCheck


@command("check")
def check(
    input: Path = typer.Argument(..., metavar="IN", help=f"Table to verify ({READS})."),
    k: int | None = typer.Option(None, "--k", help="Required smallest equivalence class."),
    quasi: str | None = typer.Option(None, "--quasi", help="Quasi-identifiers, comma-separated "
                                     "(default: the schema's, else every column but the "
                                     "confidential ones)."),
    l: float | None = typer.Option(None, "--l", help="Smallest l-diversity of --sensitive "  # noqa: E741
                                   "in every record's class."),
    sensitive: str | None = typer.Option(None, "--sensitive",
                                         help="Sensitive attribute for --l."),
    l_kind: str | None = typer.Option(None, "--l-kind", help="distinct (default) | entropy | "
                                      "recursive l-diversity."),
    l_c: float | None = typer.Option(None, "--l-c", help="The c of recursive (c, l)-"
                                     "diversity (default 2)."),
    t: float | None = typer.Option(None, "--t", help="Largest allowed EMD (t-closeness)."),
    confidential: str | None = typer.Option(None, "--confidential",
                                            help="Confidential attribute(s) for --t."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    distance: str | None = typer.Option(None, "--distance",
                                        help="EMD ground distance of nominal confidential "
                                        "attributes: equal (default) or hierarchical (on "
                                        "the schema's taxonomy)."),
    drop_incomplete: bool = typer.Option(False, "--drop-incomplete",
                                         help="Drop rows with a missing value first."),
    missing: str = typer.Option("matches-any", "--missing",
                                help="What a missing quasi-identifier value matches: "
                                "matches-any (any value, sdcMicro's alpha = 1; default) | "
                                "category (only another missing value)."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP + " It checks "
                               "k-anonymity, l-diversity and t-closeness (the "
                               "hierarchical distance on one machine only)."),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    storage_option: list[str] | None = typer.Option(None, "--storage-option",
                                                    help=STORAGE_OPTION_HELP),
) -> None:
    """Verify k-anonymity, l-diversity and/or t-closeness of a table (exit 0 holds, 1
    violated)."""
    from microagg.evaluation.check import check_request, check_table

    confidential_names = names(confidential, "--confidential") or []
    check_request(k=k, t=t, confidential=confidential_names, distance=distance, l=l,
                  sensitive=sensitive, l_kind=l_kind, l_c=l_c)
    if engine_is_dask(engine, scheduler, workers, storage=storage_option,
                      drop_incomplete=drop_incomplete, decimal=decimal, thousands=thousands):
        result = _check_at_scale(input, k, names(quasi, "--quasi"), schema, missing,
                                 scheduler, workers, storage_option or [],
                                 {"l": l, "sensitive": sensitive, "l_kind": l_kind,
                                  "l_c": l_c, "t": t, "confidential": confidential_names,
                                  "distance": distance})
    else:
        frame, schema_obj = load(input, schema, decimal, thousands)
        result = check_table(frame, schema=schema_obj, k=k, quasi=names(quasi, "--quasi"),
                             t=t, confidential=confidential_names, distance=distance,
                             drop_incomplete=drop_incomplete, l=l, sensitive=sensitive,
                             l_kind=l_kind, l_c=l_c, missing=missing)
    if json_out:
        print_json(result.to_dict())
    else:
        for line in _lines(result):
            out.print(line)
    if not result.holds:
        raise typer.Exit(code=1)


def _check_at_scale(input: Path, k: int | None, quasi: list[str] | None, schema: Path | None,
                    missing: str, scheduler: str | None, workers: int | None,
                    storage: list[str], models: dict[str, Any]) -> TableCheck:
    """k-anonymity, l-diversity and t-closeness (``models``: l, sensitive, l_kind, l_c, t,
    confidential, distance) on the Dask engine (:mod:`microagg.at_scale.check`); the
    quasi-identifiers are ``quasi``, else the schema's, else every column but the sensitive
    and confidential ones."""
    from microagg.at_scale.check import check_at_scale
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import open_dataset
    from microagg.at_scale.storage import parse_storage_options

    dataset = open_dataset(input, storage_options=parse_storage_options(storage))
    declared = schema_of(schema)
    chosen = quasi or (list(declared.quasi_identifiers) if declared is not None else [])
    others = {models["sensitive"], *models["confidential"]}
    chosen = chosen or [c for c in dataset.columns if c not in others]
    with dask_client(scheduler, workers) as client:
        return check_at_scale(client, dataset, chosen, k, missing, schema=declared, **models)


def _lines(result: TableCheck) -> list[str]:
    """The check's result as the command prints it, one line per model and attribute."""
    from microagg.core.frequencies import all_missing_note

    lines = []
    missing_note = ""
    if result.missing_values:
        rule = ("matches any value" if result.missing.value == "matches-any"
                else "is a category of its own")
        missing_note = (f" (a missing value {rule}: "
                        + ", ".join(f"{c} {n:,}" for c, n in result.missing_values.items()) + ")")
    if result.k_anonymity is not None:
        k, report = result.k_anonymity.k, result.k_anonymity.report
        lines.append(f"k-anonymity over {', '.join(result.quasi_identifiers)}: smallest class "
                     f"{report.smallest_class:,} of {report.classes:,} classes "
                     f"({report.records:,} records): "
                     f"{'holds' if result.k_anonymity.holds else 'VIOLATED'} for k = {k}"
                     f"{missing_note}")
        if report.all_missing and result.missing.value == "matches-any":
            lines.append("  " + all_missing_note(report.all_missing, "quasi-identifiers"))
    if result.l_diversity is not None:
        check_l = result.l_diversity
        kind = check_l.kind.value + (f" (c = {check_l.report.c:g})"
                                     if check_l.kind.value == "recursive" else "")
        lines.append(f"{kind} l-diversity of {check_l.report.attribute}: smallest "
                     f"{check_l.smallest:.6g} ({check_l.violations:,} records below l): "
                     f"{'holds' if check_l.holds else 'VIOLATED'} for l = {check_l.l:g}")
    for check in result.t_closeness or []:
        report_t = check.report
        lines.append(f"t-closeness of {report_t.attribute} ({report_t.distance.value} EMD): "
                     f"largest class EMD {report_t.t:.6g}: "
                     f"{'holds' if check.holds else 'VIOLATED'} for t = {check.t:g}"
                     f"{'' if result.k_anonymity is not None else missing_note}")
    return lines
