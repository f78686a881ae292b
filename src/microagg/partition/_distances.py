"""Exact squared distances, the arithmetic every partition kernel shares.

Distances are squared Euclidean on the numeric attributes, accumulated attribute by attribute
in column order, plus the squared categorical contributions ``S[j, a, b]`` (000 eq. 8) of
attribute j between concepts a and b. Every implementation that must agree with these kernels
(tests, references) sums in the same order, so equal distances compare equal and tie rules
apply bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np

# Rows whose distances are computed together (the block stays in L1 cache).
BLOCK = 256


@numba.njit(cache=True, inline="always")
def farther(d1: float, i1: int, d2: float, i2: int) -> bool:
    """Whether (d1, i1) is farther than (d2, i2).

    Parameters
    ----------
    d1, d2 : float
        Distances.
    i1, i2 : int
        Row numbers.

    Returns
    -------
    bool
        True for the larger distance; on equal distances, for the lower row number.
    """
    return d1 > d2 or (d1 == d2 and i1 < i2)


@numba.njit(cache=True, inline="always")
def block_distances(Y: np.ndarray, C: np.ndarray, S: np.ndarray, q: np.ndarray,
                    qc: np.ndarray, b0: int, length: int, block: np.ndarray) -> None:
    """Squared distances of ``length`` consecutive columns to a point.

    Parameters
    ----------
    Y : ndarray of float64, shape (d, n)
        Column-major numeric values.
    C : ndarray of int64, shape (q, n)
        Column-major concepts of the categorical attributes.
    S : ndarray of float64, shape (q, K, K)
        Squared categorical contributions.
    q, qc : ndarray
        The point: numeric values and concepts.
    b0, length : int
        The first column and how many.
    block : ndarray of float64
        Receives block[t], the distance of column b0 + t: numeric squared differences, then
        the categorical lookups S[j, qc[j], concept].
    """
    for t in range(length):
        block[t] = 0.0
    for j in range(Y.shape[0]):
        qj = q[j]
        # A slice view indexed from 0 lets LLVM vectorize this loop (an offset index into the
        # whole column does not); the arithmetic is unchanged.
        column = Y[j, b0:b0 + length]
        for t in range(length):
            diff = column[t] - qj
            block[t] += diff * diff
    for j in range(C.shape[0]):
        lookup = S[j, qc[j]]
        concepts = C[j, b0:b0 + length]
        for t in range(length):
            block[t] += lookup[concepts[t]]


@numba.njit(cache=True, inline="always")
def exact_distance(rows: np.ndarray, concepts: np.ndarray, S: np.ndarray, row: int,
                   q: np.ndarray, qc: np.ndarray) -> float:
    """Squared distance of one row to a point.

    Parameters
    ----------
    rows : ndarray of float64, shape (n, d)
        Row-major numeric values.
    concepts : ndarray of int64, shape (n, q)
        Row-major concepts.
    S : ndarray of float64, shape (q, K, K)
        Squared categorical contributions.
    row : int
        The row.
    q, qc : ndarray
        The point: numeric values and concepts.

    Returns
    -------
    float
        The numeric attributes' squared differences in column order, then the categorical
        contributions.
    """
    total = 0.0
    for j in range(q.shape[0]):
        diff = rows[row, j] - q[j]
        total += diff * diff
    for j in range(qc.shape[0]):
        total += S[j, qc[j], concepts[row, j]]
    return total
