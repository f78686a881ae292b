import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from microagg.core.aggregate import replace_by_means
from microagg.errors import InputError
from microagg.evaluation.utility import sse
from microagg.partition.univariate import individual_ranking, optimal_univariate


def test_individual_ranking_hand_example():
    # sorted: 0(r6) 1(r1) | 2(r4) 3(r2) | 3(r3) 5(r0) 9(r5): the last group takes 3 values
    x = np.array([5.0, 1, 3, 3, 2, 9, 0])
    np.testing.assert_array_equal(individual_ranking(x, 2), [2, 0, 1, 2, 1, 2, 0])


def test_individual_ranking_is_per_column():
    X = np.array([[1.0, 40], [2, 30], [3, 20], [4, 10]])
    labels = individual_ranking(X, 2)
    assert labels.shape == (4, 2)
    np.testing.assert_array_equal(labels[:, 0], [0, 0, 1, 1])
    np.testing.assert_array_equal(labels[:, 1], [1, 1, 0, 0])
    np.testing.assert_array_equal(replace_by_means(X, labels),
                                  [[1.5, 35], [1.5, 35], [3.5, 15], [3.5, 15]])


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_individual_ranking_sizes_and_order(data):
    n = data.draw(st.integers(1, 80))
    k = data.draw(st.integers(1, n))
    x = data.draw(arrays(np.float64, n, elements=st.integers(-5, 5).map(float)))
    labels = individual_ranking(x, k)
    sizes = np.bincount(labels)
    assert sizes.sum() == n and sizes.min() >= k and sizes.max() <= 2 * k - 1
    # groups are consecutive in sorted order: a larger group label never holds a smaller value
    for g in range(sizes.size - 1):
        assert x[labels == g].max() <= x[labels == g + 1].min()


def _set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in _set_partitions(rest):
        yield [[first], *partition]
        for i in range(len(partition)):
            yield [*partition[:i], [first, *partition[i]], *partition[i + 1:]]


def _best_sse(x, k):
    best = np.inf
    for partition in _set_partitions(list(range(x.size))):
        if min(len(g) for g in partition) >= k:
            best = min(best, sum(((x[g] - x[g].mean()) ** 2).sum() for g in partition))
    return best


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_optimal_univariate_beats_every_partition(data):
    """Against exhaustive search over all set partitions with groups of at least k."""
    n = data.draw(st.integers(1, 8))
    k = data.draw(st.integers(1, n))
    offset = data.draw(st.sampled_from([0.0, 1e6]))  # large offsets stress cancellation
    x = offset + data.draw(arrays(np.float64, n, elements=st.integers(0, 30).map(float)))
    labels = optimal_univariate(x, k)
    assert np.bincount(labels).min() >= k
    got = sse(x, replace_by_means(x, labels))
    assert got == pytest.approx(_best_sse(x, k), rel=1e-9, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_optimal_is_never_worse_than_individual_ranking(data):
    n = data.draw(st.integers(2, 200))
    k = data.draw(st.integers(1, n))
    x = data.draw(arrays(np.float64, n, elements=st.floats(-1e3, 1e3, width=32)))
    optimal = sse(x, replace_by_means(x, optimal_univariate(x, k)))
    ranking = sse(x, replace_by_means(x, individual_ranking(x, k)))
    assert optimal <= ranking * (1 + 1e-9) + 1e-9
    sizes = np.bincount(optimal_univariate(x, k))
    assert sizes.min() >= k and sizes.max() <= max(2 * k - 1, sizes.min())


def test_small_n_is_one_group():
    np.testing.assert_array_equal(optimal_univariate(np.array([3.0, 1, 2]), 2), [0, 0, 0])


def test_k_checked():
    with pytest.raises(InputError, match="exceeds the number of records"):
        individual_ranking(np.arange(3.0), 4)
