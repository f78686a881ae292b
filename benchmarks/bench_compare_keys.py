"""A comparison of methods for categorical keys at equal risk on UCI Adult (32,561 rows,
missing values kept): 7 keys (age, education, marital-status, occupation, race, sex,
native-country), the sampling weight fnlwgt, a target of at most 0.02 expected
re-identifications; age recoded by intervals of width 5 (doubling per level), education,
marital-status, occupation and native-country up their ARX taxonomies.

The five methods are calibrated in one comparison (in a fresh process after warm-up), and
its HTML report written; the time of each method's search (its evaluations and its utility
at the value chosen) is read off the comparison's progress calls.

Usage: python benchmarks/bench_compare_keys.py [--seeds 10] [--repeat 1]
Prints one JSON object: the median seconds of --repeat runs, every run's seconds, the
seconds of each method and of the report (last run), the releases measured, the value
found, its risk and information loss, and the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, median_of_runs

KEYS = ["age", "education", "marital-status", "occupation", "race", "sex", "native-country"]
RECODE = ["age", "education", "marital-status", "occupation", "native-country"]
METHODS = ["local-suppression", "recode-then-suppress", "global-recoding", "invariant-pram",
           "mdav"]


def _compare(frame, schema, seeds, progress=None):
    from microagg.evaluation.key_compare import compare_keys

    return compare_keys(frame, target_risk=0.02, risk_kind="expected-reidentifications",
                        keys=KEYS, weight="fnlwgt", schema=schema, methods=METHODS,
                        recode=RECODE, widths={"age": 5}, seeds=seeds, progress=progress)


def one(case: dict) -> dict:
    from microagg import datasets
    from microagg.evaluation.html import comparison_html

    data = datasets.load("adult")
    found, spent = [], {}

    def run(frame):
        spent.clear()
        mark = [None, time.perf_counter()]

        def progress(text):
            now = time.perf_counter()
            if mark[0] is not None:
                spent[mark[0]] = spent.get(mark[0], 0.0) + now - mark[1]
            mark[:] = [text.split(":")[0], now]

        result = _compare(frame, data.schema, case["seeds"], progress)
        progress("report:")
        comparison_html(result)
        progress("done:")
        found.append(result)

    def warmup():
        small = data.frame.iloc[:400].reset_index(drop=True)
        _compare(small, data.schema, 2)

    timing = measure(case, prepare=lambda: data.frame, run=run, warmup=warmup)
    result = found[-1]
    return {**timing, "seconds_by_part": {k: round(v, 2) for k, v in spent.items()},
            "evaluations": sum(len(e.measures) for m in result.methods
                               for e in m.evaluations),
            "methods": {m.method.value: {"value": m.value, "status": m.status.value,
                                         "risk": m.risk,
                                         "information_loss": m.utility.loss}
                        for m in result.methods},
            "ranking": [m.value for m in result.ranking]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    case = {"benchmark": "compare-keys", "data": "adult", "rows": 32561, "keys": len(KEYS),
            "seeds": args.seeds}
    print(json.dumps(median_of_runs(__file__, case, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
