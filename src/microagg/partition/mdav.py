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
from microagg.partition._kernels import (
    BLOCK,
    block_distances,
    dd_accumulate,
    dd_total,
    exact_distance,
    farther,
    precedes,
    query,
    recode,
    remaining_set,
    remove_row,
    run_batches,
    work_buffers,
)
from microagg.partition._validate import prepare

__all__ = ["mdav", "vmdav"]

Progress = Callable[[int], None]

# Candidate rows a chunk may keep in a coded pass before falling back to the exact pass.
_CANDIDATES = 4096


@numba.njit(cache=True)
def _category_centroid(counts, delta, parent, ordinal):
    """Marginality centroid (000 eq. 5) of the sample with ``counts`` per concept: among the
    concepts of the minimal sub-taxonomy covering it (for an ordinal chain, the levels between
    its smallest and largest), the least marginal; ties to the lowest concept number.
    Marginality sums run over the sample's concepts in increasing order (as
    :func:`microagg.data.taxonomy.marginality`)."""
    size = counts.shape[0]
    first = -1
    lowest = size
    highest = -1
    for c in range(size):
        if counts[c] > 0:
            if first < 0:
                first = c
            lowest = min(lowest, c)
            highest = max(highest, c)
    candidate = np.zeros(size, dtype=np.bool_)
    if ordinal:
        for c in range(lowest, highest + 1):
            candidate[c] = True
    else:
        common = np.zeros(size, dtype=np.bool_)
        c = first
        while c >= 0:
            common[c] = True
            c = parent[c]
        above = np.zeros(size, dtype=np.bool_)
        for present in range(size):
            if counts[present] > 0 and present != first:
                above[:] = False
                c = present
                while c >= 0:
                    above[c] = True
                    c = parent[c]
                for a in range(size):
                    common[a] = common[a] and above[a]
        lca = first
        while not common[lca]:
            lca = parent[lca]
        for present in range(size):
            if counts[present] > 0:
                c = present
                while True:
                    candidate[c] = True
                    if c == lca:
                        break
                    c = parent[c]
    best = -1
    best_score = np.inf
    for a in range(size):
        if candidate[a]:
            score = 0.0
            for c in range(size):
                if counts[c] > 0:
                    score += counts[c] * delta[c, a]
            if score < best_score:
                best = a
                best_score = score
    return best


@numba.njit(cache=True)
def _centroid_concepts(hist, deltas, parents, ordinal, out):
    for j in range(hist.shape[0]):
        out[j] = _category_centroid(hist[j], deltas[j], parents[j], ordinal[j])


class _State:
    """Everything one MDAV or V-MDAV run keeps between batches: the remaining set with its
    codes (see :mod:`microagg.partition._kernels`), the query buffers, the running sums and
    concept counts of the remaining rows, and the anchor-sorted order for
    farthest-from-centroid queries."""

    def __init__(self, X: np.ndarray, k: int, categorical: Categorical,
                 threads: int | None) -> None:
        n = X.shape[0]
        # Read at run time (tests lower the chunk size to exercise the split passes).
        self.chooser = ThreadChooser(_kernels.PARALLEL_MIN_ROWS, threads)
        self.rest, self.coded = remaining_set(X, categorical.codes, categorical.squared())
        q = categorical.codes.shape[1]
        self.cats = (
            categorical.distances() if q else np.zeros((0, 1, 1)),
            categorical.parents() if q else np.zeros((0, 1), dtype=np.int64),
            np.array([m.ordinal for m in categorical.metrics], dtype=np.bool_),
            np.zeros((q, categorical.width if q else 1), dtype=np.int64),
        )
        hist = self.cats[3]
        for j in range(q):
            hist[j] = np.bincount(categorical.codes[:, j], minlength=hist.shape[1])
        self.work = work_buffers(self.chooser.width, k - 1, _CANDIDATES)
        self.labels = np.full(n, -1, dtype=np.int64)
        self.hi, self.lo = dd_total(self.rest[0], n)
        self.m = n
        self.next_label = 0
        self.anchor = self.hi / n if X.shape[1] else np.empty(0)
        self.anchor_c = np.empty(q, dtype=np.int64)
        _centroid_concepts(hist, self.cats[0], self.cats[1], self.cats[2], self.anchor_c)
        self.rho = np.empty(n)
        self.order = np.empty(n, dtype=np.int64)
        self.sweep = np.zeros(3, dtype=np.int64)  # [head, length of order, rows scanned]
        _reanchor(self.rest[4], self.rest[6], self.coded[2], self.rest[2], self.anchor,
                  self.anchor_c, self.rho, self.order, self.sweep)

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
    Y, codes, idx, pos, _, C, concepts = rest
    for t in range(count):
        row = members[t]
        labels[row] = label
        dd_accumulate(hi, lo, Y, pos[row], -1.0)
        for j in range(C.shape[0]):
            hist[j, concepts[row, j]] -= 1
        m = remove_row(Y, codes, C, idx, pos, m, row)
    return m


# A farthest-point scan may stop when no row further down the anchor order can beat the best
# squared distance found: d(x, c) <= rho(x) + d(anchor, c) (eq. 8 distances are metrics),
# inflated by this factor to cover the rounding of the computed distances.
_BOUND_SLACK = 1.0 + 1e-10


@numba.njit(cache=True)
def _reanchor(rows, concepts, S, live, anchor, anchor_c, rho, order, sweep):
    """Distances of the ``live`` rows (the remaining ones) to the anchor; ``order`` lists them
    farthest first."""
    m = live.shape[0]
    keys = np.empty(m)
    for p in range(m):
        row = live[p]
        rho[row] = np.sqrt(exact_distance(rows, concepts, S, row, anchor, anchor_c))
        keys[p] = -rho[row]
    perm = np.argsort(keys)
    for p in range(m):
        order[p] = live[perm[p]]
    sweep[0] = 0
    sweep[1] = m
    sweep[2] = 0


@numba.njit(cache=True)
def _farthest_from(rows, concepts, S, labels, order, rho, anchor, anchor_c, sweep, c, cc):
    """The remaining row (label < 0) farthest from the point (c, cc) (ties: lowest row),
    scanning rows by decreasing distance to the anchor and stopping by the triangle
    inequality. Exact: every row that could tie or win is evaluated with the same
    squared-distance sum as the passes."""
    shift = 0.0
    for j in range(c.shape[0]):
        diff = c[j] - anchor[j]
        shift += diff * diff
    for j in range(cc.shape[0]):
        shift += S[j, anchor_c[j], cc[j]]
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
        total = exact_distance(rows, concepts, S, row, c, cc)
        if best < 0 or farther(total, row, best_d, best):
            best = row
            best_d = total
    return best


@numba.njit(cache=True)
def _move_anchor(sweep, m, anchor, anchor_c, c, cc):
    """When the scans since the last re-anchoring have read more than an eighth of the m
    remaining rows, move the anchor to the point (c, cc) and say so (the caller re-anchors)."""
    if sweep[2] <= m // 8 + 64:
        return False
    for j in range(c.shape[0]):
        anchor[j] = c[j]
    for j in range(cc.shape[0]):
        anchor_c[j] = cc[j]
    return True


@numba.njit(cache=True)
def _farthest_from_centroid(rest, S, m, labels, order, rho, anchor, anchor_c, sweep, c, cc):
    """Farthest remaining row from the centroid; re-anchors at it when scans grow long."""
    if _move_anchor(sweep, m, anchor, anchor_c, c, cc):
        _reanchor(rest[4], rest[6], S, rest[2][:m], anchor, anchor_c, rho, order, sweep)
    return _farthest_from(rest[4], rest[6], S, labels, order, rho, anchor, anchor_c, sweep, c, cc)


@numba.njit(cache=True)
def _grow(rest, coded, work, hist, m, hi, lo, labels, label, k, seed, q, qc, members,
          want_far, parallel_min):
    """Cluster ``seed`` with its k-1 nearest remaining rows ((q, qc) receive the seed's
    values). Returns the remaining count and, if ``want_far``, the row farthest from the
    seed."""
    rows, concepts = rest[4], rest[6]
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
                parallel_min, order, rho, anchor, anchor_c, sweep):
    """Form up to ``budget`` clusters, stopping early once at most ``stop_below`` rows
    remain; return (remaining rows, next label)."""
    deltas, parents, ordinal, hist = cats
    idx, pos, rows = rest[2], rest[3], rest[4]
    S = coded[2]
    d = rows.shape[1]
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
        _centroid_concepts(hist, deltas, parents, ordinal, centroid_c)
        r = _farthest_from_centroid(rest, S, m, labels, order, rho, anchor, anchor_c, sweep,
                                    centroid, centroid_c)
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
        state.labels, state.next_label, k, budget, stop_below, parallel_min, state.order,
        state.rho, state.anchor, state.anchor_c, state.sweep), progress)
    return state.labels


# -- V-MDAV --------------------------------------------------------------------------------

@numba.njit(cache=True)
def _lower_gaps(rest, S, m, q, qc, gap):
    """gap[row] = min(gap[row], squared distance of row to (q, qc)) over the remaining rows."""
    Y, idx, C = rest[0], rest[2], rest[5]
    block = np.empty(BLOCK)
    for b0 in range(0, m, BLOCK):
        length = min(m, b0 + BLOCK) - b0
        block_distances(Y, C, S, q, qc, b0, length, block)
        for t in range(length):
            row = idx[b0 + t]
            if block[t] < gap[row]:
                gap[row] = block[t]


@numba.njit(cache=True)
def _vmdav_batch(rest, coded, work, hist, m, hi, lo, labels, next_label, k, gamma, centroid,
                 centroid_c, gap, budget, stop_below, parallel_min, order, rho, sweep):
    idx, rows, concepts = rest[2], rest[4], rest[6]
    S = coded[2]
    d = rows.shape[1]
    ties_by_row = np.empty((0, 0))
    members = np.empty(2 * k, dtype=np.int64)
    q = np.empty(d)
    qc = np.empty(centroid_c.shape[0], dtype=np.int64)
    formed = 0
    while formed < budget and m >= k and (m > stop_below or formed == 0):
        # The anchor of the sorted order is the fixed centroid itself.
        r = _farthest_from(rest[4], rest[6], S, labels, order, rho, centroid, centroid_c,
                           sweep, centroid, centroid_c)
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
    centroid = state.hi / n if X.shape[1] else np.empty(0)
    centroid_c = state.anchor_c.copy()  # the categorical centroid of all rows
    gap = np.full(n, np.inf)
    state.run(lambda budget, stop_below, parallel_min: _vmdav_batch(
        state.rest, state.coded, state.work, state.cats[3], state.m, state.hi, state.lo,
        state.labels, state.next_label, k, float(gamma), centroid, centroid_c, gap, budget,
        stop_below, parallel_min, state.order, state.rho, state.sweep), progress, minimum=k)
    _assign_leftovers(X, categorical, state.labels)
    if progress is not None:
        progress(n)
    return state.labels
