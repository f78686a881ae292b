"""Optimal univariate microaggregation (Hansen and Mukherjee 2003)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from microagg.data.table import Table
from microagg.release.families.kanonymity import (
    KAnonymityMethod,
    Progress,
    categorical_part,
    numeric_part,
)
from microagg.release.methods.base import release_method

__all__ = ["OptimalUnivariate"]


@release_method
class OptimalUnivariate(KAnonymityMethod):
    """Optimal univariate microaggregation: each attribute on its own, in groups of k to
    2k − 1 consecutive values that minimize the within-group sum of squares (a shortest path,
    Hansen and Mukherjee 2003). Like individual ranking, not k-anonymous as a whole.

    References
    ----------
    Hansen, S. L. and Mukherjee, S. (2003), A polynomial algorithm for optimal univariate
    microaggregation.

    Examples
    --------
    Two natural groups of three, whatever the row order:

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"x": [1.0, 12.0, 2.0, 10.0, 3.0, 11.0]})
    >>> OptimalUnivariate(k=3).release(frame).frame["x"].tolist()
    [2.0, 11.0, 2.0, 11.0, 2.0, 11.0]
    """

    name: ClassVar[str] = "optimal-univariate"
    summary: ClassVar[str] = "optimal univariate: each attribute, least within-group SSE"
    univariate: ClassVar[bool] = True

    def labels(self, table: Table, columns: Sequence[str], *, threads: int | None = None,
               progress: Progress | None = None) -> np.ndarray:
        from microagg.partition.univariate import optimal_univariate

        X, _ = numeric_part(table, columns)
        return optimal_univariate(X, self.k, categorical=categorical_part(table, columns))
