"""Partitioners on mixed numeric and categorical data (paper 000 §4.4-4.6)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from microagg.core.distance import Categorical
from microagg.data.taxonomy import CategoryMetric, Taxonomy
from microagg.errors import InputError
from microagg.partition.insensitive import corner_sequence, insensitive
from microagg.partition.mdav import mdav, vmdav
from microagg.partition.univariate import individual_ranking, optimal_univariate
from tests import reference

OCCUPATION = Taxonomy.from_paths(
    [["tech", "Technical", "*"], ["craft", "Technical", "*"], ["sales", "Other", "*"],
     ["clerk", "Other", "*"], ["farm", "*"]])
LEVELS = ["low", "mid", "high"]


def _metrics():
    return (CategoryMetric.nominal("job", OCCUPATION), CategoryMetric.chain("edu", LEVELS))


@st.composite
def mixed(draw, max_rows=36):
    n = draw(st.integers(1, max_rows))
    p = draw(st.integers(0, 2))
    X = draw(arrays(np.float64, (n, p), elements=st.integers(0, 3).map(float)))
    jobs = draw(arrays(np.int64, n, elements=st.integers(0, OCCUPATION.n_leaves - 1)))
    edu = draw(arrays(np.int64, n, elements=st.integers(0, 2)))
    k = draw(st.integers(1, n))
    return X, Categorical(np.column_stack([jobs, edu]), _metrics()), k


@settings(max_examples=150, deadline=None)
@given(mixed())
def test_mdav_equals_reference(case):
    X, categorical, k = case
    np.testing.assert_array_equal(mdav(X, k, categorical=categorical),
                                  reference.mdav(X, k, categorical))


@settings(max_examples=100, deadline=None)
@given(mixed(max_rows=28), st.sampled_from([0.0, 0.2, 1.1]))
def test_vmdav_equals_reference(case, gamma):
    X, categorical, k = case
    np.testing.assert_array_equal(vmdav(X, k, gamma, categorical=categorical),
                                  reference.vmdav(X, k, gamma, categorical))


@settings(max_examples=150, deadline=None)
@given(mixed())
def test_insensitive_equals_reference(case):
    X, categorical, k = case
    lows, highs = np.zeros(X.shape[1]), np.full(X.shape[1], 3.0)
    corners = corner_sequence(X.shape[1] + 2, max(X.shape[0] // k - 1, 0))
    np.testing.assert_array_equal(
        insensitive(X, k, lows, highs, categorical=categorical),
        reference.insensitive(X, k, lows, highs, corners, categorical))


def test_parallel_path(split_passes):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, (900, 1)).astype(float)
    categorical = Categorical(np.column_stack([rng.integers(0, 5, 900),
                                               rng.integers(0, 3, 900)]), _metrics())
    np.testing.assert_array_equal(mdav(X, 4, categorical=categorical, threads=split_passes),
                                  reference.mdav(X, 4, categorical))
    lows, highs = np.zeros(1), np.full(1, 2.0)
    corners = corner_sequence(3, 900 // 7 - 1)
    np.testing.assert_array_equal(
        insensitive(X, 7, lows, highs, categorical=categorical, threads=split_passes),
        reference.insensitive(X, 7, lows, highs, corners, categorical))


def test_categorical_only():
    codes = np.array([[0], [1], [2], [3], [4], [0], [1], [2]])
    categorical = Categorical(codes, _metrics()[:1])
    labels = mdav(None, 2, categorical=categorical)
    np.testing.assert_array_equal(labels, reference.mdav(np.empty((8, 0)), 2, categorical))
    sizes = np.bincount(labels)
    assert sizes.min() >= 2 and sizes.max() <= 3


def test_insensitivity_with_categories():
    rng = np.random.default_rng(9)
    X = rng.integers(0, 4, (60, 1)).astype(float)
    codes = np.column_stack([rng.integers(0, 5, 60), rng.integers(0, 3, 60)])
    Y, codes_y = X.copy(), codes.copy()
    Y[17], codes_y[17] = [3.0], [4, 0]  # one record changed, numeric and categorical parts
    lows, highs = np.zeros(1), np.full(1, 3.0)
    a = insensitive(X, 6, lows, highs, categorical=Categorical(codes, _metrics()))
    b = insensitive(Y, 6, lows, highs, categorical=Categorical(codes_y, _metrics()))
    for cluster in range(a.max() + 1):
        left = {(r, X[r, 0], *codes[r]) for r in np.flatnonzero(a == cluster)}
        right = {(r, Y[r, 0], *codes_y[r]) for r in np.flatnonzero(b == cluster)}
        assert len(left - right) <= 1 and len(right - left) <= 1


def test_individual_ranking_orders_categories_by_distance_to_the_most_marginal():
    metric = CategoryMetric.nominal("job", OCCUPATION)
    assert OCCUPATION.labels[metric.bottom] == "farm"  # the most marginal leaf (eq. 3)
    codes = np.array([[0], [4], [1], [2], [4], [3]])
    labels = individual_ranking(None, 2, categorical=Categorical(codes, (metric,)))
    # farm (rows 1, 4) at distance 0 first; the four other leaves are all at log2(7/4) from
    # farm, so alphabetical order decides: clerk (row 5), craft (2), sales (3), tech (0)
    np.testing.assert_array_equal(labels[:, 0], [2, 0, 1, 2, 0, 1])
    with pytest.raises(InputError, match="numeric attributes"):
        optimal_univariate(np.zeros((6, 1)), 2, categorical=Categorical(codes, (metric,)))


@pytest.mark.reference_data
def test_adult_categorical_record_linkage_close_to_paper_000_table_3():
    """MDAV baseline of 000 Table 3 at k = 2: RL_0 = 0.95 % in the paper. With our (ARX)
    taxonomies the categorical SSE differs (docs/reproduction.md), but RL is driven by
    duplicate records and must come out close."""
    from microagg import datasets
    from microagg.core.aggregate import replace_by_centroids
    from microagg.data.table import encode
    from microagg.evaluation.risk import record_linkage

    data = datasets.load("adult-categorical")
    table = encode(data.frame, data.schema)
    part = Categorical(np.column_stack([table.code_column(c) for c in table.categorical_names]),
                       tuple(table.metric(c) for c in table.categorical_names))
    labels = mdav(None, 2, categorical=part)
    assert np.bincount(labels).min() >= 2
    masked = np.column_stack([replace_by_centroids(part.codes[:, j], labels, m)
                              for j, m in enumerate(part.metrics)])
    rl = record_linkage(np.empty((table.n_rows, 0)), np.empty((table.n_rows, 0)),
                        categories=(part.codes, masked, part.squared()))
    assert rl == pytest.approx(0.95, abs=0.15)
