"""Merging the classes of a microaggregation until t-close (paper 002 Alg. 1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from microagg.data.table import Table
from microagg.options import Method, TClosenessMethod
from microagg.release.kanonymity import KAnonymityMethod, Progress
from microagg.release.methods.base import Family, build
from microagg.release.params import Choice, method_fields, param
from microagg.release.tcloseness import TCloseMethod

__all__ = ["Merge"]


@dataclass(frozen=True, kw_only=True)
class Merge(TCloseMethod):
    """k-anonymous t-closeness by merging (paper 002 Alg. 1): microaggregate the
    quasi-identifiers (``microaggregation``, any method of ``microagg microaggregate``), then
    merge the class farthest from t-closeness with its nearest class until every class is
    within t. Loses the most utility of the three.

    Parameters
    ----------
    k : int
        Smallest class size (at least 2).
    t : float
        Largest EMD of a class's confidential distribution to the table's, in (0, 1].
    distance : GroundDistance or None
        EMD of nominal confidential attributes: equal (default) or hierarchical.
    scaling : Scaling
        Scaling of the numeric quasi-identifiers.
    microaggregation : Method
        The microaggregation to start from (default mdav).

    References
    ----------
    Paper 002, Algorithm 1.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> release = Merge(k=5, t=0.3).release(
    ...     data.frame, quasi=["age", "income"], confidential=["expenses"])
    >>> release.report.microaggregation
    'mdav'
    """

    name: ClassVar[str] = "merge"
    summary: ClassVar[str] = "merge (002 Alg. 1): microaggregate, then merge classes"
    algorithm: ClassVar[TClosenessMethod] = TClosenessMethod.MERGE

    microaggregation: Method = param(
        Choice(Method), default=Method.MDAV,
        help="The microaggregation merge starts from: mdav | vmdav | insensitive | ...")

    def microaggregation_labels(self, table: Table, quasi: Sequence[str], size: int, *,
                                threads: int | None, progress: Progress | None
                                ) -> np.ndarray:
        from microagg.release.methods import family, lookup

        cls = lookup(Family.K_ANONYMITY, self.microaggregation.value)
        takes_scaling = any(f.name == "scaling" for f in method_fields(cls))
        start = build(cls, {"k": size, "scaling": self.scaling if takes_scaling else None},
                      family(Family.K_ANONYMITY))
        assert isinstance(start, KAnonymityMethod)
        return start.labels(table, quasi, threads=threads if start.uses_threads else None,
                            progress=progress)

    def reported_microaggregation(self) -> str | None:
        return self.microaggregation.value

