"""``microagg mask``: masking of numeric columns without an ex-ante guarantee (paper 003)."""

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
    WRITES,
    names,
    write_release,
)
from microagg.cli.methods import family_command, option
from microagg.errors import ParameterError
from microagg.release.methods import Family, family, lookup

__all__ = ["mask"]

METHODS_HELP = " | ".join(f"{m.name} (--{m.parameter})"  # type: ignore[attr-defined]
                          for m in family(Family.MASKING))


@family_command(Family.MASKING)
def mask(
    input: Path = typer.Argument(..., metavar="IN", help=f"Table to mask ({READS})."),
    output: Path = typer.Option(..., "-o", "--output", help=f"Masked table ({WRITES}); its "
                                "report goes to OUTPUT.report.json."),
    method: str = typer.Option(..., "--method", help=METHODS_HELP),
    param: float | None = typer.Option(None, "--param", help="The method's one parameter, "
                                       "whatever its name (an older spelling of --gamma, --s "
                                       "or --fraction)."),
    columns: str | None = option("columns", "mask"),
    schema: Path | None = option("schema", "mask"),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    seed: int | None = option("seed", "mask"),
    report: Path | None = typer.Option(None, "--report", help=REPORT_HELP),
    report_kind: str = typer.Option("internal", "--report-kind", help=REPORT_KIND_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Mask numeric columns with a method that has no ex-ante guarantee (measure its risk)."""
    from microagg.release.functions import make_method

    options = dict(options or {})
    if param is not None:
        own = lookup(Family.MASKING, method).parameter  # type: ignore[attr-defined]
        if options.get(own) is not None:
            raise ParameterError("param", f"and `{own}` name the same parameter: give one")
        options[own] = param
    made: Any = make_method(Family.MASKING, method, options)
    write_release(made, input=input, schema_path=schema, output=output, labels_out=None,
                  title=made.name, json_out=json_out, show=_print_report, report=report,
                  report_kind=report_kind, with_progress=False, decimal=decimal,
                  thousands=thousands, columns=names(columns, "--columns"), roles=roles,
                  rng=seed)


def _print_report(report: Any, output: Path) -> None:
    stated = ", ".join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
                       for name, value in report.parameters.items() if value is not None)
    out.print(f"{report.method} {stated}: {report.records:,} records, columns "
              f"{', '.join(report.columns)} -> {output}")
    if report.released_unchanged:
        out.print(f"  written unchanged: {', '.join(report.released_unchanged)}")
    out.print(f"  guarantee: {report.guarantee}")
