"""k-anonymous t-closeness on Census MCD: anjana (generalization with hierarchies, as ARX)
beside microagg's three algorithms of paper 002.

Data: Census, quasi-identifiers TAXINC and POTHVAL, confidential FEDTAX (002's MCD). anjana
gets quantile hierarchies for both quasi-identifiers (values; deciles; quartiles; halves; *)
and no suppression. Reported per method: run time, number of classes, smallest and average
class, and the normalized SSE of 002 eq. (5). A generalized value carries no number, so for
anjana each record's quasi-identifiers are replaced by the means of its class (the best a user
can recover from the intervals; this favours anjana).

Needs anjana (pip install anjana), which is not a dependency of microagg.
Usage: python reproduction/anjana_compare.py [--k 5] [--t 0.09]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

from microagg import datasets
from microagg.release import tclose

QUASI = ["TAXINC", "POTHVAL"]
CONFIDENTIAL = "FEDTAX"


def quantile_hierarchy(values: pd.Series) -> dict[int, np.ndarray]:
    levels = {0: values.to_numpy()}
    for level, parts in enumerate((10, 4, 2), start=1):
        bins = pd.qcut(values, parts, duplicates="drop")
        levels[level] = bins.astype(str).to_numpy()
    levels[4] = np.full(values.size, "*")
    return levels


def summary(name: str, original: pd.DataFrame, written: pd.DataFrame, seconds: float) -> dict:
    classes = written.groupby(QUASI, sort=False).ngroup().to_numpy()
    sizes = np.bincount(classes)
    sse = 0.0
    for column in QUASI:
        values = original[column].to_numpy(dtype=float)
        means = np.bincount(classes, weights=values) / sizes
        sse += np.mean(((values - means[classes]) / values.std()) ** 2)
    return {"method": name, "seconds": round(seconds, 3), "classes": int(sizes.size),
            "smallest": int(sizes.min()), "average": round(float(sizes.mean()), 1),
            "normalized_sse": round(sse / len(QUASI), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--t", type=float, default=0.09)
    args = parser.parse_args()
    census = datasets.load("census")
    frame = census.frame[[*QUASI, CONFIDENTIAL]].copy()
    for method in ("t-closeness-first", "k-anonymity-first", "merge"):
        tclose(frame.head(200), k=args.k, t=0.3, quasi=QUASI, confidential=[CONFIDENTIAL],
               method=method)  # compile first
        start = time.perf_counter()
        release = tclose(frame, k=args.k, t=args.t, quasi=QUASI, confidential=[CONFIDENTIAL],
                         method=method)
        seconds = time.perf_counter() - start
        print(json.dumps(summary(f"microagg {method}", frame, release.frame, seconds)))
    from anjana.anonymity import t_closeness

    hierarchies = {column: quantile_hierarchy(frame[column]) for column in QUASI}
    start = time.perf_counter()
    written = t_closeness(frame, [], QUASI, CONFIDENTIAL, args.k, args.t, 0, hierarchies)
    seconds = time.perf_counter() - start
    row = summary("anjana", frame, written, seconds)
    row["generalized"] = {c: sorted(map(str, written[c].unique()))[:4] for c in QUASI}
    print(json.dumps(row))


if __name__ == "__main__":
    main()
