"""Compiled clustering kernels of k-anonymous t-closeness (paper 002): t-closeness-first
(Alg. 3) and k-anonymity-first (Alg. 2), with the pieces they share. The Python side, and
what each algorithm does, is in :mod:`microagg.partition.tcloseness`.

Both keep the double-double running sums (hi, lo) of the rows not yet clustered
(:mod:`._double_double`), so that the centroid is their correctly rounded mean, and the
concept counts of those rows in a :class:`._concepts.Categories`. Rows not yet clustered have
label -1.

On records with missing values (``any_missing``: NaN in X, code -1 among the concepts) distances are
those of :mod:`._missing` (over the attributes both records have, rescaled), the sums run over
``filled`` (X with 0 for NaN) with a count of the values ``present`` per attribute, and the
centroid takes each mean over the values present. Alg. 2 takes an ``any_missing`` flag; Alg. 3 on
such records is a plain scan of the remaining records (:func:`t_first_scan`), since the
subsets' coded blocks and the anchor-sorted scan bound distances that add up attribute by
attribute, which the rescaled distance does not.
"""

from __future__ import annotations

import numba
import numpy as np

from microagg.core.emd import class_emd
from microagg.partition import _subsets
from microagg.partition._anchor import farthest_from, move_anchor, reanchor
from microagg.partition._concepts import centroid_concepts
from microagg.partition._distances import exact_distance
from microagg.partition._double_double import dd_accumulate, dd_sums
from microagg.partition._kdtree import _select
from microagg.partition._missing import farthest_position, missing_distance, missing_distances

# A class whose EMD exceeds t by less than this satisfies t (as in microagg.core.verifiers).
TOLERANCE = 1e-9


# -- shared compiled pieces -----------------------------------------------------------------

@numba.njit(cache=True)
def centroid(hi, lo, remaining, cats, q, qc):
    """The centroid of the ``remaining`` rows not yet clustered into (q, qc): the mean of
    their sums (hi, lo) and the marginality centroid of their concept counts."""
    for j in range(q.shape[0]):
        q[j] = (hi[j] + lo[j]) / remaining
    if qc.shape[0]:
        centroid_concepts(cats.counts, cats, qc)


@numba.njit(cache=True)
def centroid_present(hi, lo, present, cats, q, qc):
    """:func:`centroid` of rows with missing values: each mean over the ``present`` values
    of its attribute (NaN where none is), each marginality centroid over the concepts present
    (-1 where none is)."""
    for j in range(q.shape[0]):
        q[j] = (hi[j] + lo[j]) / present[j] if present[j] > 0 else np.nan
    if qc.shape[0]:
        centroid_concepts(cats.counts, cats, qc)


@numba.njit(cache=True)
def take(X, concepts, cats, row, label, labels, hi, lo):
    """Give ``label`` to ``row``, taking it out of the sums and concept counts (a missing
    concept, -1, is not counted)."""
    labels[row] = label
    dd_accumulate(hi, lo, X[row], -1.0)
    hist = cats.counts
    for j in range(concepts.shape[1]):
        if concepts[row, j] >= 0:
            hist[j, concepts[row, j]] -= 1


@numba.njit(cache=True)
def take_present(X, filled, present, concepts, cats, row, label, labels, hi, lo):
    """:func:`take` of a row that may have missing values: its ``filled`` values leave the
    sums, its present values the counts ``present``."""
    take(filled, concepts, cats, row, label, labels, hi, lo)
    for j in range(X.shape[1]):
        if not np.isnan(X[row, j]):
            present[j] -= 1


@numba.njit(cache=True)
def present_sums(X):
    """(filled, present, hi, lo) of rows that may have missing values: X with 0 for NaN,
    the values present per attribute, and the double-double sums of ``filled``."""
    filled = np.where(np.isnan(X), 0.0, X)
    present = np.zeros(X.shape[1], dtype=np.int64)
    for row in range(X.shape[0]):
        for j in range(X.shape[1]):
            if not np.isnan(X[row, j]):
                present[j] += 1
    hi, lo = dd_sums(filled.T, X.shape[0])
    return filled, present, hi, lo


@numba.njit(cache=True, inline="always")
def _distance(X, concepts, S, row, q, qc, any_missing):
    """The exact distance, or with ``any_missing`` over the attributes both have
    (:mod:`._missing`)."""
    if any_missing:
        return missing_distance(X, concepts, S, row, q, qc)
    return exact_distance(X, concepts, S, row, q, qc)


@numba.njit(cache=True)
def _scan_farthest(X, concepts, S, labels, q, qc, any_missing):
    """The row not yet clustered farthest from (q, qc), the first in row order on ties."""
    best = -1
    best_d = -1.0
    for row in range(X.shape[0]):
        if labels[row] < 0:
            dist = _distance(X, concepts, S, row, q, qc, any_missing)
            if dist > best_d:
                best_d = dist
                best = row
    return best


# -- Algorithm 3: t-closeness-first ----------------------------------------------------------
#
# The subsets are blocks of nearby records (partition/_subsets.py), so that the nearest record
# of a subset to a seed reads only the blocks that can hold it. The first seed of a pair
# (farthest from the centroid) comes from MDAV's anchor-sorted scan (partition/_anchor.py);
# the second (farthest from the first, once its cluster is formed) from one query over all
# subsets.

@numba.njit(cache=True)
def _t_first_cluster(X, concepts, cats, sets, extra, seed, label, labels, hi, lo, works, split,
                     picks):
    """One cluster of Alg. 3 around row ``seed``: from every subset the live record nearest
    the seed (the subsets searched by the threads if ``split``), and a second one from the
    first subset that still holds extra records (at most one extra record per cluster),
    taken in subset order. Returns its size."""
    S = cats.squared
    q = X[seed].copy()
    qc = concepts[seed].copy()
    _subsets.nearest_each(X, concepts, S, sets, q, qc, works, split, picks)
    count = 0
    extra_taken = False
    for g in range(extra.shape[0]):
        row = picks[g]
        if row < 0:
            continue
        take(X, concepts, cats, row, label, labels, hi, lo)
        _subsets.remove(sets, g, row)
        count += 1
        if extra_taken or extra[g] == 0:
            continue
        extra[g] -= 1
        extra_taken = True
        row = _subsets.nearest(X, concepts, S, sets, g, q, qc, _subsets.thread_work(works, 0))
        if row >= 0:
            take(X, concepts, cats, row, label, labels, hi, lo)
            _subsets.remove(sets, g, row)
            count += 1
    return count


@numba.njit(cache=True)
def t_first_batch(X, concepts, cats, sets, extra, labels, hi, lo, remaining, next_label,
                  budget, stop_below, parallel_min, sweep, works):
    """Form up to ``budget`` clusters of Alg. 3 in pairs (one around the record farthest
    from the centroid, one around the record farthest from that one), stopping early once at
    most ``stop_below`` records remain; queries on at least 2 ``parallel_min`` remaining
    records are shared between the threads.

    ``sets`` and ``works`` are the subsets and their scratch arrays (:mod:`._subsets`),
    ``extra[g]`` the extra records subset g may still give, ``sweep`` the
    :class:`._anchor.AnchorOrder` of the records. Returns (remaining records, next label,
    clusters formed)."""
    S = cats.squared
    q = np.empty(X.shape[1])
    qc = np.empty(concepts.shape[1], dtype=np.int64)
    picks = np.empty(extra.shape[0], dtype=np.int64)
    formed = 0
    while formed < budget and remaining > 0 and (remaining > stop_below or formed == 0):
        # (as MDAV: never with one thread; 2 * SERIAL would overflow)
        split = works.found.shape[0] > 1 and remaining // 2 >= parallel_min
        centroid(hi, lo, remaining, cats, q, qc)
        if move_anchor(sweep, remaining, q, qc):
            reanchor(X, concepts, S, _subsets.live_rows(sets), sweep)
        seed = farthest_from(X, concepts, S, labels, sweep, q, qc)
        remaining -= _t_first_cluster(X, concepts, cats, sets, extra, seed, next_label, labels,
                                      hi, lo, works, split, picks)
        next_label += 1
        formed += 1
        if remaining == 0:
            break
        far = _subsets.farthest(X, concepts, S, sets, X[seed], concepts[seed], works, split)
        remaining -= _t_first_cluster(X, concepts, cats, sets, extra, far, next_label, labels,
                                      hi, lo, works, split, picks)
        next_label += 1
        formed += 1
    return remaining, next_label, formed


# -- Algorithm 2: k-anonymity-first ----------------------------------------------------------

@numba.njit(cache=True)
def _ordered_candidates(X, concepts, S, labels, q, qc, want, dist, rows, order, any_missing):
    """The ``want`` remaining rows nearest (q, qc) in order of (distance, row) into
    ``order``; returns how many there are."""
    count = 0
    for row in range(X.shape[0]):
        if labels[row] < 0:
            dist[row] = _distance(X, concepts, S, row, q, qc, any_missing)
            rows[count] = row
            count += 1
    want = min(want, count)
    if want < count:
        _select(rows, dist, 0, count, want)
    head = rows[:want].copy()
    head.sort()
    sorted_head = head[np.argsort(dist[head], kind="mergesort")]
    order[:want] = sorted_head
    return want


@numba.njit(cache=True)
def _k_first_cluster(X, filled, present, concepts, S, cats, seed, k, t, tables, scratch, label,
                     labels, hi, lo, remaining, dist, rows, order, any_missing):
    """GenerateCluster of Alg. 2 around row ``seed``; returns its size."""
    q = X[seed].copy()
    qc = concepts[seed].copy()
    if remaining < 2 * k:
        members = np.empty(remaining, dtype=np.int64)
        count = 0
        for row in range(X.shape[0]):
            if labels[row] < 0:
                members[count] = row
                count += 1
    else:
        want = 4 * k + 64
        got = _ordered_candidates(X, concepts, S, labels, q, qc, want, dist, rows, order,
                                  any_missing)
        members = order[:k].copy()
        current = class_emd(members, tables, scratch)
        position = k
        while current > t + TOLERANCE and position < remaining:
            if position == got:  # more candidates, in order, past those already seen
                want *= 2
                got = _ordered_candidates(X, concepts, S, labels, q, qc, want, dist, rows,
                                          order, any_missing)
            y = order[position]
            position += 1
            best = np.inf
            best_at = -1
            for at in range(k):
                kept = members[at]
                members[at] = y
                emd = class_emd(members, tables, scratch)
                members[at] = kept
                if emd < best:
                    best = emd
                    best_at = at
            if best < current:
                members[best_at] = y
                current = best
    for i in range(members.shape[0]):
        take_present(X, filled, present, concepts, cats, members[i], label, labels, hi, lo)
    return members.shape[0]


@numba.njit(cache=True)
def k_first(X, concepts, cats, k, t, tables, scratch, labels, any_missing):
    """Alg. 2 on all rows into ``labels`` (filled in place); returns the number of
    clusters. ``tables`` and ``scratch`` are the EMD tables of the confidential attributes
    (:func:`microagg.core.emd.class_emd`); ``any_missing``: the records may have missing values
    (module docstring)."""
    n = X.shape[0]
    S = cats.squared
    filled, present, hi, lo = present_sums(X)
    q = np.empty(X.shape[1])
    qc = np.empty(concepts.shape[1], dtype=np.int64)
    dist = np.empty(n)
    rows = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    remaining = n
    label = 0
    while remaining > 0:
        if any_missing:
            centroid_present(hi, lo, present, cats, q, qc)
        else:
            centroid(hi, lo, remaining, cats, q, qc)
        x0 = _scan_farthest(X, concepts, S, labels, q, qc, any_missing)
        remaining -= _k_first_cluster(X, filled, present, concepts, S, cats, x0, k, t, tables,
                                      scratch, label, labels, hi, lo, remaining, dist, rows,
                                      order, any_missing)
        label += 1
        if remaining > 0:
            x1 = _scan_farthest(X, concepts, S, labels, X[x0], concepts[x0], any_missing)
            remaining -= _k_first_cluster(X, filled, present, concepts, S, cats, x1, k, t,
                                          tables, scratch, label, labels, hi, lo, remaining,
                                          dist, rows, order, any_missing)
            label += 1
    return label


# -- Algorithm 3 on records with missing values: a plain scan ---------------------------------

@numba.njit(cache=True, inline="always")
def _before(d1, r1, d2, r2):
    """Whether (d1, r1) comes before (d2, r2): the smaller distance, then the lower row."""
    return d1 < d2 or (d1 == d2 and r1 < r2)


@numba.njit(cache=True)
def _t_scan_cluster(X, filled, present, concepts, cats, subset, extra, seed, label, labels,
                    hi, lo, rest, m, dist, best, second):
    """One cluster of Alg. 3 around row ``seed`` (as :func:`_t_first_cluster`) by one pass
    over the remaining rows rest[:m], which keeps the nearest two of every subset; returns the
    rows left in rest (the cluster's rows are taken out, the others keep their order)."""
    missing_distances(X, concepts, cats.squared, rest, m, X[seed].copy(), concepts[seed].copy(),
                      dist)
    best[:] = -1
    second[:] = -1
    for t in range(m):
        g = subset[rest[t]]
        b = best[g]
        if b < 0 or _before(dist[t], rest[t], dist[b], rest[b]):
            second[g] = b
            best[g] = t
        elif second[g] < 0 or _before(dist[t], rest[t], dist[second[g]], rest[second[g]]):
            second[g] = t
    extra_taken = False
    for g in range(extra.shape[0]):
        if best[g] < 0:
            continue
        take_present(X, filled, present, concepts, cats, rest[best[g]], label, labels, hi, lo)
        if extra_taken or extra[g] == 0:
            continue
        extra[g] -= 1
        extra_taken = True
        if second[g] >= 0:
            take_present(X, filled, present, concepts, cats, rest[second[g]], label, labels,
                         hi, lo)
    left = 0
    for t in range(m):
        if labels[rest[t]] < 0:
            rest[left] = rest[t]
            left += 1
    return left


@numba.njit(cache=True)
def t_first_scan(X, filled, present, concepts, cats, subset, extra, labels, hi, lo, rest, m,
                 label, stop):
    """Alg. 3 on records that may have missing values, in pairs of clusters (one around the
    remaining row farthest from the centroid, one around the row farthest from that one)
    until at most ``stop`` rows remain; ``rest[:m]`` are the rows not yet clustered,
    ``subset`` the subset of every row and ``extra[g]`` the extra records subset g may still
    give. Returns (rows left, next label)."""
    S = cats.squared
    q = np.empty(X.shape[1])
    qc = np.empty(concepts.shape[1], dtype=np.int64)
    dist = np.empty(X.shape[0])
    best = np.empty(extra.shape[0], dtype=np.int64)
    second = np.empty(extra.shape[0], dtype=np.int64)
    first = True
    while m > 0 and (m > stop or first):
        first = False
        centroid_present(hi, lo, present, cats, q, qc)
        missing_distances(X, concepts, S, rest, m, q, qc, dist)
        seed = rest[farthest_position(dist, rest, m)]
        m = _t_scan_cluster(X, filled, present, concepts, cats, subset, extra, seed, label,
                            labels, hi, lo, rest, m, dist, best, second)
        label += 1
        if m == 0:
            break
        missing_distances(X, concepts, S, rest, m, X[seed].copy(), concepts[seed].copy(), dist)
        far = rest[farthest_position(dist, rest, m)]
        m = _t_scan_cluster(X, filled, present, concepts, cats, subset, extra, far, label,
                            labels, hi, lo, rest, m, dist, best, second)
        label += 1
    return m, label
