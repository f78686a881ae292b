"""Local suppression to k-anonymity (k = 5), on UCI Adult and at scale.

* Default: UCI Adult, 32,561 records, the 7 keys age, workclass, education,
  marital-status, race, sex, native-country (workclass and native-country with their
  missing values).
* ``--sizes 10000,100000,…``: synthetic tables of n records at each size, two kinds.
  ``unique``: 7 uniform keys of c categories, c the smallest with c^7 >= 50 n (so that most
  records are sample uniques at every n), 1 % of the values of two keys missing.
  ``adult-like``: Adult's 7 keys drawn independently from Adult's marginals (its skew, its
  numbers of categories and missing values), the suppression alone.

Usage: python benchmarks/bench_suppress.py [--k 5] [--repeat 1] [--sizes N,N,…]
           [--kinds unique,adult-like] [--timeout SECONDS]
Prints one JSON object per case, each run in a fresh process after the kernels are compiled
(a warm-up on 2,000 records): "suppression" is the two passes alone
(microagg.core.suppression.local_suppression on the key codes), "release" the whole
LocalSuppression release (codes, passes, the table written in memory, the frequencies of the
keys before and after and the verification of k-anonymity). Each gives the seconds, the
values suppressed and the peak RSS; the synthetic cases also the share of sample uniques
and whether the result is k-anonymous (counted again by microagg.core.frequencies). A case
that runs past the timeout prints its error instead. sdcMicro's localSuppression on Adult's
keys is measured by reproduction/sdcmicro_suppress.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, median_of_runs, run_cases

KEYS = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]


def unique_codes(n: int, seed: int = 0) -> np.ndarray:
    """n records of 7 uniform keys, most of them sample uniques (module docstring)."""
    rng = np.random.default_rng(seed)
    levels = 2
    while levels ** 7 < 50 * n:
        levels += 1
    codes = rng.integers(0, levels, (n, 7)).astype(np.int64)
    for key in (2, 5):
        codes[rng.random(n) < 0.01, key] = -1
    return codes


def adult_like_codes(n: int, seed: int = 0) -> np.ndarray:
    """n records of Adult's 7 keys, each drawn from its marginal in Adult (-1 missing)."""
    from microagg import datasets
    from microagg.core.frequencies import key_codes

    adult = key_codes(datasets.load("adult").frame, KEYS)
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.choice(adult[:, j], n) for j in range(len(KEYS))])


def synthetic(case: dict) -> dict:
    from microagg.core.frequencies import matching_counts
    from microagg.core.suppression import local_suppression

    make = unique_codes if case["data"] == "unique" else adult_like_codes
    k = case["k"]
    found: dict = {}

    def run(codes: np.ndarray) -> None:
        done = local_suppression(codes, k)
        found["suppressed"] = done.total
        found["greedy"], found["restored"] = done.greedy, done.restored
        found["codes"], found["cells"] = codes, done.suppressed

    result = measure(case, prepare=lambda: make(case["records"]), run=run,
                     warmup=lambda: local_suppression(make(2000, seed=1), k))
    codes, cells = found.pop("codes"), found.pop("cells")
    found["sample_uniques"] = round(float((matching_counts(codes) == 1).mean()), 3)
    codes[cells] = -1  # the table written, counted again
    found["k_anonymous"] = bool(matching_counts(codes).min() >= k)
    return {**result, **found}


def adult(case: dict) -> dict:
    from microagg import datasets
    from microagg.core.frequencies import key_codes
    from microagg.core.suppression import local_suppression
    from microagg.release.methods import LocalSuppression

    frame = datasets.load("adult").frame
    k = case["k"]
    found: dict = {}
    if case["benchmark"] == "suppression":
        def run(codes):
            found["suppressed"] = local_suppression(codes, k).total

        result = measure(case, prepare=lambda: key_codes(frame, KEYS), run=run,
                         warmup=lambda: local_suppression(key_codes(frame[:2000], KEYS), k))
    else:
        method = LocalSuppression(k=k)

        def release(data):
            report = method.release(data, keys=KEYS, roles={"fnlwgt": "weight"}).report
            found["suppressed"] = report.total_suppressions
            found["k_anonymous"] = report.k_anonymity.holds

        result = measure(case, prepare=lambda: frame, run=release,
                         warmup=lambda: method.release(frame[:2000], keys=KEYS,
                                                       roles={"fnlwgt": "weight"}))
    return {**result, **found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--sizes", help="synthetic tables of these sizes, not Adult")
    parser.add_argument("--kinds", default="unique,adult-like")
    parser.add_argument("--timeout", type=float, default=3600.0)
    args = parser.parse_args()
    if args.case:
        case = json.loads(args.case)
        print(json.dumps(adult(case) if case["data"] == "adult" else synthetic(case)))
        return
    if args.sizes:
        run_cases(__file__, [{"benchmark": "suppression", "data": kind, "records": int(n),
                              "keys": 7, "k": args.k}
                             for n in args.sizes.split(",") for kind in args.kinds.split(",")],
                  args.timeout)
        return
    for benchmark in ("suppression", "release"):
        case = {"benchmark": benchmark, "data": "adult", "records": 32561, "keys": KEYS,
                "k": args.k}
        print(json.dumps(median_of_runs(__file__, case, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
