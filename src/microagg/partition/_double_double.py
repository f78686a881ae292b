"""Double-double arithmetic: sums kept as an unevaluated pair (hi, lo) of float64.

A running sum from which rows are added and removed drifts in float64; kept as hi + lo, with
hi = fl(hi + lo) and the rounding error of every step carried in lo, it stays exact to about
106 bits, so that ``(hi + lo) / n`` is the correctly rounded mean however many rows came and
went. MDAV's centroids (compared bit for bit with sdcMicro's partitions), t-closeness's
centroids and the prefix sums of optimal univariate microaggregation all use the primitives of
this module, so they round alike.

Every step is :func:`two_sum` (Knuth's error-free sum) followed by a second :func:`two_sum`
that renormalizes the pair, in this order of operations; nothing here may be reassociated.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, inline="always")
def two_sum(a: float, b: float) -> tuple[float, float]:
    """Knuth's error-free sum.

    Parameters
    ----------
    a, b : float
        The terms.

    Returns
    -------
    s : float
        fl(a + b).
    e : float
        The rounding error: s + e == a + b exactly.
    """
    s = a + b
    bp = s - a
    return s, (a - (s - bp)) + (b - bp)


@numba.njit(cache=True, inline="always")
def dd_add(hi: float, lo: float, x: float) -> tuple[float, float]:
    """The double-double (hi, lo) plus the float x.

    Parameters
    ----------
    hi, lo : float
        The running sum, normalized (hi = fl(hi + lo)).
    x : float
        The term added.

    Returns
    -------
    tuple of float
        The normalized pair of the new sum.
    """
    s, e = two_sum(hi, x)
    return two_sum(s, e + lo)


@numba.njit(cache=True, inline="always")
def dd_add_corrected(hi: float, lo: float, x: float, x_error: float) -> tuple[float, float]:
    """The double-double (hi, lo) plus x + x_error, x_error a small correction of x (the
    rounding error of a product, say) folded into the low part.

    Parameters
    ----------
    hi, lo : float
        The running sum, normalized.
    x : float
        The term added.
    x_error : float
        Its correction, at most about an ulp of x.

    Returns
    -------
    tuple of float
        The normalized pair of the new sum.
    """
    s, e = two_sum(hi, x)
    return two_sum(s, e + lo + x_error)


@numba.njit(cache=True, inline="always")
def square_error(x: float, square: float) -> float:
    """The rounding error of a square (Dekker's product via Veltkamp's splitting).

    Parameters
    ----------
    x : float
        The value squared.
    square : float
        fl(x * x).

    Returns
    -------
    float
        x * x - square, exactly.
    """
    c = 134217729.0 * x  # 2^27 + 1
    hi = c - (c - x)
    lo = x - hi
    return ((hi * hi - square) + 2.0 * hi * lo) + lo * lo


@numba.njit(cache=True)
def dd_accumulate(hi: np.ndarray, lo: np.ndarray, values: np.ndarray, sign: float) -> None:
    """Add one record to per-attribute double-double sums.

    Parameters
    ----------
    hi, lo : ndarray of float64, shape (d,)
        The sums, updated in place: (hi, lo) += sign * values.
    values : ndarray of float64, shape (d,)
        The record's values (a row of a row-major matrix, or a column of a column-major one).
    sign : float
        1.0 to add the record, -1.0 to remove it.
    """
    for j in range(hi.shape[0]):
        hi[j], lo[j] = dd_add(hi[j], lo[j], sign * values[j])


@numba.njit(cache=True)
def dd_sums(Y: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-attribute double-double sums of the first m records, one record a column.

    Parameters
    ----------
    Y : ndarray of float64, shape (d, n)
        The records as columns (``X.T`` for a row-major X of shape (n, d)).
    m : int
        The records summed, columns 0..m-1, in that order.

    Returns
    -------
    hi, lo : ndarray of float64, shape (d,)
        The sums.
    """
    d = Y.shape[0]
    hi = np.zeros(d)
    lo = np.zeros(d)
    for i in range(m):
        dd_accumulate(hi, lo, Y[:, i], 1.0)
    return hi, lo


@numba.njit(cache=True)
def dd_prefix_sums(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Double-double prefix sums of values and of their squares (squares exact, through
    :func:`square_error`).

    Parameters
    ----------
    values : ndarray of float64, shape (n,)
        The values, summed in this order.

    Returns
    -------
    s1h, s1l, s2h, s2l : ndarray of float64, shape (n + 1,)
        Index i holds the sum of the first i values (s1) and of their squares (s2).
    """
    n = values.size
    s1h = np.zeros(n + 1)
    s1l = np.zeros(n + 1)
    s2h = np.zeros(n + 1)
    s2l = np.zeros(n + 1)
    for i in range(n):
        x = values[i]
        s1h[i + 1], s1l[i + 1] = dd_add(s1h[i], s1l[i], x)
        sq = x * x
        s2h[i + 1], s2l[i + 1] = dd_add_corrected(s2h[i], s2l[i], sq, square_error(x, sq))
    return s1h, s1l, s2h, s2l


@numba.njit(cache=True, inline="always")
def dd_range_sum(hi: np.ndarray, lo: np.ndarray, a: int, b: int) -> float:
    """The sum of values a..b-1 from double-double prefix sums, rounded to float64.

    Parameters
    ----------
    hi, lo : ndarray of float64
        Prefix sums as made by :func:`dd_prefix_sums`.
    a, b : int
        The first value and one past the last.

    Returns
    -------
    float
        (hi[b] + lo[b]) - (hi[a] + lo[a]), the high parts subtracted without error.
    """
    high, e = two_sum(hi[b], -hi[a])
    return high + (e + (lo[b] - lo[a]))
