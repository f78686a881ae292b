"""Rank swapping (003 §5; Moore 1996)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from microagg.release.families.masking import MaskingMethod
from microagg.release.methods.base import release_method
from microagg.release.params import Interval, param

__all__ = ["RankSwap"]


@release_method
class RankSwap(MaskingMethod):
    """Rank swapping (003 §5; Moore 1996), as sdcMicro's ``rankSwap``: the values of each
    column, in increasing rank, swapped with a value drawn among those whose rank is higher
    by less than ``fraction`` · n. No ex-ante guarantee: measure the risk.

    References
    ----------
    Moore, R. (1996); paper 003 §5.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> RankSwap(fraction=0.1).release(data.frame, schema=data.schema, rng=1).report.method
    'rank-swap'
    """

    name: ClassVar[str] = "rank-swap"
    summary: ClassVar[str] = "rank swapping within a window of a fraction of the records"
    parameter: ClassVar[str] = "fraction"

    fraction: float = param(Interval(float, 0, 1, closed="right",
                                     hint="a fraction of the records: for a window of 5 % "
                                          "write 0.05"),
                            help="Swap window as a FRACTION of the records, in (0, 1] (0.05 "
                                 "= 5 %).")

    def at_scale_refusal(self) -> str | None:
        """Rank swapping visits each column's values in their order over every record, each
        swap taking a partner among the ranks the earlier swaps left free: it runs on one
        machine."""
        return ("its swaps follow each column's ranks over every record, one after another: "
                "run it on one machine (--engine local), or use correlated-noise on the "
                "cluster")

    def mask(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from microagg.core.masking import rank_swap

        return rank_swap(values, self.fraction, rng=rng)
