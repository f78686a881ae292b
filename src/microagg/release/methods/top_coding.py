"""Top and bottom coding of numeric columns (Hundepool et al. 2012 §3.4.4; sdcMicro
``topBotCoding``)."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

import numpy as np

from microagg.errors import ParameterError
from microagg.release.families.masking import MaskingMethod
from microagg.release.methods.base import release_method
from microagg.release.params import Choice, Interval, Optional, param

__all__ = ["Threshold", "TopBottomCoding"]


class Threshold(StrEnum):
    """What ``top`` and ``bottom`` are: values, or quantiles of each column."""

    VALUE = "value"
    QUANTILE = "quantile"


@release_method
class TopBottomCoding(MaskingMethod):
    """Top and bottom coding: every value above ``top`` is replaced by ``top``, every value
    below ``bottom`` by ``bottom``, so that the few extreme values that single a record out
    (the largest income, the oldest age) are no longer told apart. With ``at="quantile"`` the
    thresholds are each column's quantiles of those orders, taken as values the column holds
    (the inverse of its empirical distribution function, numpy's ``inverted_cdf``: never an
    interpolated threshold no record has), so every masked column is coded at its own value.
    Values between the thresholds are written unchanged; no randomness, no ex-ante guarantee.

    References
    ----------
    Hundepool, A. et al. (2012), *Statistical Disclosure Control*, Wiley, §3.4.4 (top and
    bottom coding); sdcMicro's ``topBotCoding``.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"income": [10.0, 20.0, 30.0, 40.0, 950.0]})
    >>> TopBottomCoding(top=100.0).release(frame).frame["income"].tolist()
    [10.0, 20.0, 30.0, 40.0, 100.0]
    >>> coded = TopBottomCoding(top=0.75, bottom=0.25, at="quantile").release(frame)
    >>> coded.frame["income"].tolist(), coded.report.parameters["at"]
    ([20.0, 20.0, 30.0, 40.0, 40.0], 'quantile')
    """

    name: ClassVar[str] = "top-bottom-coding"
    summary: ClassVar[str] = "top/bottom coding: extremes replaced by a threshold"
    parameter: ClassVar[str] = "top"
    unchanged_hint: ClassVar[str] = "move a threshold inside the range of the data"
    takes_missing: ClassVar[bool] = True  # a missing value stays missing

    top: float | None = param(Optional(Interval(float)), default=None,
                              help="Values above this are replaced by it.")
    bottom: float | None = param(Optional(Interval(float)), default=None,
                                 help="Values below this are replaced by it.")
    at: Threshold = param(Choice(Threshold), default=Threshold.VALUE,
                          help="value (default): `top` and `bottom` are values | quantile: "
                               "they are quantiles of each column, in [0, 1].")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.top is None and self.bottom is None:
            raise ParameterError("top", "or `bottom` is needed: the threshold(s) to code at")
        if self.at is Threshold.QUANTILE:
            for name in ("top", "bottom"):
                value = getattr(self, name)
                if value is not None and not 0.0 <= value <= 1.0:
                    raise ParameterError(name, f"must be a quantile in [0, 1] with `at` "
                                         f"quantile, got {value:g}")
        if self.top is not None and self.bottom is not None and self.bottom >= self.top:
            raise ParameterError("bottom", f"must be below `top`, got {self.bottom:g} and "
                                 f"{self.top:g}")

    def reads_other_records(self) -> str | None:
        if self.at is Threshold.QUANTILE:
            return "its thresholds are quantiles read off the data"
        return None

    @property
    def value(self) -> float:
        return float(self.top if self.top is not None else self.bottom)  # type: ignore[arg-type]

    def at_scale_refusal(self) -> str | None:
        """``None``: with thresholds that are values each record is coded on its own, and
        quantiles are found on the cluster as the order statistics one machine takes
        (:mod:`microagg.at_scale.topcode`)."""
        return None

    def thresholds(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bottom and top threshold of each column of the ``(n, p)`` matrix ``values``
        (-inf and inf where there is none).

        Parameters
        ----------
        values : ndarray
            The values of the columns coded (NaN where missing).

        Returns
        -------
        tuple of ndarray
            The ``p`` bottom thresholds and the ``p`` top thresholds.
        """
        p = values.shape[1]
        if self.at is Threshold.QUANTILE:
            # the quantiles of the values present (a missing value stays missing)
            high = (np.nanquantile(values, self.top, axis=0, method="inverted_cdf")
                    if self.top is not None else np.full(p, np.inf))
            low = (np.nanquantile(values, self.bottom, axis=0, method="inverted_cdf")
                   if self.bottom is not None else np.full(p, -np.inf))
        else:
            high = np.full(p, np.inf if self.top is None else self.top)
            low = np.full(p, -np.inf if self.bottom is None else self.bottom)
        return low, high

    def mask(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.clip(values, *self.thresholds(values))
