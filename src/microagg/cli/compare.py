"""``microagg compare``: methods compared at equal risk or utility (paper 003)."""

from __future__ import annotations

from pathlib import Path

import typer

from microagg.cli.app import app, out
from microagg.cli.common import (
    DECIMAL,
    READS,
    THOUSANDS,
    compile_notice,
    names,
    outputs,
    print_json,
    read_input,
    schema_of,
    sources,
    steps,
)
from microagg.errors import InputError


@app.command(short_help="Compare methods at equal risk (or equal utility) and rank them "
                        "(paper 003).")
def compare(
    input: Path = typer.Argument(..., metavar="IN", help=f"Original table ({READS})."),
    target_risk: str | None = typer.Option(None, "--target-risk", help="Risk to reach (003 "
                                           "eq. 2, larger = safer): a number, or METHOD=VALUE "
                                           "such as mdav=5 (the risk of MDAV with k = 5)."),
    target_utility: str | None = typer.Option(None, "--target-utility", help="Dual: the EMD "
                                              "to reach, a number or METHOD=VALUE; methods "
                                              "are then ranked by risk."),
    methods: str | None = typer.Option(None, "--methods", help="Comma-separated: mdav, "
                                       "individual-ranking, correlated-noise, "
                                       "multiplicative-noise, rank-swap, dp-laplace, "
                                       "dp-individual-ranking (default: the first, and the "
                                       "three masking methods: 003's four)."),
    columns: str | None = typer.Option(None, "--columns", help="Columns compared (default: "
                                       "the schema's quasi-identifiers, else every numeric "
                                       "column)."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    seeds: int = typer.Option(10, "--seeds", help="Runs of a randomized method per value."),
    tolerance: float = typer.Option(0.0025, "--tolerance", help="Relative tolerance of a "
                                    "match: the 95 % interval must lie in target*(1 +- tol)."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random draw."),
    risk_scale: str = typer.Option("ranks", "--risk-scale", help="ranks | unit."),
    risk_aggregate: str = typer.Option("mean-of-logs", "--risk-aggregate",
                                       help="mean-of-logs | log-of-mean | printed."),
    report: Path | None = typer.Option(None, "--report", help="Write an HTML report."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Calibrate each method to the same risk (or utility), then rank by utility (or risk)."""
    from microagg.evaluation.compare import compare as run
    from microagg.evaluation.comparison import RAW_DATA_NOTICE
    from microagg.options import MatchStatus

    if report is not None and report.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--report must name an .html file, got '{report}'")
    schema_obj = schema_of(schema)
    with outputs([report], sources(input, schema, schema=schema_obj)) as files:
        frame = read_input(input, decimal, thousands)
        with compile_notice(), steps("calibrating") as progress:
            result = run(frame, target_risk=target_risk, target_utility=target_utility,
                         methods=names(methods, "--methods"),
                         columns=names(columns, "--columns"), schema=schema_obj, seeds=seeds,
                         tolerance=tolerance, seed=seed, scale=risk_scale,
                         aggregate=risk_aggregate, progress=progress, source=input.name)
        if report is not None:
            from microagg.evaluation.html import comparison_html

            files[report].write_text(comparison_html(result), encoding="utf-8")
    if json_out:
        print_json(result.to_dict())
        return
    held = result.target.value
    out.print(f"note: {RAW_DATA_NOTICE}")
    out.print(f"target {held} {result.target_value:.6g} ({result.target_source}), "
              f"tolerance ± {result.tolerance:.3g}")
    for m in result.methods:
        status = {MatchStatus.MATCHED: "matched",
                  MatchStatus.EXCEEDS: f"ranked at its closest value: {m.reason}"}.get(
            m.status, f"left out: {m.reason}")
        setting = f"{m.parameter} = {m.value:.4g}"
        out.print(f"  {m.method.value:22s} {setting:20s} risk {m.risk:<8.5g} "
                  f"EMD {m.utility.emd:<8.4g} ± {m.utility.emd_bound:<8.2g} {status}")
    out.print(f"ranking: {', '.join(m.value for m in result.ranking) or '(none ranked)'}")
    out.print(result.recommendation())
    if report is not None:
        out.print(f"report: {report}")
