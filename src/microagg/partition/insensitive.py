"""Insensitive microaggregation (paper 000 §3-4.3, Algorithm 2).

Cluster i is made of the k smallest remaining records under a total order <=_i; while at least
2k records remain a new cluster is formed, and the last k..2k-1 records form the last cluster.
The order <=_i is "distance to a reference point R_i", ties broken by the lexicographic order of
the record values (000 §4.1), then by row number (only identical records are still tied, and
swapping them changes no cluster's values). Distances are Euclidean on the coordinates
normalized by the *declared* domain widths (000 eq. 8), never by data statistics.

Because the sequence of orders is fixed before the data are seen, the algorithm is insensitive
(000 Prop. 2): on data sets that differ in one record, the i-th clusters differ in at most one
record, for every i. That is what lets 000 Alg. 3 add noise calibrated to 1/k of the domain.

Reference points (000 §4.3): the corners of the domain box. With bit j of a corner set when
attribute j sits at its upper bound, R_1 is the lower corner (no bit set); R_{i+1} is the unused
corner at the greatest Hamming distance from R_i, ties broken by the greatest distance from
R_{i-1}, then R_{i-2}, and so on; corners still tied after the whole history are taken in
increasing order of their bits read as a binary number (attribute 1 the least significant bit).
When all 2^m corners are used the same sequence starts again. ``reference="single"`` uses R_1
for every cluster (the single-reference variant of 000 §4.2).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

import numba
import numpy as np

from microagg.core.distance import Categorical, domain_normalize
from microagg.core.threads import ThreadChooser
from microagg.errors import InputError
from microagg.options import Reference, parse
from microagg.partition import _kernels
from microagg.partition._heap import heap_sort
from microagg.partition._kernels import (
    query,
    recode,
    remaining_set,
    remove_remaining,
    run_batches,
    work_buffers,
)
from microagg.partition._validate import prepare

__all__ = ["corner_sequence", "insensitive", "order_keys", "total_order"]
Progress = Callable[[int], None]


def _popcount(x: int) -> int:
    return bin(x).count("1")


@lru_cache(maxsize=64)
def _corner_prefix(m: int, length: int) -> tuple[int, ...]:
    """The first ``length`` corners (as bit masks) of the greedy sequence of 000 §4.3."""
    length = min(length, 1 << m)
    sequence = [0]
    used = {0}
    while len(sequence) < length:
        last = sequence[-1]
        candidates: list[int] = []
        # Unused corners at the greatest Hamming distance r from the last one: flip r bits.
        for r in range(m, 0, -1):
            for bits in itertools.combinations(range(m), r):
                corner = last
                for b in bits:
                    corner ^= 1 << b
                if corner not in used:
                    candidates.append(corner)
            if candidates:
                break
        if len(candidates) > 1:
            for earlier in reversed(sequence[:-1]):
                distance = [_popcount(c ^ earlier) for c in candidates]
                top = max(distance)
                candidates = [c for c, d in zip(candidates, distance, strict=True) if d == top]
                if len(candidates) == 1:
                    break
        chosen = min(candidates)
        sequence.append(chosen)
        used.add(chosen)
    return tuple(sequence)


def corner_sequence(m: int, count: int) -> np.ndarray:
    """``count`` reference corners for ``m`` attributes, as a (count, m) boolean array (True =
    upper bound), repeating the 2^m-long sequence when count exceeds it."""
    if m < 1 or count < 0:
        raise InputError("corner_sequence needs m >= 1 and count >= 0")
    period = _corner_prefix(m, min(count, 1 << min(m, 62)))
    masks = np.array([period[i % len(period)] for i in range(count)], dtype=np.int64)
    return ((masks[:, None] >> np.arange(m)) & 1).astype(bool)


@numba.njit(cache=True)
def _smallest(rest, coded, m_rest, corner, corner_c, count, ties, threads, parallel_min):
    """The ``count`` smallest remaining rows under the order of the corner (corner, corner_c):
    distance on the normalized values and categories, then the rows of ``ties``
    lexicographically, then row number; sorted."""
    work = work_buffers(threads, count, 2 * count + 4096)
    md = np.empty(count)
    mr = np.empty(count, dtype=np.int64)
    size, _ = query(rest, coded, work, m_rest, corner, corner_c, np.int64(-1), count,
                    np.bool_(False), md, mr, parallel_min, ties)
    heap_sort(md, mr, size, ties)
    return mr[:size].copy()


# -- the corners' buffers ---------------------------------------------------------------------
#
# Each corner keeps a buffer: its next rows in its order, found by one query and then read one
# by one (rows that other corners clustered meanwhile are skipped). All buffers share one flat
# int64 array, the pool (:class:`_CornerBuffers`). Flat arrays keep every kernel in numba's
# cache: a typed list of arrays would make numba compile its Python-side helpers in every
# process.


class _CornerBuffers(NamedTuple):
    """The buffers of all corners in one pool.

    Attributes
    ----------
    pool : ndarray of int64
        The rows of every buffer; corner c's unread rows are pool[heads[c]:tails[c]].
    heads, tails : ndarray of int64, shape (period,)
        Where each corner's unread rows start and end in the pool.
    built : ndarray of int64, shape (period,)
        The number of rows each corner's last query found (0: no query yet).
    end : int
        Where the next buffer is written in the pool.
    """

    pool: np.ndarray
    heads: np.ndarray
    tails: np.ndarray
    built: np.ndarray
    end: int


def _empty_buffers(period: int, room: int) -> _CornerBuffers:
    """Buffers of ``period`` corners, none queried yet.

    Parameters
    ----------
    period : int
        Number of corners.
    room : int
        Rows the pool holds before it first has to grow.

    Returns
    -------
    _CornerBuffers
        An empty pool of ``room`` rows.
    """
    return _CornerBuffers(np.empty(room, dtype=np.int64), np.zeros(period, dtype=np.int64),
                          np.zeros(period, dtype=np.int64), np.zeros(period, dtype=np.int64), 0)


@numba.njit(cache=True)
def _compact(pool, heads, tails, room):
    """Copy the unread rows of every corner to the front of a new pool.

    The new pool has room for ``room`` more rows, and as many again as it then holds, so that
    copies stay rare however the buffers grow.

    Returns
    -------
    pool : ndarray of int64
        The new pool (``heads`` and ``tails`` are updated in place to point into it).
    end : int
        The number of rows copied: where the next buffer goes.
    """
    kept = 0
    for c in range(heads.size):
        kept += tails[c] - heads[c]
    fresh = np.empty(max(pool.size, 2 * (kept + room)), dtype=np.int64)
    end = 0
    for c in range(heads.size):
        start = heads[c]
        heads[c] = end
        for t in range(start, tails[c]):  # loops: array slice copies take seconds to compile
            fresh[end] = pool[t]
            end += 1
        tails[c] = end
    return fresh, end


@numba.njit(cache=True)
def _store(buffers, c, rows):
    """Make ``rows`` (what a query found) the buffer of corner c, whose rows were all read.

    Returns
    -------
    _CornerBuffers
        The buffers: a new record, since the pool is replaced when it has no room left.
    """
    pool, heads, tails, end = buffers.pool, buffers.heads, buffers.tails, buffers.end
    if end + rows.size > pool.size:
        pool, end = _compact(pool, heads, tails, rows.size)
    heads[c] = end
    for row in rows:
        pool[end] = row
        end += 1
    tails[c] = end
    buffers.built[c] = rows.size
    return _CornerBuffers(pool, heads, tails, buffers.built, end)


@numba.njit(cache=True)
def _corner_clusters(rest, coded, ties, k, corners, corners_c, uses, first, last, stop_below,
                     labels, m_rest, buffers, threads, parallel_min):
    """Form clusters first, first + 1, ... (cluster i uses corner i % period) until ``last``
    or until at most ``stop_below`` rows remain; return (next cluster, m_rest, buffers)."""
    # updated in place; the pool may be replaced
    heads, tails, built = buffers.heads, buffers.tails, buffers.built
    period = corners.shape[0]
    i = first
    while i < last and (m_rest > stop_below or i == first):
        c = i % period
        taken = 0
        while taken < k:
            if heads[c] == tails[c]:
                # A corner's last cluster takes its k rows right after the query (nothing can
                # take them first); earlier clusters leave room for rows other corners take.
                if built[c] > 0:
                    want = 2 * built[c]
                elif uses[c] == 1:
                    want = k - taken
                else:
                    want = k * uses[c] + k
                buffers = _store(buffers, c,
                                 _smallest(rest, coded, m_rest, corners[c], corners_c[c],
                                           min(want, m_rest), ties, threads, parallel_min))
            row = buffers.pool[heads[c]]
            heads[c] += 1
            if labels[row] < 0:
                labels[row] = i
                taken += 1
                m_rest = remove_remaining(rest, m_rest, row)
        uses[c] -= 1
        if uses[c] == 0:
            heads[c] = tails[c]  # its unread rows are dropped at the next compaction
        i += 1
    return i, m_rest, buffers


def _tiebreak(X: np.ndarray, categorical: Categorical) -> np.ndarray:
    """The values ties are broken on, lexicographically: the raw numeric values, then each
    category's rank in the alphabetical order of its attribute's concept labels (a fixed,
    data-independent order)."""
    columns = [X]
    for j, metric in enumerate(categorical.metrics):
        alphabetical = np.argsort(np.argsort(np.array(metric.labels, dtype=object)))
        columns.append(alphabetical[categorical.codes[:, j]].astype(np.float64)[:, None])
    return np.ascontiguousarray(np.hstack(columns))


def _corner_parts(bits: np.ndarray, p: int, categorical: Categorical
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Numeric coordinates (0/1 on the normalized scale) and categorical concepts (a_b or
    a_t, 000 eq. 3-4) of corners given as bit rows over p numeric then q categorical
    attributes."""
    numeric = bits[:, :p].astype(np.float64)
    concepts = np.empty((bits.shape[0], len(categorical.metrics)), dtype=np.int64)
    for j, metric in enumerate(categorical.metrics):
        concepts[:, j] = np.where(bits[:, p + j], metric.top, metric.bottom)
    return np.ascontiguousarray(numeric), concepts


def order_keys(X: np.ndarray | None, lows: np.ndarray, highs: np.ndarray,
               categorical: Categorical | None = None,
               corner: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The keys of the order of a corner (bits over the numeric then categorical attributes;
    default the lower corner R_1): the squared normalized distance of every row, and the
    tie-break values to compare lexicographically (:func:`_tiebreak`). Row by row, so a part
    of the rows gets the same keys as the whole."""
    X, categorical, _ = prepare(X, 1, categorical)
    U = domain_normalize(X, lows, highs)
    p = U.shape[1]
    bits = np.zeros((1, p + len(categorical.metrics)), dtype=bool)
    if corner is not None:
        bits[0] = np.asarray(corner, dtype=bool)
    numeric, concepts = _corner_parts(bits, p, categorical)
    key = np.zeros(U.shape[0])
    for j in range(p):
        key += (U[:, j] - numeric[0, j]) ** 2
    squared = categorical.squared()
    for j in range(len(categorical.metrics)):
        key += squared[j, concepts[0, j], categorical.codes[:, j]]
    return key, _tiebreak(X, categorical)


def total_order(X: np.ndarray | None, lows: np.ndarray, highs: np.ndarray,
                categorical: Categorical | None = None,
                corner: np.ndarray | None = None) -> np.ndarray:
    """Row numbers sorted by the order of a corner (:func:`order_keys`), then row number."""
    key, ties = order_keys(X, lows, highs, categorical, corner)
    lexicographic = [ties[:, j] for j in range(ties.shape[1] - 1, -1, -1)]
    return np.lexsort((np.arange(key.size), *lexicographic, key))


def insensitive(X: np.ndarray | None, k: int, lows: np.ndarray, highs: np.ndarray, *,
                categorical: Categorical | None = None,
                reference: Reference | str = Reference.CORNERS,
                progress: Progress | None = None, threads: int | None = None) -> np.ndarray:
    """Insensitive microaggregation (000 Alg. 2) of records with numeric attributes X, whose
    declared domains are [lows_j, highs_j], and ``categorical`` attributes (000 §4.4). Returns
    int64 labels numbering clusters in the order they are formed; every cluster has k records
    except the last (k..2k-1). ``threads``: see :mod:`microagg.core.threads`."""
    X, categorical, k = prepare(X, k, categorical)
    reference = parse(Reference, reference, "reference")
    U = domain_normalize(X, lows, highs)
    n, p = U.shape
    attributes = p + len(categorical.metrics)
    clusters = n // k
    labels = np.full(n, -1, dtype=np.int64)
    if reference is Reference.SINGLE:
        order = total_order(X, lows, highs, categorical)
        labels[order] = np.minimum(np.arange(n) // k, clusters - 1)
        if progress is not None:
            progress(n)
        return labels
    if clusters > 1:
        period = min(1 << min(attributes, 62), clusters - 1)
        corners, corners_c = _corner_parts(corner_sequence(attributes, period), p, categorical)
        uses = np.bincount(np.arange(clusters - 1) % period, minlength=period).astype(np.int64)
        rest, coded = remaining_set(U, categorical.codes, categorical.squared())
        ties = _tiebreak(X, categorical)
        chooser = ThreadChooser(_kernels.PARALLEL_MIN_ROWS, threads)
        formed, buffers = 0, _empty_buffers(period, n)

        def step(budget: int, stop_below: int, parallel_min: int) -> tuple[int, int]:
            nonlocal formed, buffers
            first = formed
            formed, left, buffers = _corner_clusters(
                rest, coded, ties, k, corners, corners_c, uses, first,
                min(clusters - 1, first + budget), stop_below, labels, n - first * k,
                buffers, chooser.width, parallel_min)
            return left, formed - first

        def recode_rows(m: int) -> None:
            nonlocal coded
            coded = recode(rest, coded, m)

        # Clusters are formed while at least 2k rows remain (then clusters - 1 are formed).
        run_batches(chooser, step, n, 2 * k, recode_rows, progress)
    labels[labels < 0] = clusters - 1
    if progress is not None:
        progress(n)
    return labels
