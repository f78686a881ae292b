"""Five methods compared on UCI Adult at an equal linkability risk, then ranked by what an
analyst keeps: the confidence-interval overlap of a regression (Karr et al. 2006) and the
accuracy of a classifier trained on the release and tested on held-out originals.

Adult's six numeric columns are masked; its categorical columns are carried along. The
records are split at random (seeded) into a test part (20 %, never released: the
classifier is scored on it), a control part (20 % of the rest: the attacker's "people not in
the release") and the released part. ``compare_attacks`` calibrates each method to a
linkability risk of at most the target (an attacker holding fnlwgt of a person from one
source and age, education-num and hours-per-week from another joins them through the
release); each release at the value found is then made again and judged by the analyses.

Usage: python reproduction/adult_linkability_compare.py [--target 0.005] [--seeds 3]
           [--figure docs/figures/adult_linkability.png]
Prints the command-line equivalent's settings and a markdown table; saves the figure.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from microagg import datasets
from microagg.evaluation.analysis import classification_utility, regression_utility
from microagg.evaluation.attack_compare import compare_attacks
from microagg.evaluation.compare import candidates, compared_matrix
from microagg.evaluation.compared import attribute_domains
from microagg.options import CompareMethod

NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
SPLIT = (["fnlwgt"], ["age", "education-num", "hours-per-week"])
METHODS = [CompareMethod.MDAV, CompareMethod.INDIVIDUAL_RANKING, CompareMethod.CORRELATED_NOISE,
           CompareMethod.MULTIPLICATIVE_NOISE, CompareMethod.RANK_SWAP]
FORMULA = 'Q("hours-per-week") ~ age + Q("education-num") + Q("capital-gain") + sex'


def parts(frame: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The released part, the control part and the test part (module docstring)."""
    order = np.random.default_rng(seed).permutation(len(frame))
    test = round(0.2 * len(frame))
    control = round(0.2 * (len(frame) - test))
    pick = lambda rows: frame.iloc[np.sort(rows)].reset_index(drop=True)  # noqa: E731
    return (pick(order[test + control:]), pick(order[test:test + control]),
            pick(order[:test]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", type=float, default=0.005)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--figure", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    adult = pd.read_csv(datasets.data_dir("adult.csv") / "adult.csv", skipinitialspace=True)
    released_part, control, test = parts(adult, args.seed)
    began = time.perf_counter()
    result = compare_attacks(released_part, target_risk=args.target, risk_kind="linkability",
                             methods=METHODS, columns=NUMERIC, control=control[NUMERIC],
                             linkability_columns=SPLIT, seeds=args.seeds, seed=args.seed)
    seconds = time.perf_counter() - began

    names, selected, X = compared_matrix(released_part, None, NUMERIC)
    lows, highs, _ = attribute_domains(selected, X)
    table = candidates(X, lows, highs)
    rows = []
    for m in [result.by_method()[c] for c in METHODS]:
        masked = table[m.method].mask(X, m.value, np.random.default_rng((args.seed, 0)))
        release = released_part.copy()
        release[names] = masked
        regression = regression_utility(released_part, release, FORMULA)
        classified = classification_utility(released_part, release, test, "income",
                                            seed=args.seed)
        rows.append({"method": m.method.value, "parameter": m.parameter, "value": m.value,
                     "status": m.status.value, "linkability": m.risk,
                     "emd": m.utility.loss,
                     "ci_overlap": regression.mean_ci_overlap,
                     "accuracy": classified.on_released["accuracy"],
                     "accuracy_original": classified.on_original["accuracy"],
                     "auc": classified.on_released["auc"]})
    rows.sort(key=lambda r: -(r["ci_overlap"] or 0))

    print(f"Adult: {len(released_part):,} records released, {len(control):,} control, "
          f"{len(test):,} test; linkability of {', '.join(SPLIT[0])} with "
          f"{', '.join(SPLIT[1])}; target at most {args.target:g}; {args.seeds} seeds; "
          f"comparison {seconds:.0f} s\n")
    print(f"Reading: {result.risk_definition['reading']}.\n")
    print("| method | parameter | linkability | EMD | regression CI overlap | "
          "accuracy (original: {:.3f}) | AUC |".format(rows[0]["accuracy_original"]))
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['method']} | {r['parameter']} = {r['value']:.4g} ({r['status']}) | "
              f"{r['linkability']:.4f} | {r['emd']:.4f} | {r['ci_overlap']:.3f} | "
              f"{r['accuracy']:.3f} | {r['auc']:.3f} |")
    print(f"\nRanked by EMD (compare's own ranking): "
          f"{', '.join(m.value for m in result.ranking)}")
    if args.json is not None:
        args.json.write_text(json.dumps({"target": args.target, "seconds": seconds,
                                         "rows": rows, "ranking": [m.value for m in
                                                                   result.ranking]},
                                        indent=1))
    if args.figure is not None:
        fig = Figure(figsize=(9, 3.6))
        left, right = fig.subplots(1, 2)
        labels = [r["method"] for r in rows]
        left.barh(labels, [r["ci_overlap"] for r in rows], color="tab:blue")
        left.set_xlim(0, 1)
        left.set_xlabel("regression CI overlap (1 = the same)")
        left.invert_yaxis()
        right.barh(labels, [r["accuracy"] for r in rows], color="tab:green")
        right.axvline(rows[0]["accuracy_original"], color="0.3", ls="--",
                      label="trained on the original")
        scores = [r["accuracy"] for r in rows] + [rows[0]["accuracy_original"]]
        right.set_xlim(max(0.0, min(scores) - 0.02), min(1.0, max(scores) + 0.02))
        right.set_xlabel("income accuracy on held-out originals")
        right.set_yticklabels([])
        right.invert_yaxis()
        right.legend(fontsize=7, loc="lower right")
        fig.suptitle(f"UCI Adult, five methods at linkability risk ≤ {args.target:g}",
                     fontsize=10)
        fig.tight_layout()
        fig.savefig(args.figure, dpi=120)
        print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
