"""``microagg run``: apply a recipe (the input, its schema and the steps in order) and write
the release, its report and the recipe as run.

After a differentially private step, what the command writes and prints beside the release is
public (:mod:`microagg.release.reports.disclosure`): the steps, their parameters, each DP step's
privacy report and the table's guarantee. The owner's figures (the risk before and after each
step, the warnings a step gave about the data) go to ``--owner-report`` and, with
``--owner-notices``, to stderr, only when asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import command, out
from microagg.cli.common import (
    ENGINE_HELP,
    OWNER_NOTICES_HELP,
    REPORT_HELP,
    REPORT_KIND_HELP,
    SCHEDULER_HELP,
    STORAGE_OPTION_HELP,
    WORKERS_HELP,
    WRITES,
    check_report,
    owner_notices,
    warn,
)
from microagg.errors import InputError

__all__ = ["run"]


@command("run")
def run(
    recipe: Path = typer.Argument(..., metavar="RECIPE", help="Recipe file (YAML): the "
                                  "input, its schema and the steps, as `microagg ui` "
                                  "downloads it or OUT.recipe.yaml holds it."),
    output: Path = typer.Option(..., "-o", "--output", help=f"Released table ({WRITES}); "
                                "beside it OUT.report.json (every step, its parameters and, "
                                "without a DP step, the risk and utility change it made), "
                                "OUT.recipe.yaml (the recipe as run) and, after a DP step, "
                                "OUT.privacy.json (the table's guarantee)."),
    input: Path | None = typer.Option(None, "--input", "-i", help="The table to protect, "
                                      "in place of the recipe's input."),
    report: Path | None = typer.Option(None, "--report", help=REPORT_HELP),
    report_kind: str = typer.Option("internal", "--report-kind", help=REPORT_KIND_HELP),
    owner_report: Path | None = typer.Option(
        None, "--owner-report", help="Also write the data owner's report (JSON) with every "
        "figure: the risk before and after each step, the utility, the warnings, the "
        "recipe with its seed and the input's hash. After a DP step none of these is "
        "written beside the release; this file is for the owner only (name it e.g. "
        "OUT.owner.json)."),
    show_owner_notices: bool = typer.Option(False, "--owner-notices",
                                            help=OWNER_NOTICES_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON (after a "
                                  "DP step, its public view)."),
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP + " Each step writes a "
                               "data set the next reads, under a hidden prefix beside OUT "
                               "that is deleted at the end; a recipe of DP or t-closeness "
                               "steps, or with attacks, is refused."),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    storage_option: list[str] | None = typer.Option(None, "--storage-option",
                                                    help=STORAGE_OPTION_HELP),
) -> None:
    """Apply the steps of RECIPE in order, measuring the disclosure risk of the key
    variables after each (and, when its `attacks` section asks, the risks of singling out,
    linkability and inference by attack, the owner's), and write the release with its report
    and the recipe as run. A
    seeded recipe without a DP step gives the same table, byte for byte, on the same input;
    a DP step draws fresh noise unless seeded, and a seeded DP recipe is NOT differentially
    private (every privacy field says so)."""
    from dataclasses import replace

    from microagg.cli.common import engine_is_dask, outputs, print_json, sources, steps
    from microagg.data.io import declared_text, read_table, table_format
    from microagg.recipe import Recipe
    from microagg.recipe.families import adapter
    from microagg.recipe.write import run_files, write_into
    from microagg.release.reports.disclosure import Audience, view

    if engine_is_dask(engine, scheduler, workers, storage=storage_option, report=report,
                      owner_report=owner_report, owner_notices=show_owner_notices,
                      report_kind=None if report_kind == "internal" else report_kind):
        _at_scale(recipe, input, output, scheduler=scheduler, workers=workers,
                  storage=storage_option or [], json_out=json_out)
        return
    kind = check_report(report, report_kind)
    if owner_report is not None and owner_report.suffix.lower() != ".json":
        raise InputError(f"--owner-report must name a .json file, got '{owner_report}'")
    made = Recipe.load(recipe)
    if input is not None:
        made = replace(made, input=input)
    if made.input is None:
        raise InputError(f"{recipe}: the recipe names no input: give --input")
    private = any(adapter(s.family).private for s in made.steps)
    files = run_files(made, output, report, owner_report)
    read = sources(made.input, recipe, None if made.attacks is None else made.attacks.control,
                   schema=made.schema)
    with owner_notices(private, show_owner_notices) as notices:
        with outputs(list(files.all), read) as temporaries, steps("recipe") as progress:
            # the declared categorical and household columns as the text they hold, as a
            # DP release and the web app read them (the app's recipe gives its table)
            as_text = private or table_format(made.input) in ("csv", "xlsx")
            frame = read_table(made.input, **dict(made.read),
                               text=declared_text(made.schema) if as_text else ())
            done = made.run(frame, source=made.input, progress=progress)
            result = write_into(done, files, temporaries, kind=kind)
        whole = result.to_dict()
        for entry in whole["steps"]:
            for warning in entry["warnings"]:
                notices.say(f"step {entry['step']} ({entry['method']}): {warning}")
    shown = view(whole, Audience.PUBLIC if private else Audience.OWNER)
    if private:
        if made.attacks is not None and owner_report is None:  # said of the recipe, not data
            warn("the recipe's attacks are measured into --owner-report only, after a DP "
                 "step: give it to see them")
        privacy = result.privacy or {}
        for weakness in privacy.get("weaker_than_plain_dp", []):
            warn(f"weaker than plain epsilon-DP: {weakness}")
        for warning in dict.fromkeys(w for e in privacy.get("steps", [])
                                     for w in e["record"]["warnings"]):
            warn(warning)
    if json_out:
        print_json(shown)
        return
    _print(shown, files.all)


def _at_scale(recipe: Path, input: Path | None, output: Path, *, scheduler: str | None,
              workers: int | None, storage: list[str], json_out: bool) -> None:
    """The recipe on the Dask engine (:mod:`microagg.at_scale.recipe`): the output data set
    with its report (``OUT.report.json``) and the recipe as run (``OUT.recipe.yaml``), put
    in place together."""
    from dataclasses import replace

    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import check_dataset_output, open_dataset
    from microagg.at_scale.recipe import recipe_refusal, run_recipe_at_scale
    from microagg.at_scale.storage import Location, locate, parse_storage_options
    from microagg.cli.common import print_json, progress_bar, sources
    from microagg.data.atomic import check_output
    from microagg.data.io import json_text
    from microagg.errors import ParameterError
    from microagg.recipe import Recipe

    made = Recipe.load(recipe)
    source = input if input is not None else made.input
    if source is None:
        raise InputError(f"{recipe}: the recipe names no input: give --input")
    refusal = recipe_refusal(made)
    if refusal:
        raise ParameterError("engine", f"dask cannot run this recipe: {refusal}")
    options = parse_storage_options(storage)
    target = check_dataset_output(output, source, options)
    where = locate(source, options)
    read = sources(None if isinstance(where, Location) else where, recipe, schema=made.schema)
    if not isinstance(target, Location):
        for suffix in (".report.json", ".recipe.yaml"):
            check_output(target.with_name(target.name + suffix), read)
    dataset = open_dataset(source, storage_options=options)
    if made.input_sha256:
        warn("the recipe's input hash (sha256) is not checked on the cluster: make sure "
             f"{dataset.source} is the data the recipe was made on")
    made = replace(made, input=None if isinstance(where, Location) else Path(where),
                   input_sha256=None)

    def beside(run: Any) -> dict[str, str]:
        return {".report.json": json_text(run.to_dict()),
                ".recipe.yaml": made.dumps(None if isinstance(target, Location)
                                           else target.parent)}

    with dask_client(scheduler, workers) as client, \
            progress_bar(dataset.n, "recipe") as progress:
        result = run_recipe_at_scale(client, made, dataset, target, storage_options=options,
                                     progress=progress, beside=beside,
                                     keep=read)
    whole = result.to_dict()
    shown = str(target)
    sidecar, as_run = shown + ".report.json", shown + ".recipe.yaml"
    if json_out:
        print_json(whole)
        return
    before = whole["risk_before"]
    parts = whole["partitions"]
    out.print(f"input: {whole['records']:,} records in {parts} "
              f"partition{'' if parts == 1 else 's'}; keys "
              f"{', '.join(whole['keys']) or 'none'}; {_risk(before)}")
    for entry in whole["steps"]:
        out.print(f"{_step(entry)}, {entry['seconds']:.1f} s; {_risk(entry['risk_after'])}")
    out.print(f"guarantee: {whole['guarantee']}")
    out.print(f"wrote {target}, {sidecar}, {as_run}")


def _print(report: dict, written: list[Path]) -> None:
    """The report in lines: what ``report`` holds (its public view after a DP step)."""
    before = report.get("risk_before")
    if before is not None and "n" in before:
        out.print(f"input: {before['n']:,} records; keys {', '.join(before['keys']) or 'none'}"
                  f"; {_risk(before)}")
    elif before is not None:
        out.print(f"input: {_risk(before)}")
    for entry in report["steps"]:
        line = _step(entry)
        if "risk_after" in entry:
            line += (f", {entry['seconds']:.1f} s: {entry['records']:,} records; "
                     f"{_risk(entry['risk_after'])}")
        out.print(line)
        if entry["dp_context"]:
            out.print(f"  {entry['dp_context']}")
        loss = (entry.get("record", {}).get("utility") or {}).get("sse_percent")
        if loss is not None:
            out.print(f"  information loss against the step's input: SSE/SST {loss:.2f} %")
    out.print(f"guarantee: {report['guarantee']}")
    if "attacks" in report:  # the owner's: a DP recipe's public report holds none
        from microagg.cli.evaluate_attacks import attack_lines

        attacks = report["attacks"]
        for line in ([f"attacks not measured ({attacks['not_measured']})"]
                     if "not_measured" in attacks else attack_lines(attacks)):
            out.print(line, markup=False)
    out.print(f"wrote {', '.join(str(p) for p in written)}")


def _step(entry: dict) -> str:
    """A step of a report as its line begins: its number, family, method and what it set."""
    given = ", ".join(f"{k}={v}" for k, v in {**entry["parameters"],
                                               **entry["options"]}.items())
    return f"step {entry['step']}: {entry['family']} {entry['method']} ({given})"


def _risk(risk: dict) -> str:
    if "not_measured" in risk:
        return f"risk not measured ({risk['not_measured']})"
    from microagg.recipe.risk import percent

    return (f"global risk {percent(risk['global_risk'])}, expected re-identifications "
            f"{risk['expected_reidentifications']:,.1f}, records in classes < 5: "
            f"{risk['violations']['5']:,}")
