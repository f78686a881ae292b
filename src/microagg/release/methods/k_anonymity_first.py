"""k-anonymity-first microaggregation (paper 002 Alg. 2)."""

from __future__ import annotations

from typing import ClassVar

from microagg.options import TClosenessMethod
from microagg.release.families.tcloseness import TCloseMethod
from microagg.release.methods.base import release_method

__all__ = ["KAnonymityFirst"]


@release_method
class KAnonymityFirst(TCloseMethod):
    """k-anonymous t-closeness, k-anonymity first (paper 002 Alg. 2): MDAV-like clusters of k
    records, into which records are swapped while that lowers the cluster's EMD, until it is
    within t; any class still above t is merged with its nearest (Alg. 1). Runs on one
    thread.

    References
    ----------
    Paper 002, Algorithm 2.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> release = KAnonymityFirst(k=5, t=0.3).release(
    ...     data.frame, quasi=["age", "income"], confidential=["expenses"])
    >>> release.report.t_closeness_holds, release.report.clusters["smallest"]
    (True, 5)
    """

    name: ClassVar[str] = "k-anonymity-first"
    summary: ClassVar[str] = "k-anonymity first: k-anonymous clusters, swaps until t-close"
    algorithm: ClassVar[TClosenessMethod] = TClosenessMethod.K_ANONYMITY_FIRST
    uses_threads: ClassVar[bool] = False
