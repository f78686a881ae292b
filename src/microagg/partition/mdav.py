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
    BLOCK,
    dd_accumulate,
    dd_total,
    exact_distance,
    farther,
    precedes,
    query,
    recode,
    remaining_set,
    remove_row,
    work_buffers,
)
from microagg.partition._validate import check_matrix

__all__ = ["mdav", "vmdav"]

Progress = Callable[[int], None]

# Clusters formed per call of the compiled loop between two progress reports.
_BATCH = 2048
# Candidate rows a chunk may keep in a coded pass before falling back to the exact pass.
_CANDIDATES = 4096
# The remaining rows are coded afresh each time this fraction of them has been clustered: MDAV
# removes the periphery first, so the span of what remains shrinks and the grid gets finer.
_RECODE_FRACTION = 0.8


class _State:
    """Everything one MDAV or V-MDAV run keeps between batches: the remaining set with its
    codes (see :mod:`microagg.partition._kernels`), the query buffers, the running sums of
    the remaining rows and the anchor-sorted order for farthest-from-centroid queries."""

    def __init__(self, X: np.ndarray, k: int) -> None:
        n = X.shape[0]
        self.rest, self.coded = remaining_set(X)
        self.work = work_buffers(numba.get_num_threads(), k - 1, _CANDIDATES)
        self.labels = np.full(n, -1, dtype=np.int64)
        self.hi, self.lo = dd_total(self.rest[0], n)
        self.m = n
        self.next_label = 0
        self.parallel_min = _kernels.PARALLEL_MIN_ROWS  # read at run time: tests lower it
        self.anchor = self.hi / n
        self.rho = np.empty(n)
        self.order = np.empty(n, dtype=np.int64)
        self.sweep = np.zeros(3, dtype=np.int64)  # [head, length of order, rows scanned]
        _reanchor(self.rest[4], self.rest[2], n, self.anchor, self.rho, self.order,
                  self.sweep)

    def run(self, batch, progress: Progress | None, minimum: int = 1) -> None:
        """Call ``batch(stop_below)`` while at least ``minimum`` rows remain, re-coding the
        remaining rows in between."""
        n = self.labels.size
        while self.m >= minimum:
            self.m, self.next_label = batch(int(self.m * _RECODE_FRACTION))
            if self.m:
                self.coded = recode(self.rest, self.coded, self.m)
            if progress is not None:
                progress(n - self.m)


@numba.njit(cache=True)
def _query(rest, coded, work, m, q, skip, near, want_far, out_near, parallel_min):
    """:func:`query` with ties broken by row number."""
    return query(rest, coded, work, m, q, skip, near, want_far, np.empty(max(near, 1)),
                 out_near, parallel_min, np.empty((0, 0)))


@numba.njit(cache=True)
def _cluster(rest, m, hi, lo, labels, label, members, count):
    """Give ``label`` to the ``count`` rows of ``members`` and remove them from the set."""
    Y, codes, idx, pos, _ = rest
    for t in range(count):
        row = members[t]
        labels[row] = label
        dd_accumulate(hi, lo, Y, pos[row], -1.0)
        m = remove_row(Y, codes, idx, pos, m, row)
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
        if best < 0 or farther(total, row, best_d, best):
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
def _grow(rest, coded, work, m, hi, lo, labels, label, k, seed, q, members, want_far,
          parallel_min):
    """Cluster ``seed`` with its k-1 nearest remaining rows (q receives the seed's values).
    Returns the remaining count and, if ``want_far``, the row farthest from the seed."""
    rows = rest[4]
    for j in range(q.shape[0]):
        q[j] = rows[seed, j]
    count, far = _query(rest, coded, work, m, q, seed, k - 1, want_far, members, parallel_min)
    members[count] = seed
    return _cluster(rest, m, hi, lo, labels, label, members, count + 1), far


@numba.njit(cache=True)
def _mdav_batch(rest, coded, work, m, hi, lo, labels, next_label, k, budget, stop_below,
                parallel_min, order, rho, anchor, sweep):
    """Form up to ``budget`` clusters, stopping early once at most ``stop_below`` rows
    remain; return (remaining rows, next label)."""
    idx, pos, rows = rest[2], rest[3], rest[4]
    d = rows.shape[1]
    members = np.empty(k, dtype=np.int64)
    centroid = np.empty(d)
    q = np.empty(d)
    formed = 0
    while formed < budget and m > 0 and (m > stop_below or formed == 0):
        if m < 2 * k:  # the last cluster: every remaining row
            for t in range(m):
                labels[idx[t]] = next_label
                pos[idx[t]] = -1
            return 0, next_label + 1
        for j in range(d):
            centroid[j] = hi[j] / m
        r = _farthest_from_centroid(rows, idx, m, labels, order, rho, anchor, sweep, centroid)
        last_round = m < 3 * k  # 2k..3k-1 rows: one cluster, the rest forms the last
        m, s = _grow(rest, coded, work, m, hi, lo, labels, next_label, k, r, q, members,
                     not last_round, parallel_min)
        next_label += 1
        formed += 1
        if last_round:
            continue
        if labels[s] >= 0:  # degenerate: x_s joined x_r's cluster; q still holds x_r
            _, s = _query(rest, coded, work, m, q, -1, 0, True, members, parallel_min)
        m, _ = _grow(rest, coded, work, m, hi, lo, labels, next_label, k, s, q, members,
                     False, parallel_min)
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
    state.run(lambda stop_below: _mdav_batch(
        state.rest, state.coded, state.work, state.m, state.hi, state.lo, state.labels,
        state.next_label, k, _BATCH, stop_below, state.parallel_min, state.order, state.rho,
        state.anchor, state.sweep), progress)
    return state.labels


# -- V-MDAV --------------------------------------------------------------------------------

@numba.njit(cache=True)
def _lower_gaps(Y, idx, m, q, gap):
    """gap[row] = min(gap[row], squared distance of row to q) over the remaining rows."""
    block = np.empty(BLOCK)
    for b0 in range(0, m, BLOCK):
        length = min(m, b0 + BLOCK) - b0
        for t in range(length):
            block[t] = 0.0
        for j in range(Y.shape[0]):
            qj = q[j]
            column = Y[j, b0:b0 + length]  # slice view: vectorizes (see _kernels.scan)
            for t in range(length):
                diff = column[t] - qj
                block[t] += diff * diff
        for t in range(length):
            row = idx[b0 + t]
            if block[t] < gap[row]:
                gap[row] = block[t]


@numba.njit(cache=True)
def _vmdav_batch(rest, coded, work, m, hi, lo, labels, next_label, k, gamma, centroid, gap,
                 budget, stop_below, parallel_min, order, rho, sweep):
    Y, idx, rows = rest[0], rest[2], rest[4]
    d = rows.shape[1]
    ties_by_row = np.empty((0, 0))
    members = np.empty(2 * k, dtype=np.int64)
    q = np.empty(d)
    formed = 0
    while formed < budget and m >= k and (m > stop_below or formed == 0):
        # The anchor of the sorted order is the fixed centroid itself.
        r = _farthest_from(rows, labels, order, rho, centroid, sweep, centroid)
        for j in range(d):
            q[j] = rows[r, j]
        count, _ = _query(rest, coded, work, m, q, r, k - 1, False, members, parallel_min)
        members[count] = r
        count += 1
        for p in range(m):
            gap[idx[p]] = np.inf
        for t in range(count):
            for j in range(d):
                q[j] = rows[members[t], j]
            _lower_gaps(Y, idx, m, q, gap)
        m = _cluster(rest, m, hi, lo, labels, next_label, members, count)
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
                q[j] = rows[e_in, j]
            found, _ = _query(rest, coded, work, m, q, e_in, 1, False, members[size:],
                              parallel_min)
            if found > 0:
                d_out = exact_distance(rows, members[size], q)
                if not np.sqrt(d_in) < gamma * np.sqrt(d_out):
                    break
            members[size] = e_in
            m = _cluster(rest, m, hi, lo, labels, next_label, members[size:], 1)
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
    state.run(lambda stop_below: _vmdav_batch(
        state.rest, state.coded, state.work, state.m, state.hi, state.lo, state.labels,
        state.next_label, k, float(gamma), centroid, gap, _BATCH, stop_below,
        state.parallel_min, state.order, state.rho, state.sweep), progress, minimum=k)
    _assign_leftovers(X, state.labels)
    if progress is not None:
        progress(n)
    return state.labels
