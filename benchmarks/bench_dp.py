"""Differentially private releases end to end (DataFrame in, Release out) on n records x d
uniform attributes with declared domains [0, 1], and the exact discrete Laplace sampler alone.

Usage: python benchmarks/bench_dp.py [--d 10]
Prints one JSON object per case: seconds after JIT warm-up and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, run_cases


def one(case: dict) -> dict:
    from microagg.release import dp_individual_ranking, dp_insensitive, dp_laplace
    from microagg.release.dp.samplers import discrete_laplace

    if case["benchmark"] == "discrete-laplace":
        def draw(size: int) -> np.ndarray:
            return discrete_laplace(case["scale"], size, case["seed"])
        return measure(case, prepare=lambda: case["draws"], run=draw,
                       warmup=lambda: draw(1000))
    n, d, k, epsilon = case["n"], case["d"], case.get("k"), case["epsilon"]
    columns = [f"x{j}" for j in range(d)]
    bounds = {c: (0.0, 1.0) for c in columns}
    run = {
        "dp-individual-ranking": lambda f: dp_individual_ranking(
            f, epsilon=epsilon, k=k, bounds=bounds, rng=np.random.default_rng(case["seed"])),
        "dp-insensitive": lambda f: dp_insensitive(
            f, epsilon=epsilon, k=k, bounds=bounds, rng=np.random.default_rng(case["seed"])),
        "dp-laplace": lambda f: dp_laplace(
            f, epsilon=epsilon, bounds=bounds, rng=np.random.default_rng(case["seed"])),
    }[case["benchmark"]]
    rng = np.random.default_rng(case["seed"])

    def frame(rows: int) -> pd.DataFrame:
        return pd.DataFrame(rng.random((rows, d)), columns=columns)
    return measure(case, prepare=lambda: frame(n), run=run,
                   warmup=lambda: run(frame(max(4 * (k or 1), 300))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    d = args.d
    cases = [{"benchmark": "discrete-laplace", "draws": 10_000_000, "scale": scale, "seed": 0}
             for scale in (10, 2**40)]
    cases += [{"benchmark": "dp-individual-ranking", "n": 1_000_000, "d": d, "k": k,
               "epsilon": 1.0, "seed": 0} for k in (5, 100)]
    cases += [{"benchmark": "dp-insensitive", "n": 100_000, "d": d, "k": k, "epsilon": 1.0,
               "seed": 0} for k in (5, 316)]
    cases += [{"benchmark": "dp-laplace", "n": 1_000_000, "d": d, "epsilon": 1.0, "seed": 0}]
    run_cases(__file__, cases, args.timeout)


if __name__ == "__main__":
    main()
