"""Local suppression to k-anonymity on UCI Adult: 32,561 records, the 7 keys age,
workclass, education, marital-status, race, sex, native-country (workclass and
native-country with their missing values), k = 5.

Usage: python benchmarks/bench_suppress.py [--k 5] [--repeat 1]
Prints one JSON object per case, each run in a fresh process after the kernels are compiled
(a warm-up on 2,000 records): "suppression" is the two passes alone
(microagg.core.suppression.local_suppression on the key codes), "release" the whole
LocalSuppression release (codes, passes, the table written in memory, the frequencies of the
keys before and after and the verification of k-anonymity). Each gives the seconds, the
values suppressed and the peak RSS. sdcMicro's localSuppression on the same keys is measured
by reproduction/sdcmicro_suppress.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, median_of_runs

KEYS = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]


def one(case: dict) -> dict:
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
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    for benchmark in ("suppression", "release"):
        case = {"benchmark": benchmark, "data": "adult", "records": 32561, "keys": KEYS,
                "k": args.k}
        print(json.dumps(median_of_runs(__file__, case, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
