"""Direct, unoptimized implementations of the definitions, for tests to compare against.

Distances are summed attribute by attribute in column order, like the compiled kernels, so that
the comparison is exact (bit-for-bit equal distances, hence identical tie-breaking).
"""

from __future__ import annotations

import math

import numpy as np


def squared_distances(X: np.ndarray, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    total = np.zeros(rows.size)
    for j in range(X.shape[1]):
        total += (X[rows, j] - q[j]) ** 2
    return total


def farthest(X, rows, q):
    d = squared_distances(X, rows, q)
    return int(rows[d == d.max()].min())


def nearest(X, rows, q, count, exclude):
    rows = rows[rows != exclude]
    d = squared_distances(X, rows, q)
    order = np.lexsort((rows, d))
    return [int(r) for r in rows[order[:count]]]


def centroid(X, rows):
    return np.array([math.fsum(X[rows, j]) for j in range(X.shape[1])]) / rows.size


def mdav(X: np.ndarray, k: int) -> np.ndarray:
    """MDAV as paper 000 Alg. 1 states it (x_s taken after x_r's cluster is removed)."""
    n = X.shape[0]
    labels = np.full(n, -1)
    remaining = np.arange(n)
    label = 0

    def take(cluster):
        nonlocal remaining, label
        labels[cluster] = label
        label += 1
        remaining = np.setdiff1d(remaining, cluster)

    while remaining.size >= 3 * k:
        r = farthest(X, remaining, centroid(X, remaining))
        take([r, *nearest(X, remaining, X[r], k - 1, r)])
        s = farthest(X, remaining, X[r])
        take([s, *nearest(X, remaining, X[s], k - 1, s)])
    if remaining.size >= 2 * k:
        r = farthest(X, remaining, centroid(X, remaining))
        take([r, *nearest(X, remaining, X[r], k - 1, r)])
    if remaining.size:
        take(list(remaining))
    return labels


def insensitive(X: np.ndarray, k: int, lows, highs, corners: np.ndarray) -> np.ndarray:
    """000 Alg. 2 by full sorts: cluster i = the k smallest remaining records under the order of
    corners[i] (distance on domain-normalized values, then lexicographic, then row)."""
    U = (X - lows) / (highs - lows)
    n = X.shape[0]
    labels = np.full(n, -1)
    remaining = np.arange(n)
    for i in range(n // k - 1):
        d = squared_distances(U, remaining, corners[i].astype(float))
        keys = [remaining] + [X[remaining, j] for j in range(X.shape[1] - 1, -1, -1)] + [d]
        chosen = remaining[np.lexsort(keys)[:k]]
        labels[chosen] = i
        remaining = np.setdiff1d(remaining, chosen)
    labels[remaining] = n // k - 1
    return labels


def vmdav(X: np.ndarray, k: int, gamma: float) -> np.ndarray:
    """V-MDAV as documented in microagg.partition.mdav.vmdav, by direct computation."""
    n = X.shape[0]
    labels = np.full(n, -1)
    remaining = np.arange(n)
    c = centroid(X, remaining)
    label = 0
    while remaining.size >= k:
        r = farthest(X, remaining, c)
        group = [r, *nearest(X, remaining, X[r], k - 1, r)]
        remaining = np.setdiff1d(remaining, group)
        while len(group) < 2 * k - 1 and remaining.size:
            gaps = np.min([squared_distances(X, remaining, X[g]) for g in group], axis=0)
            order = np.lexsort((remaining, gaps))
            e_in, d_in = int(remaining[order[0]]), gaps[order[0]]
            others = nearest(X, remaining, X[e_in], 1, e_in)
            if others:
                d_out = squared_distances(X, np.array(others), X[e_in])[0]
                if not np.sqrt(d_in) < gamma * np.sqrt(d_out):
                    break
            group.append(e_in)
            remaining = remaining[remaining != e_in]
        labels[group] = label
        label += 1
    if remaining.size:
        means = np.array([X[labels == g].mean(axis=0) for g in range(label)])
        for row in remaining:
            d = np.zeros(label)
            for j in range(X.shape[1]):
                d += (means[:, j] - X[row, j]) ** 2
            labels[row] = int(np.argmin(d))
    return labels
