"""``microagg run``: apply a recipe (the input, its schema and the steps in order) and write
the release, its report and the recipe as run."""

from __future__ import annotations

from pathlib import Path

import typer

from microagg.cli.app import app, out
from microagg.cli.common import REPORT_HELP, REPORT_KIND_HELP, WRITES, check_report, warn
from microagg.errors import InputError

__all__ = ["run"]


@app.command("run", short_help="Apply a recipe: its steps in order, risk after each.")
def run(
    recipe: Path = typer.Argument(..., metavar="RECIPE", help="Recipe file (YAML): the "
                                  "input, its schema and the steps, as `microagg ui` "
                                  "downloads it or OUT.recipe.yaml holds it."),
    output: Path = typer.Option(..., "-o", "--output", help=f"Released table ({WRITES}); "
                                "beside it OUT.report.json (every step, its parameters and "
                                "the risk and utility change it made), OUT.recipe.yaml (the "
                                "recipe as run) and, after a DP step, OUT.privacy.json."),
    input: Path | None = typer.Option(None, "--input", "-i", help="The table to protect, "
                                      "in place of the recipe's input."),
    report: Path | None = typer.Option(None, "--report", help=REPORT_HELP),
    report_kind: str = typer.Option("internal", "--report-kind", help=REPORT_KIND_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Apply the steps of RECIPE in order, measuring the disclosure risk of the key
    variables after each, and write the release with its report and the recipe as run. A
    seeded recipe gives the same table, byte for byte, on the same input."""
    import warnings
    from dataclasses import replace

    from microagg.cli.common import outputs, print_json, sources, steps
    from microagg.data.io import read_table
    from microagg.recipe import Recipe
    from microagg.recipe.write import run_files, write_into

    kind = check_report(report, report_kind)
    made = Recipe.load(recipe)
    if input is not None:
        made = replace(made, input=input)
    if made.input is None:
        raise InputError(f"{recipe}: the recipe names no input: give --input")
    files = run_files(made, output, report)
    read = sources(made.input, recipe, schema=made.schema)
    with outputs(list(files.all), read) as temporaries, steps("recipe") as progress, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = read_table(made.input, **dict(made.read))
        done = made.run(frame, source=made.input, progress=progress)
        result = write_into(done, files, temporaries, kind=kind)
    for warning in dict.fromkeys(str(w.message) for w in caught):
        warn(warning)
    for entry in result.steps:
        for warning in entry.warnings:
            warn(f"step {entry.step} ({entry.method}): {warning}")
    if json_out:
        print_json(result.to_dict())
        return
    _print(result.to_dict(), files.all)


def _print(report: dict, written: list[Path]) -> None:
    before = report["risk_before"]
    out.print(f"input: {before['n']:,} records; keys {', '.join(before['keys']) or 'none'}; "
              f"{_risk(before)}")
    for entry in report["steps"]:
        given = ", ".join(f"{k}={v}" for k, v in {**entry["parameters"],
                                                   **entry["options"]}.items())
        out.print(f"step {entry['step']}: {entry['family']} {entry['method']} ({given}), "
                  f"{entry['seconds']:.1f} s: {entry['records']:,} records; "
                  f"{_risk(entry['risk_after'])}")
        if entry["dp_context"]:
            out.print(f"  {entry['dp_context']}")
        loss = (entry["record"].get("utility") or {}).get("sse_percent")
        if loss is not None:
            out.print(f"  information loss against the step's input: SSE/SST {loss:.2f} %")
    out.print(f"guarantee: {report['guarantee']}")
    out.print(f"wrote {', '.join(str(p) for p in written)}")


def _risk(risk: dict) -> str:
    return (f"global risk {risk['global_risk']:.4f}, expected re-identifications "
            f"{risk['expected_reidentifications']:,.1f}, records in classes < 5: "
            f"{risk['violations']['5']:,}")
