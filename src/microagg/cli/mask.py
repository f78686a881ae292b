"""``microagg mask``: masking of numeric columns without an ex-ante guarantee (paper 003)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from microagg.cli.common import (
    DECIMAL,
    ENGINE_HELP,
    READS,
    REPORT_HELP,
    REPORT_KIND_HELP,
    SCHEDULER_HELP,
    STORAGE_OPTION_HELP,
    THOUSANDS,
    WORKERS_HELP,
    WRITES,
    engine_is_dask,
    names,
    write_release,
)
from microagg.cli.keys import release_at_scale, show_masking
from microagg.cli.methods import family_command, option
from microagg.errors import ParameterError
from microagg.release.methods import Family, family, lookup

__all__ = ["mask"]

METHODS_HELP = " | ".join(f"{m.name} (--{m.parameter})"  # type: ignore[attr-defined]
                          for m in family(Family.MASKING))
ENGINE = typer.Option("local", "--engine", help=ENGINE_HELP + " correlated-noise and "
                      "multiplicative-noise take the means and covariance of the whole data "
                      "set from the cluster; each partition draws with a generator seeded by "
                      "the seed and its index (the draws differ from one machine's, their "
                      "law does not). top-bottom-coding runs as topcode does; rank-swap runs "
                      "on one machine only.")


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
    engine: str = ENGINE,
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    storage_option: list[str] | None = typer.Option(None, "--storage-option",
                                                    help=STORAGE_OPTION_HELP),
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
    if engine_is_dask(engine, scheduler, workers, storage=storage_option, roles=roles or None,
                      decimal=decimal, thousands=thousands, report=report,
                      report_kind=None if report_kind == "internal" else report_kind):
        release_at_scale(made, input=input, output=output, schema=schema,
                         keys=names(columns, "--columns"), json_out=json_out,
                         scheduler=scheduler, workers=workers, storage=storage_option or [],
                         seed=seed)
        return
    write_release(made, input=input, schema_path=schema, output=output, labels_out=None,
                  title=made.name, json_out=json_out, show=show_masking, report=report,
                  report_kind=report_kind, with_progress=False, decimal=decimal,
                  thousands=thousands, columns=names(columns, "--columns"), roles=roles,
                  rng=seed)
