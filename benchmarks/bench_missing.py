"""MDAV (or t-closeness-first) with missing values: n records x d standard-normal attributes,
k = 5, a fraction of the cells missing at random, against the same partitioner on the data
complete.

Usage: python benchmarks/bench_missing.py [--sizes 10000,100000] [--d 10] [--k 5]
       [--missing 0.1] [--partition mdav|t-closeness-first] [--t 0.1] [--repeat 1]
Prints one JSON object per size and case ("complete": microagg.partition.mdav, or
t_closeness_first, on the data without missing values; "missing": mdav_missing, or
t_closeness_first, with the cells removed): seconds of the partition after JIT warm-up, peak
RSS, and the one-minute load average when the partition started. With ``--repeat N`` each case
runs N times in fresh processes, in N rounds of all the cases (a drifting load slows both
kernels alike), and the median is printed with every run's seconds.
t-closeness-first ranks by a confidential attribute correlated with the first one
(x_0 + a standard normal, complete).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, median_of_rounds, run_cases


def _data(case: dict) -> np.ndarray:
    rng = np.random.default_rng(case["seed"])
    X = rng.standard_normal((case["n"], case["d"]))
    if case["benchmark"] == "missing":
        X[rng.random(X.shape) < case["missing"]] = np.nan
    return X


def _confidential(case: dict) -> np.ndarray:
    rng = np.random.default_rng(case["seed"])
    X = rng.standard_normal((case["n"], case["d"]))
    return X[:, 0] + np.random.default_rng(case["seed"] + 1).standard_normal(case["n"])


def one(case: dict) -> dict:
    from microagg.partition.mdav import mdav
    from microagg.partition.mdav_missing import mdav_missing
    from microagg.partition.tcloseness import t_closeness_first

    def method(X: np.ndarray, at: dict) -> object:
        if at.get("partition") == "t-closeness-first":
            return t_closeness_first(X, _confidential(at), at["k"], at["t"])
        return (mdav_missing if at["benchmark"] == "missing" else mdav)(X, at["k"])

    small = {**case, "n": 300}
    load = []

    def prepare() -> np.ndarray:
        X = _data(case)
        load.append(round(os.getloadavg()[0], 2))
        return X

    result = measure(case, prepare=prepare, run=lambda X: method(X, case),
                     warmup=lambda: method(_data(small), small))
    return {**result, "load_average": load[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--missing", type=float, default=0.1)
    parser.add_argument("--partition", default="mdav", choices=["mdav", "t-closeness-first"])
    parser.add_argument("--t", type=float, default=0.1)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    cases = [{"benchmark": which, "n": int(n), "d": args.d, "k": args.k,
              "missing": args.missing, "seed": 0, "partition": args.partition, "t": args.t}
             for n in args.sizes.split(",") for which in ("complete", "missing")]
    if args.repeat > 1:
        for result in median_of_rounds(__file__, cases, args.repeat):
            print(json.dumps(result), flush=True)
        return
    run_cases(__file__, cases, args.timeout)


if __name__ == "__main__":
    main()
