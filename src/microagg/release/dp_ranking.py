"""ε-DP microdata from individual-ranking microaggregation (paper 001, Algorithms 1 and 2).

Each of the m protected attributes gets ε/m (sequential composition, 001 Lemma 2).

* Numeric attribute j (001 Alg. 1): individual ranking in groups of k consecutive values (the
  last k..2k-1), on values clamped to [a_j, b_j]. Changing one value shifts the sorted values
  between its old and new positions by one place; the group sums change by amounts of one sign
  that telescope to at most b_j − a_j, so the vector of group means has L1 sensitivity
  (b_j − a_j) / k (001 Lemma 1). It is released with the Laplace mechanism, one draw per group
  (scale m (b_j − a_j) / (k ε)), and clamped; every record gets its group's noisy mean.
* Categorical attribute j (001 Alg. 2): values are ordered by their distance to the most
  marginal category and grouped by k; each group's centroid is chosen among all concepts by the
  exponential mechanism with quality −m(S, a). Lemma 1's telescoping does not carry over to
  marginalities, so we use the argument of 000 Alg. 4 instead: one changed record can shift
  every one of the c_j groups by one value, each group's marginalities move by at most the
  diameter D_j of the categories, and each choice gets (ε/m) / c_j. See docs/algorithms.md.

Lemma 2 of 001 composes the m lists of noisy group means, not the table: which values share a
record follows every attribute's data-dependent grouping and carries no noise (two attributes,
n = 4, k = 2: a Clopper-Pearson audit finds ε ≥ 8.9 for a claimed 4). So by default
(``linkage="unlinked"``) every column is written in its own random order, which is exactly the
list of noisy means and ε-DP; ``linkage="linked"`` writes the paper's records, and the report
says each column is (ε/m)-DP and the table is not DP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.aggregate import cluster_means
from microagg.core.mechanisms import Budget, laplace_mechanism, make_rng
from microagg.data.schema import Schema
from microagg.options import Linkage, parse
from microagg.partition._validate import check_k
from microagg.partition.univariate import individual_ranking
from microagg.release.base import Release
from microagg.release.categorical import private_centroids
from microagg.release.clipping import Clipping, clip_domains
from microagg.release.inputs import prepare_dp
from microagg.release.publish import publish_dp
from microagg.release.report import categorical_noise, numeric_noise

__all__ = ["dp_individual_ranking", "noisy_ranked_means"]


def noisy_ranked_means(means: np.ndarray, *, name: str, low: float, high: float, k: int,
                       epsilon: float, rng: np.random.Generator
                       ) -> tuple[np.ndarray, dict[str, Any], dict[str, Any]]:
    """The Laplace release of one attribute's ranked group means (001 Alg. 1, sensitivity
    (b − a)/k by 001 Lemma 1), its sensitivity entry and its noise level for the report."""
    width = float(high - low)
    noisy, info = laplace_mechanism(means, sensitivity=width / k, epsilon=epsilon, lows=low,
                                    highs=high, rng=rng)
    entry = {"statistic": f"means of the {means.size} ranked groups of '{name}'",
             "mechanism": "Laplace", "formula": "(b_j - a_j) / k  (001 Lemma 1)",
             **info.as_dict()}
    return noisy, entry, numeric_noise(width, info.standard_deviation)


def dp_individual_ranking(frame: pd.DataFrame, *, epsilon: float, k: int,
                          schema: Schema | None = None, columns: Sequence[str] | None = None,
                          carry: Sequence[str] = (),
                          bounds: Mapping[str, tuple[float, float]] | None = None,
                          bounds_from_data: bool = False,
                          linkage: Linkage | str = "unlinked",
                          rng: np.random.Generator | int | None = None,
                          drop_incomplete: bool = False,
                          clip: Clipping | None = None) -> Release:
    """ε-DP release by individual ranking + noise (001 Alg. 1-2); columns, ``carry``, ``rng``
    and ``clip`` as in :func:`~microagg.release.dp_insensitive.dp_insensitive`, ``linkage``
    as in the module docstring. Returns a Release whose report is the privacy report."""
    linkage = parse(Linkage, linkage, "linkage")
    seeded = rng is not None and not isinstance(rng, np.random.Generator)
    rng = make_rng(rng)
    data = prepare_dp(frame, schema=schema, columns=columns, carry=carry, bounds=bounds,
                      bounds_from_data=bounds_from_data, drop_incomplete=drop_incomplete)
    k = check_k(k, data.n)
    budget = Budget(epsilon)
    data, sensitivities = clip_domains(data, clip, budget, rng)
    shares = budget.split({name: 1.0 for name in data.columns},
                          "sequential composition over the m protected attributes (001 "
                          "Lemma 2)")
    labels = individual_ranking(data.X if data.numeric else None, k, categorical=data.part)
    groups = int(labels[:, 0].max()) + 1
    numeric_values = np.empty_like(data.X)
    noise: dict[str, dict[str, Any]] = {}
    for j, name in enumerate(data.numeric):
        noisy, sensitivities_j, noise[name] = noisy_ranked_means(
            cluster_means(data.X[:, j], labels[:, j])[:, 0], name=name, low=data.lows[j],
            high=data.highs[j], k=k, epsilon=shares[name], rng=rng)
        numeric_values[:, j] = noisy[labels[:, j]]
        sensitivities.append(sensitivities_j)
    concepts = np.empty((data.n, len(data.categorical)), dtype=np.int64)
    for j, (name, metric) in enumerate(zip(data.categorical, data.part.metrics, strict=True)):
        concepts[:, j], entry = private_centroids(
            data.part.codes[:, j], labels[:, len(data.numeric) + j], metric,
            epsilon=shares[name], rng=rng, name=name, groups="ranked group",
            source="the argument of 000 Alg. 4; see docs/algorithms.md")
        sensitivities.append(entry)
        noise[name] = categorical_noise(entry["exact_sampling"]["epsilon"], k,
                                        metric.n_concepts)
    return publish_dp(
        data, numeric_values=numeric_values, concepts=concepts, labels=labels,
        method="individual-ranking microaggregation + Laplace / exponential mechanism "
               "(paper 001, Alg. 1-2)",
        budget=budget, k=k, groups=groups, sensitivities=sensitivities, noise=noise, rng=rng,
        seeded=seeded, linkage=linkage)
