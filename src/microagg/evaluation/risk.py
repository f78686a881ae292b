"""Disclosure-risk measures: distance-based record linkage (paper 000 §5.2) and the rank-based
record-linkage risk of paper 003 (eq. 2, with the permutation distance of §2.1).

An intruder links each masked record y_j to the original records G_j at minimum distance from
it; the link is right with probability ``1/|G_j|`` if the true original x_j is in G_j, else 0.
RL = 100 · Σ_j Pr(y_j) / n is the percentage of expected correct links.

Records with missing values (NaN, concept -1) are compared with the rule of
:mod:`microagg.partition.mdav_missing`: over the attributes both records have, rescaled by
``p / |O_xy|`` (+∞ when they share none).

The computation is exact (ties are detected with bit-identical distance evaluations) and runs
in O(n) memory: each distinct masked record is compared with the distinct original records in a
compiled, parallel loop, so there is no n × n matrix. Numeric records without missing values
are searched in a k-d tree (:mod:`microagg.partition._kdtree`) whose box bounds never exceed a
distance computed in the same column order, so a node is skipped only when all its records are
strictly farther than the best found: every tie is still counted. Otherwise each distinct
masked record is compared with every distinct original, O(u_x · u_y · p) for u_x and u_y
distinct original and masked records; k-anonymous releases have u_y <= n / k.
"""

from __future__ import annotations

import numba
import numpy as np
import pandas as pd

from microagg.core._row_hash import first_appearance_ids
from microagg.errors import InputError
from microagg.evaluation.utility import paired_matrices
from microagg.options import RankScale, RankTies, RiskAggregate, parse
from microagg.partition._kdtree import STACK, build, push_children
from microagg.partition._missing import missing_distance

__all__ = ["nearest_rank_distances", "permutation_distances", "rank_intervals", "rank_risk",
           "ranks", "record_linkage"]


@numba.njit(cache=True, inline="always")
def _squared_distance(a: np.ndarray, b: np.ndarray) -> float:
    total = 0.0
    for j in range(a.shape[0]):
        diff = a[j] - b[j]
        total += diff * diff
    return total


@numba.njit(cache=True, inline="always")
def _distance(x: np.ndarray, cx: np.ndarray, y: np.ndarray, cy: np.ndarray,
              S: np.ndarray) -> float:
    """Numeric attributes in column order, then the categorical ones."""
    total = _squared_distance(x, y)
    for j in range(cx.shape[0]):
        total += S[j, cx[j], cy[j]]
    return total


@numba.njit(cache=True, inline="always")
def _pair_distance(originals: np.ndarray, original_concepts: np.ndarray, i: int,
                   y: np.ndarray, cy: np.ndarray, S: np.ndarray, any_missing: bool) -> float:
    """The distance of original record i to the masked record (y, cy); with ``any_missing``, over
    the attributes both have (:func:`microagg.partition._missing.missing_distance`)."""
    if any_missing:
        return missing_distance(originals, original_concepts, S, i, y, cy)
    return _distance(originals[i], original_concepts[i], y, cy, S)


@numba.njit(cache=True, parallel=True)
def _nearest_originals(originals: np.ndarray, original_concepts: np.ndarray,
                       weights: np.ndarray, masked: np.ndarray, masked_concepts: np.ndarray,
                       S: np.ndarray, any_missing: bool) -> tuple[np.ndarray, np.ndarray]:
    """For each masked row: the minimum squared distance to the originals and the total weight
    (multiplicity) of the originals at exactly that distance."""
    m = masked.shape[0]
    best = np.empty(m)
    tied = np.empty(m)
    for u in numba.prange(m):
        row = masked[u]
        row_c = masked_concepts[u]
        low = np.inf
        count = 0.0
        for i in range(originals.shape[0]):
            d = _pair_distance(originals, original_concepts, i, row, row_c, S, any_missing)
            if d < low:
                low = d
                count = weights[i]
            elif d == low:
                count += weights[i]
        best[u] = low
        tied[u] = count
    return best, tied


@numba.njit(cache=True, parallel=True)
def _nearest_in_tree(tree, weights: np.ndarray, masked: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_nearest_originals` for numeric records without missing values, the originals
    in ``tree`` (:func:`microagg.partition._kdtree.build`; ``weights`` by original row). A
    node waits only while its bound is at most the best distance, so ties are all counted."""
    points, rows, _, _, _, start, end, left, right, _, count, lo, hi = tree
    m = masked.shape[0]
    d = masked.shape[1]
    best = np.empty(m)
    tied = np.empty(m)
    for u in numba.prange(m):
        q = masked[u]
        waiting = np.empty(STACK, dtype=np.int64)
        bounds = np.empty(STACK)
        low = np.inf
        total = 0.0
        waiting[0] = 0
        bounds[0] = 0.0
        top = 1
        while top > 0:
            top -= 1
            node = waiting[top]
            if bounds[top] > low:
                continue
            a = left[node]
            if a < 0:
                for i in range(start[node], end[node]):
                    dist = 0.0
                    for j in range(d):
                        diff = points[i, j] - q[j]
                        dist += diff * diff
                    if dist < low:
                        low = dist
                        total = weights[rows[i]]
                    elif dist == low:
                        total += weights[rows[i]]
                continue
            top = push_children(lo, hi, count, left, right, node, q, waiting, bounds, top,
                                low)
        best[u] = low
        tied[u] = total
    return best, tied


def distinct_rows(*blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct records of the (n, ·) arrays ``blocks`` side by side, compared bit for bit:
    the index of each one's first record, and each record's number (0, 1, … in order of first
    appearance). Equal records always share a number; values that differ only in their bits
    (0.0 and -0.0) may not, which every distance here treats alike."""
    n = blocks[0].shape[0]
    words = np.vstack([_words(np.asarray(block).reshape(n, -1)) for block in blocks])
    ids = first_appearance_ids(words) if words.shape[0] else np.zeros(n, dtype=np.int64)
    first = np.unique(ids, return_index=True)[1]
    return first, ids


def _words(block: np.ndarray) -> np.ndarray:
    """The (p, n) 64-bit words of the (n, p) array ``block``."""
    wide = block.astype(np.float64 if block.dtype.kind == "f" else np.int64, copy=False)
    return np.ascontiguousarray(wide.T).view(np.uint64)


@numba.njit(cache=True)
def _own_distances(originals: np.ndarray, original_concepts: np.ndarray, masked: np.ndarray,
                   masked_concepts: np.ndarray, S: np.ndarray, any_missing: bool) -> np.ndarray:
    out = np.empty(originals.shape[0])
    for i in range(originals.shape[0]):
        out[i] = _pair_distance(originals, original_concepts, i, masked[i], masked_concepts[i],
                                S, any_missing)
    return out


def record_linkage(original: np.ndarray, masked: np.ndarray, widths: np.ndarray | None = None,
                   *, categories: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                   ) -> float:
    """Record-linkage percentage RL of paper 000 §5.2.

    ``widths`` divide each numeric attribute before distances are taken (the domain width of
    eq. 8 of paper 000, or the data range); ``None`` means raw Euclidean distance.
    ``categories`` = (original concepts, masked concepts, S) adds categorical attributes, S[j]
    holding the squared contributions (δ_j / δ_j(a_b, a_t))² of eq. 8. Missing values (NaN,
    concept -1) are compared by the distance over the attributes both records have (module
    docstring).

    Examples
    --------
    >>> import numpy as np
    >>> original = np.array([[1.0, 1.0], [5.0, np.nan], [9.0, 2.0]])
    >>> record_linkage(original, np.array([[1.0, 1.0], [5.0, 3.0], [9.0, np.nan]]))
    100.0
    """
    x, y = paired_matrices(original, masked)
    if np.isinf(x).any() or np.isinf(y).any():
        raise InputError("record linkage needs finite values")
    if widths is not None:
        widths = np.broadcast_to(np.asarray(widths, dtype=np.float64), (x.shape[1],))
        if np.any(widths <= 0):
            raise InputError("record linkage needs positive attribute widths")
        x, y = x / widths, y / widths
    n = x.shape[0]
    if categories is None:
        cx = cy = np.empty((n, 0), dtype=np.int64)
        S = np.zeros((0, 1, 1))
    else:
        cx, cy, S = (np.asarray(a) for a in categories)
        cx = cx.reshape(n, -1).astype(np.int64)
        cy = cy.reshape(n, -1).astype(np.int64)
    # Distinct records (values and concepts) with their multiplicities.
    x = np.ascontiguousarray(x)
    y = np.ascontiguousarray(y)
    x_first, x_ids = distinct_rows(x, cx)
    x_count = np.bincount(x_ids).astype(np.float64)
    y_first, y_of_row = distinct_rows(y, cy)
    any_missing = bool(np.isnan(x).any() or np.isnan(y).any() or (cx < 0).any() or (cy < 0).any())
    if not any_missing and cx.shape[1] == 0:
        by_row = np.zeros(n)
        by_row[x_first] = x_count
        best, tied = _nearest_in_tree(build(x, x_first.astype(np.int64)), by_row,
                                      np.ascontiguousarray(y[y_first]))
    else:
        best, tied = _nearest_originals(
            np.ascontiguousarray(x[x_first]), np.ascontiguousarray(cx[x_first]), x_count,
            np.ascontiguousarray(y[y_first]), np.ascontiguousarray(cy[y_first]),
            np.ascontiguousarray(S), any_missing)
    y_of_row = y_of_row.reshape(-1)
    own = _own_distances(x, cx, y, cy,
                         np.ascontiguousarray(S), any_missing)
    linked = own == best[y_of_row]
    probability = np.where(linked, 1.0 / tied[y_of_row], 0.0)
    return float(100.0 * probability.sum() / x.shape[0])


def ranks(values: np.ndarray, scale: RankScale | str = RankScale.RANKS) -> np.ndarray:
    """Rank of every value within its column, ties at their mean rank (mid-ranks).

    ``RankScale.RANKS`` gives ranks 1..n; ``RankScale.UNIT`` divides them by n, so that data
    sets of different sizes share the scale (0, 1]."""
    scale = parse(RankScale, scale, "rank scale")
    values = np.asarray(values, dtype=np.float64)
    # pandas' mid-ranks, as scipy.stats.rankdata(method="average") gives them (scipy.stats
    # takes 0.4 s to import)
    r = (pd.DataFrame(values) if values.ndim == 2 else pd.Series(values)).rank(
        method="average").to_numpy()
    return r / r.shape[0] if scale is RankScale.UNIT else r


def rank_intervals(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The interval of ranks every value's ties span within its column, ranks 1..n.

    A value v of a column gets [#{u < v} + 1, #{u <= v}]: a single rank when it is not tied,
    the block of its ties otherwise (the mid-rank is the block's centre)."""
    x = np.asarray(values, dtype=np.float64)
    low, high = np.empty_like(x), np.empty_like(x)
    for j in range(x.shape[1]):
        ordered = np.sort(x[:, j])
        low[:, j] = np.searchsorted(ordered, x[:, j], side="left") + 1
        high[:, j] = np.searchsorted(ordered, x[:, j], side="right")
    return low, high


@numba.njit(cache=True, parallel=True)
def _nearest_to_boxes(tree, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The squared distance from each box [low[i], high[i]] to the nearest point of ``tree``
    (a :func:`microagg.partition._kdtree.build` tree): per coordinate the gap between the
    box and the point, 0 inside it. Branch and bound on the tree's node boxes, exact."""
    points, _, _, _, _, start, end, left, right, _, count, lo, hi = tree
    out = np.empty(low.shape[0])
    d = low.shape[1]
    for q in numba.prange(low.shape[0]):
        waiting = np.empty(STACK, dtype=np.int64)
        bounds = np.empty(STACK)
        best = np.inf
        waiting[0] = 0
        bounds[0] = 0.0
        top = 1
        while top > 0 and best > 0.0:
            top -= 1
            node = waiting[top]
            if bounds[top] >= best:
                continue
            a = left[node]
            if a < 0:
                for i in range(start[node], end[node]):
                    total = 0.0
                    for j in range(d):
                        gap = max(low[q, j] - points[i, j], points[i, j] - high[q, j], 0.0)
                        total += gap * gap
                    best = min(best, total)
                continue
            b = right[node]
            bound_a = 0.0
            bound_b = 0.0
            for j in range(d):
                gap_a = max(lo[a, j] - high[q, j], low[q, j] - hi[a, j], 0.0)
                gap_b = max(lo[b, j] - high[q, j], low[q, j] - hi[b, j], 0.0)
                bound_a += gap_a * gap_a
                bound_b += gap_b * gap_b
            if count[a] == 0:
                bound_a = np.inf
            if count[b] == 0:
                bound_b = np.inf
            if bound_a <= bound_b:  # the farther child waits below the nearer one
                a, b = b, a
                bound_a, bound_b = bound_b, bound_a
            if bound_a < best:
                waiting[top] = a
                bounds[top] = bound_a
                top += 1
            if bound_b < best:
                waiting[top] = b
                bounds[top] = bound_b
                top += 1
        out[q] = best
    return out


def nearest_rank_distances(original: np.ndarray, masked: np.ndarray,
                           scale: RankScale | str = RankScale.RANKS,
                           ties: RankTies | str = RankTies.INTERVALS) -> np.ndarray:
    """d(x, Y) of 003 §4 for every original record x: the Euclidean distance between the ranks
    of x (within X) and those of the nearest masked record (ranks within Y, mid-ranks for
    ties).

    ``ties`` says what the rank of a tied original value is. ``INTERVALS`` (the default): the
    interval of ranks its ties span, at distance 0 from any masked rank inside it, so that a
    masking that moves every value by less than the gap to the next distinct value (it only
    breaks ties) scores as the identity release does; ``MIDRANKS``: the centre of that
    interval, as 003 §2.1 reads literally, under which noise of 10^-4 on integer data scores
    as safe as MDAV with k = 5 (docs/algorithms.md). Without ties both are the same.

    Y may have another number of records than X (a synthetic release): its ranks are then put
    on X's scale (multiplied by n_X / n_Y). A k-d tree finds the nearest records exactly, in
    O(n) memory; tied originals are searched once per distinct record.
    """
    x, y = paired_matrices(original, masked, aligned=False,
                           finite_for="rank-based risk")
    scale = parse(RankScale, scale, "rank scale")
    ties = parse(RankTies, ties, "rank ties")
    n = x.shape[0]
    ry = ranks(y, RankScale.UNIT)
    low, high = rank_intervals(x)
    if ties is RankTies.MIDRANKS or np.array_equal(low, high):
        from scipy.spatial import cKDTree  # 0.1 s to import: only when needed

        distance = cKDTree(ry).query((low + high) / (2 * n), k=1)[0]
    else:
        first, row_box = distinct_rows(low, high)
        ry = np.ascontiguousarray(ry)
        tree = build(ry, distinct_rows(ry)[0].astype(np.int64))  # each point once
        squared = _nearest_to_boxes(tree, np.ascontiguousarray(low[first] / n),
                                    np.ascontiguousarray(high[first] / n))
        distance = np.sqrt(squared)[row_box]
    return distance * n if scale is RankScale.RANKS else distance


def rank_risk(original: np.ndarray, masked: np.ndarray, *,
              scale: RankScale | str = RankScale.RANKS,
              aggregate: RiskAggregate | str = RiskAggregate.MEAN_OF_LOGS,
              ties: RankTies | str = RankTies.INTERVALS) -> float:
    """The rank-based record-linkage risk R(X, Y) of 003 eq. 2; *smaller means riskier*.

    Eq. 2 is printed as (1/n) log Σ_x d(x, Y), which cannot give the paper's values; the
    default reading, ``MEAN_OF_LOGS``, is (1/n) Σ_x ln(1 + d(x, Y)): the log taken per record
    as the text argues ("the logarithm reduces the influence of large distances"), 1 added so
    that a record whose ranks are all kept counts as ln 1 = 0 instead of −∞. It is the reading
    that reproduces the paper's matched parameters on Census and EIA (docs/reproduction.md).
    ``LOG_OF_MEAN`` is ln((1/n) Σ d) and ``PRINTED`` is eq. 2 as printed. ``ties`` as in
    :func:`nearest_rank_distances`.
    """
    aggregate = parse(RiskAggregate, aggregate, "risk aggregate")
    d = nearest_rank_distances(original, masked, scale, ties)
    if aggregate is RiskAggregate.MEAN_OF_LOGS:
        return float(np.mean(np.log1p(d)))
    total = float(d.sum())
    if total == 0.0:
        return float("-inf")
    if aggregate is RiskAggregate.LOG_OF_MEAN:
        return float(np.log(total / d.size))
    return float(np.log(total) / d.size)


def permutation_distances(original: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """The permutation distance of 003 §2.1 between each original record and its own masked
    record (same row): max over attributes of ``|rank(x^i) − rank(y^i)|``, ranks 1..n."""
    x, y = paired_matrices(original, masked, finite_for="the permutation distance")
    return np.max(np.abs(ranks(x) - ranks(y)), axis=1)
