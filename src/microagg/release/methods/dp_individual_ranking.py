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

from typing import Any, ClassVar

import numpy as np

from microagg.options import Linkage
from microagg.release.dp.categorical import private_centroids
from microagg.release.dp.mechanisms import Budget, laplace_mechanism
from microagg.release.families.dp import DPMethod, DPStep, Progress
from microagg.release.inputs import DPInput
from microagg.release.methods.base import release_method
from microagg.release.params import Choice, Interval, param
from microagg.release.reports.report import NoiseLevel, NumericNoise, numeric_noise

__all__ = ["LINKAGE_HELP", "DPIndividualRanking", "noisy_ranked_means"]

LINKAGE_HELP = ("How the columns, clustered one by one, are put into rows: unlinked (default; "
                "each column or group in its own random order, the table epsilon-DP) | linked "
                "(each record keeps its own values together: each column or group DP on its "
                "own, the table NOT DP).")


def noisy_ranked_means(means: np.ndarray, *, name: str, low: float, high: float, k: int,
                       epsilon: float, rng: np.random.Generator
                       ) -> tuple[np.ndarray, dict[str, Any], NumericNoise]:
    """The Laplace release of one attribute's ranked group means (001 Alg. 1, sensitivity
    (b − a)/k by 001 Lemma 1), its sensitivity entry and its noise level for the report."""
    width = float(high - low)
    noisy, info = laplace_mechanism(means, sensitivity=width / k, epsilon=epsilon, lows=low,
                                    highs=high, rng=rng)
    entry = {"statistic": f"means of the {means.size} ranked groups of '{name}'",
             "mechanism": "Laplace", "formula": "(b_j - a_j) / k  (001 Lemma 1)",
             **info.as_dict()}
    return noisy, entry, numeric_noise(width, info.standard_deviation)


@release_method
class DPIndividualRanking(DPMethod):
    """ε-DP release by individual ranking plus noise (paper 001 Alg. 1-2; module docstring):
    each attribute grouped on its own by rank, the group means released by the Laplace
    mechanism with sensitivity (b − a)/k (001 Lemma 1) and ε/m per attribute, categorical
    groups by the exponential mechanism. Written unlinked by default (each column in its own
    random order, ε-DP).

    References
    ----------
    Paper 001, Algorithms 1-2, Lemmas 1-2.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(2000, 3, seed=0)
    >>> release = DPIndividualRanking(epsilon=1.0, k=50).release(
    ...     data.frame, schema=data.schema, columns=["age", "income"])
    >>> release.report.guarantee_scope.value
    'table'
    """

    name: ClassVar[str] = "individual-ranking"
    summary: ClassVar[str] = "individual ranking + noise: noisy group means per attribute"

    k: int = param(Interval(int, 1), help="Group size.")
    linkage: Linkage = param(Choice(Linkage), default=Linkage.UNLINKED, help=LINKAGE_HELP)

    def at_scale_refusal(self) -> str | None:
        """A distributed sort per attribute, written unlinked."""
        if self.linkage is Linkage.LINKED:
            return ("`linkage` linked needs every record's groups back in one row; the "
                    "default, unlinked, is the DP table")
        if self.clip is not None:
            return "`clip` needs every record's values in one place"
        return None

    def step(self, data: DPInput, budget: Budget, rng: np.random.Generator, *,
             threads: int | None, progress: Progress | None) -> DPStep:
        from microagg.core.aggregate import cluster_means
        from microagg.partition.univariate import individual_ranking

        shares = budget.split({name: 1.0 for name in data.columns},
                              "sequential composition over the m protected attributes (001 "
                              "Lemma 2)")
        labels = individual_ranking(data.X if data.numeric else None, self.k,
                                    categorical=data.part)
        numeric_values = np.empty_like(data.X)
        sensitivities: list[dict[str, Any]] = []
        noise: dict[str, NoiseLevel] = {}
        for j, name in enumerate(data.numeric):
            noisy, entry, noise[name] = noisy_ranked_means(
                cluster_means(data.X[:, j], labels[:, j])[:, 0], name=name,
                low=data.lows[j], high=data.highs[j], k=self.k, epsilon=shares[name], rng=rng)
            numeric_values[:, j] = noisy[labels[:, j]]
            sensitivities.append(entry)
        concepts = np.empty((data.n, len(data.categorical)), dtype=np.int64)
        for j, (name, metric) in enumerate(zip(data.categorical, data.part.metrics,
                                               strict=True)):
            concepts[:, j], entry, noise[name] = private_centroids(
                data.part.codes[:, j], labels[:, len(data.numeric) + j], metric,
                budget=budget, part=name, epsilon=shares[name], rng=rng, name=name,
                groups="ranked group",
                source="the argument of Soria-Comas et al. 2014, Alg. 4; see docs/algorithms.md",
                group_size=self.k)
            sensitivities.append(entry)
        return DPStep(
            numeric_values=numeric_values, concepts=concepts, labels=labels,
            description="individual-ranking microaggregation + Laplace / exponential "
                        "mechanism (Sánchez et al. 2016, Alg. 1-2)",
            groups=int(labels[:, 0].max()) + 1, sensitivities=sensitivities, noise=noise,
            linkage=self.linkage)
