"""MDAV on records with missing values (paper 000, Alg. 1, with the distance of a record pair
taken over the attributes both records have).

A missing value contributes nothing to a distance, and the distance is rescaled by the number
of attributes both records have, so that records with gaps are neither nearer nor farther
than complete ones on average. With p attributes (numeric and categorical), O_x the
attributes record x has, and O_xy = O_x ∩ O_y:

    d²(x, y) = p / |O_xy| · Σ_{j ∈ O_xy} δ_j(x_j, y_j)²      (+∞ when O_xy is empty)

where δ_j is the difference of scaled numeric values or the normalized categorical distance
of 000 eq. 8. Two records with no attribute in common are as far apart as can be: neither is
the other's neighbour while records that share an attribute remain. The centroid of the
remaining records is the mean of each numeric attribute over the records that have it
(missing when none has) and the marginality centroid (000 eq. 5) of each categorical
attribute over the records that have it (missing when none has); a missing centroid
coordinate contributes nothing, like a missing value. On complete data
d² is the usual distance and the partition is MDAV's.

Ties are broken by the lowest row number, as in :func:`microagg.partition.mdav.mdav`. The
cost is O(n²p/k): one pass over the remaining records for the centroid's farthest record,
one for x_r's nearest and farthest, one for x_s's nearest (the distance passes run on all
threads). This is slower than the complete-data kernel, whose pruning relies on distances
that add up attribute by attribute (docs/benchmarks.md gives both).
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from microagg.core.distance import Categorical, no_categories
from microagg.partition._concepts import categories
from microagg.partition._gaps import (
    drop_row,
    farthest_position,
    gap_distances,
    nearest_positions,
    present_centroid,
    present_totals,
)
from microagg.partition._validate import check_k

__all__ = ["mdav_missing"]

Progress = Callable[[int], None]


@numba.njit(cache=True)
def _remove(X, C, rest, m, positions, count, sums, present, hist, labels, label):
    """Give ``label`` to the rows at ``positions`` of rest[:m], take them out of the running
    sums and counts, and remove them from rest (the last rows move into their places)."""
    order = np.sort(positions[:count])[::-1]  # from the back, so positions stay valid
    for i in range(count):
        t = order[i]
        row = rest[t]
        labels[row] = label
        drop_row(X, C, row, sums, present, hist)
        m -= 1
        rest[t] = rest[m]
    return m


@numba.njit(cache=True)
def _grow(X, C, S, rest, m, seed, dist, chosen, k, sums, present, hist, labels, label, far):
    """Cluster the row at position ``seed`` with its k-1 nearest; with ``far``, return the
    row farthest from the seed among those left (else -1)."""
    q = X[rest[seed]].copy()
    qc = C[rest[seed]].copy()
    gap_distances(X, C, S, rest, m, q, qc, dist)
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
    m = _remove(X, C, rest, m, chosen, k, sums, present, hist, labels, label)
    return m, s


@numba.njit(cache=True)
def _position(rest, m, row):
    for t in range(m):
        if rest[t] == row:
            return t
    return -1


@numba.njit(cache=True)
def _mdav_missing(X, C, S, distances, parents, ordinal, k, labels, stop, next_label):
    """Form clusters until at most ``stop`` rows remain (or all are clustered); return the
    rows left and the next label. ``labels`` of the rows not yet clustered are -1."""
    n = X.shape[0]
    rest = np.empty(n, dtype=np.int64)
    m = 0
    for row in range(n):
        if labels[row] < 0:
            rest[m] = row
            m += 1
    sums, present, hist = present_totals(X, C, rest, m, S.shape[1])
    dist = np.empty(n)
    chosen = np.empty(k, dtype=np.int64)
    c = np.empty(X.shape[1])
    cc = np.empty(C.shape[1], dtype=np.int64)
    while m >= 2 * k and m > stop:
        present_centroid(sums, present, hist, distances, parents, ordinal, c, cc)
        gap_distances(X, C, S, rest, m, c, cc, dist)
        r = farthest_position(dist, rest, m)
        last_round = m < 3 * k
        m, s = _grow(X, C, S, rest, m, r, dist, chosen, k, sums, present, hist, labels,
                     next_label, not last_round)
        next_label += 1
        if last_round:
            continue
        m, _ = _grow(X, C, S, rest, m, _position(rest, m, s), dist, chosen, k, sums,
                     present, hist, labels, next_label, False)
        next_label += 1
    if m < 2 * k:
        for t in range(m):
            labels[rest[t]] = next_label
        if m > 0:
            next_label += 1
        m = 0
    return m, next_label


def mdav_missing(X: np.ndarray | None, k: int, *, categorical: Categorical | None = None,
                 progress: Progress | None = None) -> np.ndarray:
    """MDAV partition (000 Alg. 1) of rows that may have missing values: NaN in ``X``, code
    -1 in ``categorical`` (see the module docstring for the distance and the centroid).

    Returns int64 labels, one per row, numbering the clusters in the order they are formed;
    every cluster has k..2k-1 rows. ``progress`` is called with the rows clustered so far.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, np.nan], [0.1, 5.0], [np.nan, 5.1], [9.0, 0.0], [9.2, np.nan],
    ...               [np.nan, 0.2]])
    >>> mdav_missing(X, 3).tolist()
    [1, 0, 1, 0, 0, 1]
    """
    if X is None:
        X = np.empty((0 if categorical is None else categorical.codes.shape[0], 0))
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    n = X.shape[0]
    categorical = no_categories(n) if categorical is None else categorical
    check_k(k, n)
    cats = categories(categorical)
    labels = np.full(n, -1, dtype=np.int64)
    step = max(2 * k, n // 100)
    m, next_label = n, 0
    while m > 0:
        m, next_label = _mdav_missing(X, categorical.codes, cats.squared, cats.distances,
                                      cats.parents, cats.ordinal, k, labels,
                                      max(m - step, 0), next_label)
        if progress is not None:
            progress(n - m)
    return labels
