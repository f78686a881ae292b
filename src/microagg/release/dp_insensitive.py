"""ε-DP microdata from insensitive microaggregation (paper 000, Algorithms 3 and 4).

1. Insensitive microaggregation (000 Alg. 2) with clusters of k records (the last k..2k-1),
   on values clamped to their declared domains; c = ⌊n/k⌋ clusters.
2. Numbers: the c × p matrix of cluster means is one query. On neighbouring data sets the i-th
   clusters differ in at most one record (000 Prop. 2), so every mean moves by at most
   (b_j − a_j) / k and the matrix by at most c · Σ_j (b_j − a_j) / k in L1 (000 §4). It is
   released with the Laplace mechanism (one draw per cluster and attribute) and clamped.
3. Categories (000 Alg. 4): for attribute j, each cluster's centroid is chosen among *all*
   concepts of the taxonomy by the exponential mechanism with quality −m(S, a). One record
   changes each cluster's marginalities by at most the diameter D_j of the categories, and all
   c clusters may change, so each choice gets ε_j / c (sequential composition):
   P(a) ∝ exp(ε_j (−m(S, a)) / (2 c D_j)), eq. 6 with c for n/k.
4. ε is split by sequential composition between the numeric block and each categorical
   attribute, in proportion to their numbers of attributes (one share per attribute).

``calibration="per-attribute"`` gives every attribute ε/m and releases each numeric
attribute's means as a query of its own, scale c (b_j − a_j) m / (k ε): ε-DP too, with less
noise relative to the width on attributes narrower than the average.
``calibration="paper"`` reproduces the figures of 000 §5: each attribute's centroids get
Laplace noise of scale c (b_j − a_j) / (k ε) and each categorical attribute the full ε. Every
attribute then spends ε, so the release is (m·ε)-DP, and the report says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from microagg.aggregate import cluster_means
from microagg.mechanisms import Budget, laplace_mechanism, make_rng
from microagg.partition._validate import check_k
from microagg.partition.insensitive import insensitive
from microagg.release.base import Release
from microagg.release.privacy import (
    attribute_budgets,
    calibration_warnings,
    prepare,
    privacy_report,
    private_centroids,
    released_frame,
)
from microagg.schema import Schema

__all__ = ["dp_insensitive"]


def dp_insensitive(frame: pd.DataFrame, epsilon: float, k: int, *,
                   schema: Schema | None = None, columns: Sequence[str] | None = None,
                   bounds: Mapping[str, tuple[float, float]] | None = None,
                   bounds_from_data: bool = False, reference: str = "corners",
                   calibration: str = "correct",
                   rng: np.random.Generator | int | None = None,
                   drop_incomplete: bool = False,
                   progress: Callable[[int], None] | None = None) -> Release:
    """ε-DP release of the quasi-identifiers by insensitive microaggregation + noise
    (000 Alg. 3-4). Returns a Release whose report is the privacy report."""
    seed = rng if isinstance(rng, int) else None
    rng = make_rng(rng)
    data = prepare(frame, schema=schema, columns=columns, bounds=bounds,
                   bounds_from_data=bounds_from_data, drop_incomplete=drop_incomplete)
    k = check_k(k, data.n)
    budget = Budget(epsilon)
    m = len(data.columns)
    numeric_epsilon, category_epsilon = attribute_budgets(
        budget, data.numeric, data.categorical, calibration,
        "sequential composition over attributes")
    labels = insensitive(data.X if data.numeric else None, k, data.lows, data.highs,
                         categorical=data.part, reference=reference, progress=progress)
    clusters = int(labels.max()) + 1
    sensitivities: list[dict[str, Any]] = []
    numeric_values = data.X
    if data.numeric:
        means = cluster_means(data.X, labels)
        widths = data.highs - data.lows
        if calibration == "correct":
            noisy, info = laplace_mechanism(means, clusters * float(widths.sum()) / k,
                                            numeric_epsilon, data.lows, data.highs, rng)
            sensitivities.append({
                "statistic": f"cluster means ({clusters} clusters x {len(data.numeric)} "
                             "attributes)",
                "mechanism": "Laplace",
                "formula": "c * sum_j (b_j - a_j) / k  (000 §4; L1 over the matrix)",
                **info.as_dict()})
        else:
            noisy = np.empty_like(means)
            for j, name in enumerate(data.numeric):
                noisy[:, j], info = laplace_mechanism(
                    means[:, j], clusters * float(widths[j]) / k, numeric_epsilon,
                    data.lows[j], data.highs[j], rng)
                sensitivities.append({
                    "statistic": f"cluster means of '{name}'", "mechanism": "Laplace",
                    "formula": f"c * (b_j - a_j) / k  (per attribute; {calibration} "
                               "calibration)",
                    **info.as_dict()})
        numeric_values = noisy[labels]
    concepts = np.empty((data.n, len(data.categorical)), dtype=np.int64)
    for j, (name, metric) in enumerate(zip(data.categorical, data.part.metrics, strict=True)):
        concepts[:, j], entry = private_centroids(
            data.part.codes[:, j], labels, metric, category_epsilon[name], rng, name=name,
            groups="cluster", source="000 Alg. 4, eq. 6 with c for n/k")
        sensitivities.append(entry)
    warnings = calibration_warnings(calibration, m, budget.epsilon)
    if k * k < data.n:
        warnings.append(f"k = {k} is below sqrt(n) = {data.n ** 0.5:.0f}: the centroids' "
                        "sensitivity c * sum(width) / k exceeds a single record's, so plain "
                        "Laplace noise on the records would add less noise (000 §4)")
    report = privacy_report(
        method="insensitive microaggregation + Laplace / exponential mechanism "
               "(paper 000, Alg. 3-4)",
        epsilon=budget.epsilon, ledger=budget.ledger, k=k, groups=clusters,
        sensitivities=sensitivities, data=data, warnings=warnings, seed=seed,
        multiplier=m if calibration == "paper" else 1)
    report["reference"] = reference
    report["calibration"] = calibration
    return Release(frame=released_frame(data, numeric_values, concepts), labels=labels,
                   report=report)
