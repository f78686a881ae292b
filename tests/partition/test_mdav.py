import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from microagg import datasets
from microagg.core.aggregate import replace_by_means
from microagg.core.distance import scale
from microagg.core.verifiers import k_anonymity
from microagg.errors import InputError
from microagg.evaluation.risk import record_linkage
from microagg.evaluation.utility import sse, sse_percent
from microagg.partition import mdav as mdav_module
from microagg.partition.mdav import mdav, vmdav
from tests import reference


@st.composite
def data_and_k(draw, max_rows=45, max_cols=3):
    n = draw(st.integers(1, max_rows))
    d = draw(st.integers(1, max_cols))
    if draw(st.booleans()):  # small integers: many exact ties
        values = st.integers(0, 3).map(float)
    else:
        values = st.floats(-100, 100, allow_nan=False, allow_infinity=False, width=32)
    X = draw(arrays(np.float64, (n, d), elements=values))
    k = draw(st.integers(1, n))
    return X, k


def test_hand_example():
    X = np.array([[0.0], [1], [2], [10], [11], [12], [20], [21], [22]])
    # centroid 11: rows 0 and 8 tie as farthest, row 0 wins; its cluster {0,1,2}; x_s is the
    # farthest from row 0 among the rest, row 8, clustered with 7 and 6; the last three remain.
    np.testing.assert_array_equal(mdav(X, 3), [0, 0, 0, 2, 2, 2, 1, 1, 1])


def test_two_k_to_three_k_remaining_forms_one_cluster_then_the_rest():
    X = np.arange(8, dtype=float)[:, None]  # n = 8, k = 3: 2k <= 8 < 3k
    labels = mdav(X, 3)
    # centroid 3.5: rows 0 and 7 tie; row 0 wins with rows 1, 2; rows 3..7 are the last cluster
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1, 1, 1, 1])


@settings(max_examples=200, deadline=None)
@given(data_and_k())
def test_equals_reference_implementation(case):
    X, k = case
    np.testing.assert_array_equal(mdav(X, k), reference.mdav(X, k))


def test_exact_fallback_when_coded_candidates_overflow(monkeypatch):
    """With a candidate buffer of 2 rows every coded pass overflows and the exact float64 pass
    answers instead: the partition must not change."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, (400, 2)).astype(float)
    expected = reference.mdav(X, 3)
    monkeypatch.setattr(mdav_module, "_CANDIDATES", 2)
    np.testing.assert_array_equal(mdav(X, 3), expected)
    np.testing.assert_array_equal(vmdav(X[:150], 3, 1.1), reference.vmdav(X[:150], 3, 1.1))


def test_coded_passes_with_outliers():
    """An extreme outlier stretches the 8-bit code ranges (coarse codes, wide bounds)."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((500, 3))
    X[7] = [1e6, -1e6, 3e5]
    np.testing.assert_array_equal(mdav(X, 4), reference.mdav(X, 4))


def test_equals_reference_on_the_parallel_path(split_passes):
    rng = np.random.default_rng(7)
    X = rng.integers(0, 4, (3000, 2)).astype(float)  # many exact ties across chunks
    np.testing.assert_array_equal(mdav(X, 4, threads=split_passes), reference.mdav(X, 4))
    np.testing.assert_array_equal(vmdav(X[:600], 3, 1.1, threads=split_passes),
                                  reference.vmdav(X[:600], 3, 1.1))


@settings(max_examples=150, deadline=None)
@given(data_and_k(max_rows=60))
def test_cluster_sizes_cover_and_k_anonymity(case):
    X, k = case
    labels = mdav(X, k)
    sizes = np.bincount(labels)
    assert labels.min() == 0 and sizes.sum() == X.shape[0]
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    masked = pd.DataFrame(replace_by_means(X, labels))
    assert k_anonymity(masked, list(masked.columns)).smallest_class >= k


def test_does_not_modify_input():
    X = np.arange(12, dtype=float)[:, None]
    before = X.copy()
    mdav(X, 2)
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("k", [0, -1, 11])
def test_bad_k(k):
    with pytest.raises(InputError, match="k"):
        mdav(np.zeros((10, 2)), k)


def test_nan_refused():
    with pytest.raises(InputError, match="NaN"):
        mdav(np.array([[1.0], [np.nan], [2.0]]), 1)


@settings(max_examples=150, deadline=None)
@given(data_and_k(max_rows=35), st.sampled_from([0.0, 0.2, 1.1, 3.0]))
def test_vmdav_equals_reference(case, gamma):
    X, k = case
    np.testing.assert_array_equal(vmdav(X, k, gamma), reference.vmdav(X, k, gamma))


def test_vmdav_group_sizes():
    rng = np.random.default_rng(3)
    centres = rng.normal(scale=20, size=(40, 2))
    X = np.repeat(centres, 7, axis=0) + rng.normal(scale=0.1, size=(280, 2))  # clusters of 7
    strict = np.bincount(vmdav(X, 4, gamma=0.0))
    assert strict.min() >= 4 and np.all(strict[:-1] == 4)  # gamma 0 never extends a group
    loose = np.bincount(vmdav(X, 4, gamma=1.1))
    assert loose.min() >= 4
    assert loose.mean() > strict.mean()  # natural groups of 7 are kept together
    with pytest.raises(InputError, match="gamma"):
        vmdav(X, 4, gamma=-1)


@pytest.mark.reference_data
@pytest.mark.parametrize(("k", "expected"),
                         [(2, 1.97187e9), (5, 7.14755e9), (33, 3.27162e10), (66, 5.05489e10)])
def test_agrees_with_sdcmicro_on_census_four_attributes(census, k, expected):
    """sdcMicro's mdav (z-score weights) on FICA, FEDTAX, INTVAL, POTHVAL."""
    X = census.frame[["FICA", "FEDTAX", "INTVAL", "POTHVAL"]].to_numpy(float)
    value = sse(X, replace_by_means(X, mdav(scale(X, "zscore"), k)))
    assert value == pytest.approx(expected, rel=5e-6)


@pytest.mark.reference_data
@pytest.mark.parametrize(("k", "expected"), [(3, 5.6922), (5, 9.0884), (10, 14.1559)])
def test_agrees_with_sdcmicro_on_census_all_attributes(census, k, expected):
    X = census.frame.to_numpy(float)
    value = sse_percent(X, replace_by_means(X, mdav(scale(X, "zscore"), k)))
    assert value == pytest.approx(expected, abs=5e-5)


@pytest.mark.reference_data
@pytest.mark.parametrize(("k", "sse_paper", "rl_paper"),
                         [(2, 3.07e9, 45.3), (33, 3.95e10, 2.96), (66, 5.09e10, 1.48)])
def test_reproduces_paper_000_table_1_baseline(census, k, sse_paper, rl_paper):
    """MDAV with range scaling on the paper's domains [0, 1.5 max] (000 §5.1, eq. 8)."""
    X = census.frame[["FICA", "FEDTAX", "INTVAL", "POTHVAL"]].to_numpy(float)
    bounds = [(0.0, 1.5 * X[:, j].max()) for j in range(4)]
    masked = replace_by_means(X, mdav(scale(X, "range", bounds), k))
    widths = np.array([hi - lo for lo, hi in bounds])
    assert sse(X, masked) == pytest.approx(sse_paper, rel=0.02)
    assert record_linkage(X, masked, widths) == pytest.approx(rl_paper, abs=1.0)


def test_synthetic_data_large_k_smoke():
    frame = datasets.synthetic(3000, 6, seed=1).frame
    X = scale(frame.iloc[:, :6].to_numpy(float))
    sizes = np.bincount(mdav(X, 50))
    assert sizes.min() >= 50 and sizes.max() <= 99
