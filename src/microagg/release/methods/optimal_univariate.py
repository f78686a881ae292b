"""Optimal univariate microaggregation (Hansen and Mukherjee 2003)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from microagg.data.table import Table
from microagg.partition.univariate import optimal_univariate
from microagg.release.kanonymity import (
    KAnonymityMethod,
    Progress,
    categorical_part,
    numeric_part,
)

__all__ = ["OptimalUnivariate"]


@dataclass(frozen=True, kw_only=True)
class OptimalUnivariate(KAnonymityMethod):
    """Optimal univariate microaggregation: each attribute on its own, in groups of k to
    2k − 1 consecutive values that minimize the within-group sum of squares (a shortest path,
    Hansen and Mukherjee 2003). Like individual ranking, not k-anonymous as a whole.

    Parameters
    ----------
    k : int
        Smallest group size (at least 2).

    References
    ----------
    Hansen, S. L. and Mukherjee, S. (2003), A polynomial algorithm for optimal univariate
    microaggregation.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> release = OptimalUnivariate(k=5).release(data.frame, schema=data.schema)
    >>> release.report.method
    'optimal-univariate'
    """

    name: ClassVar[str] = "optimal-univariate"
    summary: ClassVar[str] = "optimal univariate: each attribute, least within-group SSE"
    univariate: ClassVar[bool] = True

    def labels(self, table: Table, columns: Sequence[str], *, threads: int | None = None,
               progress: Progress | None = None) -> np.ndarray:
        X, _ = numeric_part(table, columns)
        return optimal_univariate(X, self.k, categorical=categorical_part(table, columns))
