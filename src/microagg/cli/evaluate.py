"""``microagg evaluate``: utility loss and disclosure risk of a masked table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from microagg.cli.app import command, out
from microagg.cli.common import (
    DECIMAL,
    READS,
    SCHEDULER_HELP,
    STORAGE_OPTION_HELP,
    THOUSANDS,
    WORKERS_HELP,
    compile_notice,
    engine_is_dask,
    fmt,
    load,
    names,
    print_json,
    read_input,
    warn,
)
from microagg.cli.evaluate_attacks import attack_lines, attack_request
from microagg.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from microagg.evaluation.evaluate import Evaluation


@command("evaluate")
def evaluate(
    original: Path = typer.Argument(..., metavar="ORIGINAL",
                                    help=f"Original table ({READS})."),
    masked: Path = typer.Argument(..., metavar="MASKED",
                                  help="Masked release of it, same rows in the same order "
                                  "(unless its report, MASKED.privacy.json or "
                                  "MASKED.report.json, says they are not)."),
    columns: str | None = typer.Option(None, "--columns", help="Columns to compare, "
                                       "comma-separated (default: the schema's numeric "
                                       "quasi-identifiers, else every numeric column)."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    engine: str = typer.Option("local", "--engine", help="local (default) | dask: compare "
                               "two data sets (folders or globs) by map-reduce, record "
                               "linkage on a sample."),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    sample: int | None = typer.Option(None, "--sample", help="With --engine dask: masked "
                                      "records linked against all originals (default 1000; "
                                      "0: no record linkage)."),
    regression: str | None = typer.Option(
        None, "--regression", metavar="FORMULA",
        help="Also fit this regression ('y ~ a + b', C(a) for a categorical number, "
        "Q(\"a-b\") for a name with symbols) on both tables and compare its coefficients: "
        "confidence-interval overlap and standardized difference."),
    propensity: bool = typer.Option(
        False, "--pmse", help="Also measure how well a logistic model tells the release "
        "from the original over the compared columns (pMSE and its ratio to what "
        "indistinguishable tables give)."),
    classify: str | None = typer.Option(
        None, "--classify", metavar="COLUMN", help="Also train a classifier of COLUMN on "
        "ORIGINAL and on MASKED and score both on --holdout (accuracy, balanced accuracy, "
        "AUC)."),
    holdout: Path | None = typer.Option(
        None, "--holdout", help="With --classify: original records MASKED was not made "
        "from, to score the classifiers on."),
    attacks: str | None = typer.Option(
        None, "--attacks", metavar="A,B", help="Also attack the release: singling-out, "
        "linkability, inference, closest-records (comma-separated), each on ORIGINAL, on "
        "--control and by guessing; the risk with its 95 % interval."),
    control: Path | None = typer.Option(
        None, "--control", help="With --attacks: original records MASKED was not made from "
        "(the same columns as ORIGINAL)."),
    linkability_columns: str | None = typer.Option(
        None, "--linkability-columns", metavar="A,B|C,D", help="With --attacks linkability: "
        "the two column sets the attacker joins (default: the first half of the columns and "
        "the rest)."),
    secret: str | None = typer.Option(
        None, "--secret", metavar="COL,…", help="With --attacks inference: the columns "
        "guessed (default: every column)."),
    attacks_n: int = typer.Option(500, "--attacks-n", help="With --attacks: records (or "
                                  "predicates) per attack (default 500)."),
    seed: int | None = typer.Option(None, "--seed", help="With --attacks: the seed of the "
                                    "attacks' draws."),
    storage_option: list[str] | None = typer.Option(None, "--storage-option",
                                                    help=STORAGE_OPTION_HELP),
) -> None:
    """Measure the utility loss and disclosure risk of a masked table."""
    from microagg.evaluation.evaluate import evaluate as run_evaluation

    if engine_is_dask(engine, scheduler, workers, storage=storage_option, schema=schema,
                      decimal=decimal, thousands=thousands):
        if regression is not None or propensity or classify is not None or attacks:
            raise InputError("--regression, --pmse, --classify and --attacks run on the "
                             "local engine: "
                             "leave out --engine dask, or evaluate a sample of the data sets")
        _evaluate_at_scale(original, masked, columns=names(columns, "--columns"),
                           sample=1000 if sample is None else sample, scheduler=scheduler,
                           workers=workers, json_out=json_out, storage=storage_option or [])
        return
    if sample is not None:
        raise InputError("--sample applies to --engine dask (the local engine links every "
                         "record)")
    if (classify is None) != (holdout is None):
        raise InputError("--classify and --holdout go together: the classifiers are scored "
                         "on original records the release was not made from")
    held = None if holdout is None else read_input(holdout, decimal, thousands)
    analysis = _analysis_request(regression, propensity, classify, held)
    attacked = attack_request(attacks, control, linkability_columns=linkability_columns,
                              secrets=secret, n_attacks=attacks_n, seed=seed,
                              decimal=decimal, thousands=thousands)

    from microagg.release.reports.sidecar import rows_aligned

    aligned, said_by = rows_aligned(masked)
    if not aligned:
        warn(f"{said_by} says the rows of {masked} are not those of {original} in the same "
             "order: SSE, record linkage, relative error and rank risk compare row i with "
             "row i and are left out; distributional measures only")
    original_frame, schema_obj = load(original, schema, decimal, thousands)
    masked_frame = read_input(masked, decimal, thousands)
    with compile_notice():
        result = run_evaluation(original_frame, masked_frame, schema_obj,
                                names(columns, "--columns"), aligned=aligned)
    analysed = analysis(original_frame, masked_frame, result["columns"])
    if attacked is not None:
        with compile_notice():
            analysed["attacks"] = attacked(original_frame, masked_frame)
    if json_out:
        print_json({**result.to_dict(), **analysed})
        return
    out.print(f"compared {result['rows']:,} rows on {', '.join(result['columns'])}")
    measures = ((("sse", "SSE (raw values; δ² for categories)"),
                 ("sse_percent", "SSE/SST (%, numeric)"),
                 ("record_linkage_percent", "record linkage (%)"),
                 ("relative_error", "relative error")) if aligned else ()) + (
        ("jsd", "JSD (mean)"), ("variance_variation", "variance variation (mean)"),
        ("mean_variation", "mean variation (mean)"))
    if not aligned:
        measures += (("emd", "EMD (earth mover's distance)"),)
    width = max(len(label) for _, label in measures)
    for key, label in measures:
        value = result[key]
        why = "" if value is not None else f" ({_why_none(result, key)})"
        out.print(f"  {label:{width}s}  {fmt(value)}{why}", markup=False)
    for line in _missing_lines(result):
        out.print(line, markup=False)
    for line in _analysis_lines(analysed) + attack_lines(analysed.get("attacks", {})):
        out.print(line, markup=False)


Analysis = Callable[["pd.DataFrame", "pd.DataFrame", list[str]], dict[str, Any]]


def _analysis_request(regression: str | None, propensity: bool, classify: str | None,
                      holdout: pd.DataFrame | None) -> Analysis:
    """What ``--regression``, ``--pmse`` and ``--classify`` ask of the two tables, as their
    JSON entries."""
    def analyse(original: pd.DataFrame, masked: pd.DataFrame,
                columns: list[str]) -> dict[str, Any]:
        from microagg.evaluation.analysis import (
            classification_utility,
            pmse,
            regression_utility,
        )

        found: dict[str, Any] = {}
        if classify is not None and holdout is not None:
            found["classification"] = classification_utility(
                original, masked, holdout, classify).to_dict()
        if regression is not None:
            found["regression"] = regression_utility(original, masked, regression).to_dict()
        if propensity:
            found["pmse"] = pmse(original, masked, columns).to_dict()
        return found

    return analyse


def _analysis_lines(analysed: dict[str, Any]) -> list[str]:
    """The regression's and the pMSE's figures in words."""
    lines = []
    if "regression" in analysed:
        fit = analysed["regression"]
        lines.append(f"regression {fit['formula']} ({fit['n_original']:,} / "
                     f"{fit['n_released']:,} complete rows): mean CI overlap "
                     f"{fmt(fit['mean_ci_overlap'])} (1 = the same intervals, 0 = disjoint)")
        width = max(len(c["term"]) for c in fit["coefficients"])
        lines += [f"  {c['term']:{width}s}  {fmt(c['original'])} -> {fmt(c['released'])}"
                  f"  overlap {fmt(c['ci_overlap'])}"
                  f"  standardized difference {fmt(c['standardized_difference'])}"
                  for c in fit["coefficients"]]
    if "classification" in analysed:
        c = analysed["classification"]
        for name, scores in (("original", c["on_original"]), ("release", c["on_released"])):
            lines.append(f"classifier of {c['target']} trained on the {name}, scored on "
                         f"{c['n_holdout']:,} held-out records: accuracy "
                         f"{fmt(scores['accuracy'])}, balanced accuracy "
                         f"{fmt(scores['balanced_accuracy'])}"
                         + ("" if scores["auc"] is None else f", AUC {fmt(scores['auc'])}"))
    if "pmse" in analysed:
        p = analysed["pmse"]
        lines.append(f"pMSE {fmt(p['pmse'])}: {fmt(p['standardized_pmse'])} times what "
                     "indistinguishable tables give (near 1: a logistic model cannot tell the "
                     "release from the original)"
                     + ("" if p["converged"] else "; the logistic fit did not converge"))
    return lines


_NONE = {
    "sse_percent": "every compared numeric column is constant in the original, or there is "
                   "none",
    "variance_variation": "every compared numeric column is constant in the original, or "
                          "there is none",
    "mean_variation": "the original's mean is 0 in every compared numeric column, or there "
                      "is none",
    "relative_error": "no value is present in both tables",
    "emd": "no numeric column",
}


def _why_none(result: Evaluation, key: str) -> str:
    """Why a measure has no figure."""
    return result.skipped.get(key) or _NONE.get(key, "does not apply")


def _missing_lines(result: Evaluation) -> list[str]:
    """The missing values of the compared columns and how the measures treat them."""
    if not result.missing_values:
        return []
    counts = "; ".join(
        f"{name} {m.original:,} / {m.masked:,}"
        + (f" ({m.both_present:,} rows present in both)" if m.both_present is not None else "")
        for name, m in result.missing_values.items())
    return [f"missing values (original / release): {counts}",
            "  SSE, SSE/SST and relative error compare the values present in both; record "
            "linkage measures distances over the attributes both records have (rescaled); "
            "JSD, means and variances use each table's values present"]


def _evaluate_at_scale(original: Path, masked: Path, *, columns: list[str] | None,
                       sample: int, scheduler: str | None, workers: int | None,
                       json_out: bool, storage: list[str]) -> None:
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import open_dataset
    from microagg.at_scale.evaluate import evaluate_at_scale
    from microagg.at_scale.storage import parse_storage_options

    if sample < 0:
        raise InputError(f"--sample must be 0 or more, got {sample}")
    options = parse_storage_options(storage)
    before, after = (open_dataset(original, storage_options=options),
                     open_dataset(masked, storage_options=options))
    with dask_client(scheduler, workers) as client:
        result = evaluate_at_scale(client, before, after, columns=columns, sample=sample)
    if json_out:
        print_json(result.to_dict())
        return
    out.print(f"compared {result.records:,} records on {', '.join(result.columns)}"
              + ("" if result.aligned else " (not row-aligned: distributions only)"))
    out.print(f"  SSE/SST (%)            {fmt(result.sse_percent)}")
    if result.record_linkage_ci95 is not None:
        low, high = result.record_linkage_ci95
        out.print(f"  record linkage (%)     {fmt(result.record_linkage_percent)} "
                  f"(95% CI {low:.2f}-{high:.2f}, sample of {result.record_linkage_sample:,})")
    out.print(f"  JSD (mean)             {fmt(float(sum(result.jsd) / len(result.jsd)))}")
