"""Aggregation: replace each record's values by the statistics of its cluster.

A partition is an int64 array of cluster labels, one per row (see DESIGN.md). Individual
ranking produces one partition per attribute, i.e. a label *matrix* of the data's shape.
"""

from __future__ import annotations

import numpy as np

from microagg.errors import InputError
from microagg.taxonomy import CategoryMetric

__all__ = ["cluster_means", "cluster_sizes", "replace_by_centroids", "replace_by_means"]


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


def cluster_means(X: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(clusters, p) array of the mean of each column over each cluster (row = label)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    labels = _labels(labels, X.shape[0])
    counts = np.bincount(labels)
    sums = np.column_stack([np.bincount(labels, weights=X[:, j], minlength=counts.size)
                            for j in range(X.shape[1])])
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None]


def replace_by_means(X: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each value replaced by the mean of its cluster.

    ``labels`` is one partition (n,) shared by all columns, or one partition per column
    (n, p), as individual ranking produces.
    """
    X = np.asarray(X, dtype=np.float64)
    squeeze = X.ndim == 1
    if squeeze:
        X = X[:, None]
    labels = np.asarray(labels)
    if labels.ndim == 1:
        out = cluster_means(X, labels)[_labels(labels, X.shape[0])]
    else:
        if labels.shape != X.shape:
            raise InputError(f"label matrix of shape {labels.shape} for data of shape {X.shape}")
        out = np.column_stack([cluster_means(X[:, j], labels[:, j])[labels[:, j], 0]
                               for j in range(X.shape[1])])
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
    centroids = np.array([metric.centroid(row, over_all=over_all) for row in counts],
                         dtype=np.int64)
    return centroids[labels]
