"""Merging the classes of a microaggregation until t-close (paper 002 Alg. 1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from microagg.data.table import Table
from microagg.options import Method, TClosenessMethod
from microagg.release.families.kanonymity import KAnonymityMethod, Progress
from microagg.release.families.tcloseness import TCloseMethod
from microagg.release.methods.base import Family, build, release_method
from microagg.release.params import Choice, method_fields, param

__all__ = ["Merge"]


@release_method
class Merge(TCloseMethod):
    """k-anonymous t-closeness by merging (paper 002 Alg. 1): microaggregate the
    quasi-identifiers (``microaggregation``, any method of ``microagg microaggregate``), then
    merge the class farthest from t-closeness with its nearest class until every class is
    within t. Loses the most utility of the three.

    References
    ----------
    Paper 002, Algorithm 1.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> method = Merge(k=5, t=0.3, microaggregation="vmdav")
    >>> report = method.release(data.frame, quasi=["age", "income"],
    ...                         confidential=["expenses"]).report
    >>> report.classes_before_merging, report.merges, report.t_closeness_holds
    (40, 9, True)
    """

    name: ClassVar[str] = "merge"
    summary: ClassVar[str] = "merge: microaggregate, then merge classes until t-close"
    algorithm: ClassVar[TClosenessMethod] = TClosenessMethod.MERGE

    microaggregation: Method = param(
        Choice(Method), default=Method.MDAV,
        help="The microaggregation merge starts from.")

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

    def missing_refusal(self) -> str | None:
        from microagg.release.methods import lookup

        cls = lookup(Family.K_ANONYMITY, self.microaggregation.value)
        if getattr(cls, "takes_missing", False):
            return None
        return (f"merge starts from {self.microaggregation.value}, which does not take them: "
                "start from mdav (`microaggregation`)")

