"""ε-DP records by insensitive microaggregation and noise (paper 000 Alg. 3-4)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from microagg.options import Calibration, Reference
from microagg.release.dp.categorical import private_centroids
from microagg.release.dp.mechanisms import Budget, attribute_budgets
from microagg.release.dp.numeric import private_numeric
from microagg.release.families.dp import DPMethod, DPStep, Progress, small_k_warnings
from microagg.release.inputs import DPInput
from microagg.release.methods.base import release_method
from microagg.release.methods.insensitive import REFERENCE_HELP
from microagg.release.params import Choice, Interval, param
from microagg.release.reports.report import NoiseLevel

__all__ = ["CALIBRATION_HELP", "DPInsensitive"]

CALIBRATION_HELP = ("How epsilon is shared by the numeric attributes: correct (default; one "
                    "noise scale for all of them together, epsilon-DP) | per-attribute "
                    "(epsilon/m each with its own width; better when widths differ a lot, "
                    "epsilon-DP) | paper (every attribute spends the whole epsilon: only "
                    "(m epsilon)-DP, to reproduce published experiments).")


@release_method
class DPInsensitive(DPMethod):
    """ε-DP records by insensitive microaggregation plus noise (paper 000 Alg. 3-4): clusters
    whose membership changes by at most one record between neighbours (000 Alg. 2, from the
    declared domains), then each cluster's mean released by the Laplace mechanism (L1
    sensitivity c · Σ width / k over the c clusters, 000 §4) and each categorical centroid
    by the exponential mechanism (000 Alg. 4); every record gets its cluster's values.

    References
    ----------
    Paper 000, Algorithms 2-4 and §4.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(2000, 3, seed=0)
    >>> release = DPInsensitive(epsilon=1.0, k=100).release(
    ...     data.frame, schema=data.schema, columns=["age", "income"])
    >>> release.report.differentially_private, len(release.frame)
    (True, 2000)
    """

    name: ClassVar[str] = "insensitive"
    summary: ClassVar[str] = "insensitive microaggregation + noise: noisy cluster means"
    uses_threads: ClassVar[bool] = True

    k: int = param(Interval(int, 1), help="Cluster size.")
    reference: Reference = param(Choice(Reference), default=Reference.CORNERS,
                                 help=REFERENCE_HELP)
    calibration: Calibration = param(Choice(Calibration), default=Calibration.CORRECT,
                                     help=CALIBRATION_HELP)

    def at_scale_refusal(self) -> str | None:
        """One total order and one distributed sort: the single reference point only."""
        if self.reference is not Reference.SINGLE:
            return ("the cluster path sorts once, with `reference` single; the corner "
                    "sequence changes the order per cluster")
        if self.clip is not None:
            return "`clip` needs every record's values in one place"
        return None

    def step(self, data: DPInput, budget: Budget, rng: np.random.Generator, *,
             threads: int | None, progress: Progress | None) -> DPStep:
        from microagg.core.aggregate import cluster_means
        from microagg.partition.insensitive import insensitive

        numeric_epsilon, category_epsilon = attribute_budgets(
            budget, data.numeric, data.categorical, self.calibration,
            "sequential composition over attributes")
        labels = insensitive(data.X if data.numeric else None, self.k, data.lows, data.highs,
                             categorical=data.part, reference=self.reference, threads=threads,
                             progress=progress)
        clusters = int(labels.max()) + 1
        sensitivities: list[dict[str, Any]] = []
        noise: dict[str, NoiseLevel] = {}
        numeric_values = data.X
        if data.numeric:
            noisy, entries, noise = private_numeric(
                cluster_means(data.X, labels), data=data, factor=clusters / self.k,
                epsilon=numeric_epsilon, calibration=self.calibration, rng=rng,
                statistic="cluster means",
                formula="c / k  (Soria-Comas et al. 2014, §4; L1 over the matrix)")
            sensitivities += entries
            numeric_values = noisy[labels]
        concepts = np.empty((data.n, len(data.categorical)), dtype=np.int64)
        for j, (name, metric) in enumerate(zip(data.categorical, data.part.metrics,
                                               strict=True)):
            concepts[:, j], entry, noise[name] = private_centroids(
                data.part.codes[:, j], labels, metric, budget=budget,
                part=None if self.calibration is Calibration.PAPER else name,
                epsilon=category_epsilon[name], rng=rng, name=name, groups="cluster",
                source="Soria-Comas et al. 2014, Alg. 4 and eq. 6, with c for n/k",
                group_size=self.k)
            sensitivities.append(entry)
        return DPStep(
            numeric_values=numeric_values, concepts=concepts, labels=labels,
            description="insensitive microaggregation + Laplace / exponential mechanism "
                        "(Soria-Comas et al. 2014, Alg. 3-4)",
            groups=clusters, sensitivities=sensitivities, noise=noise,
            calibration=self.calibration, reference=self.reference.value,
            warnings=small_k_warnings(self.k, data.n))
