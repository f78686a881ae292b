"""k-anonymous t-closeness through microaggregation (paper 002, Algorithms 1-3).

All three take the quasi-identifiers (scaled numbers ``X`` and, for mixed data, the categorical
part of the record distance of 000 eq. 8) and the confidential attributes as
:class:`microagg.core.emd.GroundModel`; each class must have an EMD of at most t to the whole table
for every confidential attribute.

* :func:`merge` (Alg. 1, after any microaggregation): while a class violates t, take the class
  with the greatest EMD and merge it with the class whose quasi-identifier centroid is nearest
  to its own. Only the merged class's EMD is recomputed (a heap keeps the greatest); the
  nearest class comes from a k-d tree over the live centroids (:mod:`._kdtree`; a scan of
  them for mixed data), in which the merged class moves to its new centroid.
* :func:`k_anonymity_first` (Alg. 2): MDAV-like seeds; each cluster starts as the k records
  nearest its seed, then the unclustered records, nearest first, replace the member whose
  swap lowers the EMD most, while the EMD exceeds t. Not always t-close: 002 §6 runs it as
  Alg. 1's microaggregation, and so does :func:`t_close_partition`.
* :func:`t_closeness_first` (Alg. 3): the cluster size of eq. (3) adjusted by eq. (4) (the
  floor of the text, which reproduces Table III; the listing prints a ceiling), k subsets by
  the rank of the first confidential attribute, and each cluster takes the record nearest its
  seed in every subset, plus one of the n mod k extra records of the central subset(s) while
  any is left. (The listing's test |S_i| > |S_1| means the same when S_1 is not central; for
  k = 2 it is, and the test would leave the extra records alone in a last, too small class.)
  Its bound (Prop. 2) is proved only when k divides n and the values are distinct, so
  :func:`t_close_partition` verifies every class and repairs with Alg. 1's merging. Each
  subset is kept as blocks of nearby records (:mod:`._subsets`), so a nearest-record query
  reads only the blocks that can hold the answer; the second seed of a pair is one
  farthest-record query over all subsets.

Distances are squared Euclidean on the numbers plus the squared normalized categorical
distances; centroids are means and marginality centroids (000 eq. 5). Ties go to the lowest row
(and, between classes, the lowest class number), as in MDAV.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numba
import numpy as np

from microagg.core.distance import Categorical
from microagg.core.emd import EMDTables, GroundModel, attribute_emd, class_emd, stack
from microagg.core.threads import ThreadChooser
from microagg.errors import InputError
from microagg.options import TClosenessMethod, parse
from microagg.partition import _kdtree, _kernels, _subsets
from microagg.partition._kernels import exact_distance, run_batches
from microagg.partition._validate import prepare
from microagg.partition.mdav import (
    Progress,
    _centroid_concepts,
    _farthest_from,
    _move_anchor,
    _reanchor,
)

__all__ = ["TClosePartition", "check_t", "cluster_size", "k_anonymity_first", "merge",
           "smallest_t", "t_close_partition", "t_closeness_first"]

# A class whose EMD exceeds t by less than this satisfies t (as in microagg.core.verifiers).
_TOLERANCE = 1e-9

Microaggregate = Callable[[int], np.ndarray]


@dataclass(frozen=True)
class TClosePartition:
    """A k-anonymous t-close partition and how it was reached."""

    labels: np.ndarray
    method: TClosenessMethod
    k: int  # requested
    effective_k: int  # the cluster size of eq. (3)-(4) (t-closeness-first), else k
    classes_before_merging: int
    merges: int


def check_t(t: object) -> float:
    """``t`` as a float in (0, 1]."""
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        raise InputError(f"t must be a number in (0, 1], got {t!r}")
    t = float(t)
    if not (0.0 < t <= 1.0) or math.isnan(t):
        raise InputError(f"t must lie in (0, 1], got {t:g}")
    return t


def cluster_size(n: int, k: int, t: float) -> int:
    """The cluster size of t-closeness-first: eq. (3), k' = max{k, ⌈n / (2(n-1)t + 1)⌉},
    then eq. (4), k' + ⌊(n mod k') / ⌊n/k'⌋⌋, so that the n mod k' extra records fit one per
    cluster (002 §7)."""
    size = max(k, math.ceil(n / (2 * (n - 1) * t + 1)))
    size = min(size, n)
    size += (n % size) // (n // size)
    if n % size > n // size:  # not reached for n < 3000 (tests); kept as a guard
        raise AssertionError("eq. (4) left more extra records than clusters")
    return size


def smallest_t(n: int) -> float:
    """The smallest t for which eq. (3) allows two classes or more: below it every method
    ends with one class holding all n records."""
    return (n / (n // 2) - 1.0) / (2.0 * (n - 1))


def _subsets_by_rank(rank_key: np.ndarray, size: int) -> np.ndarray:
    """Subset (0..size-1) of each row: rows in ascending order of ``rank_key`` (ties by row)
    cut into ``size`` subsets of ⌊n/size⌋, the n mod size extra records in the central subset
    (odd size) or split between the two central ones, the lower one taking the odd record
    (002 §7, Figures 3-4)."""
    n = rank_key.size
    base, extra = divmod(n, size)
    counts = np.full(size, base, dtype=np.int64)
    if size % 2:
        counts[size // 2] += extra
    else:
        counts[size // 2 - 1] += extra - extra // 2
        counts[size // 2] += extra // 2
    order = np.argsort(rank_key, kind="stable")
    subset = np.empty(n, dtype=np.int64)
    subset[order] = np.repeat(np.arange(size), counts)
    return subset


def _cats(categorical: Categorical) -> tuple:
    q = categorical.codes.shape[1]
    hist = np.zeros((q, categorical.width if q else 1), dtype=np.int64)
    for j in range(q):
        hist[j] = np.bincount(categorical.codes[:, j], minlength=hist.shape[1])
    return (categorical.distances() if q else np.zeros((0, 1, 1)),
            categorical.parents() if q else np.zeros((0, 1), dtype=np.int64),
            np.array([m.ordinal for m in categorical.metrics], dtype=np.bool_),
            hist, categorical.squared() if q else np.zeros((0, 1, 1)))


# -- shared compiled pieces -----------------------------------------------------------------

@numba.njit(cache=True)
def _dd_add(hi, lo, X, row, sign):
    for j in range(hi.shape[0]):
        a = hi[j]
        b = sign * X[row, j]
        s = a + b
        v = s - a
        e = (a - (s - v)) + (b - v)
        s2 = s + (e + lo[j])
        lo[j] = (e + lo[j]) - (s2 - s)
        hi[j] = s2


@numba.njit(cache=True)
def _row_sums(X):
    """Double-double column sums of X, row by row."""
    hi = np.zeros(X.shape[1])
    lo = np.zeros(X.shape[1])
    for row in range(X.shape[0]):
        _dd_add(hi, lo, X, row, 1.0)
    return hi, lo


@numba.njit(cache=True)
def _centroid(hi, lo, remaining, cats, q, qc):
    for j in range(q.shape[0]):
        q[j] = (hi[j] + lo[j]) / remaining
    if qc.shape[0]:
        _centroid_concepts(cats[3], cats[0], cats[1], cats[2], qc)


@numba.njit(cache=True)
def _take(X, concepts, cats, row, label, labels, hi, lo):
    labels[row] = label
    _dd_add(hi, lo, X, row, -1.0)
    hist = cats[3]
    for j in range(concepts.shape[1]):
        hist[j, concepts[row, j]] -= 1


@numba.njit(cache=True)
def _scan_farthest(X, concepts, S, labels, q, qc):
    best = -1
    best_d = -1.0
    for row in range(X.shape[0]):
        if labels[row] < 0:
            dist = exact_distance(X, concepts, S, row, q, qc)
            if dist > best_d:
                best_d = dist
                best = row
    return best


# -- Algorithm 3: t-closeness-first ----------------------------------------------------------
#
# The subsets are blocks of nearby records (partition/_subsets.py), so that the nearest record
# of a subset to a seed reads only the blocks that can hold it. The first seed of a pair
# (farthest from the centroid) comes from MDAV's anchor-sorted scan; the second (farthest from
# the first, once its cluster is formed) from one query over all subsets.

@numba.njit(cache=True)
def _t_first_cluster(X, concepts, cats, sets, extra, seed, label, labels, hi, lo, works, split,
                     picks):
    """One cluster of Alg. 3 around row ``seed``: from every subset the live record nearest
    the seed (the subsets searched by the threads if ``split``), and a second one from the
    first subset that still holds extra records (at most one extra record per cluster),
    taken in subset order. Returns its size."""
    S = cats[4]
    q = X[seed].copy()
    qc = concepts[seed].copy()
    _subsets.nearest_each(X, concepts, S, sets, q, qc, works, split, picks)
    count = 0
    extra_taken = False
    for g in range(extra.shape[0]):
        row = picks[g]
        if row < 0:
            continue
        _take(X, concepts, cats, row, label, labels, hi, lo)
        _subsets.remove(sets, g, row)
        count += 1
        if extra_taken or extra[g] == 0:
            continue
        extra[g] -= 1
        extra_taken = True
        row = _subsets.nearest(X, concepts, S, sets, g, q, qc, _subsets.thread_work(works, 0))
        if row >= 0:
            _take(X, concepts, cats, row, label, labels, hi, lo)
            _subsets.remove(sets, g, row)
            count += 1
    return count


@numba.njit(cache=True)
def _t_first_batch(X, concepts, cats, sets, extra, labels, hi, lo, state, budget, stop_below,
                   parallel_min, order, rho, anchor, anchor_c, sweep, works):
    """Form up to ``budget`` clusters in pairs (one around the record farthest from the
    centroid, one around the record farthest from that one), stopping early once at most
    ``stop_below`` records remain; queries on at least 2 ``parallel_min`` remaining records
    are shared between the threads. ``state`` = [remaining, next label]."""
    S = cats[4]
    q = np.empty(X.shape[1])
    qc = np.empty(concepts.shape[1], dtype=np.int64)
    picks = np.empty(extra.shape[0], dtype=np.int64)
    formed = 0
    while formed < budget and state[0] > 0 and (state[0] > stop_below or formed == 0):
        # (as MDAV: never with one thread; 2 * SERIAL would overflow)
        split = works[0].shape[0] > 1 and state[0] // 2 >= parallel_min
        _centroid(hi, lo, state[0], cats, q, qc)
        if _move_anchor(sweep, state[0], anchor, anchor_c, q, qc):
            _reanchor(X, concepts, S, _subsets.live_rows(sets), anchor, anchor_c, rho, order,
                      sweep)
        seed = _farthest_from(X, concepts, S, labels, order, rho, anchor, anchor_c, sweep, q, qc)
        state[0] -= _t_first_cluster(X, concepts, cats, sets, extra, seed, state[1], labels,
                                     hi, lo, works, split, picks)
        state[1] += 1
        formed += 1
        if state[0] == 0:
            break
        far = _subsets.farthest(X, concepts, S, sets, X[seed], concepts[seed], works, split)
        state[0] -= _t_first_cluster(X, concepts, cats, sets, extra, far, state[1], labels,
                                     hi, lo, works, split, picks)
        state[1] += 1
        formed += 1
    return formed


def t_closeness_first(X: np.ndarray | None, rank_key: np.ndarray, k: int, t: float, *,
                      categorical: Categorical | None = None,
                      progress: Progress | None = None,
                      threads: int | None = None) -> tuple[np.ndarray, int]:
    """(labels, cluster size) of 002 Alg. 3, subsets by ``rank_key`` (the values, or ranks,
    of the first confidential attribute). ``progress`` gets the number of rows clustered;
    ``threads`` as in :func:`microagg.partition.mdav.mdav` (the subsets of a query are
    shared between the threads)."""
    X, categorical, k = prepare(X, k, categorical)
    t = check_t(t)
    n = X.shape[0]
    size = cluster_size(n, k, t)
    subset = _subsets_by_rank(np.asarray(rank_key), size)
    cats = _cats(categorical)
    concepts = np.ascontiguousarray(categorical.codes, dtype=np.int64)
    X = np.ascontiguousarray(X, dtype=np.float64)
    chooser = ThreadChooser(_kernels.PARALLEL_MIN_ROWS, threads)
    current = [_subsets.build(X, concepts, np.arange(n, dtype=np.int64), subset, size)]
    current.append(_subsets.work_buffers(current[0], chooser.width))
    extra = current[0][10] - n // size
    labels = np.full(n, -1, dtype=np.int64)
    hi, lo = _row_sums(X)
    state = np.array([n, 0], dtype=np.int64)
    anchor = np.empty(X.shape[1])
    anchor_c = np.empty(concepts.shape[1], dtype=np.int64)
    _centroid(hi, lo, n, cats, anchor, anchor_c)
    rho = np.empty(n)
    order = np.empty(n, dtype=np.int64)
    sweep = np.zeros(3, dtype=np.int64)
    _reanchor(X, concepts, cats[4], np.arange(n, dtype=np.int64), anchor, anchor_c, rho, order,
              sweep)

    def step(budget: int, stop_below: int, parallel_min: int) -> tuple[int, int]:
        formed = _t_first_batch(X, concepts, cats, current[0], extra, labels, hi, lo, state,
                                budget, stop_below, parallel_min, order, rho, anchor, anchor_c,
                                sweep, current[1])
        return int(state[0]), formed

    laid_out = [n]

    def refit(remaining: int) -> None:
        if remaining > laid_out[0] // 2:
            _subsets.recode(current[0])
            return
        current[0] = _subsets.rebuild(X, concepts, current[0])
        current[1] = _subsets.work_buffers(current[0], chooser.width)
        laid_out[0] = remaining

    run_batches(chooser, step, n, 1, refit, progress)
    return labels, size


# -- Algorithm 2: k-anonymity-first ----------------------------------------------------------

@numba.njit(cache=True)
def _ordered_candidates(X, concepts, S, labels, q, qc, want, dist, rows, order):
    """The ``want`` remaining rows nearest (q, qc) in order of (distance, row) into
    ``order``; returns how many there are."""
    count = 0
    for row in range(X.shape[0]):
        if labels[row] < 0:
            dist[row] = exact_distance(X, concepts, S, row, q, qc)
            rows[count] = row
            count += 1
    want = min(want, count)
    if want < count:
        _kdtree._select(rows, dist, 0, count, want)
    head = rows[:want].copy()
    head.sort()
    sorted_head = head[np.argsort(dist[head], kind="mergesort")]
    order[:want] = sorted_head
    return want


@numba.njit(cache=True)
def _k_first_cluster(X, concepts, S, cats, seed, k, t, tables, scratch, label, labels, hi,
                     lo, remaining, dist, rows, order):
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
        got = _ordered_candidates(X, concepts, S, labels, q, qc, want, dist, rows, order)
        members = order[:k].copy()
        current = class_emd(members, tables, scratch)
        position = k
        while current > t + 1e-9 and position < remaining:
            if position == got:  # more candidates, in order, past those already seen
                want *= 2
                got = _ordered_candidates(X, concepts, S, labels, q, qc, want, dist, rows,
                                          order)
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
        _take(X, concepts, cats, members[i], label, labels, hi, lo)
    return members.shape[0]


@numba.njit(cache=True)
def _k_first(X, concepts, cats, k, t, tables, scratch, labels):
    n = X.shape[0]
    S = cats[4]
    hi, lo = _row_sums(X)
    q = np.empty(X.shape[1])
    qc = np.empty(concepts.shape[1], dtype=np.int64)
    dist = np.empty(n)
    rows = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    remaining = n
    label = 0
    while remaining > 0:
        _centroid(hi, lo, remaining, cats, q, qc)
        x0 = _scan_farthest(X, concepts, S, labels, q, qc)
        remaining -= _k_first_cluster(X, concepts, S, cats, x0, k, t, tables, scratch, label,
                                      labels, hi, lo, remaining, dist, rows, order)
        label += 1
        if remaining > 0:
            x1 = _scan_farthest(X, concepts, S, labels, X[x0], concepts[x0])
            remaining -= _k_first_cluster(X, concepts, S, cats, x1, k, t, tables, scratch,
                                          label, labels, hi, lo, remaining, dist, rows, order)
            label += 1
    return label


def k_anonymity_first(X: np.ndarray | None, confidential: Sequence[GroundModel], k: int,
                      t: float, *, categorical: Categorical | None = None) -> np.ndarray:
    """Labels of 002 Alg. 2 (not always t-close; see :func:`t_close_partition`)."""
    X, categorical, k = prepare(X, k, categorical)
    t = check_t(t)
    tables = _tables(confidential, X.shape[0])
    labels = np.full(X.shape[0], -1, dtype=np.int64)
    _k_first(X, categorical.codes, _cats(categorical), k, t, tables.arrays,
             _scratch(tables), labels)
    return labels


# -- Algorithm 1: merging --------------------------------------------------------------------

@numba.njit(cache=True)
def _heap_push(keys, ids, size, key, ident):
    at = size
    keys[at] = key
    ids[at] = ident
    while at > 0:
        up = (at - 1) // 2
        if keys[up] > keys[at] or (keys[up] == keys[at] and ids[up] < ids[at]):
            break
        keys[up], keys[at] = keys[at], keys[up]
        ids[up], ids[at] = ids[at], ids[up]
        at = up
    return size + 1


@numba.njit(cache=True)
def _heap_pop(keys, ids, size):
    size -= 1
    keys[0] = keys[size]
    ids[0] = ids[size]
    at = 0
    while True:
        a = 2 * at + 1
        b = a + 1
        top = at
        for c in (a, b):
            if c < size and (keys[c] > keys[top] or (keys[c] == keys[top]
                                                     and ids[c] < ids[top])):
                top = c
        if top == at:
            return size
        keys[top], keys[at] = keys[at], keys[top]
        ids[top], ids[at] = ids[at], ids[top]
        at = top


@numba.njit(cache=True)
def _members(head, following, size, cluster):
    out = np.empty(size[cluster], dtype=np.int64)
    row = head[cluster]
    for i in range(out.shape[0]):
        out[i] = row
        row = following[row]
    return out


@numba.njit(cache=True)
def _class_concepts(concepts, members, cats, out):
    hist = np.zeros_like(cats[3])
    for i in range(members.shape[0]):
        for j in range(concepts.shape[1]):
            hist[j, concepts[members[i], j]] += 1
    _centroid_concepts(hist, cats[0], cats[1], cats[2], out)


@numba.njit(cache=True)
def _merged(a, b):
    """The sorted union of the sorted arrays a and b."""
    out = np.empty(a.shape[0] + b.shape[0], dtype=a.dtype)
    i = j = 0
    for at in range(out.shape[0]):
        if j == b.shape[0] or (i < a.shape[0] and a[i] <= b[j]):
            out[at] = a[i]
            i += 1
        else:
            out[at] = b[j]
            j += 1
    return out


@numba.njit(cache=True)
def _largest_emd(codes, c, tables, scratch):
    """The largest EMD of class c over the confidential attributes; ``codes[a][c]`` holds
    the class's value codes of attribute a, sorted."""
    worst = 0.0
    for a in range(len(codes)):
        worst = max(worst, attribute_emd(a, codes[a][c], tables, scratch))
    return worst


@numba.njit(cache=True)
def _merge(X, concepts, cats, labels, classes, t, tables, scratch, stack):
    """Alg. 1's loop on the partition ``labels`` (0..classes-1); returns the merges made."""
    n, d = X.shape
    S = cats[4]
    head = np.full(classes, -1, dtype=np.int64)
    tail = np.full(classes, -1, dtype=np.int64)
    following = np.full(n, -1, dtype=np.int64)
    size = np.zeros(classes, dtype=np.int64)
    sums = np.zeros((classes, d))
    for row in range(n):
        c = labels[row]
        if head[c] < 0:
            head[c] = row
        else:
            following[tail[c]] = row
        tail[c] = row
        size[c] += 1
        for j in range(d):
            sums[c, j] += X[row, j]
    centre = np.empty((classes, d))
    centre_c = np.empty((classes, concepts.shape[1]), dtype=np.int64)
    emd = np.empty(classes)
    live = np.ones(classes, dtype=np.bool_)
    keys = np.empty(2 * classes + 1)
    ids = np.empty(2 * classes + 1, dtype=np.int64)
    heap = 0
    # Each class also keeps its value codes sorted per confidential attribute, so that a
    # merge costs a linear merge of two sorted arrays, not a sort (one class may absorb
    # thousands of others, each time recomputing its EMD).
    values = tables[1]
    codes = [[np.empty(0, dtype=np.int64) for _ in range(classes)]
             for _ in range(values.shape[0])]
    for c in range(classes):
        members = _members(head, following, size, c)
        for j in range(d):
            centre[c, j] = sums[c, j] / size[c]
        _class_concepts(concepts, members, cats, centre_c[c])
        for a in range(values.shape[0]):
            codes[a][c] = np.sort(values[a][members])
        emd[c] = _largest_emd(codes, c, tables, scratch)
        heap = _heap_push(keys, ids, heap, emd[c], c)
    # Purely numeric quasi-identifiers: the nearest centroid from a k-d tree over the live
    # centroids (a merged class moves to its new centroid); otherwise a scan.
    use_tree = concepts.shape[1] == 0
    tree = _kdtree.build(centre, np.arange(classes if use_tree else 0))
    alive_classes = built_for = classes
    merges = 0
    while heap > 0:
        worst = ids[0]
        value = keys[0]
        heap = _heap_pop(keys, ids, heap)
        if not live[worst] or value != emd[worst]:
            continue  # stale entry
        if value <= t + _TOLERANCE:
            break
        if use_tree:
            _kdtree.remove(tree, worst)
            nearest = _kdtree.nearest(tree, centre[worst], stack)
        else:
            nearest = -1
            nearest_d = np.inf
            for c in range(classes):
                if live[c] and c != worst:
                    dist = exact_distance(centre, centre_c, S, c, centre[worst],
                                          centre_c[worst])
                    if dist < nearest_d:
                        nearest_d = dist
                        nearest = c
        if nearest < 0:
            break
        if use_tree:
            _kdtree.remove(tree, nearest)
        keep = min(worst, nearest)
        gone = max(worst, nearest)
        following[tail[keep]] = head[gone]
        tail[keep] = tail[gone]
        size[keep] += size[gone]
        live[gone] = False
        for j in range(d):
            sums[keep, j] += sums[gone, j]
            centre[keep, j] = sums[keep, j] / size[keep]
        if use_tree:
            _kdtree.reinsert(tree, keep, centre[keep])  # at its new centroid, in its old leaf
            alive_classes -= 1
            if alive_classes <= built_for - built_for // 4:
                # Moved centroids widen the boxes of their old leaves: start afresh.
                tree = _kdtree.build(centre, np.flatnonzero(live))
                built_for = alive_classes
        if concepts.shape[1]:
            _class_concepts(concepts, _members(head, following, size, keep), cats,
                            centre_c[keep])
        for a in range(values.shape[0]):
            codes[a][keep] = _merged(codes[a][keep], codes[a][gone])
            codes[a][gone] = codes[a][gone][:0]
        emd[keep] = _largest_emd(codes, keep, tables, scratch)
        heap = _heap_push(keys, ids, heap, emd[keep], keep)
        merges += 1
    for c in range(classes):
        if live[c]:
            row = head[c]
            while row >= 0:
                labels[row] = c
                row = following[row]
    return merges


def merge(X: np.ndarray | None, labels: np.ndarray, confidential: Sequence[GroundModel],
          t: float, *, categorical: Categorical | None = None) -> tuple[np.ndarray, int]:
    """(labels, merges) of 002 Alg. 1's merging applied to the partition ``labels``; the
    labels are renumbered 0.. in order of first appearance."""
    X, categorical, _ = prepare(X, 1, categorical)
    t = check_t(t)
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (X.shape[0],) or labels.min() < 0:
        raise InputError("one non-negative cluster label is needed per row")
    _, labels = np.unique(labels, return_inverse=True)
    labels = labels.astype(np.int64)
    tables = _tables(confidential, X.shape[0])
    merges = _merge(X, categorical.codes, _cats(categorical), labels, int(labels.max()) + 1, t,
                    tables.arrays, _scratch(tables), _kdtree.stack_buffers())
    _, first = np.unique(labels, return_index=True)
    renumber = np.empty(labels.max() + 1, dtype=np.int64)
    renumber[labels[np.sort(first)]] = np.arange(first.size)
    return renumber[labels], merges


def _tables(confidential: Sequence[GroundModel], n: int) -> EMDTables:
    tables = stack(confidential)
    if tables.values.shape[1] != n:
        raise InputError(f"confidential values for {tables.values.shape[1]} rows, the "
                         f"quasi-identifiers have {n}")
    return tables


def _scratch(tables: EMDTables) -> np.ndarray:
    return np.zeros(max(tables.weights.shape[1], 1))


# -- the three methods, always t-close -------------------------------------------------------

def t_close_partition(X: np.ndarray | None, confidential: Sequence[GroundModel], k: int,
                      t: float, *, method: TClosenessMethod | str = (
                          TClosenessMethod.T_CLOSENESS_FIRST),
                      categorical: Categorical | None = None,
                      microaggregate: Microaggregate | None = None,
                      progress: Progress | None = None,
                      threads: int | None = None) -> TClosePartition:
    """A partition whose classes have at least k records and an EMD of at most t for every
    confidential attribute. ``merge`` microaggregates with ``microaggregate(k)`` (e.g. MDAV
    on the quasi-identifiers) then merges; ``k-anonymity-first`` and ``t-closeness-first``
    cluster by Alg. 2 and 3 and then merge any class still above t (Alg. 3 ranks by the first
    confidential attribute and is repaired for the others). ``progress`` (rows clustered) and
    ``threads`` go to Alg. 3; ``microaggregate`` takes its own."""
    method = parse(TClosenessMethod, method, "method")
    X, categorical, k = prepare(X, k, categorical)
    t = check_t(t)
    n = X.shape[0]
    if n > 1 and t < smallest_t(n):
        raise InputError(f"t = {t:g} is below what {n:,} records allow: eq. (3) would put "
                         f"them all in one class; t >= {smallest_t(n):.6g} gives two classes "
                         "or more")
    confidential = list(confidential)
    effective = k
    if method is TClosenessMethod.T_CLOSENESS_FIRST:
        labels, effective = t_closeness_first(X, confidential[0].values, k, t,
                                              categorical=categorical, progress=progress,
                                              threads=threads)
    elif method is TClosenessMethod.K_ANONYMITY_FIRST:
        labels = k_anonymity_first(X, confidential, k, t, categorical=categorical)
    else:
        if microaggregate is None:
            raise InputError("the merge method needs a microaggregation to start from")
        labels = microaggregate(k)
    before = int(np.unique(labels).size)
    labels, merges = merge(X, labels, confidential, t, categorical=categorical)
    return TClosePartition(labels=labels, method=method, k=k, effective_k=effective,
                           classes_before_merging=before, merges=merges)
