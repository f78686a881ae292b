"""A full comparison at equal risk (paper 003) on Census (1,080 × 13) and EIA (4,092 × 11):
MDAV, correlated noise, multiplicative noise and rank swapping calibrated to the risk of MDAV
k = 5, 10 seeds per randomized evaluation, exact EMD at the matched values, the scatter EMDs,
and the HTML report.

Usage: python benchmarks/bench_compare.py [--datasets census,eia] [--seeds 10] [--repeat 3]
Prints one JSON object per data set: the median seconds of --repeat runs (each in a fresh
process, after JIT warm-up), every run's seconds, the evaluations made and the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, median_of_runs


def one(case: dict) -> dict:
    from microagg import datasets
    from microagg.evaluation.compare import compare
    from microagg.evaluation.html import comparison_html

    data = datasets.load(case["dataset"])
    columns = (["MONTH", *data.schema.quasi_identifiers] if case["dataset"] == "eia"
               else list(data.frame.columns))
    evaluations = []

    def run(frame):
        result = compare(frame, target_risk="mdav=5", columns=columns, seeds=case["seeds"])
        comparison_html(result)
        evaluations.append(sum(len(m.evaluations) for m in result.methods))

    small = datasets.synthetic(300, 4, 1)
    timing = measure(case, prepare=lambda: data.frame, run=run,
                     warmup=lambda: compare(small.frame, target_risk="mdav=3", seeds=2))
    return {**timing, "evaluations": evaluations[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--datasets", default="census,eia")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    for name in args.datasets.split(","):
        case = {"dataset": name, "seeds": args.seeds}
        print(json.dumps(median_of_runs(__file__, case, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
