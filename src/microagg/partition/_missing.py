"""Distances and centroids over the values present: the compiled pieces shared by MDAV with
missing values (:mod:`microagg.partition.mdav_missing`) and by k-anonymous t-closeness on
records with missing values (:mod:`microagg.partition.tcloseness`).

A missing value is NaN in the numeric matrix X and code -1 among the concepts C. With p
attributes, O_x the attributes record x has and O_xy = O_x ∩ O_y,

    d²(x, y) = p / |O_xy| · Σ_{j ∈ O_xy} δ_j(x_j, y_j)²      (+∞ when O_xy is empty)

(:func:`missing_distance`), where δ_j is the difference of scaled numbers or the normalized
categorical distance of 000 eq. 8 (``S[j, a, b]`` holds its square). The centroid of a set of
records is the mean of each numeric attribute over the records that have it (a double-double
sum over the count, :func:`present_totals`) and the marginality centroid (000 eq. 5) of each
categorical attribute over the records that have it; a coordinate no record has stays
missing (:func:`present_centroid`).

The "remaining" records of a partitioner are kept in ``rest[:m]`` (row numbers, in no
particular order); their distances to a point go to ``dist[:m]`` (:func:`missing_distances`).
"""

from __future__ import annotations

import numba
import numpy as np

from microagg.core.threads import start_thread_pool
from microagg.partition._concepts import category_centroid
from microagg.partition._double_double import dd_add

# missing_distances reaches a parallel kernel and is called from other modules' cached kernels
start_thread_pool()

# Below this many remaining rows a distance pass runs on one thread: waking the others costs
# more than it saves, and far more when another process holds the cores.
PARALLEL_MIN_ROWS = 50_000


@numba.njit(cache=True, inline="always")
def missing_distance(X, C, S, row, q, qc):
    """d² (module docstring) of one row of (X, C) to the point (q, qc)."""
    total = 0.0
    both = 0
    for j in range(X.shape[1]):
        x = X[row, j]
        if not (np.isnan(x) or np.isnan(q[j])):
            diff = x - q[j]
            total += diff * diff
            both += 1
    for j in range(C.shape[1]):
        a = C[row, j]
        if a >= 0 and qc[j] >= 0:
            total += S[j, qc[j], a]
            both += 1
    return total * (X.shape[1] + C.shape[1]) / both if both > 0 else np.inf


@numba.njit(cache=True, parallel=True)
def _missing_distances_parallel(X, C, S, rest, m, q, qc, out):
    for t in numba.prange(m):
        out[t] = missing_distance(X, C, S, rest[t], q, qc)


@numba.njit(cache=True)
def missing_distances(X, C, S, rest, m, q, qc, out):
    """d² of the remaining rows rest[:m] to the point (q, qc), into out[:m]."""
    if m >= PARALLEL_MIN_ROWS:
        _missing_distances_parallel(X, C, S, rest, m, q, qc, out)
        return
    for t in range(m):
        out[t] = missing_distance(X, C, S, rest[t], q, qc)


@numba.njit(cache=True)
def farthest_position(dist, rest, m):
    """Position in rest[:m] of the farthest row (ties: lowest row number)."""
    best = 0
    for t in range(1, m):
        if dist[t] > dist[best] or (dist[t] == dist[best] and rest[t] < rest[best]):
            best = t
    return best


@numba.njit(cache=True)
def nearest_positions(dist, rest, m, skip, count, chosen):
    """Positions in rest[:m] of the ``count`` nearest rows other than position ``skip``
    (ties: lowest row number), into chosen[:count], nearest first."""
    if count == 0:
        return
    filled = 0
    for t in range(m):
        if t == skip:
            continue
        d, row = dist[t], rest[t]
        if filled == count:
            last = chosen[count - 1]
            if not (d < dist[last] or (d == dist[last] and row < rest[last])):
                continue
            filled -= 1
        i = filled
        while i > 0 and (d < dist[chosen[i - 1]]
                         or (d == dist[chosen[i - 1]] and row < rest[chosen[i - 1]])):
            chosen[i] = chosen[i - 1]
            i -= 1
        chosen[i] = t
        filled += 1


@numba.njit(cache=True)
def present_totals(X, C, rest, m, width):
    """(hi, lo, present, hist) of the rows rest[:m]: per numeric attribute the double-double
    sum (hi, lo) and the count of the values present (:mod:`._double_double`), per
    categorical attribute the rows per concept (``width`` concepts)."""
    hi = np.zeros(X.shape[1])
    lo = np.zeros(X.shape[1])
    present = np.zeros(X.shape[1], dtype=np.int64)
    hist = np.zeros((C.shape[1], width), dtype=np.int64)
    for t in range(m):
        add_row(X, C, rest[t], hi, lo, present, hist, 1)
    return hi, lo, present, hist


@numba.njit(cache=True)
def add_row(X, C, row, hi, lo, present, hist, sign):
    """Add one row to the totals of :func:`present_totals` (``sign`` 1) or take it out
    (``sign`` -1)."""
    for j in range(X.shape[1]):
        x = X[row, j]
        if not np.isnan(x):
            hi[j], lo[j] = dd_add(hi[j], lo[j], sign * x)
            present[j] += sign
    for j in range(C.shape[1]):
        if C[row, j] >= 0:
            hist[j, C[row, j]] += sign


@numba.njit(cache=True)
def present_centroid(hi, present, hist, distances, parents, ordinal, c, cc):
    """The centroid of the totals into (c, cc): means over the values present (the rounded
    double-double sum over the count, as :mod:`microagg.partition.mdav` takes the mean) and
    marginality centroids over the concepts present; missing (NaN, -1) where none is."""
    for j in range(hi.shape[0]):
        c[j] = hi[j] / present[j] if present[j] > 0 else np.nan
    for j in range(hist.shape[0]):
        cc[j] = category_centroid(hist[j], distances[j], parents[j], ordinal[j])
