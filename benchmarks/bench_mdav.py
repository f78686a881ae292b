"""MDAV speed: n records x d standard-normal attributes, k = 5 (the sdcMicro reference setting).

Usage: python benchmarks/bench_mdav.py [--sizes 10000,50000,100000] [--d 10] [--k 5]
Prints one JSON object per size: seconds of the partition (after JIT warm-up) and peak RSS.
Reference, sdcMicro's C++ mdav on 2 cores: 10,000: 0.37 s; 50,000: 10.8 s; 100,000: 48 s.
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
    from microagg.partition.mdav import mdav, vmdav

    method = {"mdav": mdav, "vmdav": vmdav}[case["benchmark"]]
    rng = np.random.default_rng(case["seed"])
    return measure(case,
                   prepare=lambda: rng.standard_normal((case["n"], case["d"])),
                   run=lambda X: method(X, case["k"]),
                   warmup=lambda: method(rng.standard_normal((200, case["d"])), case["k"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--sizes", default="10000,50000,100000")
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--method", default="mdav", choices=["mdav", "vmdav"])
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    cases = [{"benchmark": args.method, "n": int(n), "d": args.d, "k": args.k, "seed": 0}
             for n in args.sizes.split(",")]
    run_cases(__file__, cases, args.timeout)


if __name__ == "__main__":
    main()
