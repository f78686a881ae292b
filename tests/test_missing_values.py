"""Missing values: MDAV with the distance over the attributes both records have, sample
frequencies under both semantics, and releases that keep missing values missing."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from microagg import MDAV, VMDAV
from microagg.core.distance import Categorical
from microagg.core.frequencies import sample_frequencies
from microagg.core.verifiers import k_anonymity
from microagg.errors import InputError
from microagg.partition.mdav import mdav
from microagg.partition.mdav_missing import mdav_missing
from tests import reference
from tests.partition.test_mixed import OCCUPATION, _metrics


@st.composite
def with_missing(draw, max_rows=30):
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(0, 2))
    X = draw(arrays(np.float64, (n, p), elements=st.integers(0, 3).map(float)))
    X[draw(arrays(np.bool_, (n, p)))] = np.nan
    jobs = draw(arrays(np.int64, n, elements=st.integers(-1, OCCUPATION.n_leaves - 1)))
    edu = draw(arrays(np.int64, n, elements=st.integers(-1, 2)))
    k = draw(st.integers(1, n))
    return X, Categorical(np.column_stack([jobs, edu]), _metrics()), k


@settings(max_examples=200, deadline=None)
@given(with_missing())
def test_mdav_missing_equals_the_direct_implementation(case):
    X, categorical, k = case
    labels = mdav_missing(X, k, categorical=categorical)
    np.testing.assert_array_equal(labels, reference.mdav_missing(X, k, categorical))
    sizes = np.bincount(labels)
    assert sizes.min() >= k and (sizes.size == 1 or sizes.max() <= 2 * k - 1)


@pytest.mark.parametrize("seed", range(4))
def test_on_complete_data_it_is_mdav(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(700, 3))
    codes = np.column_stack([rng.integers(0, OCCUPATION.n_leaves, 700),
                             rng.integers(0, 3, 700)])
    categorical = Categorical(codes, _metrics())
    np.testing.assert_array_equal(mdav_missing(X, 4, categorical=categorical),
                                  mdav(X, 4, categorical=categorical))


def _brute_frequencies(frame, keys, matches_any):
    return [len(s) for s in reference.matching_sets(frame, keys, matches_any)]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 40), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_sample_frequencies_agree_with_their_definition(n, q, seed):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"k{j}": rng.choice(["a", "b", None], n) for j in range(q)})
    keys = list(frame.columns)
    assert sample_frequencies(frame, keys).tolist() == _brute_frequencies(frame, keys, True)
    assert (sample_frequencies(frame, keys, "category").tolist()
            == _brute_frequencies(frame, keys, False))


def _frame_with_missing(n=400, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.normal(3e4, 8e3, n),
                          "region": rng.choice(["north", "south", "east"], n)})
    frame["income"] = frame["income"].round(2)
    frame = frame.astype({"age": "float64", "region": object})
    frame.loc[rng.random(n) < 0.1, "age"] = np.nan
    frame.loc[rng.random(n) < 0.1, "income"] = np.nan
    frame.loc[rng.random(n) < 0.1, "region"] = None
    return frame


def test_a_release_keeps_missing_values_missing_and_is_k_anonymous_as_written():
    frame = _frame_with_missing()
    release = MDAV(k=5).release(frame)
    out = release.frame
    pd.testing.assert_series_equal(out.isna().sum(), frame.isna().sum())
    frequencies = _brute_frequencies(out, list(out.columns), True)
    assert min(frequencies) >= 5
    assert release.report.k_anonymity["holds"]
    assert release.report.missing_values == {c: int(frame[c].isna().sum())
                                             for c in frame.columns}
    # whole numbers with missing values are written as (nullable) integers, amounts with their cents
    assert str(out["age"].dtype) == "Int64"
    assert np.allclose(out["income"].dropna(), out["income"].dropna().round(2))
    # category semantics would not hold: a missing value is alone in its cluster
    assert not k_anonymity(out, list(out.columns), "category").holds(5)


def test_a_cluster_mean_skips_missing_values():
    frame = _frame_with_missing()
    release = MDAV(k=5).release(frame, round_values=False)
    present = frame["income"].notna()
    for label in np.unique(release.labels):
        members = (release.labels == label) & present.to_numpy()
        if members.any():
            values = release.frame.loc[members, "income"]
            assert np.allclose(values, frame.loc[members, "income"].mean())


def test_methods_that_do_not_take_missing_values_say_so():
    with pytest.raises(InputError, match=r"'age' has .* missing value.*use mdav"):
        VMDAV(k=5).release(_frame_with_missing())
