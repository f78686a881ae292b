import numpy as np
import pytest

from microagg.core.aggregate import cluster_means, cluster_sizes, replace_by_means
from microagg.core.distance import domain_normalize, scale
from microagg.errors import InputError


def test_cluster_means_and_replacement():
    X = np.array([[1.0, 10], [3, 20], [5, 30], [7, 40]])
    labels = np.array([1, 0, 1, 0])
    np.testing.assert_array_equal(cluster_means(X, labels), [[5, 30], [3, 20]])
    np.testing.assert_array_equal(replace_by_means(X, labels), [[3, 20], [5, 30], [3, 20],
                                                               [5, 30]])
    np.testing.assert_array_equal(cluster_sizes(labels), [2, 2])


def test_replacement_preserves_column_means():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    labels = rng.integers(0, 9, 100)
    np.testing.assert_allclose(replace_by_means(X, labels).mean(axis=0), X.mean(axis=0))


def test_label_errors():
    with pytest.raises(InputError, match="3 labels for 2 rows"):
        cluster_means(np.zeros((2, 1)), np.array([0, 0, 1]))
    with pytest.raises(InputError, match="negative label"):
        cluster_means(np.zeros((2, 1)), np.array([0, -1]))
    with pytest.raises(InputError, match="label matrix"):
        replace_by_means(np.zeros((2, 2)), np.zeros((2, 3), dtype=int))


def test_scalings():
    X = np.array([[0.0, 5], [10, 5], [20, 5]])
    z = scale(X, "zscore")
    np.testing.assert_allclose(z[:, 0], [-np.sqrt(1.5), 0, np.sqrt(1.5)])
    np.testing.assert_array_equal(z[:, 1], 0)  # constant column: centred, not divided by 0
    np.testing.assert_array_equal(scale(X, "range", [(0, 40), None])[:, 0], [0, 0.25, 0.5])
    np.testing.assert_array_equal(scale(X, "range")[:, 0], [0, 0.5, 1])
    none = scale(X, "none")
    assert none is not X and np.array_equal(none, X)
    with pytest.raises(InputError, match="unknown scaling"):
        scale(X, "minmax")


def test_domain_normalize():
    X = np.array([[2.0], [4.0]])
    np.testing.assert_array_equal(domain_normalize(X, np.array([0.0]), np.array([8.0])),
                                  [[0.25], [0.5]])
    with pytest.raises(InputError, match="outside"):
        domain_normalize(X, np.array([3.0]), np.array([8.0]))
