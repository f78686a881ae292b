"""``microagg compare``: methods compared at equal risk or utility (paper 003), at the rank
risk of numeric attributes or at a risk of categorical keys (``--target-risk-kind``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import command, out
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

RANK_ONLY = {"target_utility": "--target-utility", "columns": "--columns",
             "risk_scale": "--risk-scale", "risk_aggregate": "--risk-aggregate"}
ATTACKS_ONLY = {"control": "--control", "linkability_columns": "--linkability-columns",
                "secret": "--secret", "attacks_n": "--attacks-n", "regression": "--regression"}
KEYS_ONLY = {"keys": "--keys", "weight": "--weight", "k": "--k", "missing": "--missing",
             "recode": "--recode", "widths": "--widths", "recode_level": "--recode-level",
             "match": "--match"}


@command("compare")
def compare(
    input: Path = typer.Argument(..., metavar="IN", help=f"Original table ({READS})."),
    target_risk: str | None = typer.Option(None, "--target-risk", help="Risk to reach: a "
                                           "number, or METHOD=VALUE such as mdav=5 (the risk "
                                           "of MDAV with k = 5). Its kind is "
                                           "--target-risk-kind."),
    target_risk_kind: str | None = typer.Option(
        None, "--target-risk-kind", help="rank (default: on numeric attributes, how many "
        "rank positions the masked record nearest to each original lies from it, larger = "
        "safer) | expected-reidentifications | global-risk | violations (of the "
        "categorical --keys as released, smaller = safer; methods ranked by information "
        "loss) | singling-out | linkability | inference (an attack on each release of the "
        "numeric --columns, or with --keys of the categorical keys, against control "
        "records, 0 to 1, smaller = safer; at most the target)."),
    target_utility: str | None = typer.Option(None, "--target-utility", help="Dual: the EMD "
                                              "to reach, a number or METHOD=VALUE; methods "
                                              "are then ranked by risk (rank risk only)."),
    methods: str | None = typer.Option(None, "--methods", help="Comma-separated. Rank risk: "
                                       "mdav, individual-ranking, correlated-noise, "
                                       "multiplicative-noise, rank-swap, dp-laplace, "
                                       "dp-individual-ranking (default: the first, and the "
                                       "three masking methods). Categorical "
                                       "risks: local-suppression, recode-then-suppress, "
                                       "global-recoding, invariant-pram, mdav (default: "
                                       "those the data allow)."),
    columns: str | None = typer.Option(None, "--columns", help="Columns compared at the "
                                       "rank risk (default: the schema's "
                                       "quasi-identifiers, else every numeric column)."),
    keys: str | None = typer.Option(None, "--keys", help="Categorical risks: the key "
                                    "variables, comma-separated (default: the schema's "
                                    "quasi-identifiers)."),
    weight: str | None = typer.Option(None, "--weight", help="Categorical risks: the "
                                      "sampling weight column (default: the schema's)."),
    k: int | None = typer.Option(None, "--k", help="Violations: count the records in classes "
                                 "smaller than K (default 5)."),
    missing: str | None = typer.Option(None, "--missing", help="Categorical risks: what a "
                                       "missing key value matches: matches-any (default) | "
                                       "category."),
    recode: str | None = typer.Option(None, "--recode", help="The keys the recoding "
                                      "candidates recode (default: those with a taxonomy "
                                      "in the schema or a --widths)."),
    widths: str | None = typer.Option(None, "--widths", help="Interval width of numeric keys "
                                      "at recoding level 1, doubling at each level, e.g. "
                                      "age=5."),
    recode_level: int | None = typer.Option(None, "--recode-level", help="The recoding "
                                            "level of recode-then-suppress (default 1)."),
    match: str | None = typer.Option(None, "--match", help="Categorical risks: at-most "
                                     "(default: the least protective value whose risk is at "
                                     "most the target) | within (inside target*(1 +- tol))."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    seeds: int = typer.Option(10, "--seeds", help="Runs of a randomized method per value."),
    tolerance: float = typer.Option(0.0025, "--tolerance", help="Relative tolerance of a "
                                    "match: the 95 % interval must lie in target*(1 +- tol)."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random draw."),
    risk_scale: str | None = typer.Option(None, "--risk-scale", help="ranks (default) | "
                                          "unit."),
    risk_aggregate: str | None = typer.Option(None, "--risk-aggregate",
                                              help="mean-of-logs (default) | log-of-mean | "
                                              "printed."),
    control: Path | None = typer.Option(
        None, "--control", help="Attack risks: original records no release is made from "
        "(default: 20 % of IN held out of every release at random)."),
    linkability_columns: str | None = typer.Option(
        None, "--linkability-columns", metavar="A,B|C,D", help="Linkability: the two "
        "column sets the attacker joins (default: the first half of the columns and the "
        "rest)."),
    secret: str | None = typer.Option(None, "--secret", metavar="COL,…", help="Inference: "
                                      "the columns guessed (default: every column; the "
                                      "worst is held)."),
    attacks_n: int | None = typer.Option(None, "--attacks-n", help="Attack risks: records "
                                         "(or predicates) attacked per release (default "
                                         "2000)."),
    regression: str | None = typer.Option(
        None, "--regression", metavar="'y ~ a + b'", help="Attack risks, numeric methods: "
        "also judge each ranked method's release by this model's confidence-interval "
        "overlap with the records released (Karr et al. 2006), and rank by it."),
    report: Path | None = typer.Option(None, "--report", help="Write an HTML report."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Calibrate each method to the same risk (or utility), then rank by utility (or risk):
    the rank risk of numeric attributes (how far, in rank positions, the masked record
    nearest to each original lies from it), or a risk of categorical keys."""
    from microagg.evaluation.comparison import RAW_DATA_NOTICE
    from microagg.options import RiskKind, parse

    kind = parse(RiskKind, target_risk_kind or RiskKind.RANK, "--target-risk-kind")
    given = {"target_utility": target_utility, "columns": columns, "risk_scale": risk_scale,
             "risk_aggregate": risk_aggregate, "keys": keys, "weight": weight, "k": k,
             "missing": missing, "recode": recode, "widths": widths,
             "recode_level": recode_level, "match": match, "control": control,
             "linkability_columns": linkability_columns, "secret": secret,
             "attacks_n": attacks_n, "regression": regression}
    _refuse_strays(kind, given)
    if report is not None and report.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--report must name an .html file, got '{report}'")
    schema_obj = schema_of(schema)
    with outputs([report], sources(input, schema, control, schema=schema_obj)) as files:
        frame = read_input(input, decimal, thousands)
        with compile_notice(), steps("calibrating") as progress:
            common: dict[str, Any] = {
                "methods": names(methods, "--methods"), "schema": schema_obj,
                "seeds": seeds, "tolerance": tolerance, "seed": seed, "progress": progress,
                "source": input.name}
            if kind is RiskKind.RANK:
                from microagg.evaluation.compare import compare as run

                result = run(frame, target_risk=target_risk, target_utility=target_utility,
                             columns=names(columns, "--columns"), scale=risk_scale or "ranks",
                             aggregate=risk_aggregate or "mean-of-logs", **common)
            elif kind.by_attack and given["keys"] is None:
                result = _attacks(frame, kind, target_risk, given, common, (decimal, thousands))
            else:
                result = _keys(frame, kind, target_risk, given, common, (decimal, thousands))
        if report is not None:
            from microagg.evaluation.html import comparison_html

            files[report].write_text(comparison_html(result), encoding="utf-8")
    if json_out:
        print_json(result.to_dict())
        return
    _print(result, RAW_DATA_NOTICE)
    if report is not None:
        out.print(f"report: {report}")


def _refuse_strays(kind: Any, given: dict[str, Any]) -> None:
    """Refuse an option of another kind of risk than ``kind``."""
    from microagg.options import RiskKind

    if kind is RiskKind.RANK:
        wrong = {**KEYS_ONLY, **ATTACKS_ONLY}
    elif kind.by_attack and given["keys"] is not None:  # methods for keys, attacked
        wrong = {**RANK_ONLY, "regression": "--regression",
                 **{n: f for n, f in KEYS_ONLY.items()
                    if n in ("weight", "k", "missing", "match")}}
    elif kind.by_attack:
        wrong = {**KEYS_ONLY, **{n: f for n, f in RANK_ONLY.items() if n != "columns"}}
    else:
        wrong = {**RANK_ONLY, **ATTACKS_ONLY}
    stray = next((flag for name, flag in wrong.items() if given[name] is not None), None)
    if stray is None:
        return
    if stray == "--columns" and given["keys"] is not None:
        raise InputError("--columns names numeric attributes; with --keys the methods for "
                         "categorical keys are compared and the keys attacked")
    if stray == "--regression" and given["keys"] is not None:
        raise InputError("--regression judges the releases of numeric methods: it does not "
                         "apply with --keys")
    home = ("the rank risk and the attack risks (--target-risk-kind rank, singling-out, "
            "linkability or inference)" if stray == "--columns" else
            "the rank risk (--target-risk-kind rank)" if stray in RANK_ONLY.values() else
            "the categorical risks (--target-risk-kind expected-reidentifications, "
            "global-risk or violations)" if stray in KEYS_ONLY.values() else
            "the attack risks (--target-risk-kind singling-out, linkability or inference)")
    raise InputError(f"{stray} applies to {home}")


def _attacks(frame: Any, kind: Any, target_risk: str | None, given: dict[str, Any],
             common: dict[str, Any], marks: tuple[str | None, str | None]) -> Any:
    """The comparison at an attack's risk (compare_attacks)."""
    from microagg.cli.evaluate_attacks import linkability_split
    from microagg.evaluation.attack_compare import ATTACKS_N, compare_attacks

    if target_risk is None:
        raise InputError(f"--target-risk is needed with --target-risk-kind {kind.value}")
    control = None if given["control"] is None else read_input(given["control"], *marks)
    return compare_attacks(
        frame, target_risk=target_risk, risk_kind=kind,
        columns=names(given["columns"], "--columns"), control=control,
        linkability_columns=linkability_split(given["linkability_columns"]),
        secrets=names(given["secret"], "--secret"),
        attacks_n=ATTACKS_N if given["attacks_n"] is None else given["attacks_n"],
        regression=given["regression"], **common)


def _keys(frame: Any, kind: Any, target_risk: str | None, given: dict[str, Any],
          common: dict[str, Any], marks: tuple[str | None, str | None]) -> Any:
    """The comparison of methods for categorical keys (compare_keys), at a categorical
    risk or at an attack's on the keys."""
    from microagg.evaluation.key_compare import compare_keys

    if target_risk is None:
        raise InputError(f"--target-risk is needed with --target-risk-kind {kind.value}")
    options = {name: given[name] for name in ("weight", "k", "missing", "recode_level",
                                              "match") if given[name] is not None}
    if kind.by_attack:
        from microagg.cli.evaluate_attacks import linkability_split

        options.update(
            control=None if given["control"] is None else read_input(given["control"],
                                                                     *marks),
            linkability_columns=linkability_split(given["linkability_columns"]),
            secrets=names(given["secret"], "--secret"), attacks_n=given["attacks_n"])
    return compare_keys(frame, target_risk=target_risk, risk_kind=kind,
                        keys=names(given["keys"], "--keys"),
                        recode=names(given["recode"], "--recode"),
                        widths=given["widths"], **options, **common)


def _print(result: Any, notice: str) -> None:
    """The comparison in a few lines."""
    from microagg.options import MatchStatus

    held = result.target.value
    out.print(f"note: {notice}")
    ceiling = result.match.value == "at-most"
    out.print(f"target {held} {result.target_value:.6g} ({result.target_source}), "
              f"tolerance {'+' if ceiling else '±'} {result.tolerance:.3g}"
              + ("" if result.risk_label == "rank risk" else
                 f"; risk: {result.risk_label}, "
                 + ("at most the target" if ceiling else
                    "within the band")))
    for m in result.methods:
        status = {MatchStatus.MATCHED: "matched",
                  MatchStatus.EXCEEDS: f"ranked at its closest value: {m.reason}"}.get(
            m.status, f"left out: {m.reason}")
        setting = f"{m.parameter} = {m.value:.4g}"
        out.print(f"  {m.method.value:22s} {setting:20s} risk {m.risk:<8.5g} "
                  f"{m.utility.summary():<30s} {status}")
    out.print(f"ranking: {', '.join(m.value for m in result.ranking) or '(none ranked)'}")
    analysis = result.data.get("analysis")
    if analysis is not None:
        overlap = analysis["ci_overlap"]
        out.print(f"by the regression {analysis['regression']} (CI overlap, 1 = the same): "
                  + (", ".join(f"{m} {overlap[m]:.3f}" for m in analysis["ranking"])
                     or "no method ranked"), markup=False)
    out.print(result.recommendation())
