"""Speed of `evaluate` (all metrics, record linkage included) on UCI Adult's 30,162 complete
rows, numeric columns, against an MDAV k=5 release and against the identity release (every
masked record distinct: the worst case for record linkage).

Usage: python benchmarks/bench_evaluate.py     (needs the reference data)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import peak_rss_mib


def main() -> None:
    from microagg import datasets
    from microagg.evaluation.evaluate import evaluate
    from microagg.release import microaggregate

    adult = datasets.load("adult", drop_incomplete=True)
    columns = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
               "hours-per-week"]
    frame = adult.frame
    evaluate(frame.iloc[:200], frame.iloc[:200], columns=columns)  # JIT warm-up
    masked = microaggregate(frame, k=5, schema=adult.schema, columns=columns).frame
    for name, release in (("mdav-k5", masked), ("identity", frame)):
        start = time.perf_counter()
        result = evaluate(frame, release, columns=columns)
        print(json.dumps({"benchmark": "evaluate", "data": "adult", "rows": len(frame),
                          "columns": len(columns), "release": name,
                          "seconds": round(time.perf_counter() - start, 3),
                          "record_linkage_percent": round(result["record_linkage_percent"], 3),
                          "peak_rss_mib": round(peak_rss_mib(), 1)}))


if __name__ == "__main__":
    main()
