"""MDAV and V-MDAV: multivariate fixed- and variable-size microaggregation.

MDAV (Domingo-Ferrer & Torra 2005; paper 000, Algorithm 1). On the rows not yet clustered::

    while at least 3k rows remain:
        c   <- centroid (mean) of the remaining rows
        x_r <- remaining row farthest from c
        x_s <- remaining row farthest from x_r
        cluster x_r with its k-1 nearest remaining rows
        cluster x_s with its k-1 nearest rows still unassigned
    if at least 2k rows remain:
        cluster the row farthest from the centroid with its k-1 nearest
    the remaining k..2k-1 rows form the last cluster

Distances are Euclidean on the matrix given (scale it first; see :mod:`microagg.core.distance`),
plus, for categorical attributes, the normalized semantic or rank distances of paper 000 eq. 8
(:class:`microagg.core.distance.Categorical`); the "average record" then takes, for each categorical
attribute, the marginality centroid of the remaining values (000 eq. 5).
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

from microagg.core.distance import Categorical
from microagg.core.threads import ThreadChooser
from microagg.errors import InputError
from microagg.partition import _kernels
from microagg.partition._anchor import anchor_order, farthest_from, move_anchor, reanchor
from microagg.partition._concepts import categories, centroid_concepts
from microagg.partition._distances import BLOCK, block_distances, exact_distance
from microagg.partition._double_double import dd_accumulate, dd_sums
from microagg.partition._heap import precedes
from microagg.partition._kernels import (
    query,
    recode,
    remaining_set,
    remove_remaining,
    run_batches,
    work_buffers,
)
from microagg.partition._validate import prepare

__all__ = ["mdav", "vmdav"]

Progress = Callable[[int], None]

# Candidate rows a chunk may keep in a coded pass before falling back to the exact pass.
_CANDIDATES = 4096


class _State:
    """Everything one MDAV or V-MDAV run keeps between batches: the remaining set with its
    grid (:class:`._kernels.RemainingSet`, :class:`._kernels.Grid`), the query buffers, the
    double-double running sums (hi, lo) and concept counts of the remaining rows, and the
    anchor-sorted order for farthest-from-centroid queries (:class:`._anchor.AnchorOrder`)."""

    def __init__(self, X: np.ndarray, k: int, categorical: Categorical,
                 threads: int | None) -> None:
        n = X.shape[0]
        # Read at run time (tests lower the chunk size to exercise the split passes).
        self.chooser = ThreadChooser(_kernels.PARALLEL_MIN_ROWS, threads)
        self.cats = categories(categorical)
        self.rest, self.coded = remaining_set(X, categorical.codes, self.cats.squared)
        self.work = work_buffers(self.chooser.width, k - 1, _CANDIDATES)
        self.labels = np.full(n, -1, dtype=np.int64)
        self.hi, self.lo = dd_sums(self.rest.values, n)
        self.m = n
        self.next_label = 0
        anchor = self.hi / n if X.shape[1] else np.empty(0)
        anchor_c = np.empty(categorical.codes.shape[1], dtype=np.int64)
        centroid_concepts(self.cats.counts, self.cats, anchor_c)
        self.sweep = anchor_order(anchor, anchor_c, n)
        reanchor(self.rest.row_values, self.rest.concepts, self.rest.squared, self.rest.row_of,
                 self.sweep)

    def run(self, batch, progress: Progress | None, minimum: int = 1) -> None:
        """Call ``batch(budget, stop_below, parallel_min)`` -> (rows left, next label) while
        at least ``minimum`` rows remain (see :func:`run_batches`)."""

        def step(budget: int, stop_below: int, parallel_min: int) -> tuple[int, int]:
            first = self.next_label
            self.m, self.next_label = batch(budget, stop_below, parallel_min)
            return self.m, self.next_label - first

        def recode_rows(m: int) -> None:
            self.coded = recode(self.rest, self.coded, m)

        run_batches(self.chooser, step, self.labels.size, minimum, recode_rows, progress)


@numba.njit(cache=True)
def _query(rest, coded, work, m, q, qc, skip, near, want_far, out_near, parallel_min):
    """:func:`query` with ties broken by row number."""
    return query(rest, coded, work, m, q, qc, skip, near, want_far, np.empty(max(near, 1)),
                 out_near, parallel_min, np.empty((0, 0)))


@numba.njit(cache=True)
def _cluster(rest, hist, m, hi, lo, labels, label, members, count):
    """Give ``label`` to the ``count`` rows of ``members`` and remove them from the set."""
    Y, column_of, concepts = rest.values, rest.column_of, rest.concepts
    for t in range(count):
        row = members[t]
        labels[row] = label
        dd_accumulate(hi, lo, Y[:, column_of[row]], -1.0)
        for j in range(concepts.shape[1]):
            hist[j, concepts[row, j]] -= 1
        m = remove_remaining(rest, m, row)
    return m


@numba.njit(cache=True)
def _farthest_from_centroid(rest, m, labels, sweep, c, cc):
    """Farthest remaining row from the centroid; re-anchors at it when scans grow long."""
    if move_anchor(sweep, m, c, cc):
        reanchor(rest.row_values, rest.concepts, rest.squared, rest.row_of[:m], sweep)
    return farthest_from(rest.row_values, rest.concepts, rest.squared, labels, sweep, c, cc)


@numba.njit(cache=True)
def _grow(rest, coded, work, hist, m, hi, lo, labels, label, k, seed, q, qc, members,
          want_far, parallel_min):
    """Cluster ``seed`` with its k-1 nearest remaining rows ((q, qc) receive the seed's
    values). Returns the remaining count and, if ``want_far``, the row farthest from the
    seed."""
    rows, concepts = rest.row_values, rest.concepts
    for j in range(q.shape[0]):
        q[j] = rows[seed, j]
    for j in range(qc.shape[0]):
        qc[j] = concepts[seed, j]
    count, far = _query(rest, coded, work, m, q, qc, seed, k - 1, want_far, members,
                        parallel_min)
    members[count] = seed
    return _cluster(rest, hist, m, hi, lo, labels, label, members, count + 1), far


@numba.njit(cache=True)
def _mdav_batch(rest, coded, work, cats, m, hi, lo, labels, next_label, k, budget, stop_below,
                parallel_min, sweep):
    """Form up to ``budget`` clusters, stopping early once at most ``stop_below`` rows
    remain; return (remaining rows, next label)."""
    hist = cats.counts
    idx, pos = rest.row_of, rest.column_of
    d = rest.row_values.shape[1]
    members = np.empty(k, dtype=np.int64)
    centroid = np.empty(d)
    centroid_c = np.empty(hist.shape[0], dtype=np.int64)
    q = np.empty(d)
    qc = np.empty(hist.shape[0], dtype=np.int64)
    formed = 0
    while formed < budget and m > 0 and (m > stop_below or formed == 0):
        if m < 2 * k:  # the last cluster: every remaining row
            for t in range(m):
                labels[idx[t]] = next_label
                pos[idx[t]] = -1
            return 0, next_label + 1
        for j in range(d):
            centroid[j] = hi[j] / m
        centroid_concepts(hist, cats, centroid_c)
        r = _farthest_from_centroid(rest, m, labels, sweep, centroid, centroid_c)
        last_round = m < 3 * k  # 2k..3k-1 rows: one cluster, the rest forms the last
        m, s = _grow(rest, coded, work, hist, m, hi, lo, labels, next_label, k, r, q, qc,
                     members, not last_round, parallel_min)
        next_label += 1
        formed += 1
        if last_round:
            continue
        if labels[s] >= 0:  # degenerate: x_s joined x_r's cluster; (q, qc) still hold x_r
            _, s = _query(rest, coded, work, m, q, qc, np.int64(-1), np.int64(0),
                          np.bool_(True), members, parallel_min)
        m, _ = _grow(rest, coded, work, hist, m, hi, lo, labels, next_label, k, s, q, qc,
                     members, np.bool_(False), parallel_min)
        next_label += 1
        formed += 1
    return m, next_label


def mdav(X: np.ndarray | None, k: int, *, categorical: Categorical | None = None,
         progress: Progress | None = None, threads: int | None = None) -> np.ndarray:
    """MDAV partition of the rows into clusters of k..2k-1 rows (paper 000, Alg. 1).

    ``X`` holds the (scaled) numeric attributes, ``categorical`` the categorical ones (000
    eq. 8). Returns int64 labels, one per row, numbering clusters in the order they are
    formed. ``progress`` is called with the number of rows clustered so far. ``threads``:
    see :mod:`microagg.core.threads` (default: chosen by measurement).
    """
    X, categorical, k = prepare(X, k, categorical)
    state = _State(X, k, categorical, threads)
    state.run(lambda budget, stop_below, parallel_min: _mdav_batch(
        state.rest, state.coded, state.work, state.cats, state.m, state.hi, state.lo,
        state.labels, state.next_label, k, budget, stop_below, parallel_min, state.sweep),
        progress)
    return state.labels


# -- V-MDAV --------------------------------------------------------------------------------

@numba.njit(cache=True)
def _lower_gaps(rest, S, m, q, qc, gap):
    """gap[row] = min(gap[row], squared distance of row to (q, qc)) over the remaining rows."""
    Y, idx, C = rest.values, rest.row_of, rest.concept_columns
    block = np.empty(BLOCK)
    for b0 in range(0, m, BLOCK):
        length = min(m, b0 + BLOCK) - b0
        block_distances(Y, C, S, q, qc, b0, length, block)
        for t in range(length):
            row = idx[b0 + t]
            if block[t] < gap[row]:
                gap[row] = block[t]


@numba.njit(cache=True)
def _vmdav_batch(rest, coded, work, hist, m, hi, lo, labels, next_label, k, gamma, gap,
                 budget, stop_below, parallel_min, sweep):
    """Form up to ``budget`` groups, stopping early once at most ``stop_below`` rows remain
    or fewer than k; return (remaining rows, next label). The centroid of all rows is the
    anchor of ``sweep``, never moved."""
    idx, rows, concepts, S = rest.row_of, rest.row_values, rest.concepts, rest.squared
    d = rows.shape[1]
    ties_by_row = np.empty((0, 0))
    members = np.empty(2 * k, dtype=np.int64)
    q = np.empty(d)
    qc = np.empty(concepts.shape[1], dtype=np.int64)
    formed = 0
    while formed < budget and m >= k and (m > stop_below or formed == 0):
        r = farthest_from(rows, concepts, S, labels, sweep, sweep.anchor, sweep.anchor_c)
        for j in range(d):
            q[j] = rows[r, j]
        for j in range(qc.shape[0]):
            qc[j] = concepts[r, j]
        count, _ = _query(rest, coded, work, m, q, qc, r, k - 1, np.bool_(False), members,
                          parallel_min)
        members[count] = r
        count += 1
        for p in range(m):
            gap[idx[p]] = np.inf
        for t in range(count):
            for j in range(d):
                q[j] = rows[members[t], j]
            for j in range(qc.shape[0]):
                qc[j] = concepts[members[t], j]
            _lower_gaps(rest, S, m, q, qc, gap)
        m = _cluster(rest, hist, m, hi, lo, labels, next_label, members, count)
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
            for j in range(qc.shape[0]):
                qc[j] = concepts[e_in, j]
            found, _ = _query(rest, coded, work, m, q, qc, e_in, np.int64(1), np.bool_(False),
                              members[size:], parallel_min)
            if found > 0:
                d_out = exact_distance(rows, concepts, S, members[size], q, qc)
                if not np.sqrt(d_in) < gamma * np.sqrt(d_out):
                    break
            members[size] = e_in
            m = _cluster(rest, hist, m, hi, lo, labels, next_label, members[size:],
                         np.int64(1))
            size += 1
            _lower_gaps(rest, S, m, q, qc, gap)
        next_label += 1
        formed += 1
    return m, next_label


def _assign_leftovers(X: np.ndarray, categorical: Categorical, labels: np.ndarray) -> None:
    """Rows still unlabelled join the cluster with the nearest centroid (mean of the numeric
    attributes, marginality centroid of the categorical ones; lowest label on ties)."""
    left = np.flatnonzero(labels < 0)
    if left.size == 0:
        return
    count = int(labels.max()) + 1
    assigned = labels >= 0
    sums = np.zeros((count, X.shape[1]))
    np.add.at(sums, labels[assigned], X[assigned])
    centroids = sums / np.bincount(labels[assigned], minlength=count)[:, None]
    squared = categorical.squared()
    concept_centroids = np.empty((count, len(categorical.metrics)), dtype=np.int64)
    for j, metric in enumerate(categorical.metrics):
        for g in range(count):
            members = categorical.codes[labels == g, j]
            concept_centroids[g, j] = metric.centroid(
                np.bincount(members, minlength=metric.n_concepts))
    for row in left:
        distance = np.zeros(count)
        for j in range(X.shape[1]):
            distance += (centroids[:, j] - X[row, j]) ** 2
        for j in range(len(categorical.metrics)):
            distance += squared[j, concept_centroids[:, j], categorical.codes[row, j]]
        labels[row] = int(np.argmin(distance))


def vmdav(X: np.ndarray | None, k: int, gamma: float = 0.2, *,
          categorical: Categorical | None = None, progress: Progress | None = None,
          threads: int | None = None) -> np.ndarray:
    """V-MDAV partition (Solanas & Martínez-Ballesté 2006): groups of k to 2k-1 rows.

    The centroid c of the whole data set is computed once. While at least k rows remain:
    the remaining row farthest from c and its k-1 nearest remaining rows form a group; the
    group is then *extended* one row at a time, up to 2k-1 rows: the remaining row e_in nearest
    to the group (minimum distance d_in to any member) joins it while d_in < gamma * d_out,
    where d_out is the distance from e_in to its nearest other remaining row. The fewer than k
    rows left at the end join the group with the nearest centroid, so that group may exceed
    2k-1 rows. ``gamma`` around 0.2 suits scattered data, around 1.1 clustered data.
    """
    X, categorical, k = prepare(X, k, categorical)
    if not np.isfinite(gamma) or gamma < 0:
        raise InputError(f"gamma must be a non-negative number, got {gamma}")
    state = _State(X, k, categorical, threads)
    n = X.shape[0]
    gap = np.full(n, np.inf)
    # The anchor of the sorted order is the centroid of all rows, fixed for V-MDAV.
    state.run(lambda budget, stop_below, parallel_min: _vmdav_batch(
        state.rest, state.coded, state.work, state.cats.counts, state.m, state.hi, state.lo,
        state.labels, state.next_label, k, float(gamma), gap, budget, stop_below,
        parallel_min, state.sweep), progress, minimum=k)
    _assign_leftovers(X, categorical, state.labels)
    if progress is not None:
        progress(n)
    return state.labels
