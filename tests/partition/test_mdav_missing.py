"""MDAV with missing values on numeric attributes: the coded kernel (masked coded passes, the
anchor-sorted scan per number of attributes present) against the direct implementation of
the definition, the plain pass, and a brute-force query."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from microagg.core.distance import no_categories
from microagg.core.threads import SERIAL
from microagg.partition import mdav_missing as missing_module
from microagg.partition._coded_missing import missing_query
from microagg.partition._kernels import work_buffers
from microagg.partition._missing_set import missing_set
from microagg.partition.mdav import mdav
from microagg.partition.mdav_missing import _plain_partition, mdav_missing
from tests import reference


@st.composite
def numeric_with_missing(draw, max_rows=60, max_cols=4):
    n = draw(st.integers(1, max_rows))
    p = draw(st.integers(1, max_cols))
    if draw(st.booleans()):  # small integers: many exact ties
        values = st.integers(0, 3).map(float)
    else:
        values = st.floats(-100, 100, allow_nan=False, allow_infinity=False, width=32)
    X = draw(arrays(np.float64, (n, p), elements=values))
    X[draw(arrays(np.bool_, (n, p)))] = np.nan
    if draw(st.booleans()):  # records with no value at all
        X[draw(arrays(np.bool_, n))] = np.nan
    k = draw(st.integers(1, n))
    return X, k


@settings(max_examples=250, deadline=None)
@given(numeric_with_missing())
def test_equals_the_direct_implementation(case):
    X, k = case
    labels = mdav_missing(X, k)
    np.testing.assert_array_equal(labels, reference.mdav_missing(X, k))
    sizes = np.bincount(labels)
    assert sizes.min() >= k and (sizes.size == 1 or sizes.max() <= 2 * k - 1)


def _plain(X, k):
    return _plain_partition(X, k, no_categories(X.shape[0]), None)


def _with_missing(seed, n, p, missing, integers=False):
    rng = np.random.default_rng(seed)
    X = (rng.integers(0, 4, (n, p)).astype(float) if integers
         else rng.standard_normal((n, p)))
    X[rng.random(X.shape) < missing] = np.nan
    return X


def test_equals_the_direct_implementation_with_many_ties_and_empty_records():
    X = _with_missing(1, 300, 3, 0.3, integers=True)
    X[[5, 40, 41, 299]] = np.nan  # records with no value: +inf from every record
    np.testing.assert_array_equal(mdav_missing(X, 3), reference.mdav_missing(X, 3))


@pytest.mark.parametrize(("seed", "n", "p", "missing", "k", "integers"), [
    (2, 3000, 6, 0.1, 5, False),
    (3, 2000, 10, 0.5, 3, False),  # most records share few attributes with each other
    (4, 3000, 3, 0.2, 4, True),  # exact ties everywhere, candidates beyond the buffers
    (5, 2000, 4, 0.1, 40, False),  # 39 nearest: two coded passes
    (6, 1500, 1, 0.3, 2, False),  # one attribute
])
def test_coded_kernel_equals_the_plain_pass(seed, n, p, missing, k, integers):
    X = _with_missing(seed, n, p, missing, integers)
    np.testing.assert_array_equal(mdav_missing(X, k), _plain(X, k))


def test_empty_columns_and_records_and_an_outlier():
    X = _with_missing(7, 2000, 5, 0.15)
    X[:, 2] = np.nan  # an attribute no record has
    X[::97] = np.nan  # records with no value
    X[11, 0] = 1e6  # stretches the grid: coarse codes, wide bounds
    np.testing.assert_array_equal(mdav_missing(X, 4), _plain(X, 4))


def test_on_the_parallel_path(split_passes):
    X = _with_missing(8, 3000, 4, 0.2, integers=True)
    np.testing.assert_array_equal(mdav_missing(X, 4, threads=split_passes), _plain(X, 4))


def test_exact_fallback_when_candidates_overflow(monkeypatch):
    X = _with_missing(9, 400, 3, 0.2)
    expected = reference.mdav_missing(X, 3)
    monkeypatch.setattr(missing_module, "_CANDIDATES", 2)
    np.testing.assert_array_equal(mdav_missing(X, 3), expected)


@pytest.mark.parametrize("seed", range(3))
def test_on_complete_data_it_is_mdav(seed):
    X = np.random.default_rng(seed).standard_normal((2000, 5))
    np.testing.assert_array_equal(mdav_missing(X, 4), mdav(X, 4))


def _brute_query(X, rows, q, skip, near):
    """Nearest by (distance, row) and farthest by (distance, lowest row), by the reference's
    distance."""
    rows = rows[rows != skip]
    d = reference.distances_to(X, rows, q, any_missing=True)
    nearest = rows[np.lexsort((rows, d))][:near]
    farthest = rows[np.lexsort((rows, -d))][0]
    return sorted(nearest.tolist()), int(farthest)


@pytest.mark.parametrize(("missing", "near"), [(0.1, 4), (0.4, 1), (0.6, 7), (0.3, 40)])
def test_a_query_equals_brute_force(missing, near):
    """Queries with every pattern of missing values, including attributes no other record has in
    common with them (infinitely far records) and queries with a single attribute."""
    X = _with_missing(10, 1200, 4, missing)
    X[3] = [np.nan, 0.5, np.nan, np.nan]
    rest, coded = missing_set(X)
    work = work_buffers(1, near, 4096)
    rows = np.arange(X.shape[0])
    for seed in [*range(0, 1200, 37), 3]:
        out_d = np.empty(near)
        out_near = np.empty(near, dtype=np.int64)
        found, far = missing_query(rest, coded, work, X.shape[0], X[seed].copy(), seed, near, True,
                                   out_d, out_near, SERIAL)
        assert (sorted(out_near[:found].tolist()), far) == _brute_query(X, rows, X[seed],
                                                                        seed, near)
