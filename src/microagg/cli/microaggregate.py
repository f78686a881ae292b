"""``microagg microaggregate``: k-anonymity by microaggregation (on one machine, or block MDAV
on a Dask cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import out
from microagg.cli.common import (
    DECIMAL,
    ENGINE_HELP,
    READS,
    REPORT_HELP,
    REPORT_KIND_HELP,
    SCHEDULER_HELP,
    STORAGE_OPTION_HELP,
    THOUSANDS,
    THREADS_HELP,
    WORKERS_HELP,
    WRITES,
    clusters_text,
    engine_is_dask,
    names,
    print_json,
    print_notes,
    progress_bar,
    write_release,
    write_sidecar,
)
from microagg.cli.methods import family_command, option
from microagg.errors import ParameterError
from microagg.release.methods import Family, family

__all__ = ["microaggregate"]

METHODS_HELP = " | ".join(m.name for m in family(Family.K_ANONYMITY))


@family_command(Family.K_ANONYMITY)
def microaggregate(
    input: Path = typer.Argument(..., metavar="IN", help=f"Table to protect ({READS})."),
    output: Path = typer.Option(..., "-o", "--output", help=f"Masked table ({WRITES}); its "
                                "report goes to OUTPUT.report.json."),
    method: str = typer.Option("mdav", "--method", help=METHODS_HELP),
    columns: str | None = option("columns", "microaggregate"),
    schema: Path | None = option("schema", "microaggregate"),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    labels_out: Path | None = typer.Option(None, "--labels-out",
                                           help="Also write the cluster of each row."),
    drop_incomplete: bool = option("drop_incomplete", "microaggregate"),
    clamp: bool = option("clamp", "microaggregate"),
    round_values: bool = typer.Option(True, "--round/--no-round",
                                      help="Round masked numbers to their column's precision "
                                           "in the input (default), or keep exact means."),
    threads: int | None = typer.Option(None, "--threads", help=THREADS_HELP),
    report: Path | None = typer.Option(None, "--report", help=REPORT_HELP),
    report_kind: str = typer.Option("internal", "--report-kind", help=REPORT_KIND_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP + " It runs block MDAV."),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    block_size: int | None = typer.Option(None, "--block-size", help="With --engine dask: "
                                          "records per block of block MDAV (default 600000)."),
    storage_option: list[str] | None = typer.Option(None, "--storage-option",
                                                    help=STORAGE_OPTION_HELP),
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Replace quasi-identifiers by cluster means (k-anonymity by microaggregation)."""
    from microagg.release.functions import make_method

    made: Any = make_method(Family.K_ANONYMITY, method, options or {})
    if engine_is_dask(engine, scheduler, workers, storage=storage_option, schema=schema,
                      labels_out=labels_out,
                      drop_incomplete=drop_incomplete, clamp=clamp, threads=threads,
                      roles=roles or None, no_round=not round_values,
                      decimal=decimal, thousands=thousands, report=report):
        _block_mdav(input, output, made, columns=names(columns, "--columns"),
                    block_size=block_size, scheduler=scheduler, workers=workers,
                    json_out=json_out, storage=storage_option or [])
        return
    if block_size is not None:
        raise ParameterError("block_size", "applies to `engine` dask only")
    write_release(made, input=input, schema_path=schema, output=output,
                  labels_out=labels_out, title=f"{made.name} k={made.k}",
                  columns=names(columns, "--columns"),
                  drop_incomplete=drop_incomplete, clamp=clamp, threads=threads,
                  roles=roles, round_values=round_values, json_out=json_out,
                  show=_print_report, decimal=decimal, thousands=thousands, report=report,
                  report_kind=report_kind)


def _print_report(report: Any, output: Path) -> None:
    clusters = report.clusters
    out.print(f"{report.method} k={report.k}: {report.records:,} records, "
              f"columns {', '.join(report.columns)} -> {output}")
    if "count" in clusters:
        out.print(f"  {clusters_text(clusters, report.k_anonymity['classes'])}")
    for label, anonymity, columns_text in (
            ("the masked columns", report.k_anonymity, ", ".join(report.columns)),
            ("the table as written", report.k_anonymity_as_written, "all written columns")):
        verdict = "holds" if anonymity["holds"] else "does NOT hold"
        out.print(f"  k-anonymity over {label} ({columns_text}): smallest class "
                  f"{anonymity['smallest_class']:,} ({verdict})")
        if not report.released_unchanged:
            break
    for name, concepts in report.generalized_categories.items():
        out.print(f"  {name}: generalized to inner concepts {', '.join(concepts)}")
    print_notes(report)


def _block_mdav(input: Path, output: Path, method: Any, *, columns: list[str] | None,
                block_size: int | None, scheduler: str | None, workers: int | None,
                json_out: bool, storage: list[str]) -> None:
    from microagg.at_scale.anonymize import block_microaggregate
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import check_dataset_output, open_dataset
    from microagg.at_scale.storage import parse_storage_options
    from microagg.data.io import json_text
    from microagg.partition.blocks import DEFAULT_BLOCK_SIZE, check_block_size
    from microagg.release.reports.sidecar import block_record

    refusal = method.at_scale_refusal()
    if refusal:
        raise ParameterError("engine", f"dask cannot run {method.name}: {refusal}")
    block_size = check_block_size(DEFAULT_BLOCK_SIZE if block_size is None else block_size,
                                  method.k)
    options = parse_storage_options(storage)
    target = check_dataset_output(output, input, options)
    dataset = open_dataset(input, storage_options=options)
    with dask_client(scheduler, workers) as client, \
            progress_bar(dataset.n, f"block MDAV k={method.k}") as progress:
        report = block_microaggregate(client, dataset, target, k=method.k, columns=columns,
                                      block_size=block_size, progress=progress)
    sidecar = write_sidecar(target, json_text(block_record(method, report,
                                                           Path(dataset.source)).to_dict()))
    if json_out:
        print_json(report.to_dict())
        return
    out.print(f"block MDAV k={method.k}, blocks of at most {report.block_size:,} records: "
              f"{report.records:,} records in {report.partitions} partitions, columns "
              f"{', '.join(report.columns)} -> {target}")
    out.print(f"  {report.blocks['count']:,} blocks of {report.blocks['smallest']:,} to "
              f"{report.blocks['largest']:,} records; {report.clusters['count']:,} clusters of "
              f"{report.clusters['smallest']} to {report.clusters['largest']} records")
    out.print(f"  SSE/SST {report.sse / report.sst:.4%} (z-scores)")
    for note in report.notes:
        out.print(f"  note: {note}")
    out.print(f"  report: {sidecar}")
