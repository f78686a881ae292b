"""``microagg tclose``: k-anonymous t-closeness (paper 002)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import out
from microagg.cli.common import (
    DECIMAL,
    READS,
    REPORT_HELP,
    REPORT_KIND_HELP,
    THOUSANDS,
    THREADS_HELP,
    WRITES,
    clusters_text,
    names,
    print_notes,
    write_release,
)
from microagg.cli.methods import family_command, option
from microagg.release.methods import Family, family

__all__ = ["tclose"]

METHODS_HELP = " | ".join(f"{m.name}" for m in family(Family.T_CLOSENESS))


@family_command(Family.T_CLOSENESS)
def tclose(
    input: Path = typer.Argument(..., metavar="IN", help=f"Table to protect ({READS})."),
    output: Path = typer.Option(..., "-o", "--output", help=f"Masked table ({WRITES}); its "
                                "report goes to OUTPUT.report.json."),
    method: str = typer.Option("t-closeness-first", "--method",
                               help=METHODS_HELP + " (default t-closeness-first)."),
    quasi: str | None = option("quasi", "tclose"),
    confidential: str | None = option("confidential", "tclose"),
    schema: Path | None = option("schema", "tclose"),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    labels_out: Path | None = typer.Option(None, "--labels-out",
                                           help="Also write the class of each row."),
    drop_incomplete: bool = option("drop_incomplete", "tclose"),
    clamp: bool = option("clamp", "tclose"),
    threads: int | None = typer.Option(None, "--threads", help=THREADS_HELP),
    report: Path | None = typer.Option(None, "--report", help=REPORT_HELP),
    report_kind: str = typer.Option("internal", "--report-kind", help=REPORT_KIND_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Replace quasi-identifiers by class centroids so that every class has at least k
    records and every confidential attribute an EMD of at most t (k-anonymous t-closeness)."""
    from microagg.release.functions import make_method

    made: Any = make_method(Family.T_CLOSENESS, method, options or {})
    write_release(made, input=input, schema_path=schema, output=output,
                  labels_out=labels_out, title=f"{made.name} k={made.k} t={made.t:g}",
                  quasi=names(quasi, "--quasi"),
                  confidential=names(confidential, "--confidential"),
                  drop_incomplete=drop_incomplete, clamp=clamp, threads=threads,
                  roles=roles, json_out=json_out, show=_print_report, decimal=decimal,
                  thousands=thousands, report=report, report_kind=report_kind)


def _print_report(report: Any, output: Path) -> None:
    clusters = report.clusters
    out.print(f"{report.method} k={report.k} t={report.t:g}: {report.records:,} records, "
              f"quasi-identifiers {', '.join(report.quasi_identifiers)} -> {output}")
    if report.effective_k != report.k:
        out.print(f"  cluster size raised to {report.effective_k}, the smallest at which t can "
                  "be met")
    out.print(f"  {clusters_text(clusters, report.k_anonymity['classes'])} (k-anonymity "
              f"{'holds' if report.k_anonymity['holds'] else 'does NOT hold'})")
    for name, value in report.largest_emd.items():
        verdict = "holds" if value <= report.t + 1e-9 else "VIOLATED"
        out.print(f"  {name}: largest class EMD {value:.6g} ({report.distances[name]} "
                  f"distance): t = {report.t:g} {verdict}")
    print_notes(report)
