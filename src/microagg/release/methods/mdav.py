"""MDAV: maximum distance to average vector (paper 000 Alg. 1; Domingo-Ferrer and
Torra 2005)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from microagg.core.distance import Categorical, scale
from microagg.data.table import Table
from microagg.options import Scaling
from microagg.release.families.kanonymity import (
    KAnonymityMethod,
    Progress,
    categorical_part,
    numeric_part,
    resolve_scaling,
)
from microagg.release.methods.base import release_method
from microagg.release.params import Choice, param

__all__ = ["MDAV"]

SCALING_HELP = ("How numeric attributes are scaled before record distances are measured: "
                "auto (default: zscore when every attribute is numeric, range when some are "
                "categories) | zscore (each value in standard deviations from its mean) | "
                "range (each value divided by its domain's width, so that it weighs like a "
                "category) | none (raw units: a wide attribute dominates).")


@release_method
class MDAV(KAnonymityMethod):
    """k-anonymous microaggregation by MDAV (paper 000 Alg. 1): clusters of exactly k records
    (the last of k to 2k − 1) built around the records farthest from the centroid; every
    value of the masked columns is replaced by its cluster's mean (numbers) or marginality
    centroid (categories, 000 eq. 5). The same partitions as sdcMicro's ``mdav``.

    References
    ----------
    Domingo-Ferrer, J. and Torra, V. (2005); paper 000, Algorithm 1.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> release = MDAV(k=5).release(data.frame, schema=data.schema)
    >>> release.report.k_anonymity["holds"], release.report.clusters["smallest"]
    (True, 5)
    """

    name: ClassVar[str] = "mdav"
    summary: ClassVar[str] = "MDAV: clusters of k similar records, the same as sdcMicro's"
    uses_threads: ClassVar[bool] = True
    takes_missing: ClassVar[bool] = True

    scaling: Scaling = param(Choice(Scaling), default=Scaling.AUTO, help=SCALING_HELP,
                             aliases=("--standardize",))

    def scaled(self, table: Table, columns: Sequence[str]) -> np.ndarray:
        X, bounds = numeric_part(table, columns)
        categorical = categorical_part(table, columns)
        return scale(X, resolve_scaling(self.scaling, bool(categorical.metrics)), bounds)

    def labels(self, table: Table, columns: Sequence[str], *, threads: int | None = None,
               progress: Progress | None = None) -> np.ndarray:
        """MDAV's partition; on records with missing values, MDAV with the distance over
        the attributes both records have (:func:`~microagg.partition.mdav_missing.mdav_missing`).

        A record whose ``columns`` are all missing is written all missing, and k-anonymity
        counts it for no record that has every value (:mod:`microagg.core.frequencies`,
        as sdcMicro's ``freqCalc``): it takes no place in a cluster. MDAV partitions the
        other records, and such records join the cluster formed last (their values change
        no mean), so that every cluster holds at least k records with a value."""
        X = self.scaled(table, columns)
        categorical = categorical_part(table, columns)
        blank = np.isnan(X).all(axis=1) & (categorical.codes < 0).all(axis=1)
        rest = np.flatnonzero(~blank)
        if rest.size == X.shape[0] or rest.size < self.k:  # none apart, or no cluster
            return self._partition(X, categorical, threads, progress)
        labels = np.empty(X.shape[0], dtype=np.int64)
        labels[rest] = self._partition(X[rest], Categorical(categorical.codes[rest],
                                                            categorical.metrics),
                                       threads, progress)
        labels[blank] = labels[rest].max()
        return labels

    def _partition(self, X: np.ndarray, categorical: Categorical, threads: int | None,
                   progress: Progress | None) -> np.ndarray:
        """MDAV, or MDAV over the values present where some are missing (each imported with
        its kernels when it runs)."""
        if np.isnan(X).any() or (categorical.codes < 0).any():
            from microagg.partition.mdav_missing import mdav_missing

            return mdav_missing(X, self.k, categorical=categorical, progress=progress,
                                threads=threads)
        from microagg.partition.mdav import mdav

        return mdav(X, self.k, categorical=categorical, threads=threads, progress=progress)

    def reported(self, has_categories: bool) -> dict[str, Any]:
        return {"scaling": resolve_scaling(self.scaling, has_categories).value}

    def at_scale_refusal(self) -> str | None:
        """Block MDAV (:mod:`microagg.at_scale.anonymize`): exact MDAV within blocks, on
        z-scores of numeric columns."""
        if type(self) is not MDAV:
            return "the cluster path runs block MDAV only"
        if self.scaling not in (Scaling.AUTO, Scaling.ZSCORE):
            return "block MDAV measures distances on z-scores (scaling zscore)"
        return None
