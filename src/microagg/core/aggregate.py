"""Aggregation: replace each record's values by the statistics of its cluster.

A partition is an int64 array of cluster labels, one per row (see docs/design.md). Individual
ranking produces one partition per attribute, i.e. a label *matrix* of the data's shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations_with_replacement

import numba
import numpy as np

from microagg.data.taxonomy import CategoryMetric
from microagg.errors import InputError

__all__ = ["ClusterMoments", "cluster_kendall", "cluster_means", "cluster_moments",
           "cluster_sizes", "kendall_tau_a", "moment_indices", "replace_by_centroids",
           "replace_by_means"]


def _labels(labels: np.ndarray, n: int) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.shape[0] != n:
        raise InputError(f"{labels.shape[0]} labels for {n} rows")
    if labels.size and labels.min() < 0:
        raise InputError("every row needs a cluster label (found a negative label)")
    return labels.astype(np.int64, copy=False)


def cluster_sizes(labels: np.ndarray) -> np.ndarray:
    """Number of rows of each cluster, indexed by label."""
    labels = np.asarray(labels, dtype=np.int64)
    return np.bincount(labels)


def cluster_means(X: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None
                  ) -> np.ndarray:
    """(clusters, p) array of the mean of each column over each cluster (row = label).

    Missing values (NaN) are skipped: a cluster's mean is over the values it has, and a
    cluster whose values of a column are all missing has a missing mean. With ``weights``
    (one positive number per row, a sampling weight), each mean is the weighted mean
    sum(w x) / sum(w), each value weighted by its own record's weight (R's
    ``weighted.mean``, which sdcMicro's ``microaggregation(weights=)`` intends; see
    docs/algorithms.md for where sdcMicro differs): the weighted total of every cluster, and so
    of the column, is kept.

    Examples
    --------
    >>> import numpy as np
    >>> cluster_means(np.array([1.0, np.nan, 3.0, 4.0]), np.array([0, 0, 1, 1]))
    array([[1. ],
           [3.5]])
    >>> cluster_means(np.array([1.0, 3.0]), np.array([0, 0]), weights=np.array([3.0, 1.0]))
    array([[1.5]])
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    labels = _labels(labels, X.shape[0])
    size = int(labels.max()) + 1 if labels.size else 0
    w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    missing = np.isnan(X)
    any_missing = bool(missing.any())
    counts = np.bincount(labels, weights=w, minlength=size)
    sums = np.empty((size, X.shape[1]))
    denominators = np.empty((size, X.shape[1]))
    for j in range(X.shape[1]):
        if any_missing and missing[:, j].any():
            present = ~missing[:, j]
            sums[:, j] = np.bincount(labels[present], weights=(w * X[:, j])[present],
                                     minlength=size)
            denominators[:, j] = np.bincount(labels[present], weights=w[present],
                                             minlength=size)
        else:
            sums[:, j] = np.bincount(labels, weights=w * X[:, j] if weights is not None
                                     else X[:, j], minlength=size)
            denominators[:, j] = counts
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / denominators
    means[denominators == 0] = np.nan
    return means


def replace_by_means(X: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None,
                     *, keep_missing: bool = True) -> np.ndarray:
    """Each value replaced by the (weighted) mean of its cluster (:func:`cluster_means`).

    ``labels`` is one partition (n,) shared by all columns, or one partition per column
    (n, p), as individual ranking produces. A missing value stays missing: the record shares
    its cluster's other values, and a missing value matches any value in the k-anonymity of
    the written table (docs/design.md, "Missing values"). With ``keep_missing`` false it
    takes its cluster's mean too (missing only when the whole cluster's values are), so that
    every record of a cluster is written alike.
    """
    X = np.asarray(X, dtype=np.float64)
    squeeze = X.ndim == 1
    if squeeze:
        X = X[:, None]
    labels = np.asarray(labels)
    if labels.ndim == 1:
        out = cluster_means(X, labels, weights)[_labels(labels, X.shape[0])]
    else:
        if labels.shape != X.shape:
            raise InputError(f"label matrix of shape {labels.shape} for data of shape {X.shape}")
        out = np.column_stack([cluster_means(X[:, j], labels[:, j], weights)[labels[:, j], 0]
                               for j in range(X.shape[1])])
    if keep_missing:
        out[np.isnan(X)] = np.nan
    return out[:, 0] if squeeze else out


def replace_by_centroids(codes: np.ndarray, labels: np.ndarray, metric: CategoryMetric, *,
                         over_all: bool = False) -> np.ndarray:
    """Each concept code replaced by the marginality centroid of its cluster (000 eq. 5),
    chosen in the cluster's minimal sub-taxonomy (or among all concepts with ``over_all``).
    The result may name inner concepts of the taxonomy."""
    codes = np.asarray(codes, dtype=np.int64)
    labels = _labels(labels, codes.shape[0])
    counts = np.zeros((int(labels.max()) + 1, metric.n_concepts), dtype=np.int64)
    np.add.at(counts, (labels, codes), 1)
    centroids = np.array([metric.centroid(row, over_all=over_all) if row.any() else -1
                          for row in counts], dtype=np.int64)  # -1: a label with no row
    return centroids[labels]


def moment_indices(d: int, order: int, *, marginal: bool) -> np.ndarray:
    """The coefficients of a symmetric moment of ``order`` (1: means, 2: covariance, 3:
    coskewness) over d attributes, one row of attribute indices i <= j <= l each: all unique
    ones (d (d+1) / 2 for order 2, d (d+1) (d+2) / 6 for order 3, 004 §2.4), or with
    ``marginal`` only i = j = l (variances, marginal coskewness)."""
    if marginal or order == 1:
        return np.repeat(np.arange(d)[:, None], order, axis=1)
    return np.array(list(combinations_with_replacement(range(d), order)), dtype=np.int64)


@dataclass(frozen=True, eq=False)
class ClusterMoments:
    """Per cluster (row = label): its size, its mean, and the requested coefficients of the
    unbiased covariance (004 eq. 1) and of Fisher's unbiased coskewness (eq. 2), each
    coefficient named by a row of attribute indices in ``covariance_index`` /
    ``coskewness_index``."""

    sizes: np.ndarray  # (c,)
    means: np.ndarray  # (c, d)
    covariance: np.ndarray  # (c, len(covariance_index))
    covariance_index: np.ndarray  # (q, 2)
    coskewness: np.ndarray  # (c, len(coskewness_index))
    coskewness_index: np.ndarray  # (s, 3)
    kendall: np.ndarray | None = None  # (c, pairs): Kendall's tau_a, when asked for


def cluster_moments(X: np.ndarray, labels: np.ndarray, *, covariance: np.ndarray | None = None,
                    coskewness: np.ndarray | None = None) -> ClusterMoments:
    """Means and the requested central cross moments of every cluster (004 §4.1, step 2).

    ``covariance`` / ``coskewness`` are index rows from :func:`moment_indices` (None: not
    computed). Two passes over the data: the means first, then sums of products of the
    centred values, so no sum of large raw powers is ever differenced (the one-pass
    Σx² − n x̄² loses every digit when the spread is small against the mean). Coefficients
    need clusters of at least 2 (covariance) or 3 (coskewness) records."""
    X = np.asarray(X, dtype=np.float64)
    labels = _labels(labels, X.shape[0])
    sizes = np.bincount(labels)
    means = cluster_means(X, labels)
    centred = X - means[labels]
    covariance = np.empty((0, 2), np.int64) if covariance is None else covariance
    coskewness = np.empty((0, 3), np.int64) if coskewness is None else coskewness
    k = sizes.astype(np.float64)
    if covariance.size and sizes.min() < 2:
        raise InputError("a covariance needs clusters of at least 2 records")
    if coskewness.size and sizes.min() < 3:
        raise InputError("a coskewness needs clusters of at least 3 records")

    def sums(index: np.ndarray) -> np.ndarray:
        out = np.empty((sizes.size, index.shape[0]))
        for c, row in enumerate(index):
            product = np.prod(centred[:, row], axis=1)
            out[:, c] = np.bincount(labels, weights=product, minlength=sizes.size)
        return out

    with np.errstate(divide="ignore", invalid="ignore"):
        q = sums(covariance) / (k - 1)[:, None]
        phi = sums(coskewness) * (k / ((k - 1) * (k - 2)))[:, None]
    return ClusterMoments(sizes=sizes, means=means, covariance=q, covariance_index=covariance,
                          coskewness=phi, coskewness_index=coskewness)


def _tied_pairs(values: np.ndarray) -> float:
    _, counts = np.unique(values, return_counts=True)
    return float(np.sum(counts * (counts - 1) / 2))


def kendall_tau_a(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ_a = Σ_{a<b} sign(x_a − x_b) sign(y_a − y_b) / (k (k − 1) / 2), tied pairs
    counting 0, in O(k log k): scipy's τ_b times its own denominator
    √((n0 − n1)(n0 − n2)) gives the numerator (Knight 1966). Unlike τ_b, the denominator does
    not depend on the data, so replacing one record moves τ_a by at most 4/k."""
    from scipy.stats import kendalltau

    k = x.size
    if k < 2:
        return 0.0
    pairs = k * (k - 1) / 2
    untied = (pairs - _tied_pairs(x)) * (pairs - _tied_pairs(y))
    if untied == 0:
        return 0.0
    return float(kendalltau(x, y).statistic) * math.sqrt(untied) / pairs


# Clusters up to this size are counted pair by pair (O(k²), compiled); larger ones through
# scipy's O(k log k) τ_b.
_PAIRWISE_UP_TO = 2048


@numba.njit(cache=True, nogil=True)
def _sign_sums(x: np.ndarray, y: np.ndarray, starts: np.ndarray, clusters: np.ndarray,
               out: np.ndarray) -> None:
    """out[c] = Σ_{a<b} sign(x_a − x_b) sign(y_a − y_b) over the rows starts[c]:starts[c+1],
    for every c in ``clusters``."""
    for c in clusters:
        total = 0
        for a in range(starts[c], starts[c + 1]):
            for b in range(a + 1, starts[c + 1]):
                dx = x[a] - x[b]
                dy = y[a] - y[b]
                total += ((dx > 0) - (dx < 0)) * ((dy > 0) - (dy < 0))
        out[c] = total


def cluster_kendall(X: np.ndarray, labels: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Kendall's τ_a of every attribute pair (rows of ``pairs``, i < j) inside every cluster:
    (clusters, pairs). Clusters of up to 2,048 records count their pairs directly (compiled),
    larger ones use :func:`kendall_tau_a`."""
    X = np.asarray(X, dtype=np.float64)
    labels = _labels(labels, X.shape[0])
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels)
    starts = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    small = np.flatnonzero(sizes <= _PAIRWISE_UP_TO).astype(np.int64)
    large = np.flatnonzero(sizes > _PAIRWISE_UP_TO)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_pair = np.where(sizes > 1, 2.0 / (sizes * (sizes - 1.0)), 0.0)
    out = np.empty((sizes.size, pairs.shape[0]))
    numerators = np.zeros(sizes.size)
    for p, (i, j) in enumerate(pairs):
        x, y = X[order, i], X[order, j]
        _sign_sums(x, y, starts, small, numerators)
        out[:, p] = numerators * per_pair
        for c in large:
            out[c, p] = kendall_tau_a(x[starts[c]:starts[c + 1]], y[starts[c]:starts[c + 1]])
    return out
