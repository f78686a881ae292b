"""``microagg risk``: the disclosure risk of a table's categorical key variables."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import command, out
from microagg.cli.common import (
    DECIMAL,
    READS,
    SCHEDULER_HELP,
    STORAGE_OPTION_HELP,
    THOUSANDS,
    WORKERS_HELP,
    WRITES,
    compile_notice,
    engine_is_dask,
    load,
    names,
    outputs,
    print_json,
    progress_bar,
    sources,
    write_as,
)
from microagg.errors import InputError
from microagg.risk.registry import computed


class _MeasureOptions:
    """The command's callback: the options of ``base`` and one option per parameter of every
    measure shown from its declaration (:func:`microagg.risk.registry.computed`), read off
    the registry whenever the command is built; their values reach ``base`` as its
    ``**parameters``."""

    def __init__(self, base: Callable[..., None]) -> None:
        functools.update_wrapper(self, base)
        self._base = base

    @property
    def __signature__(self) -> inspect.Signature:
        own = inspect.signature(self._base, eval_str=True)
        fixed = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
        added = [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY,
                                   default=typer.Option(None, p.flag, help=p.help),
                                   annotation=p.kind | None)
                 for m in computed() for p in m.parameters]
        return own.replace(parameters=[*fixed, *added])

    def __call__(self, **options: Any) -> None:
        self._base(**options)


@command("risk")
@_MeasureOptions
def risk(
    input: Path = typer.Argument(..., metavar="IN", help=f"Table to measure ({READS})."),
    keys: str | None = typer.Option(None, "--keys", help="Key variables (quasi-identifiers), "
                                    "comma-separated (default: the schema's)."),
    weight: str | None = typer.Option(None, "--weight", help="Sampling weight column (at "
                                      "least 1 in every row; default: the schema's)."),
    household: str | None = typer.Option(None, "--household", help="Household identifier "
                                         "column: adds the household risk."),
    sensitive: str | None = typer.Option(None, "--sensitive", help="Sensitive attribute: adds "
                                         "its distinct, entropy and recursive l-diversity."),
    k: list[str] | None = typer.Option(None, "--k", metavar="K", help="Count the records in "
                                       "classes smaller than K too (beside 2, 3 and 5); "
                                       "repeat or separate by commas."),
    missing: str = typer.Option("matches-any", "--missing", help="What a missing key value "
                                "matches: matches-any (any value, sdcMicro's default) | "
                                "category (only another missing value)."),
    dis_fraction: float | None = typer.Option(None, "--dis-fraction", help="Sampling "
                                              "fraction of the SUDA2 DIS score (default "
                                              "0.01, sdcMicro's)."),
    l_c: float | None = typer.Option(None, "--l-c", help="The c of recursive "
                                     "(c, l)-diversity (default 2)."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML): its "
                                       "quasi-identifiers, weight and household roles are "
                                       "the defaults."),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    records_out: Path | None = typer.Option(None, "--records-out", help="Write one row per "
                                            "record, in input order: fk, Fk, risk, "
                                            "[household_risk,] suda_score, dis_score[, "
                                            f"l_distinct, l_entropy, l_recursive] ({WRITES}; "
                                            "with --engine dask a Parquet data set of fk, "
                                            "Fk, risk)."),
    engine: str = typer.Option("local", "--engine", help="local (default) | dask: the "
                               "frequency-based measures (f_k, F_k, risk, violations) of a "
                               "data set (a folder or glob of Parquet or CSV files) by one "
                               "group-by on a Dask cluster."),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    storage_option: list[str] | None = typer.Option(None, "--storage-option",
                                                    help=STORAGE_OPTION_HELP),
    **parameters: Any,
) -> None:
    """Measure the disclosure risk of the categorical key variables of a table: sample and
    population frequencies, individual (Benedetti-Franconi) and household risk, k-anonymity
    violations, SUDA2 scores and l-diversity, as sdcMicro computes them."""
    from microagg.risk import categorical_risk

    extra_k = _ks(k)
    local_only = {p.name: parameters.get(p.name) for m in computed() if not m.at_scale
                  for p in m.parameters}
    if engine_is_dask(engine, scheduler, workers, storage=storage_option, sensitive=sensitive,
                      schema=schema, decimal=decimal, thousands=thousands,
                      dis_fraction=dis_fraction, l_c=l_c, **local_only):
        _risk_at_scale(input, keys=names(keys, "--keys"), weight=weight, missing=missing,
                       k=extra_k, records_out=records_out, scheduler=scheduler,
                       workers=workers, json_out=json_out, parameters=parameters,
                       storage=storage_option or [], household=household)
        return
    with outputs([records_out], sources(input, schema)) as files:
        frame, schema_obj = load(input, schema, decimal, thousands)
        with compile_notice():
            result = categorical_risk(frame, names(keys, "--keys"), weight=weight,
                                      household=household, sensitive=sensitive,
                                      schema=schema_obj, missing=missing, k=extra_k,
                                      dis_fraction=0.01 if dis_fraction is None
                                      else dis_fraction, l_c=2.0 if l_c is None else l_c,
                                      parameters=parameters)
        if records_out is not None:
            write_as(result.records(), files[records_out], records_out, release=False)
    if json_out:
        print_json(result.to_dict())
        return
    for line in lines(result.to_dict()):
        out.print(line)
    if records_out is not None:
        out.print(f"  records: {records_out}")


def _risk_at_scale(source: Path, *, keys: list[str] | None, weight: str | None, missing: str,
                   k: list[int], records_out: Path | None, scheduler: str | None,
                   workers: int | None, json_out: bool, parameters: dict[str, Any],
                   storage: list[str], household: str | None = None) -> None:
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import check_dataset_output, open_dataset
    from microagg.at_scale.risk import risk_at_scale
    from microagg.at_scale.storage import parse_storage_options

    if keys is None:
        raise InputError("--keys is needed with --engine dask")
    options = parse_storage_options(storage)
    target = None if records_out is None else check_dataset_output(records_out, source,
                                                                   options)
    dataset = open_dataset(source, storage_options=options)
    with dask_client(scheduler, workers) as client, \
            progress_bar(dataset.n, "writing the records") as progress:
        result = risk_at_scale(client, dataset, keys, weight=weight, missing=missing, k=k,
                               records_out=target, progress=progress,
                               parameters=parameters, household=household)
    report = result.to_dict()
    if json_out:
        print_json(report)
        return
    for line in lines(report):
        out.print(line)
    if target is not None:
        out.print(f"  records: {target}")


def _ks(values: list[str] | None) -> list[int]:
    """The --k values: whole numbers, repeated or comma-separated."""
    found = []
    for value in values or []:
        for part in value.split(","):
            try:
                found.append(int(part.strip()))
            except ValueError:
                raise InputError(f"--k takes whole numbers, got '{part.strip()}'") from None
    return found


def lines(report: dict[str, Any]) -> list[str]:
    """The measures (the JSON form of :class:`~microagg.risk.CategoricalRisk` or
    :class:`~microagg.at_scale.risk.ScaleRisk`) as the command prints them: a short table."""
    from microagg.core.frequencies import all_missing_note
    from microagg.recipe.risk import percent

    n = report["n"]
    weighted = report["weighted_violations"]
    text = [f"risk of the keys {', '.join(report['keys'])}: {n:,} records"
            + (f", weight {report['weight']}" if report["weight"] else ", no weight")
            + f", missing values {report['missing']}",
            f"  sample uniques                {report['sample_uniques']:,}"
            f" ({_percent(report['sample_uniques'], n)})",
            f"  expected re-identifications   {report['expected_reidentifications']:,.2f}"
            f" ({_percent(report['expected_reidentifications'], n)})",
            f"  global risk (mean)            {percent(report['global_risk'])}",
            f"  largest individual risk       {percent(report['largest_risk'])}"]
    if report.get("all_missing") and report["missing"] == "matches-any":
        text.append("  " + all_missing_note(report["all_missing"]))
    household = report["household_risk"]
    if household is not None:
        expected = household["expected_reidentifications"]
        text.append(f"  household risk ({household['column']}): expected re-identifications "
                    f"{expected:,.2f} ({_percent(expected, n)})")
    text.append("  k    records in classes smaller than k" + ("    weighted (F_k < k)"
                                                              if weighted else ""))
    for q, count in report["violations"].items():
        row = f"  {q:<4s} {count:>10,} ({_percent(count, n)})"
        if weighted is not None:
            row += f"  {weighted[q]:>18,}"
        text.append(row)
    suda = report["suda"]
    if suda is not None:
        text.append(f"  SUDA2: {suda['msus']:,} MSUs in {suda['records_with_msus']:,} records;"
                    f" largest DIS score {suda['largest_dis_score']:.4g} (DIS fraction "
                    f"{suda['dis_fraction']:g})")
        text.append("  % of the SUDA scores in MSUs holding each key (each out of 100 %; an "
                    "MSU of several keys counts for each): " + ", ".join(
                        f"{key} {share:.1f} %"
                        for key, share in report["suda_contributions"].items()))
    diversity = report["l_diversity"]
    if diversity is not None:
        text.append(f"  l-diversity of {diversity['attribute']} (smallest over the records): "
                    f"distinct {diversity['smallest_distinct']:g}, entropy "
                    f"{diversity['smallest_entropy']:.4g}, recursive (c = {diversity['c']:g})"
                    f" {diversity['smallest_recursive']:g}")
    for measure in computed():
        figures = report.get(measure.name)
        if figures is not None:
            text.append(f"  {measure.title}: " + ", ".join(
                f"{f.label} {f.text(figures[f.key])}" for f in measure.figures))
    if report.get("skipped"):
        text.append(f"  not measured with --engine dask: {', '.join(report['skipped'])}")
    return text


def _percent(part: float, whole: int) -> str:
    return f"{100 * part / whole:.2f} %" if whole else "n/a"
