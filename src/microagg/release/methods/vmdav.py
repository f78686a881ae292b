"""V-MDAV: variable-size MDAV (Solanas and Martínez-Ballesté 2006)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from microagg.data.table import Table
from microagg.release.families.kanonymity import Progress, categorical_part
from microagg.release.methods.base import release_method
from microagg.release.methods.mdav import MDAV
from microagg.release.params import Interval, param

__all__ = ["VMDAV"]


@release_method
class VMDAV(MDAV):
    """k-anonymous microaggregation by V-MDAV: MDAV's clusters extended, one record at a time,
    while the nearest outside record is closer than ``gamma`` times its distance to the rest,
    so that clusters take k to 2k − 1 records.

    References
    ----------
    Solanas, A. and Martínez-Ballesté, A. (2006), V-MDAV: a multivariate microaggregation
    with variable group size.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> release = VMDAV(k=5, gamma=0.5).release(data.frame, schema=data.schema)
    >>> 5 <= release.report.clusters["smallest"] <= release.report.clusters["largest"] <= 9
    True
    """

    name: ClassVar[str] = "vmdav"
    summary: ClassVar[str] = "V-MDAV: clusters of k to 2k - 1 records"
    takes_missing: ClassVar[bool] = False

    gamma: float = param(Interval(float, 0), default=0.2,
                         help="How readily a cluster grows past k records: the nearest record "
                              "outside joins while it is closer than gamma times its "
                              "distance to the rest (default 0.2; 0: clusters of k).")

    def labels(self, table: Table, columns: Sequence[str], *, threads: int | None = None,
               progress: Progress | None = None) -> np.ndarray:
        from microagg.partition.mdav import vmdav

        return vmdav(self.scaled(table, columns), self.k, self.gamma,
                     categorical=categorical_part(table, columns), threads=threads,
                     progress=progress)

    def reported(self, has_categories: bool) -> dict[str, Any]:
        return {**super().reported(has_categories), "gamma": self.gamma}
