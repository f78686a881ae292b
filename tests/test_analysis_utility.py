"""Utility by the analyst's own analysis (``microagg.evaluation.analysis``) against an
independent computation: statsmodels' OLS and logistic regression, the CI overlap and the
pMSE computed by hand from their output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg.errors import InputError
from microagg.evaluation.analysis import pmse, regression_utility

sm = pytest.importorskip("statsmodels.api")
smf = pytest.importorskip("statsmodels.formula.api")


def _pair(seed: int, n: int = 600) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    original = pd.DataFrame({"age": rng.integers(18, 80, n).astype(float),
                             "hours": rng.normal(40, 8, n),
                             "sector": rng.choice(["private", "public", "self"], n,
                                                  p=[0.6, 0.3, 0.1])})
    original["income"] = (500 + 30 * original["age"] + 12 * original["hours"]
                          + original["sector"].map({"private": 0, "public": 250, "self": -400})
                          + rng.normal(0, 300, n))
    released = original.copy()
    released["age"] += rng.normal(0, 6, n)
    released["income"] += rng.normal(0, 200, n)
    swap = rng.random(n) < 0.15
    released.loc[swap, "sector"] = rng.choice(["private", "public", "self"], int(swap.sum()))
    released.loc[rng.random(n) < 0.05, "hours"] = np.nan  # listwise deletion
    return original, released


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_regression_agrees_with_statsmodels(seed: int) -> None:
    original, released = _pair(seed)
    formula = "income ~ age + hours + sector"
    result = regression_utility(original, released, formula, level=0.9)
    fits = [smf.ols(formula, frame.dropna()).fit() for frame in (original, released)]
    assert result.n_original == fits[0].nobs and result.n_released == fits[1].nobs
    assert {c.term for c in result.coefficients} == set(fits[0].params.index)
    for c in result.coefficients:
        (lo_o, hi_o), (lo_r, hi_r) = (fit.conf_int(alpha=0.1).loc[c.term] for fit in fits)
        assert c.original == pytest.approx(fits[0].params[c.term], rel=1e-9, abs=1e-9)
        assert c.released == pytest.approx(fits[1].params[c.term], rel=1e-9, abs=1e-9)
        assert c.original_ci == pytest.approx((lo_o, hi_o), rel=1e-9)
        assert c.released_ci == pytest.approx((lo_r, hi_r), rel=1e-9)
        width = max(0.0, min(hi_o, hi_r) - max(lo_o, lo_r))
        overlap = 0.5 * (width / (hi_o - lo_o) + width / (hi_r - lo_r))
        assert c.ci_overlap == pytest.approx(overlap, abs=1e-6)
        assert c.standardized_difference == pytest.approx(
            abs(fits[1].params[c.term] - fits[0].params[c.term]) / fits[0].bse[c.term],
            rel=1e-6)


def test_a_release_identical_to_the_original_keeps_every_interval() -> None:
    original, _ = _pair(4)
    result = regression_utility(original, original, "income ~ age + sector")
    assert all(c.ci_overlap == 1.0 and c.standardized_difference == 0.0
               for c in result.coefficients)
    assert result.to_dict()["mean_ci_overlap"] == 1.0


def test_terms_only_one_table_has_are_listed_without_a_comparison() -> None:
    original, released = _pair(5)
    released = released[released["sector"] != "self"]  # the level is gone from the release
    result = regression_utility(original, released, "income ~ age + sector")
    lost = next(c for c in result.coefficients if c.term == "sector[T.self]")
    assert lost.released is None and lost.ci_overlap is None and lost.original is not None


def test_a_bad_formula_is_one_clear_error() -> None:
    original, released = _pair(6)
    for formula, said in (("income age", "is written"), ("income ~ height", "'height'"),
                          ("sector ~ age", "numeric"), ("income ~ ", "empty term")):
        with pytest.raises(InputError, match=said):
            regression_utility(original, released, formula)


@pytest.mark.parametrize("seed", [1, 2])
def test_pmse_agrees_with_statsmodels_logit(seed: int) -> None:
    original, released = _pair(seed)
    columns = ["age", "hours", "sector"]
    result = pmse(original, released, columns)
    stacked = pd.concat([original[columns].dropna(), released[columns].dropna()],
                        ignore_index=True)
    design = sm.add_constant(pd.get_dummies(stacked, columns=["sector"], drop_first=True,
                                            dtype=float))
    target = np.r_[np.zeros(result.n_original), np.ones(result.n_released)]
    fitted = sm.Logit(target, design).fit(disp=0, method="newton", tol=1e-12, maxiter=200)
    p = fitted.predict(design)
    c = result.n_released / (result.n_original + result.n_released)
    expected = float(np.mean((p - c) ** 2))
    k = design.shape[1]
    assert result.converged and result.parameters == k
    assert result.pmse == pytest.approx(expected, rel=1e-6)
    null = (k - 1) * (1 - c) ** 2 * c / len(target)
    assert result.standardized_pmse == pytest.approx(expected / null, rel=1e-6)


def test_pmse_ranks_a_worse_release_higher() -> None:
    original, released = _pair(7)
    worse = released.assign(age=released["age"] + 15)
    assert pmse(original, original).pmse == pytest.approx(0.0, abs=1e-20)
    assert pmse(original, released, ["age", "hours"]).standardized_pmse \
        < pmse(original, worse, ["age", "hours"]).standardized_pmse


def test_evaluate_adds_the_regression_and_the_pmse_to_its_json(run_cli, tmp_path) -> None:
    """``microagg evaluate --regression … --pmse --json``: the library's figures, read back."""
    import json

    original, released = _pair(8, 300)
    released = released.fillna({"hours": 40.0})
    paths = tmp_path / "o.csv", tmp_path / "r.csv"
    original.to_csv(paths[0], index=False)
    released.to_csv(paths[1], index=False)
    formula = 'income ~ age + Q("hours") + sector'
    result = run_cli("evaluate", *paths, "--columns", "age,hours", "--regression", formula,
                     "--pmse", "--json")
    assert result.code == 0, result.stderr
    said = json.loads(result.stdout)
    read = [pd.read_csv(p) for p in paths]
    expected = regression_utility(*read, formula)
    assert said["regression"]["mean_ci_overlap"] == pytest.approx(expected.mean_ci_overlap)
    assert [c["term"] for c in said["regression"]["coefficients"]] == \
        [c.term for c in expected.coefficients]
    assert said["pmse"]["pmse"] == pytest.approx(pmse(*read, ["age", "hours"]).pmse)
    bad = run_cli("evaluate", *paths, "--regression", "income ~ height")
    assert bad.code == 2 and len(bad.stderr.strip().splitlines()) == 1 and "height" in bad.stderr


def _census_like(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(18, 80, n).astype(float),
                          "sector": rng.choice(["private", "public", "self"], n)})
    score = (frame["age"] - 45) / 10 + frame["sector"].map({"private": 0, "public": 1,
                                                             "self": -1})
    frame["rich"] = np.where(score + rng.normal(0, 0.7, n) > 0, ">50K", "<=50K")
    return frame


def test_a_classifier_on_a_faithful_release_keeps_its_accuracy_and_loses_it_on_noise() -> None:
    """Trained on the original or on an identical release: the same figures. Trained on a
    release whose target was shuffled: no better than guessing the majority class."""
    pytest.importorskip("sklearn")
    from microagg.evaluation.analysis import classification_utility

    table = _census_like(9, 2400)
    train, holdout = table[:1600], table[1600:].reset_index(drop=True)
    same = classification_utility(train, train.copy(), holdout, "rich")
    assert same.on_original == same.on_released and same.accuracy_lost == 0.0
    majority = float(holdout["rich"].value_counts(normalize=True).max())
    assert same.on_original["accuracy"] > majority + 0.1
    assert same.on_original["auc"] is not None and same.on_original["auc"] > 0.8
    shuffled = train.assign(rich=np.random.default_rng(1).permutation(train["rich"].to_numpy()))
    lost = classification_utility(train, shuffled, holdout, "rich")
    assert lost.on_released["auc"] < 0.6 and lost.accuracy_lost > 0.1
    assert lost.on_released["balanced_accuracy"] < 0.6


def test_evaluate_classify_needs_its_holdout(run_cli, tmp_path) -> None:
    import json

    table = _census_like(10, 900)
    paths = [tmp_path / f"{name}.csv" for name in ("train", "release", "holdout")]
    table[:600].to_csv(paths[0], index=False)
    table[:600].to_csv(paths[1], index=False)
    table[600:].to_csv(paths[2], index=False)
    alone = run_cli("evaluate", paths[0], paths[1], "--classify", "rich")
    assert alone.code == 2 and "--holdout" in alone.stderr
    result = run_cli("evaluate", paths[0], paths[1], "--columns", "age", "--classify", "rich",
                     "--holdout", paths[2], "--json")
    assert result.code == 0, result.stderr
    said = json.loads(result.stdout)["classification"]
    assert said["n_holdout"] == 300 and said["accuracy_lost"] == 0.0
    assert said["features"] == ["age", "sector"]


def test_every_table_keeps_the_originals_baseline_and_mixed_columns_are_categories() -> None:
    """Every coefficient is compared against the original's baseline level: a release that
    lost it lists its own coefficients apart, compared with none; a column numeric in one
    table and text in the other is read as categories, not an error."""
    original, released = _pair(11)
    released = released.fillna({"hours": 40.0})
    moved = released.assign(sector=released["sector"].replace("private", "public"))
    result = regression_utility(original, moved, "income ~ age + sector")
    terms = {c.term: c for c in result.coefficients}
    assert "sector[T.private]" not in terms  # the baseline is the original's, in both
    public = terms["sector[T.public]"]
    assert public.original is not None and public.released is None  # no baseline left
    shifted = terms["sector[T.self; against public]"]  # the release's own baseline
    assert shifted.original is None and shifted.released is not None
    recoded = released.assign(age=pd.cut(released["age"], [0, 40, 60, 100]).astype(str))
    assert pmse(original, recoded, ["age", "sector"]).parameters > 3
    table = _census_like(12, 900)
    text_age = table.assign(age=table["age"].map(lambda a: f"{int(a) // 10}0s"))
    pytest.importorskip("sklearn")
    from microagg.evaluation.analysis import classification_utility

    found = classification_utility(table[:600], text_age[:600], table[600:], "rich")
    assert found.on_released["accuracy"] is not None
