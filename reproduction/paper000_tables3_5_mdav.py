"""Paper 000, Tables 3 and 5, MDAV baseline columns (SSE_0, RL_0) on Adult.

Adult-Categorical (occupation, native-country) and Adult-Numerical-Categorical (+ age,
hours-per-week), 30,162 complete rows, k = 2, 174, 348. MDAV uses the eq. 8 distance: numeric
attributes divided by the width of the paper's domains [0, 1.5 max], categorical ones by
δ(a_b, a_t) of their taxonomy (here the ARX hierarchies, not the paper's WordNet 2.1
taxonomies). RL (000 §5.2) uses the same distance. SSE is reported twice: with raw values
(numeric raw differences, categorical raw δ) and with eq. 8-normalized values. The paper's
magnitudes fit the normalized reading for the mixed data set.

Usage: python reproduction/paper000_tables3_5_mdav.py
"""

from __future__ import annotations

import json

import numpy as np

from microagg import datasets
from microagg.core.aggregate import replace_by_centroids, replace_by_means
from microagg.core.distance import Categorical, scale
from microagg.data.table import encode
from microagg.evaluation.risk import record_linkage
from microagg.partition.mdav import mdav

PAPER = {
    "adult-categorical": {2: (10.1, 0.95), 174: (466, 0.057), 348: (650, 0.044)},
    "adult-mixed": {2: (58.4, 2.09), 174: (193, 1.32), 348: (631, 0.58)},
}


def run(name: str) -> None:
    data = datasets.load(name)
    table = encode(data.frame, data.schema)
    numeric = list(table.numeric_names)
    categorical = list(table.categorical_names)
    X = table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0))
    bounds = [(0.0, 1.5 * X[:, j].max()) for j in range(X.shape[1])]
    widths = np.array([hi - lo for lo, hi in bounds])
    part = Categorical(np.column_stack([table.code_column(c) for c in categorical]),
                       tuple(table.metric(c) for c in categorical))
    scales = np.array([m.scale for m in part.metrics])
    for k, (sse_paper, rl_paper) in PAPER[name].items():
        labels = mdav(scale(X, "range", bounds), k, categorical=part)
        masked_x = replace_by_means(X, labels) if numeric else X
        masked_c = np.column_stack([replace_by_centroids(part.codes[:, j], labels, m)
                                    for j, m in enumerate(part.metrics)])
        delta = np.column_stack([m.distances[part.codes[:, j], masked_c[:, j]]
                                 for j, m in enumerate(part.metrics)])
        sse_raw = float(np.sum((X - masked_x) ** 2) + np.sum(delta**2))
        sse_normalized = float(np.sum(((X - masked_x) / widths) ** 2)
                               + np.sum((delta / scales) ** 2))
        rl = record_linkage(X, masked_x, widths,
                            categories=(part.codes, masked_c, part.squared()))
        print(json.dumps({"data": name, "k": k, "sse_raw": round(sse_raw, 1),
                          "sse_normalized": round(sse_normalized, 1), "sse_paper": sse_paper,
                          "rl_percent": round(rl, 3), "rl_paper": rl_paper}))


def main() -> None:
    for name in PAPER:
        run(name)


if __name__ == "__main__":
    main()
