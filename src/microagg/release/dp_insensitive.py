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

from microagg.core.aggregate import cluster_means
from microagg.core.mechanisms import Budget, attribute_budgets, make_rng
from microagg.data.schema import Schema
from microagg.options import Calibration, Reference, parse
from microagg.partition._validate import check_k
from microagg.partition.insensitive import insensitive
from microagg.release.base import Release
from microagg.release.categorical import private_centroids
from microagg.release.clipping import Clipping, clip_domains
from microagg.release.inputs import prepare_dp
from microagg.release.numeric import private_numeric
from microagg.release.publish import publish_dp
from microagg.release.report import categorical_noise

__all__ = ["dp_insensitive", "small_k_warnings"]


def small_k_warnings(k: int, n: int) -> list[str]:
    """The report's warning when k < √n (000 §4): then plain noise would be smaller."""
    if k * k >= n:
        return []
    return [f"k = {k} is below sqrt(n) = {n ** 0.5:.1f}: the centroids' sensitivity "
            "c * sum(width) / k exceeds a single record's, so plain Laplace noise on the "
            "records would add less noise (000 §4)"]


def dp_insensitive(frame: pd.DataFrame, *, epsilon: float, k: int,
                   schema: Schema | None = None, columns: Sequence[str] | None = None,
                   carry: Sequence[str] = (),
                   bounds: Mapping[str, tuple[float, float]] | None = None,
                   bounds_from_data: bool = False, reference: Reference | str = "corners",
                   calibration: Calibration | str = "correct",
                   rng: np.random.Generator | int | None = None,
                   drop_incomplete: bool = False, threads: int | None = None,
                   progress: Callable[[int], None] | None = None,
                   clip: Clipping | None = None) -> Release:
    """ε-DP release by insensitive microaggregation + noise (000 Alg. 3-4).

    Protects ``columns`` (default: every non-identifier column); ``carry`` names columns
    copied unchanged (the table is then not DP). Rows are written in random order. An integer
    ``rng`` is a seed: the report and a :class:`~microagg.errors.PrivacyLeakWarning` say that
    a known seed removes the noise. ``clip`` first clips the numeric domains at DP quantiles
    with a share of ε (:mod:`~microagg.release.clipping`). Returns a Release whose report is a
    :class:`~microagg.release.report.PrivacyReport`."""
    reference = parse(Reference, reference, "reference")
    calibration = parse(Calibration, calibration, "calibration")
    seeded = rng is not None and not isinstance(rng, np.random.Generator)
    rng = make_rng(rng)
    data = prepare_dp(frame, schema=schema, columns=columns, carry=carry, bounds=bounds,
                      bounds_from_data=bounds_from_data, drop_incomplete=drop_incomplete)
    k = check_k(k, data.n)
    budget = Budget(epsilon)
    data, clip_entries = clip_domains(data, clip, budget, rng)
    numeric_epsilon, category_epsilon = attribute_budgets(
        budget, data.numeric, data.categorical, calibration,
        "sequential composition over attributes")
    labels = insensitive(data.X if data.numeric else None, k, data.lows, data.highs,
                         categorical=data.part, reference=reference, threads=threads,
                         progress=progress)
    clusters = int(labels.max()) + 1
    sensitivities: list[dict[str, Any]] = list(clip_entries)
    noise: dict[str, dict[str, Any]] = {}
    numeric_values = data.X
    if data.numeric:
        noisy, entries, noise = private_numeric(
            cluster_means(data.X, labels), data=data, factor=clusters / k,
            epsilon=numeric_epsilon, calibration=calibration, rng=rng,
            statistic="cluster means", formula="c / k  (000 §4; L1 over the matrix)")
        sensitivities += entries
        numeric_values = noisy[labels]
    concepts = np.empty((data.n, len(data.categorical)), dtype=np.int64)
    for j, (name, metric) in enumerate(zip(data.categorical, data.part.metrics, strict=True)):
        concepts[:, j], entry = private_centroids(
            data.part.codes[:, j], labels, metric, epsilon=category_epsilon[name], rng=rng,
            name=name, groups="cluster", source="000 Alg. 4, eq. 6 with c for n/k")
        sensitivities.append(entry)
        noise[name] = categorical_noise(entry["exact_sampling"]["epsilon"], k,
                                        metric.n_concepts)
    return publish_dp(
        data, numeric_values=numeric_values, concepts=concepts, labels=labels,
        method="insensitive microaggregation + Laplace / exponential mechanism "
               "(paper 000, Alg. 3-4)",
        budget=budget, k=k, groups=clusters, sensitivities=sensitivities, noise=noise,
        rng=rng, seeded=seeded, calibration=calibration, reference=reference.value,
        warnings_=small_k_warnings(k, data.n))
