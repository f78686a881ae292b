"""Replacements of scipy.stats helpers (kept out of the import path for start-up time) agree
with scipy's own."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata, wasserstein_distance

from microagg.evaluation.risk import ranks
from microagg.evaluation.utility import wasserstein_1d

values = st.lists(st.integers(-5, 5), min_size=1, max_size=40).map(
    lambda v: np.array(v, dtype=np.float64) / 2)


@settings(max_examples=200, deadline=None)
@given(values, values)
def test_wasserstein_1d_equals_scipys(u, v):
    assert wasserstein_1d(u, v) == pytest.approx(wasserstein_distance(u, v), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_mid_ranks_equal_scipys(n, m, seed):
    X = np.random.default_rng(seed).integers(0, 4, (n, m)).astype(np.float64)
    np.testing.assert_array_equal(ranks(X), rankdata(X, method="average", axis=0))
    np.testing.assert_array_equal(ranks(X[:, 0]), rankdata(X[:, 0], method="average"))
