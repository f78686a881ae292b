"""The precision a numeric column is written with, and rounding a released column to it.

A survey file stores ages, counts and codes as whole numbers and amounts with a fixed number of
decimals. A release that replaces values by cluster means (``39.6666666666667``) or adds noise
changes that precision; rounding each released value back to the column's precision is
post-processing of the release:

* k-anonymity is kept, since every record of a cluster holds the same mean and so the same
  rounded value (equal values round equally);
* a differentially private output stays differentially private (post-processing);
* each value moves by at most half a unit of the last decimal, so the column's mean moves by at
  most that much too (and on average much less, the errors having either sign).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["MAX_DECIMALS", "decimals_of", "round_to"]

MAX_DECIMALS = 6
"""Columns that need more decimals than this are treated as exact (no rounding)."""


def decimals_of(values: np.ndarray, dtype: Any) -> int | None:
    """The number of decimals that writes every value of a numeric column exactly: 0 for an
    integer or boolean column (or floats that are all whole), the fewest ``d <= 6`` with
    ``round(v, d) == v`` for every ``v``, else ``None`` (full precision).

    Examples
    --------
    >>> import numpy as np
    >>> decimals_of(np.array([1.0, 2.0]), np.dtype("int64"))
    0
    >>> decimals_of(np.array([69.5, 70.25]), np.dtype("float64"))
    2
    >>> decimals_of(np.array([1 / 3]), np.dtype("float64")) is None
    True
    """
    if pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        return 0
    finite = values[np.isfinite(values)]
    for decimals in range(MAX_DECIMALS + 1):
        if np.array_equal(np.round(finite, decimals), finite):
            return decimals
    return None


def round_to(values: np.ndarray, decimals: int | None) -> np.ndarray:
    """``values`` rounded to ``decimals`` (half to even, as numpy rounds); ``None`` keeps them.

    Examples
    --------
    >>> round_to(np.array([39.6666666666667, 1.5, 2.5]), 0)
    array([40.,  2.,  2.])
    """
    if decimals is None:
        return values
    return np.round(values, decimals)
