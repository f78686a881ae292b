"""MDAV with z-score scaling against the R package sdcMicro's mdav, on CASC Census.

Reference figures were measured with sdcMicro (microaggregation(method = "mdav")):
4 attributes (FICA, FEDTAX, INTVAL, POTHVAL), SSE on the raw scale; all 13 attributes,
SSE/SST in percent on standardized data. Prints one JSON object per case.

Usage: python reproduction/sdcmicro_mdav.py
"""

from __future__ import annotations

import json

from microagg import datasets
from microagg.core.aggregate import replace_by_means
from microagg.core.distance import scale
from microagg.evaluation.utility import sse, sse_percent
from microagg.partition.mdav import mdav

FOUR = {2: 1.97187e9, 5: 7.14755e9, 33: 3.27162e10, 66: 5.05489e10}
ALL = {3: 5.6922, 5: 9.0884, 10: 14.1559}


def main() -> None:
    census = datasets.load("census").frame
    X = census[["FICA", "FEDTAX", "INTVAL", "POTHVAL"]].to_numpy(float)
    for k, reference in FOUR.items():
        ours = sse(X, replace_by_means(X, mdav(scale(X, "zscore"), k)))
        print(json.dumps({"attributes": 4, "k": k, "measure": "SSE",
                          "microagg": float(f"{ours:.6g}"), "sdcMicro": reference,
                          "relative_difference": ours / reference - 1}))
    A = census.to_numpy(float)
    for k, reference in ALL.items():
        ours = sse_percent(A, replace_by_means(A, mdav(scale(A, "zscore"), k)))
        print(json.dumps({"attributes": 13, "k": k, "measure": "SSE/SST %",
                          "microagg": round(ours, 4), "sdcMicro": reference}))


if __name__ == "__main__":
    main()
