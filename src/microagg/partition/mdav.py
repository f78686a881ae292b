"""MDAV and V-MDAV: multivariate fixed- and variable-size microaggregation.

MDAV (Domingo-Ferrer & Torra 2005; paper 000, Algorithm 1). On the rows not yet clustered:

    while at least 3k rows remain:
        c   <- centroid (mean) of the remaining rows
        x_r <- remaining row farthest from c
        x_s <- remaining row farthest from x_r
        cluster x_r with its k-1 nearest remaining rows
        cluster x_s with its k-1 nearest rows still unassigned
    if at least 2k rows remain:
        cluster the row farthest from the centroid with its k-1 nearest
    the remaining k..2k-1 rows form the last cluster

Distances are Euclidean on the matrix given (scale it first; see :mod:`microagg.distance`).
Ties are broken by the lowest row number, for the farthest and for the nearest rows alike.
x_s is taken among the rows left after x_r's cluster is removed: this is the same row as "the
farthest from x_r" in every case except the degenerate one where that row is among x_r's k-1
nearest (all remaining rows equidistant from x_r), which the plain statement leaves undefined.
The centroid is the correctly rounded mean of the remaining rows, kept in double-double
running sums. The result is exactly the partition of the definition (tests compare it with a
direct implementation).

V-MDAV (Solanas & Martínez-Ballesté 2006) lets groups grow from k up to 2k-1 records when the
next record is much closer to the group than to the rest: see :func:`vmdav`.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from microagg.errors import InputError
from microagg.partition import _kernels
from microagg.partition._kernels import (
    _farther,
    dd_accumulate,
    dd_total,
    heap_offer,
    precedes,
    remove_row,
    scan,
)
from microagg.partition._validate import check_matrix

__all__ = ["mdav", "vmdav"]

Progress = Callable[[int], None]

# Clusters formed per call of the compiled loop between two progress reports.
_BATCH = 2048


@numba.njit(cache=True)
def _chunks(m: int, threads: int, parallel_min: int) -> int:
    return 1 if m < parallel_min else threads


class _State:
    """Scratch arrays of one MDAV run (kept between batches)."""

    def __init__(self, X: np.ndarray, k: int) -> None:
        n = X.shape[0]
        # A copy: the compact set is rearranged in place (X.T of a one-column X is a view).
        self.Y = np.array(X.T, order="C", copy=True)
        self.idx = np.arange(n, dtype=np.int64)
        self.pos = np.arange(n, dtype=np.int64)
        self.labels = np.full(n, -1, dtype=np.int64)
        self.hi, self.lo = dd_total(self.Y, n)
        threads = numba.get_num_threads()
        near = max(k - 1, 1)
        self.heap_d = np.empty((threads, near))
        self.heap_i = np.empty((threads, near), dtype=np.int64)
        self.far_d = np.empty(threads)
        self.far_i = np.empty(threads, dtype=np.int64)
        self.sizes = np.empty(threads, dtype=np.int64)
        self.m = n
        self.next_label = 0
        self.parallel_min = _kernels.PARALLEL_MIN_ROWS  # read at run time: tests lower it
        # Rows sorted by distance to an anchor point, for farthest-from-centroid queries.
        self.rows = np.ascontiguousarray(X)
        self.anchor = self.hi / n
        self.rho = np.empty(n)
        self.order = np.empty(n, dtype=np.int64)
        self.sweep = np.zeros(3, dtype=np.int64)  # [head, length of order, rows scanned]
        _reanchor(self.rows, self.idx, n, self.anchor, self.rho, self.order, self.sweep)


@numba.njit(cache=True)
def _query(Y, idx, m, q, skip, near, heap_d, heap_i, far_d, far_i, sizes, out_near,
           parallel_min):
    """Nearest ``near`` remaining rows to q (into out_near, unordered) and the farthest row,
    excluding original row ``skip``. Returns (number of nearest found, farthest row)."""
    chunks = _chunks(m, far_d.shape[0], parallel_min)
    ties_by_row = np.empty((0, 0))  # no tie-break columns: ties go to the lower row number
    scan(Y, idx, m, q, skip, near, chunks, heap_d, heap_i, far_d, far_i, sizes, ties_by_row)
    far = -1
    far_dist = -1.0
    for c in range(chunks):
        if far_i[c] >= 0 and (far < 0 or _farther(far_d[c], far_i[c], far_dist, far)):
            far = far_i[c]
            far_dist = far_d[c]
    if chunks == 1:
        size = sizes[0]
        for t in range(size):
            out_near[t] = heap_i[0, t]
        return size, far
    merged_d = np.empty(max(near, 1))
    size = 0
    for c in range(chunks):
        for t in range(sizes[c]):
            size = heap_offer(merged_d, out_near, size, near, heap_d[c, t], heap_i[c, t],
                              ties_by_row)
    return size, far


@numba.njit(cache=True)
def _cluster(Y, idx, pos, m, hi, lo, labels, label, members, count):
    for t in range(count):
        row = members[t]
        labels[row] = label
        dd_accumulate(hi, lo, Y, pos[row], -1.0)
        m = remove_row(Y, idx, pos, m, row)
    return m


# A farthest-point scan may stop when no row further down the anchor order can beat the best
# squared distance found: d(x, c) <= rho(x) + d(anchor, c), inflated by this factor to cover the
# rounding of the computed distances (relative error below (d + 3) * 2^-53 for d < 10^5).
_BOUND_SLACK = 1.0 + 1e-10


@numba.njit(cache=True)
def _reanchor(rows, idx, m, anchor, rho, order, sweep):
    """Distances of the remaining rows to ``anchor``; ``order`` lists them farthest first."""
    d = rows.shape[1]
    keys = np.empty(m)
    for p in range(m):
        row = idx[p]
        total = 0.0
        for j in range(d):
            diff = rows[row, j] - anchor[j]
            total += diff * diff
        rho[row] = np.sqrt(total)
        keys[p] = -rho[row]
    perm = np.argsort(keys)
    for p in range(m):
        order[p] = idx[perm[p]]
    sweep[0] = 0
    sweep[1] = m
    sweep[2] = 0


@numba.njit(cache=True)
def _farthest_from(rows, labels, order, rho, anchor, sweep, c):
    """The remaining row farthest from c (ties: lowest row), scanning rows by decreasing
    distance to the anchor and stopping by the triangle inequality. Exact: every row that
    could tie or win is evaluated with the same squared-distance sum as the passes."""
    d = rows.shape[1]
    shift = 0.0
    for j in range(d):
        diff = c[j] - anchor[j]
        shift += diff * diff
    shift = np.sqrt(shift)
    head = sweep[0]
    while head < sweep[1] and labels[order[head]] >= 0:
        head += 1
    sweep[0] = head
    best = -1
    best_d = -1.0
    for p in range(head, sweep[1]):
        row = order[p]
        if labels[row] >= 0:
            continue
        if best >= 0:
            bound = rho[row] + shift
            if bound * bound * _BOUND_SLACK < best_d:
                break
        sweep[2] += 1
        total = 0.0
        for j in range(d):
            diff = rows[row, j] - c[j]
            total += diff * diff
        if best < 0 or _farther(total, row, best_d, best):
            best = row
            best_d = total
    return best


@numba.njit(cache=True)
def _farthest_from_centroid(rows, idx, m, labels, order, rho, anchor, sweep, c):
    """Farthest remaining row from the centroid c; re-anchors at c when scans grow long."""
    if sweep[2] > m // 8 + 64:
        for j in range(c.shape[0]):
            anchor[j] = c[j]
        _reanchor(rows, idx, m, anchor, rho, order, sweep)
    return _farthest_from(rows, labels, order, rho, anchor, sweep, c)


@numba.njit(cache=True)
def _grow(Y, idx, pos, m, hi, lo, labels, label, k, seed, q, members, heap_d, heap_i, far_d,
          far_i, sizes, parallel_min):
    """Cluster ``seed`` with its k-1 nearest remaining rows (q receives the seed's values).
    Returns the remaining count and the row farthest from the seed seen by the same pass."""
    for j in range(Y.shape[0]):
        q[j] = Y[j, pos[seed]]
    count, far = _query(Y, idx, m, q, seed, k - 1, heap_d, heap_i, far_d, far_i, sizes,
                        members, parallel_min)
    members[count] = seed
    return _cluster(Y, idx, pos, m, hi, lo, labels, label, members, count + 1), far


@numba.njit(cache=True)
def _mdav_batch(Y, idx, pos, m, hi, lo, labels, next_label, k, budget,
                heap_d, heap_i, far_d, far_i, sizes, parallel_min,
                rows, order, rho, anchor, sweep):
    """Form up to ``budget`` clusters; return (remaining rows, next label)."""
    d = Y.shape[0]
    members = np.empty(k, dtype=np.int64)
    centroid = np.empty(d)
    q = np.empty(d)
    formed = 0
    while formed < budget and m > 0:
        if m < 2 * k:  # the last cluster: every remaining row
            for t in range(m):
                labels[idx[t]] = next_label
                pos[idx[t]] = -1
            return 0, next_label + 1
        for j in range(d):
            centroid[j] = hi[j] / m
        r = _farthest_from_centroid(rows, idx, m, labels, order, rho, anchor, sweep, centroid)
        m, s = _grow(Y, idx, pos, m, hi, lo, labels, next_label, k, r, q, members, heap_d,
                     heap_i, far_d, far_i, sizes, parallel_min)
        next_label += 1
        formed += 1
        if m + k < 3 * k:  # 2k..3k-1 rows were left: one cluster, the rest forms the last
            continue
        if labels[s] >= 0:  # degenerate: x_s joined x_r's cluster; q still holds x_r
            _, s = _query(Y, idx, m, q, -1, 0, heap_d, heap_i, far_d, far_i, sizes,
                          members, parallel_min)
        m, _ = _grow(Y, idx, pos, m, hi, lo, labels, next_label, k, s, q, members, heap_d,
                     heap_i, far_d, far_i, sizes, parallel_min)
        next_label += 1
        formed += 1
    return m, next_label


def mdav(X: np.ndarray, k: int, *, progress: Progress | None = None) -> np.ndarray:
    """MDAV partition of the rows of ``X`` into clusters of k..2k-1 rows (paper 000, Alg. 1).

    Returns int64 labels, one per row, numbering clusters in the order they are formed.
    ``progress`` is called with the number of rows clustered so far.
    """
    X = check_matrix(X, k)
    state = _State(X, k)
    n = X.shape[0]
    while state.m > 0:
        state.m, state.next_label = _mdav_batch(
            state.Y, state.idx, state.pos, state.m, state.hi, state.lo, state.labels,
            state.next_label, k, _BATCH, state.heap_d, state.heap_i, state.far_d,
            state.far_i, state.sizes, state.parallel_min, state.rows, state.order, state.rho,
            state.anchor, state.sweep)
        if progress is not None:
            progress(n - state.m)
    return state.labels


# -- V-MDAV --------------------------------------------------------------------------------

@numba.njit(cache=True)
def _lower_gaps(Y, idx, m, q, gap):
    """gap[row] = min(gap[row], squared distance of row to q) over the remaining rows."""
    d = Y.shape[0]
    for p in range(m):
        total = 0.0
        for j in range(d):
            diff = Y[j, p] - q[j]
            total += diff * diff
        row = idx[p]
        if total < gap[row]:
            gap[row] = total


@numba.njit(cache=True)
def _vmdav_batch(Y, idx, pos, m, hi, lo, labels, next_label, k, gamma, centroid, gap, budget,
                 heap_d, heap_i, far_d, far_i, sizes, parallel_min, rows, order, rho, sweep):
    d = Y.shape[0]
    ties_by_row = np.empty((0, 0))
    members = np.empty(2 * k, dtype=np.int64)
    q = np.empty(d)
    formed = 0
    while formed < budget and m >= k:
        r = _farthest_from(rows, labels, order, rho, centroid, sweep, centroid)
        for j in range(d):
            q[j] = Y[j, pos[r]]
        count, _ = _query(Y, idx, m, q, r, k - 1, heap_d, heap_i, far_d, far_i, sizes,
                          members, parallel_min)
        members[count] = r
        count += 1
        for t in range(count):
            for j in range(d):
                q[j] = Y[j, pos[members[t]]]
            if t == 0:
                for p in range(m):
                    gap[idx[p]] = np.inf
            _lower_gaps(Y, idx, m, q, gap)
        m = _cluster(Y, idx, pos, m, hi, lo, labels, next_label, members, count)
        size = count
        while size < 2 * k - 1 and m > 0:
            e_in = -1
            d_in = 0.0
            for p in range(m):
                row = idx[p]
                if e_in < 0 or precedes(gap[row], row, d_in, e_in, ties_by_row):
                    e_in = row
                    d_in = gap[row]
            for j in range(d):
                q[j] = Y[j, pos[e_in]]
            found, _ = _query(Y, idx, m, q, e_in, 1, heap_d, heap_i, far_d, far_i, sizes,
                              members[size:], parallel_min)
            if found > 0:
                other = members[size]
                d_out = 0.0
                for j in range(d):
                    diff = Y[j, pos[other]] - q[j]
                    d_out += diff * diff
                if not np.sqrt(d_in) < gamma * np.sqrt(d_out):
                    break
            members[size] = e_in
            m = _cluster(Y, idx, pos, m, hi, lo, labels, next_label, members[size:], 1)
            size += 1
            _lower_gaps(Y, idx, m, q, gap)
        next_label += 1
        formed += 1
    return m, next_label


def _assign_leftovers(X: np.ndarray, labels: np.ndarray) -> None:
    """Rows still unlabelled join the cluster with the nearest centroid (lowest label on ties)."""
    left = np.flatnonzero(labels < 0)
    if left.size == 0:
        return
    count = int(labels.max()) + 1
    assigned = labels >= 0
    sums = np.zeros((count, X.shape[1]))
    np.add.at(sums, labels[assigned], X[assigned])
    centroids = sums / np.bincount(labels[assigned], minlength=count)[:, None]
    for row in left:
        distance = np.zeros(count)
        for j in range(X.shape[1]):
            distance += (centroids[:, j] - X[row, j]) ** 2
        labels[row] = int(np.argmin(distance))


def vmdav(X: np.ndarray, k: int, gamma: float = 0.2, *,
          progress: Progress | None = None) -> np.ndarray:
    """V-MDAV partition (Solanas & Martínez-Ballesté 2006): groups of k to 2k-1 rows.

    The centroid c of the whole data set is computed once. While at least k rows remain:
    the remaining row farthest from c and its k-1 nearest remaining rows form a group; the
    group is then *extended* one row at a time, up to 2k-1 rows: the remaining row e_in nearest
    to the group (minimum distance d_in to any member) joins it while d_in < gamma * d_out,
    where d_out is the distance from e_in to its nearest other remaining row. The fewer than k
    rows left at the end join the group with the nearest centroid, so that group may exceed
    2k-1 rows. ``gamma`` around 0.2 suits scattered data, around 1.1 clustered data.
    """
    X = check_matrix(X, k)
    if not np.isfinite(gamma) or gamma < 0:
        raise InputError(f"gamma must be a non-negative number, got {gamma}")
    state = _State(X, k)
    n = X.shape[0]
    centroid = state.hi / n
    gap = np.full(n, np.inf)
    while state.m >= k:
        state.m, state.next_label = _vmdav_batch(
            state.Y, state.idx, state.pos, state.m, state.hi, state.lo, state.labels,
            state.next_label, k, float(gamma), centroid, gap, _BATCH, state.heap_d,
            state.heap_i, state.far_d, state.far_i, state.sizes, state.parallel_min,
            state.rows, state.order, state.rho, state.sweep)
        if progress is not None:
            progress(n - state.m)
    _assign_leftovers(X, state.labels)
    if progress is not None:
        progress(n)
    return state.labels
