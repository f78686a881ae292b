"""Invariant PRAM: the matrix is sdcMicro's construction (checked loop by loop), keeps the
marginal exactly, and the draws keep it in expectation and keep each category with the
matrix's diagonal probability (checked statistically)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg.core.pram import invariant_matrix, pram_codes
from microagg.errors import InputError
from microagg.release.methods import InvariantPram
from tests.reference import sdcmicro_pram_matrix


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 8), st.floats(0.0, 0.99), st.floats(0.01, 1.0), st.integers(0, 2**32 - 1))
def test_the_matrix_is_sdcmicros_and_invariant(size, retention, alpha, seed):
    rng = np.random.default_rng(seed)
    p = rng.integers(1, 50, size).astype(float)
    pds = rng.uniform(retention, 1.0, size) if seed % 2 else np.full(size, retention)
    R = invariant_matrix(p, pds, alpha)
    np.testing.assert_allclose(R, sdcmicro_pram_matrix(p, pds, alpha), rtol=0, atol=1e-12)
    np.testing.assert_allclose(R.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose((p / p.sum()) @ R, p / p.sum(), rtol=0, atol=1e-12)
    assert (R >= -1e-15).all()


def test_the_diagonal_of_a_uniform_marginal_by_hand():
    """With p uniform, P is symmetric and doubly stochastic, so Q = P and R = P²: R_ii =
    θ² + (L − 1)((1 − θ)/(L − 1))² = θ² + (1 − θ)²/(L − 1); R_α,ii = α R_ii + 1 − α."""
    theta, alpha, size = 0.7, 0.4, 5
    R = invariant_matrix(np.ones(size), theta, alpha)
    expected = alpha * (theta**2 + (1 - theta) ** 2 / (size - 1)) + 1 - alpha
    np.testing.assert_allclose(np.diag(R), expected, rtol=1e-14)


def test_an_unseen_category_is_never_written():
    R = invariant_matrix(np.array([3.0, 0.0, 7.0]), 0.8, 1.0)
    np.testing.assert_allclose(R[:, 1][[0, 2]], 0.0, atol=1e-15)


def test_the_draws_keep_the_marginal_and_the_diagonal_statistically():
    """200,000 records of 4 categories: the counts after PRAM are sums of independent
    draws with mean n_j (invariance) and a known variance; each lies within 5 standard
    deviations of it, and each category's share of records kept within 5 of R_jj."""
    rng = np.random.default_rng(3)
    p = np.array([0.5, 0.3, 0.15, 0.05])
    codes = rng.choice(4, 200_000, p=p)
    counts = np.bincount(codes, minlength=4)
    R = invariant_matrix(counts, 0.8, 0.5)
    drawn = pram_codes(codes, R, np.random.default_rng(11))
    after = np.bincount(drawn, minlength=4)
    variance = (R * (1 - R))[codes].sum(axis=0)
    assert np.all(np.abs(after - counts) <= 5 * np.sqrt(variance))
    for j in range(4):
        rows = codes == j
        kept = (drawn[rows] == j).mean()
        assert abs(kept - R[j, j]) <= 5 * np.sqrt(R[j, j] * (1 - R[j, j]) / rows.sum())


def _frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "region": pd.Categorical(rng.choice(["n", "s", "e"], n, p=[0.6, 0.3, 0.1]),
                                 categories=["n", "s", "e", "w"]),
        "sex": rng.choice(["f", "m"], n), "code": rng.integers(1, 4, n),
        "stratum": rng.choice(["x", "y"], n), "w": rng.uniform(1, 10, n)})
    frame.loc[rng.random(n) < 0.05, "sex"] = None
    return frame


def test_the_release_keeps_types_missing_values_and_other_columns():
    frame = _frame()
    release = InvariantPram().release(frame, keys=["region", "sex", "code"], rng=5)
    out = release.frame
    assert out["region"].dtype == frame["region"].dtype  # the declared categories
    assert out["code"].dtype == frame["code"].dtype
    assert out["sex"].isna().equals(frame["sex"].isna())
    assert set(out["code"]) <= {1, 2, 3} and set(out["sex"].dropna()) <= {"f", "m"}
    assert out[["stratum", "w"]].equals(frame[["stratum", "w"]])
    report = release.report
    assert report.seeded and report.changed_values["region"] == int(
        (out["region"] != frame["region"]).sum())
    # the category declared but absent (w) is in the matrix and never written
    region = next(m for m in report.matrices if m.column == "region")
    assert region.categories == ["n", "s", "e", "w"] and (out["region"] != "w").all()


def test_a_seed_reproduces_the_draws():
    frame = _frame()
    first = InvariantPram().release(frame, keys=["region"], rng=7).frame
    again = InvariantPram().release(frame, keys=["region"], rng=7).frame
    other = InvariantPram().release(frame, keys=["region"], rng=8).frame
    assert first.equals(again) and not first.equals(other)
    assert not InvariantPram().release(frame, keys=["region"]).report.seeded


def test_one_matrix_per_stratum_each_invariant_for_its_weighted_marginal():
    frame = _frame(seed=2)
    release = InvariantPram(retention=0.6, alpha=1.0).release(
        frame, keys=["region"], roles={"stratum": "stratum", "w": "weight"}, rng=1)
    matrices = release.report.matrices
    assert [m.stratum for m in matrices] == ["stratum=x", "stratum=y"]
    for m in matrices:
        rows = frame["stratum"] == m.stratum.split("=")[1]
        weighted = frame[rows].groupby("region", observed=False)["w"].sum()
        p = weighted.reindex(m.categories).to_numpy() / weighted.sum()
        np.testing.assert_allclose(m.marginal, p, rtol=1e-12)
        np.testing.assert_allclose(p @ np.array(m.matrix), p, atol=1e-12)
    assert "weighted by 'w'" in release.report.marginal


def test_parameters_are_checked_and_a_deterministic_method_refuses_a_seed():
    from microagg.errors import ParameterError
    from microagg.release.methods import LocalSuppression

    with pytest.raises(ParameterError, match="`retention` must be"):
        InvariantPram(retention=1.0)
    with pytest.raises(ParameterError, match="`alpha` must be"):
        InvariantPram(alpha=0.0)
    with pytest.raises(InputError, match="`rng` applies to randomized methods"):
        LocalSuppression(k=2).release(_frame(), keys=["sex"], rng=1)
    with pytest.raises(InputError, match="column 'w' has 2,000 categories"):
        InvariantPram().release(_frame(), keys=["w"])


@pytest.mark.parametrize(("values", "strata", "why"), [
    (["m", "m", "m", "m"], None, "column 'sex' has one category (m)"),
    ([None, None, None, None], None, "column 'sex' has no value present"),
    (["m", "m", "f", "f"], ["a", "a", "b", "b"], "column 'sex' has one category in each "
                                                  "stratum"),
])
def test_keys_pram_cannot_change_are_refused(values, strata, why):
    """A key whose values present are of one category (in each stratum), or with none, has
    the identity as its matrix: PRAM would write the table as it is and call it protected,
    which masking refuses too."""
    frame = pd.DataFrame({"sex": values, "income": [1, 2, 3, 4]})
    roles = None
    if strata is not None:
        frame["stratum"] = strata
        roles = {"stratum": "stratum"}
    with pytest.raises(InputError, match="PRAM can change no value") as raised:
        InvariantPram().release(frame, keys=["sex"], roles=roles, rng=0)
    assert why in str(raised.value)


def test_a_key_that_cannot_change_beside_one_that_can_is_named():
    frame = pd.DataFrame({"sex": ["m"] * 40, "region": list("abcd") * 10})
    release = InvariantPram(retention=0.5).release(frame, keys=["sex", "region"], rng=3)
    assert release.report.changed_values["sex"] == 0
    assert release.report.changed_values["region"] > 0
    assert "column 'sex' has one category (m): PRAM cannot change it" in release.report.notes
