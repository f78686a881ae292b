"""002 Algorithms 1-3 on records with missing quasi-identifier values, against the direct
implementations of tests/reference.py (the distance over the attributes both records have,
rescaled by p / |O_xy|; centroids over the values present), and the k-anonymity and
t-closeness of what they return."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from microagg.core.distance import Categorical
from microagg.core.emd import GroundModel, largest_emd
from microagg.partition.mdav_missing import mdav_missing
from microagg.partition.tcloseness import (
    cluster_size,
    k_anonymity_first,
    merge,
    t_close_partition,
    t_closeness_first,
)
from tests import reference
from tests.partition.test_mixed import OCCUPATION, _metrics
from tests.partition.test_tcloseness import _largest, _same_partition


@st.composite
def with_missing(draw, max_rows=40):
    """Small integers (exact sums, so that centroids agree bit for bit with the reference's),
    numeric and categorical values missing at random, a whole column missing now and then."""
    n = draw(st.integers(4, max_rows))
    p = draw(st.integers(0, 2))
    X = draw(arrays(np.float64, (n, p), elements=st.integers(0, 3).map(float)))
    X[draw(arrays(np.bool_, (n, p)))] = np.nan
    jobs = draw(arrays(np.int64, n, elements=st.integers(-1, OCCUPATION.n_leaves - 1)))
    edu = draw(arrays(np.int64, n, elements=st.integers(-1, 2)))
    mixed = draw(st.booleans()) or p == 0
    categorical = Categorical(np.column_stack([jobs, edu]), _metrics()) if mixed else None
    c = draw(arrays(np.float64, n, elements=st.integers(0, 5).map(float)))
    k = draw(st.integers(1, max(1, n // 3)))
    t = draw(st.sampled_from([0.05, 0.1, 0.2, 0.4]))
    return X, categorical, c, k, t


@settings(max_examples=120, deadline=None)
@given(with_missing())
def test_t_closeness_first_with_missing_values_matches_direct(case):
    X, categorical, c, k, t = case
    labels, size = t_closeness_first(X, c, k, t, categorical=categorical)
    assert size == cluster_size(X.shape[0], k, t)
    assert _same_partition(labels, reference.t_closeness_first(X, c, size, categorical))
    sizes = np.bincount(labels)
    assert set(sizes.tolist()) <= {size, size + 1} and sizes.sum() == X.shape[0]


@settings(max_examples=120, deadline=None)
@given(with_missing())
def test_k_anonymity_first_and_merge_with_missing_values_match_direct(case):
    X, categorical, c, k, t = case
    models = [GroundModel.ordered("c", c), GroundModel.tree("d", (c * 3) % 4)]
    labels = k_anonymity_first(X, models, k, t, categorical=categorical)
    expected = reference.k_anonymity_first(X, _largest(models), k, t, categorical)
    assert _same_partition(labels, expected)
    merged, merges = merge(X, labels, models, t, categorical=categorical)
    expected_merged, expected_merges = reference.merge(X, expected, _largest(models), t,
                                                       categorical)
    assert merges == expected_merges
    assert _same_partition(merged, expected_merged)


@settings(max_examples=60, deadline=None)
@given(with_missing())
def test_merging_an_mdav_partition_with_missing_values_matches_direct(case):
    X, categorical, c, k, t = case
    models = [GroundModel.ordered("c", c)]
    start = mdav_missing(X, k, categorical=categorical)
    merged, merges = merge(X, start, models, t, categorical=categorical)
    expected, expected_merges = reference.merge(X, start, _largest(models), t, categorical)
    assert merges == expected_merges and _same_partition(merged, expected)
    assert largest_emd(merged, models).max() <= t + 1e-9


def test_complete_data_take_the_complete_data_path():
    """The same partitions as before on data without missing values: the flag only changes records
    with missing values."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(90, 2)).astype(float)
    c = rng.integers(0, 6, size=90).astype(float)
    models = [GroundModel.ordered("c", c)]
    labels = k_anonymity_first(X, models, 3, 0.2)
    assert _same_partition(labels, reference.k_anonymity_first(X, _largest(models), 3, 0.2))


@pytest.mark.parametrize("method", ["merge", "k-anonymity-first", "t-closeness-first"])
@pytest.mark.parametrize("seed", range(3))
def test_every_method_with_missing_values_is_k_anonymous_and_t_close(method, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(200, 320))
    k = int(rng.integers(2, 6))
    t = float(rng.choice([0.05, 0.1, 0.2]))
    X = rng.normal(size=(n, 3)).round(1)
    X[rng.random((n, 3)) < 0.15] = np.nan
    X[:4] = np.nan  # records with no value at all: +inf from everyone
    codes = rng.integers(-1, OCCUPATION.n_leaves, size=(n, 1))
    categorical = Categorical(np.column_stack([codes, rng.integers(-1, 3, n)]), _metrics())
    models = [GroundModel.ordered("a", (np.nan_to_num(X[:, 0]) + rng.normal(size=n)).round(0)),
              GroundModel.tree("b", rng.integers(0, 4, size=n))]
    result = t_close_partition(X, models, k, t, method=method, categorical=categorical,
                               microaggregate=lambda size: mdav_missing(
                                   X, size, categorical=categorical))
    assert np.bincount(result.labels).min() >= k
    assert largest_emd(result.labels, models).max() <= t + 1e-9
