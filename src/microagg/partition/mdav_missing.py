"""MDAV on records with missing values (paper 000, Alg. 1, with the distance of a record pair
taken over the attributes both records have).

A missing value contributes nothing to a distance, and the distance is rescaled by the number
of attributes both records have, so that records with missing values are neither nearer nor
farther than complete ones on average. With p attributes (numeric and categorical), O_x the
attributes record x has, and O_xy = O_x ∩ O_y::

    d²(x, y) = p / |O_xy| · Σ_{j ∈ O_xy} δ_j(x_j, y_j)²      (+∞ when O_xy is empty)

where δ_j is the difference of scaled numeric values or the normalized categorical distance
of 000 eq. 8. Two records with no attribute in common are as far apart as can be: neither is
the other's neighbour while records that share an attribute remain. The centroid of the
remaining records is the mean of each numeric attribute over the records that have it
(missing when none has; the double-double sum of the values present, correctly rounded, over
their count, as :func:`microagg.partition.mdav.mdav` takes it) and the marginality centroid
(000 eq. 5) of each categorical attribute over the records that have it (missing when none
has); a missing centroid coordinate contributes nothing, like a missing value. On complete
data d² is the usual distance and the partition is MDAV's.

Ties are broken by the lowest row number, as in :func:`microagg.partition.mdav.mdav`. Two
kernels compute the same partition:

* numeric attributes alone (the usual case): the remaining records kept compacted and coded
  on 8 bits with a code for "missing" (:mod:`._missing_set`); x_r's and x_s's nearest and
  farthest records from coded passes whose per-record bounds of the rescaled distance keep
  every record that could be an answer, re-ranked with the exact distance
  (:mod:`._coded_missing`); the centroid's farthest record from an anchor-sorted scan stopped by
  the triangle inequality on each record's own attributes (:mod:`._anchor_missing`); batches,
  re-coding and threads as in MDAV (:func:`._kernels.run_batches`). docs/algorithms.md says
  why each shortcut is exact; docs/benchmarks.md measures it against MDAV on complete data;
* with categorical attributes: a plain O(n²p/k) pass per query (one for the centroid's
  farthest record, one for x_r's nearest and farthest, one for x_s's nearest; passes of
  50,000 records or more run on all threads).
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from microagg.core.distance import Categorical
from microagg.core.threads import ThreadChooser
from microagg.partition import _kernels
from microagg.partition._anchor_missing import (
    missing_farthest,
    missing_order,
    missing_reanchor,
    move_missing_anchor,
)
from microagg.partition._coded_missing import missing_query
from microagg.partition._concepts import categories
from microagg.partition._kernels import Grid, run_batches, work_buffers
from microagg.partition._missing import (
    add_row,
    farthest_position,
    missing_distances,
    nearest_positions,
    present_centroid,
    present_totals,
)
from microagg.partition._missing_set import missing_set, recode_missing, remove_missing_row
from microagg.partition._validate import prepare

__all__ = ["mdav_missing"]

Progress = Callable[[int], None]

# Candidate rows a chunk may keep in a coded pass before falling back to the exact pass.
_CANDIDATES = 4096


# -- numeric attributes: coded passes and the anchor-sorted scan ---------------------------

@numba.njit(cache=True)
def _missing_cluster(rest, m, hi, lo, present, hist, labels, label, members, count):
    """Give ``label`` to the ``count`` rows of ``members``, take them out of the totals and
    remove them from the remaining set."""
    rows, concepts = rest.row_values, rest.concepts
    for t in range(count):
        row = members[t]
        labels[row] = label
        add_row(rows, concepts, row, hi, lo, present, hist, -1)
        m = remove_missing_row(rest, m, row)
    return m


@numba.njit(cache=True)
def _missing_grow(rest, coded, work, m, hi, lo, present, hist, labels, label, k, seed, q,
                  members, out_d, want_far, parallel_min):
    """Cluster ``seed`` with its k-1 nearest remaining rows (q receives the seed's values).
    Returns the remaining count and, if ``want_far``, the row farthest from the seed."""
    for j in range(q.shape[0]):
        q[j] = rest.row_values[seed, j]
    count, far = missing_query(rest, coded, work, m, q, seed, k - 1, want_far, out_d, members,
                               parallel_min)
    members[count] = seed
    return _missing_cluster(rest, m, hi, lo, present, hist, labels, label, members,
                            count + 1), far


@numba.njit(cache=True)
def _missing_batch(rest, coded, work, sweep, m, hi, lo, present, labels, next_label, k, budget,
                   stop_below, parallel_min):
    """Form up to ``budget`` clusters, stopping early once at most ``stop_below`` rows
    remain; return (remaining rows, next label)."""
    idx, pos = rest.row_of, rest.column_of
    rows, concepts, S = rest.row_values, rest.concepts, rest.squared
    p = rows.shape[1]
    hist = np.zeros((0, 1), dtype=np.int64)
    members = np.empty(k, dtype=np.int64)
    out_d = np.empty(max(k - 1, 1))
    centroid = np.empty(p)
    q = np.empty(p)
    formed = 0
    while formed < budget and m > 0 and (m > stop_below or formed == 0):
        if m < 2 * k:  # the last cluster: every remaining row
            for t in range(m):
                labels[idx[t]] = next_label
                pos[idx[t]] = -1
            return 0, next_label + 1
        for j in range(p):
            centroid[j] = hi[j] / present[j] if present[j] > 0 else np.nan
        if move_missing_anchor(sweep, m, centroid):
            missing_reanchor(rows, concepts, S, idx[:m], rest.present[:m], sweep)
        r = missing_farthest(rows, concepts, S, labels, sweep, centroid)
        last_round = m < 3 * k  # 2k..3k-1 rows: one cluster, the rest forms the last
        m, s = _missing_grow(rest, coded, work, m, hi, lo, present, hist, labels, next_label, k,
                             r, q, members, out_d, not last_round, parallel_min)
        next_label += 1
        formed += 1
        if last_round:
            continue
        if labels[s] >= 0:  # degenerate: x_s joined x_r's cluster; q still holds x_r
            _, s = missing_query(rest, coded, work, m, q, np.int64(-1), np.int64(0),
                                 np.bool_(True), out_d, members, parallel_min)
        m, _ = _missing_grow(rest, coded, work, m, hi, lo, present, hist, labels, next_label, k,
                             s, q, members, out_d, np.bool_(False), parallel_min)
        next_label += 1
        formed += 1
    return m, next_label


class _Progress:
    """Where a run of :func:`_missing_batch` batches stands: rows left, next label, the grid."""

    def __init__(self, n: int, coded: Grid) -> None:
        self.m = n
        self.next_label = 0
        self.coded = coded


def _numeric_partition(X: np.ndarray, k: int, progress: Progress | None,
                       threads: int | None) -> np.ndarray:
    """MDAV with missing values on numeric attributes alone (the fast kernel)."""
    n = X.shape[0]
    chooser = ThreadChooser(_kernels.PARALLEL_MIN_ROWS, threads)
    rest, coded = missing_set(X)
    work = work_buffers(chooser.width, k - 1, _CANDIDATES)
    labels = np.full(n, -1, dtype=np.int64)
    no_concepts = np.empty((n, 0), dtype=np.int64)
    hi, lo, present, _ = present_totals(X, no_concepts, rest.row_of, n, 1)
    anchor = np.where(present > 0, hi / np.maximum(present, 1), np.nan)
    sweep = missing_order(anchor, n)
    missing_reanchor(rest.row_values, rest.concepts, rest.squared, rest.row_of, rest.present,
                     sweep)
    at = _Progress(n, coded)

    def step(budget: int, stop_below: int, parallel_min: int) -> tuple[int, int]:
        first = at.next_label
        at.m, at.next_label = _missing_batch(rest, at.coded, work, sweep, at.m, hi, lo, present,
                                             labels, first, k, budget, stop_below, parallel_min)
        return at.m, at.next_label - first

    def recode_rows(m: int) -> None:
        at.coded = recode_missing(rest, at.coded, m)

    run_batches(chooser, step, n, 1, recode_rows, progress)
    return labels


# -- categorical attributes: a plain pass per query ----------------------------------------

@numba.njit(cache=True)
def _remove(X, C, rest, m, positions, count, hi, lo, present, hist, labels, label):
    """Give ``label`` to the rows at ``positions`` of rest[:m], take them out of the totals
    and remove them from rest (the last rows move into their places)."""
    order = np.sort(positions[:count])[::-1]  # from the back, so positions stay valid
    for i in range(count):
        t = order[i]
        row = rest[t]
        labels[row] = label
        add_row(X, C, row, hi, lo, present, hist, -1)
        m -= 1
        rest[t] = rest[m]
    return m


@numba.njit(cache=True)
def _grow(X, C, S, rest, m, seed, dist, chosen, k, hi, lo, present, hist, labels, label,
          far):
    """Cluster the row at position ``seed`` with its k-1 nearest; with ``far``, return the
    row farthest from the seed among those left (else -1)."""
    q = X[rest[seed]].copy()
    qc = C[rest[seed]].copy()
    missing_distances(X, C, S, rest, m, q, qc, dist)
    nearest_positions(dist, rest, m, seed, k - 1, chosen)
    chosen[k - 1] = seed
    s = -1
    if far:
        taken = np.zeros(m, dtype=np.bool_)
        for i in range(k):
            taken[chosen[i]] = True
        best = -1
        for t in range(m):
            if not taken[t] and (best < 0 or dist[t] > dist[best]
                                 or (dist[t] == dist[best] and rest[t] < rest[best])):
                best = t
        s = rest[best]
    m = _remove(X, C, rest, m, chosen, k, hi, lo, present, hist, labels, label)
    return m, s


@numba.njit(cache=True)
def _position(rest, m, row):
    for t in range(m):
        if rest[t] == row:
            return t
    return -1


@numba.njit(cache=True)
def _plain_batch(X, C, S, distances, parents, ordinal, k, rest, m, hi, lo, present, hist,
                 labels, stop, next_label):
    """Form clusters of the rows rest[:m] until at most ``stop`` rows remain (or all are
    clustered); return the rows left and the next label."""
    dist = np.empty(X.shape[0])
    chosen = np.empty(k, dtype=np.int64)
    c = np.empty(X.shape[1])
    cc = np.empty(C.shape[1], dtype=np.int64)
    while m >= 2 * k and m > stop:
        present_centroid(hi, present, hist, distances, parents, ordinal, c, cc)
        missing_distances(X, C, S, rest, m, c, cc, dist)
        r = farthest_position(dist, rest, m)
        last_round = m < 3 * k
        m, s = _grow(X, C, S, rest, m, r, dist, chosen, k, hi, lo, present, hist, labels,
                     next_label, not last_round)
        next_label += 1
        if last_round:
            continue
        m, _ = _grow(X, C, S, rest, m, _position(rest, m, s), dist, chosen, k, hi, lo,
                     present, hist, labels, next_label, False)
        next_label += 1
    if m < 2 * k:
        for t in range(m):
            labels[rest[t]] = next_label
        if m > 0:
            next_label += 1
        m = 0
    return m, next_label


def _plain_partition(X: np.ndarray, k: int, categorical: Categorical,
                     progress: Progress | None) -> np.ndarray:
    """MDAV with missing values by a plain pass per query (any attributes)."""
    n = X.shape[0]
    cats = categories(categorical)
    C = categorical.codes
    labels = np.full(n, -1, dtype=np.int64)
    rest = np.arange(n, dtype=np.int64)
    hi, lo, present, hist = present_totals(X, C, rest, n, cats.squared.shape[1])
    step = max(2 * k, n // 100)
    m, next_label = n, 0
    while m > 0:
        m, next_label = _plain_batch(X, C, cats.squared, cats.distances, cats.parents,
                                     cats.ordinal, k, rest, m, hi, lo, present, hist, labels,
                                     max(m - step, 0), next_label)
        if progress is not None:
            progress(n - m)
    return labels


def mdav_missing(X: np.ndarray | None, k: int, *, categorical: Categorical | None = None,
                 progress: Progress | None = None, threads: int | None = None) -> np.ndarray:
    """MDAV partition (000 Alg. 1) of rows that may have missing values: NaN in ``X``, code
    -1 in ``categorical`` (see the module docstring for the distance and the centroid).

    Returns int64 labels, one per row, numbering the clusters in the order they are formed;
    every cluster has k..2k-1 rows. ``progress`` is called with the rows clustered so far.
    ``threads``: see :mod:`microagg.core.threads` (default: chosen by measurement; the
    plain pass used with categorical attributes chooses by the number of rows).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, np.nan], [0.1, 5.0], [np.nan, 5.1], [9.0, 0.0], [9.2, np.nan],
    ...               [np.nan, 0.2]])
    >>> mdav_missing(X, 3).tolist()
    [1, 0, 1, 0, 0, 1]
    """
    X, categorical, k = prepare(X, k, categorical, missing=True)
    if categorical.codes.shape[1] == 0:
        return _numeric_partition(X, k, progress, threads)
    return _plain_partition(X, k, categorical, progress)
