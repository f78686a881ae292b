"""Speed of 002 Algorithms 1-3 against MDAV on the same quasi-identifiers.

Data: n records, 7 standard-normal quasi-identifiers (z-scored) and one confidential attribute
0.3 · x_1 + N(0, 1) (correlation ≈ 0.29, near the Patient Discharge set's 0.13-0.3), k = 2 and
t in --ts: the setting of 002 Figure 5. ``mdav`` is the microaggregation alone at k = 2 and at
the t-closeness-first cluster size; ``merge`` is MDAV then Alg. 1's merging; ``k-anonymity-first``
is Alg. 2 then merging; ``t-closeness-first`` is Alg. 3 then verification (and merging, if any).
Each line is the median of --repeat fresh processes (every run's seconds in ``runs``; the runs
taken in rounds of all the cases, so that a drifting machine slows each alike), each
after a JIT warm-up on 40,000 records (enough for the kernels that split passes between
threads to be compiled too).

Usage: python benchmarks/bench_tclose.py [--sizes 100000] [--ts 0.02,0.09,0.25]
           [--methods mdav,merge,t-closeness-first,k-anonymity-first] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, median_of_rounds


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 7))
    return X, 0.3 * X[:, 0] + rng.normal(size=n)


def one(case: dict) -> dict:
    from microagg.core.emd import GroundModel
    from microagg.partition.mdav import mdav
    from microagg.partition.tcloseness import cluster_size, t_close_partition

    def run(method: str, X: np.ndarray, c: np.ndarray) -> dict:
        if method == "mdav":
            labels = mdav(X, case["k_mdav"])
            return {"classes": int(labels.max()) + 1}
        result = t_close_partition(X, [GroundModel.ordered("c", c)], case["k"], case["t"],
                                   method=method, microaggregate=lambda k: mdav(X, k))
        return {"classes": int(result.labels.max()) + 1, "merges": result.merges,
                "effective_k": result.effective_k}

    out: dict = {}
    small_X, small_c = data(40_000, 1)

    def warmup() -> None:
        run(case["method"], small_X, small_c)

    def prepare():
        return data(case["n"])

    def timed(arrays) -> None:
        out.update(run(case["method"], *arrays))

    if case["method"] == "mdav":
        case = {**case, "k_mdav": cluster_size(case["n"], case["k"], case["t"])}
    result = measure(case, prepare, timed, warmup)
    return {**result, **out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--ts", default="0.02,0.09,0.25")
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--methods", default="mdav,merge,t-closeness-first")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    cases = [{"method": m, "n": int(n), "k": args.k, "t": float(t)}
             for n in args.sizes.split(",") for t in args.ts.split(",")
             for m in args.methods.split(",")]
    for result in median_of_rounds(__file__, cases, args.repeat):
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
