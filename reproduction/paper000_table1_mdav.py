"""Paper 000, Table 1, MDAV baseline columns (SSE_0, RL_0) on Census, for several scalings.

Census attributes FICA, FEDTAX, INTVAL, POTHVAL; k = 2, 33, 66. The paper's domains are
[0, 1.5 x max] (000 §5.1) and its record distance is eq. 8 (attributes divided by the domain
width); RL uses that distance. Prints one JSON object per (scaling, k).

Usage: python reproduction/paper000_table1_mdav.py
"""

from __future__ import annotations

import json

import numpy as np

from microagg import datasets
from microagg.core.aggregate import replace_by_means
from microagg.core.distance import scale
from microagg.evaluation.risk import record_linkage
from microagg.evaluation.utility import sse
from microagg.partition.mdav import mdav

COLUMNS = ["FICA", "FEDTAX", "INTVAL", "POTHVAL"]
PAPER = {2: (3.07e9, 45.3), 33: (3.95e10, 2.96), 66: (5.09e10, 1.48)}


def main() -> None:
    X = datasets.load("census").frame[COLUMNS].to_numpy(float)
    paper_bounds = [(0.0, 1.5 * X[:, j].max()) for j in range(X.shape[1])]
    widths = np.array([hi - lo for lo, hi in paper_bounds])
    scalings = {
        "range, paper domains [0, 1.5 max]": ("range", paper_bounds),
        "range, data ranges": ("range", None),
        "zscore": ("zscore", None),
    }
    for name, (method, bounds) in scalings.items():
        for k, (sse_paper, rl_paper) in PAPER.items():
            masked = replace_by_means(X, mdav(scale(X, method, bounds), k))
            print(json.dumps({
                "scaling": name, "k": k,
                "sse": float(f"{sse(X, masked):.4g}"), "sse_paper": sse_paper,
                "rl_percent": round(record_linkage(X, masked, widths), 2),
                "rl_paper": rl_paper,
            }))


if __name__ == "__main__":
    main()
