"""Partitioners on mixed numeric-categorical data: UCI Adult's 30,162 complete rows, views
adult-mixed (age, hours-per-week, occupation, native-country) and adult-categorical.

Usage: python benchmarks/bench_mixed.py     (needs the reference data)
Prints one JSON object per (data, method, k): seconds after JIT warm-up.
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
    from microagg.data.table import encode
    from microagg.release.families.kanonymity import partition_table

    for name in ("adult-mixed", "adult-categorical"):
        data = datasets.load(name)
        table = encode(data.frame, data.schema)
        columns = list(data.schema.quasi_identifiers)
        partition_table(table, columns, 5)  # JIT warm-up and taxonomy loading
        for method, k in (("mdav", 5), ("vmdav", 5), ("insensitive", 174),
                          ("individual-ranking", 5)):
            start = time.perf_counter()
            labels = partition_table(table, columns, k, method=method)
            print(json.dumps({"benchmark": method, "data": name, "rows": table.n_rows,
                              "k": k, "clusters": int(labels.max()) + 1,
                              "seconds": round(time.perf_counter() - start, 3),
                              "peak_rss_mib": round(peak_rss_mib(), 1)}), flush=True)


if __name__ == "__main__":
    main()
