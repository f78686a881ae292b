"""Differentially private categorical centroids (paper 000, Algorithm 4) and their
sensitivity, shared by the DP releases."""

from __future__ import annotations

from typing import Any

import numpy as np

from microagg.data.taxonomy import CategoryMetric
from microagg.release.dp.mechanisms import Budget, exponential_mechanism
from microagg.release.reports.report import ChoiceNoise, categorical_noise

__all__ = ["category_sensitivity", "marginality_quality", "private_centroids",
           "private_concepts"]


def category_sensitivity(metric: CategoryMetric) -> float:
    """Largest distance between two categories. Replacing one value v by v' changes the
    marginality of any concept a by ``|δ(v, a) − δ(v', a)| ≤ δ(v, v')`` (triangle inequality), so
    this bounds the sensitivity of a cluster's marginality. It is at least δ(a_b, a_t), the
    paper's choice, which does not bound it in every taxonomy."""
    leaves = metric.n_leaves
    return float(metric.distances[:leaves, :leaves].max())


def marginality_quality(codes: np.ndarray, labels: np.ndarray, metric: CategoryMetric
                        ) -> np.ndarray:
    """(clusters, concepts) qualities −m(S_c, a) (000 Alg. 4) of every concept a for the
    values S_c of every cluster c."""
    counts = np.zeros((int(labels.max()) + 1, metric.n_concepts))
    np.add.at(counts, (labels, codes), 1.0)
    return -(counts @ metric.distances)


def private_concepts(quality: np.ndarray, metric: CategoryMetric, *, budget: Budget,
                     part: str | None, epsilon: float, rng: np.random.Generator, name: str,
                     groups: str, source: str, group_size: int
                     ) -> tuple[np.ndarray, dict[str, Any], ChoiceNoise]:
    """One concept per row of ``quality`` (clusters × concepts, −m(S_c, a)), chosen among all
    concepts of the taxonomy by the exponential mechanism with sensitivity the diameter D
    (000 Alg. 4). One changed record may change every cluster, so each choice gets ε / c
    (sequential composition; eq. 6 with c for n/k), divided in the ``budget``'s ledger entry
    ``part`` (``epsilon`` is its share). Returns the concept of every cluster, the report
    entry and the noise level of a choice for groups of ``group_size`` records; ``groups``
    names the clusters ("cluster", "ranked group") and ``source`` the paper's step."""
    clusters = quality.shape[0]
    diameter = category_sensitivity(metric)
    per_cluster = budget.per_group(part, epsilon, clusters,
                                   f"one exponential mechanism per {groups}")
    chosen, info = exponential_mechanism(quality, sensitivity=diameter, epsilon=per_cluster,
                                         rng=rng)
    entry = {
        "statistic": f"marginality of each {groups}'s '{name}' values, over all "
                     f"{metric.n_concepts} concepts",
        "mechanism": "exponential",
        "formula": f"diameter D of the categories, per {groups}; epsilon / c per {groups} "
                   f"({source})",
        "sensitivity": diameter, "epsilon": epsilon, "epsilon_per_cluster": per_cluster,
        "exact_sampling": info.as_dict()}
    return chosen, entry, categorical_noise(info.epsilon, group_size, metric.n_concepts)


def private_centroids(codes: np.ndarray, labels: np.ndarray, metric: CategoryMetric, *,
                      budget: Budget, part: str | None, epsilon: float,
                      rng: np.random.Generator, name: str, groups: str, source: str,
                      group_size: int) -> tuple[np.ndarray, dict[str, Any], ChoiceNoise]:
    """:func:`private_concepts` for the clusters ``labels`` of the category codes ``codes``;
    returns the concept of every record, the report entry and the noise level."""
    chosen, entry, noise = private_concepts(
        marginality_quality(codes, labels, metric), metric, budget=budget, part=part,
        epsilon=epsilon, rng=rng, name=name, groups=groups, source=source,
        group_size=group_size)
    return chosen[labels], entry, noise
