"""The remaining records of MDAV with missing values (:mod:`microagg.partition.mdav_missing`),
compacted and coded for the passes of :mod:`._coded_missing`.

The present values are coded as in :mod:`._coded`, on one common grid x^ = low + c * step with
c in 0..254 (:data:`PRESENT_LEVELS`); code 255 (:data:`MISSING`) marks a missing value. Each
record also keeps its number of attributes present, |O_x|, so that a pass counts only the
attributes the query lacks. As in :class:`._kernels.RemainingSet`, the remaining records
occupy the first m columns of the column-major arrays and leave by swap-remove.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from microagg.partition._coded import code_error_bound
from microagg.partition._kernels import Grid

# Codes 0..PRESENT_LEVELS hold present values; code MISSING marks a missing one.
PRESENT_LEVELS = 254
MISSING = 255


class MissingSet(NamedTuple):
    """The records not yet clustered, with everything the queries read.

    Attributes
    ----------
    values : ndarray of float64, shape (p, n)
        Values (NaN missing), column-major, compact.
    codes : ndarray of uint8, shape (p, n)
        Their codes (:data:`MISSING` where missing), compact.
    present : ndarray of int32, shape (n,)
        The number of attributes each record has, compact.
    row_of : ndarray of int64, shape (n,)
        The original row at each column.
    column_of : ndarray of int64, shape (n,)
        The column of each original row, -1 once it has left.
    row_values : ndarray of float64, shape (n, p)
        Values of all rows, row-major.
    concepts : ndarray of int64, shape (n, 0)
        No categorical attribute (the arguments of :func:`._missing.missing_distance`).
    squared : ndarray of float64, shape (0, 1, 1)
        Likewise.
    """

    values: np.ndarray
    codes: np.ndarray
    present: np.ndarray
    row_of: np.ndarray
    column_of: np.ndarray
    row_values: np.ndarray
    concepts: np.ndarray
    squared: np.ndarray


@numba.njit(cache=True)
def quantize_missing(Y: np.ndarray, m: int, codes: np.ndarray, low: np.ndarray
                     ) -> tuple[float, float]:
    """Code the present values of the first m columns of the column-major Y (p x n, NaN
    missing) into ``codes`` on one common grid x^ = low + c * step (``low`` is filled in),
    code :data:`MISSING` where a value is missing. Returns (step, delta), delta an upper bound
    on ||x - x^|| over the present values of each of those rows."""
    d = Y.shape[0]
    span = 0.0
    for j in range(d):
        lo = np.inf
        hi = -np.inf
        for t in range(m):
            x = Y[j, t]
            if not np.isnan(x):
                lo = min(lo, x)
                hi = max(hi, x)
        if lo > hi:  # no value present: every code of the column is MISSING
            lo = hi = 0.0
        low[j] = lo
        span = max(span, hi - lo)
    step = span / PRESENT_LEVELS if span > 0 else 1.0
    worst = np.zeros(m)
    for j in range(d):
        lo = low[j]
        for t in range(m):
            x = Y[j, t]
            if np.isnan(x):
                codes[j, t] = np.uint8(MISSING)
                continue
            c = min(max(np.rint((x - lo) / step), 0.0), float(PRESENT_LEVELS))
            codes[j, t] = np.uint8(c)
            error = x - (lo + c * step)
            worst[t] += error * error
    delta = 0.0
    for t in range(m):
        delta = max(delta, worst[t])
    return step, code_error_bound(delta)



def missing_set(X: np.ndarray) -> tuple[MissingSet, Grid]:
    """The remaining set of all rows of the numeric matrix X (n x p, NaN missing) and its
    grid (:func:`quantize_missing`)."""
    n = X.shape[0]
    # A copy: the compact set is rearranged in place.
    Y = np.array(X.T, order="C", copy=True)
    codes = np.empty(Y.shape, dtype=np.uint8)
    low = np.empty(Y.shape[0])
    step, delta = quantize_missing(Y, n, codes, low)
    rest = MissingSet(values=Y, codes=codes,
                      present=(~np.isnan(X)).sum(axis=1, dtype=np.int32),
                      row_of=np.arange(n, dtype=np.int64), column_of=np.arange(n, dtype=np.int64),
                      row_values=np.ascontiguousarray(X, dtype=np.float64),
                      concepts=np.empty((n, 0), dtype=np.int64), squared=np.zeros((0, 1, 1)))
    return rest, Grid(low, step, delta)


def recode_missing(rest: MissingSet, coded: Grid, m: int) -> Grid:
    """Codes for the first m remaining rows on a grid fitted to their present values alone
    (the grid's ``low`` is refilled in place)."""
    step, delta = quantize_missing(rest.values, m, rest.codes, coded.low)
    return Grid(coded.low, step, delta)


@numba.njit(cache=True)
def remove_missing_row(rest: MissingSet, m: int, row: int) -> int:
    """Remove original row ``row`` from the remaining set of size m; return the new size."""
    Y, codes, present, idx, pos = (rest.values, rest.codes, rest.present, rest.row_of,
                                   rest.column_of)
    p = pos[row]
    last = m - 1
    if p != last:
        for j in range(Y.shape[0]):
            Y[j, p] = Y[j, last]
            codes[j, p] = codes[j, last]
        present[p] = present[last]
        moved = idx[last]
        idx[p] = moved
        pos[moved] = p
    pos[row] = -1
    return last
