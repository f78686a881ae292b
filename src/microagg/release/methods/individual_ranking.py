"""Individual ranking: each attribute microaggregated on its own (paper 001 §3)."""

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

__all__ = ["IndividualRanking"]


@release_method
class IndividualRanking(KAnonymityMethod):
    """Individual-ranking microaggregation: the values of each attribute, sorted, in groups of
    k consecutive ones (the last of k to 2k − 1), each replaced by its group's mean (categories
    ordered by their distance to the most marginal one, 001 Alg. 2). Every value is shared by
    at least k records, but a combination of values need not be: the release is not
    k-anonymous as a whole, and the report says so.

    References
    ----------
    Paper 001 §3 (Defays and Nanopoulos 1993).

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> release = IndividualRanking(k=5).release(data.frame, schema=data.schema)
    >>> release.labels.shape[1] == len(release.report.columns)
    True
    """

    name: ClassVar[str] = "individual-ranking"
    summary: ClassVar[str] = "individual ranking: each attribute microaggregated on its own"
    univariate: ClassVar[bool] = True

    def labels(self, table: Table, columns: Sequence[str], *, threads: int | None = None,
               progress: Progress | None = None) -> np.ndarray:
        from microagg.partition.univariate import individual_ranking

        X, _ = numeric_part(table, columns)
        return individual_ranking(X, self.k, categorical=categorical_part(table, columns))
