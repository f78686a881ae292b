"""Cross-moment DP release (paper 004) end to end, DataFrame in, Release out, on n records x d
correlated, skewed attributes with declared domains [0, 1]; and the partition alone, so that
statistics + noise + repair + sampling is the difference.

Usage: python benchmarks/bench_moments.py [--n 1000000] [--d 4] [--k 100] [--repeat 3]
Prints one JSON object per case: the median seconds of --repeat runs (each in a fresh process,
after JIT warm-up), every run's seconds, and the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, median_of_runs


def _data(rows: int, d: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    mix = np.triu(np.full((d, d), 0.5)) + 0.5 * np.eye(d)
    X = np.exp(0.4 * rng.standard_normal((rows, d)) @ mix) / 6
    return pd.DataFrame(np.clip(X, 0, 1), columns=[f"x{j}" for j in range(d)])


def one(case: dict) -> dict:
    from microagg.partition.insensitive import insensitive
    from microagg.partition.mdav import mdav
    from microagg.release import dp_cross_moment

    d, k = case["d"], case["k"]
    bounds = {f"x{j}": (0.0, 1.0) for j in range(d)}
    if case["benchmark"] == "partition":
        lows, highs = np.zeros(d), np.ones(d)
        def run(frame):
            X = frame.to_numpy()
            return (insensitive(X, k, lows, highs) if case["clustering"] == "insensitive"
                    else mdav(X, k))
    else:
        def run(frame):
            return dp_cross_moment(frame, epsilon=case["epsilon"], k=k, moments=case["m"],
                                   noise=case["noise"], clustering=case["clustering"],
                                   variant=case.get("variant", "pure"), bounds=bounds,
                                   rng=np.random.default_rng(case["seed"]))
    return measure(case, prepare=lambda: _data(case["n"], d, case["seed"]), run=run,
                   warmup=lambda: run(_data(max(6 * k, 600), d, case["seed"] + 1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=4)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clusterings", default="insensitive")
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    base = {"n": args.n, "d": args.d, "k": args.k, "epsilon": 1.0, "seed": 0}
    cases = []
    for clustering in args.clusterings.split(","):
        cases.append({"benchmark": "partition", "clustering": clustering, **base})
        for m, noise in ((2, "joint"), (2, "separate"), (1, "joint")):
            cases.append({"benchmark": "cross-moment", "clustering": clustering, "m": m,
                          "noise": noise, **base})
        cases.append({"benchmark": "cross-moment", "clustering": clustering, "m": 1,
                      "noise": "joint", "variant": "kendall", **base})
    for case in cases:
        print(json.dumps(median_of_runs(__file__, case, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
