"""Sort-bound partitioners: individual ranking, optimal univariate and insensitive
microaggregation on n records x d uniform attributes in [0, 1] (declared domain [0, 1]).

Usage: python benchmarks/bench_sort_bound.py [--n 1000000] [--d 10] [--ks 5,316,1000]
Prints one JSON object per (method, k): seconds after JIT warm-up and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, run_cases


def one(case: dict) -> dict:
    from microagg.partition.insensitive import insensitive
    from microagg.partition.univariate import individual_ranking, optimal_univariate

    d, k = case["d"], case["k"]
    lows, highs = np.zeros(d), np.ones(d)
    run = {
        "individual-ranking": lambda X: individual_ranking(X, k),
        "optimal-univariate": lambda X: optimal_univariate(X, k),
        "insensitive-corners": lambda X: insensitive(X, k, lows, highs),
        "insensitive-single": lambda X: insensitive(X, k, lows, highs, reference="single"),
    }[case["benchmark"]]
    rng = np.random.default_rng(case["seed"])
    return measure(case, prepare=lambda: rng.random((case["n"], d)), run=run,
                   warmup=lambda: run(rng.random((max(4 * k, 300), d))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--ks", default="5,316,1000")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    cases = []
    for method in ("individual-ranking", "optimal-univariate", "insensitive-single"):
        cases.append({"benchmark": method, "n": args.n, "d": args.d, "k": 5, "seed": 0})
    for k in args.ks.split(","):
        cases.append({"benchmark": "insensitive-corners", "n": args.n, "d": args.d,
                      "k": int(k), "seed": 0})
    run_cases(__file__, cases, args.timeout)


if __name__ == "__main__":
    main()
