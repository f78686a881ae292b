"""``microagg mask``: masking of numeric columns without an ex-ante guarantee (paper 003)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import out
from microagg.cli.common import (
    DECIMAL,
    READS,
    THOUSANDS,
    WRITES,
    names,
    outputs,
    print_json,
    read_input,
    schema_of,
    sources,
    write_as,
)
from microagg.cli.methods import family_command
from microagg.errors import ParameterError
from microagg.release.methods import Family, family, lookup

__all__ = ["mask"]

METHODS_HELP = " | ".join(f"{m.name} (--{m.parameter})"  # type: ignore[attr-defined]
                          for m in family(Family.MASKING))


@family_command(Family.MASKING, short_help="Mask numeric columns: correlated noise, "
                "multiplicative noise, rank swapping (paper 003).")
def mask(
    input: Path = typer.Argument(..., metavar="IN", help=f"Table to mask ({READS})."),
    output: Path = typer.Option(..., "-o", "--output", help=f"Masked table ({WRITES})."),
    method: str = typer.Option(..., "--method", help=METHODS_HELP),
    param: float | None = typer.Option(None, "--param", help="The method's one parameter, "
                                       "whatever its name (an older spelling of --gamma, --s "
                                       "or --fraction)."),
    columns: str | None = typer.Option(None, "--columns", help="The columns to mask, "
                                       "comma-separated (default: the schema's "
                                       "quasi-identifiers, else every numeric non-identifier "
                                       "column)."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    seed: int | None = typer.Option(None, "--seed", help="Seed (default: OS entropy)."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Mask numeric columns with a method that has no ex-ante guarantee (measure its risk)."""
    from microagg.data.formats import carry_labels
    from microagg.release.functions import make_method

    options = dict(options or {})
    if param is not None:
        own = lookup(Family.MASKING, method).parameter  # type: ignore[attr-defined]
        if options.get(own) is not None:
            raise ParameterError("param", f"and `{own}` name the same parameter: give one")
        options[own] = param
    made: Any = make_method(Family.MASKING, method, options)
    schema_obj = schema_of(schema)
    with outputs([output], sources(input, schema, schema=schema_obj)) as files:
        frame = read_input(input, decimal, thousands)
        release = made.release(frame, columns=names(columns, "--columns"),
                               schema=schema_obj, roles=roles, rng=seed)
        write_as(carry_labels(frame, release.frame), files[output], output)
    report = release.report
    if json_out:
        print_json(report.to_dict())
        return
    stated = ", ".join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
                       for name, value in report.parameters.items() if value is not None)
    out.print(f"{report.method} {stated}: {report.records:,} records, columns "
              f"{', '.join(report.columns)} -> {output}")
    if report.released_unchanged:
        out.print(f"  written unchanged: {', '.join(report.released_unchanged)}")
    out.print(f"  guarantee: {report.guarantee}")
