"""The k nearest records under the mixed-type distance of the attacks, searched in a k-d tree.

The distance of two encoded records (:mod:`microagg.risk.attack_data`) is the sum over their
coordinates of ``|a - b|`` for a numeric coordinate (scaled to at most 1) and ``a != b`` for a
categorical one (a code): the Gower-like distance of Anonymeter (Giomi et al. 2023). The
candidates live in the tree of :func:`microagg.partition._kdtree.build`; a node is opened while
its lower bound (per coordinate the gap from the query to the node's box, a categorical
coordinate counting 1 when the query's code lies outside the box's range of codes) is at most
the k-th best distance, so every tie is seen and the k nearest are the least by (distance,
row), like a scan in row order. The bound is computed with the same monotone operations as the
distance, in the same coordinate order, so it never exceeds the distance of a record it bounds.
"""

from __future__ import annotations

import numba
import numpy as np

from microagg.partition._kdtree import STACK, build

__all__ = ["brute_neighbours", "nearest_neighbours"]


@numba.njit(cache=True, inline="always")
def _distance(a: np.ndarray, b: np.ndarray, categorical: np.ndarray) -> float:
    total = 0.0
    for j in range(a.shape[0]):
        if categorical[j]:
            if a[j] != b[j]:
                total += 1.0
        else:
            total += abs(a[j] - b[j])
    return total


@numba.njit(cache=True, inline="always")
def _bound(lo: np.ndarray, hi: np.ndarray, node: int, q: np.ndarray,
           categorical: np.ndarray) -> float:
    total = 0.0
    for j in range(q.shape[0]):
        if categorical[j]:
            if q[j] < lo[node, j] or q[j] > hi[node, j]:
                total += 1.0
        else:
            total += max(lo[node, j] - q[j], q[j] - hi[node, j], 0.0)
    return total


@numba.njit(cache=True, inline="always")
def _offer(dist: float, row: int, best_d: np.ndarray, best_i: np.ndarray) -> None:
    """Insert (dist, row) into the sorted k best if it is less than the worst."""
    k = best_d.shape[0]
    if dist > best_d[k - 1] or (dist == best_d[k - 1] and row > best_i[k - 1]):
        return
    at = k - 1
    while at > 0 and (best_d[at - 1] > dist or (best_d[at - 1] == dist
                                                 and best_i[at - 1] > row)):
        best_d[at] = best_d[at - 1]
        best_i[at] = best_i[at - 1]
        at -= 1
    best_d[at] = dist
    best_i[at] = row


@numba.njit(cache=True, parallel=True)
def _search(tree, queries: np.ndarray, categorical: np.ndarray, k: int
            ) -> tuple[np.ndarray, np.ndarray]:
    points, rows, _, _, _, start, end, left, right, _, count, lo, hi = tree
    m = queries.shape[0]
    found = np.empty((m, k), dtype=np.int64)
    distances = np.empty((m, k))
    for u in numba.prange(m):
        q = queries[u]
        best_d = np.full(k, np.inf)
        best_i = np.full(k, np.iinfo(np.int64).max)
        waiting = np.empty(STACK, dtype=np.int64)
        bounds = np.empty(STACK)
        waiting[0] = 0
        bounds[0] = 0.0
        top = 1
        while top > 0:
            top -= 1
            node = waiting[top]
            if bounds[top] > best_d[k - 1]:
                continue
            a = left[node]
            if a < 0:
                for i in range(start[node], end[node]):
                    _offer(_distance(points[i], q, categorical), rows[i], best_d, best_i)
                continue
            b = right[node]
            bound_a = _bound(lo, hi, a, q, categorical) if count[a] > 0 else np.inf
            bound_b = _bound(lo, hi, b, q, categorical) if count[b] > 0 else np.inf
            if bound_a <= bound_b:  # the nearer child on top of the stack
                a, b = b, a
                bound_a, bound_b = bound_b, bound_a
            if bound_a <= best_d[k - 1]:
                waiting[top] = a
                bounds[top] = bound_a
                top += 1
            if bound_b <= best_d[k - 1]:
                waiting[top] = b
                bounds[top] = bound_b
                top += 1
        found[u] = best_i
        distances[u] = best_d
    return found, distances


@numba.njit(cache=True, parallel=True)
def _brute(candidates: np.ndarray, queries: np.ndarray, categorical: np.ndarray, k: int
           ) -> tuple[np.ndarray, np.ndarray]:
    m = queries.shape[0]
    found = np.empty((m, k), dtype=np.int64)
    distances = np.empty((m, k))
    for u in numba.prange(m):
        best_d = np.full(k, np.inf)
        best_i = np.full(k, np.iinfo(np.int64).max)
        for i in range(candidates.shape[0]):
            _offer(_distance(candidates[i], queries[u], categorical), i, best_d, best_i)
        found[u] = best_i
        distances[u] = best_d
    return found, distances


def nearest_neighbours(candidates: np.ndarray, queries: np.ndarray, categorical: np.ndarray,
                       k: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest candidates of each query and their distances (module docstring).

    Parameters
    ----------
    candidates, queries
        Encoded records, (n, d) and (m, d) float64 without NaN.
    categorical
        (d,) bool: which coordinates are codes.
    k
        How many neighbours (at most n).

    Returns
    -------
    tuple of numpy.ndarray
        (m, k) candidate rows, nearest first (ties by row), and their (m, k) distances.
    """
    candidates = np.ascontiguousarray(candidates, dtype=np.float64)
    queries = np.ascontiguousarray(queries, dtype=np.float64)
    if queries.shape[0] == 0:
        return np.empty((0, k), dtype=np.int64), np.empty((0, k))
    tree = build(candidates, np.arange(candidates.shape[0], dtype=np.int64))
    return _search(tree, queries, np.asarray(categorical, dtype=np.bool_), k)


def brute_neighbours(candidates: np.ndarray, queries: np.ndarray, categorical: np.ndarray,
                     k: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest_neighbours` by comparing each query with every candidate (the
    reference the tree is tested against)."""
    return _brute(np.ascontiguousarray(candidates, dtype=np.float64),
                  np.ascontiguousarray(queries, dtype=np.float64),
                  np.asarray(categorical, dtype=np.bool_), k)
