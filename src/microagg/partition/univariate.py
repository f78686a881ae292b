"""Univariate microaggregation, one attribute at a time.

* Individual ranking (paper 001 §3; restated in papers/README.md): sort the values, cut them
  into groups of k consecutive values, the last group taking the remaining k..2k-1.
* Optimal univariate microaggregation (Hansen & Mukherjee 2003): the partition of one attribute
  into groups of at least k values with the least within-group sum of squares. Optimal groups
  are consecutive in sorted order and have k..2k-1 values, so a shortest path over the sorted
  values finds it in O(n k).

Multi-attribute data are treated attribute by attribute: the result is one partition per
column, a label matrix of the data's shape (records keep their other values). Ties in the
sort are broken by the row number (a stable sort).

Individual ranking also takes categorical attributes (001 §3.4): their values are ordered by
their distance to the most marginal category a_b (000 eq. 3), ties by the alphabetical order of
the labels, then by row number; their columns follow the numeric ones in the label matrix.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from microagg.core.distance import Categorical
from microagg.errors import InputError
from microagg.partition._double_double import dd_prefix_sums, dd_range_sum
from microagg.partition._validate import check_matrix, prepare

__all__ = ["individual_ranking", "optimal_univariate"]


_PARALLEL_ROWS = 100_000  # below this, a thread costs more than the sort it takes


def _columns(X: np.ndarray, k: int, one_column) -> list[np.ndarray]:
    """``one_column(X[:, j], k)`` for every column; on large tables the columns are shared
    among numba's current number of threads (numpy's sort releases the interpreter lock)."""
    workers = min(numba.get_num_threads(), X.shape[1])
    if workers < 2 or X.shape[0] < _PARALLEL_ROWS:
        return [one_column(X[:, j], k) for j in range(X.shape[1])]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda j: one_column(X[:, j], k), range(X.shape[1])))


def _per_column(X: np.ndarray, k: int, one_column) -> np.ndarray:
    squeeze = np.ndim(X) == 1
    X = check_matrix(X, k)
    labels = np.empty(X.shape, dtype=np.int64)
    for j, column in enumerate(_columns(X, k, one_column)):
        labels[:, j] = column
    return labels[:, 0] if squeeze else labels


def _ranking(values: np.ndarray, k: int) -> np.ndarray:
    return _groups_of(np.argsort(values, kind="stable"), k)


def _groups_of(order: np.ndarray, k: int) -> np.ndarray:
    """Labels of consecutive groups of k along ``order``, the last group k..2k-1."""
    n = order.size
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.minimum(np.arange(n) // k, n // k - 1)
    return labels


def individual_ranking(X: np.ndarray | None, k: int, *,
                       categorical: Categorical | None = None) -> np.ndarray:
    """Individual-ranking partition of each column (001 §3): groups of k consecutive sorted
    values, the last of k..2k-1. Returns labels of X's shape (plus one column per categorical
    attribute); group 0 holds the smallest values of its column, or for a categorical
    attribute the values nearest its most marginal category."""
    if categorical is None:
        if X is None:
            raise InputError("individual ranking needs numeric values or categorical codes")
        return _per_column(X, k, _ranking)
    X, categorical, k = prepare(X, k, categorical)
    columns = _columns(X, k, _ranking)
    rows = np.arange(X.shape[0])
    for j, metric in enumerate(categorical.metrics):
        codes = categorical.codes[:, j]
        alphabetical = np.argsort(np.argsort(np.array(metric.labels, dtype=object)))
        key = metric.distances[codes, metric.bottom]
        columns.append(_groups_of(np.lexsort((rows, alphabetical[codes], key)), k))
    return np.column_stack(columns)


@numba.njit(cache=True)
def _group_sse(s1h, s1l, s2h, s2l, a: int, b: int) -> float:
    """Σ (x - mean)² over sorted values a..b-1, from double-double prefix sums."""
    t1 = dd_range_sum(s1h, s1l, a, b)
    t2 = dd_range_sum(s2h, s2l, a, b)
    sse = t2 - t1 * t1 / (b - a)
    return sse if sse > 0.0 else 0.0


@numba.njit(cache=True)
def _optimal_path(sorted_values: np.ndarray, k: int) -> np.ndarray:
    """Group sizes (in sorted order) of the least-SSE partition into groups of k..2k-1."""
    n = sorted_values.size
    s1h, s1l, s2h, s2l = dd_prefix_sums(sorted_values - sorted_values[n // 2])
    cost = np.full(n + 1, np.inf)
    step = np.zeros(n + 1, dtype=np.int64)
    cost[0] = 0.0
    for end in range(k, n + 1):
        for size in range(k, min(2 * k - 1, end) + 1):
            before = cost[end - size]
            if before == np.inf:
                continue
            total = before + _group_sse(s1h, s1l, s2h, s2l, end - size, end)
            if total < cost[end]:  # ties keep the smaller last group
                cost[end] = total
                step[end] = size
    sizes = []
    end = n
    while end > 0:
        sizes.append(step[end])
        end -= step[end]
    out = np.empty(len(sizes), dtype=np.int64)
    for i in range(len(sizes)):
        out[i] = sizes[len(sizes) - 1 - i]
    return out


def _optimal(values: np.ndarray, k: int) -> np.ndarray:
    n = values.size
    if n < 2 * k:  # a single group is the only feasible partition
        return np.zeros(n, dtype=np.int64)
    order = np.argsort(values, kind="stable")
    sizes = _optimal_path(values[order], k)
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.repeat(np.arange(sizes.size), sizes)
    return labels


def optimal_univariate(X: np.ndarray, k: int, *,
                       categorical: Categorical | None = None) -> np.ndarray:
    """Least-SSE partition of each column into groups of at least k values (Hansen &
    Mukherjee 2003), in O(n k) per column. Returns labels of X's shape, groups numbered from
    the smallest values. Among partitions of equal SSE, the one whose groups are smaller
    towards the top of the sorted order is kept. Numeric attributes only: SSE needs means."""
    if categorical is not None and categorical.metrics:
        raise InputError("optimal univariate microaggregation needs numeric attributes; "
                         "use individual ranking for categorical ones")
    return _per_column(X, k, _optimal)
