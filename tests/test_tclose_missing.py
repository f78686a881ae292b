"""k-anonymous t-closeness on tables with missing values: the verifier against the matching
sets computed directly, and releases whose written table (as read back) satisfies the k and t
of their report under the declared semantics (a missing value matches any value)."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg.core.verifiers import k_anonymity, t_closeness
from microagg.data.io import read_table, write_table
from microagg.errors import InputError
from microagg.evaluation.check import check_table
from microagg.options import TClosenessMethod
from microagg.release import tclose
from tests import reference


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 40), st.integers(1, 3), st.integers(0, 2**32 - 1), st.booleans())
def test_t_closeness_over_matching_sets_agrees_with_its_definition(n, q, seed, nominal):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"k{j}": rng.choice(["a", "b", None], n) for j in range(q)})
    if nominal:
        frame["c"] = rng.choice(["x", "y", "z", None], n)
    else:
        frame["c"] = rng.integers(0, 5, n).astype(float)
    keys = [f"k{j}" for j in range(q)]
    distance = "equal" if nominal else "ordered"
    for matches_any, semantics in ((True, "matches-any"), (False, "category")):
        found = t_closeness(frame, keys, "c", missing=semantics).t
        assert found == pytest.approx(
            reference.largest_matching_emd(frame, keys, "c", distance, matches_any), abs=1e-12)


def test_a_missing_value_of_an_ordered_confidential_attribute_is_refused():
    frame = pd.DataFrame({"age": [30, 30, 40, 40], "salary": [1.0, np.nan, 2.0, 3.0]})
    with pytest.raises(InputError, match=r"'salary' has 1 missing value.*no place"):
        t_closeness(frame, ["age"], "salary")


def adult_like(n=600, seed=0):
    """Adult's shape in small: integer and categorical quasi-identifiers with missing values (region
    mostly missing, so that some classes have no region at all), a nominal confidential
    attribute with missing values, a sampling weight."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(17, 91, n).astype(float),
        "hours": rng.integers(1, 99, n),
        "workclass": rng.choice(["Private", "Self-emp", "Gov", "Never-worked"], n).astype(object),
        "region": rng.choice(["north", "south", "east"], n).astype(object),
        "sex": rng.choice(["Male", "Female"], n),
        "fnlwgt": rng.integers(10_000, 500_000, n),
        "income": rng.choice(["<=50K", ">50K"], n, p=[0.75, 0.25]).astype(object),
    })
    frame.loc[rng.random(n) < 0.08, "age"] = np.nan
    frame.loc[rng.random(n) < 0.15, "workclass"] = None
    frame.loc[rng.random(n) < 0.6, "region"] = None
    frame.loc[rng.random(n) < 0.05, "income"] = None
    return frame


QUASI = ["age", "hours", "workclass", "region", "sex"]


@pytest.fixture(scope="module")
def with_missing():
    return adult_like()


@pytest.mark.parametrize("method", [m.value for m in TClosenessMethod])
def test_the_written_table_satisfies_its_reports_k_and_t(tmp_path, with_missing, method):
    release = tclose(with_missing, k=5, t=0.25, confidential=["income"], roles={"fnlwgt": "weight"},
                     method=method)
    report = release.report
    assert report.quasi_identifiers == QUASI  # no schema: every column that may be masked
    assert report.missing_values == {c: int(with_missing[c].isna().sum())
                                     for c in ("age", "workclass", "region", "income")}
    assert report.weight == "fnlwgt" and report.missing_semantics == "matches-any"
    path = tmp_path / "out.csv"
    write_table(release.frame, path)
    written = read_table(path)
    for column in ("fnlwgt", "income"):  # written unchanged, same rows, same order
        assert written[column].isna().equals(with_missing[column].isna())
        assert (written[column].dropna() == with_missing[column].dropna()).all()
    # every member of a class is written alike; a value missing in the whole class stays so
    for label in np.unique(release.labels):
        members = written.loc[release.labels == label, QUASI]
        assert len(members.drop_duplicates()) == 1
    assert written["region"].isna().any() and written["region"].notna().any()
    worst = reference.largest_matching_emd(written, QUASI, "income", "equal")
    assert worst <= 0.25 + 1e-9
    assert worst == pytest.approx(report.largest_emd["income"], abs=1e-12)
    smallest = min(len(s) for s in reference.matching_sets(written, QUASI))
    assert smallest == report.k_anonymity["smallest_class"] >= 5
    for semantics in ("matches-any", "category"):  # both hold: classes are written alike
        checked = check_table(written, k=5, t=0.25, quasi=QUASI, confidential=["income"],
                              missing=semantics)
        assert checked.holds, semantics
    # the weight is not averaged, and class means are weighted by it
    rows = (release.labels == release.labels[0]) & with_missing["age"].notna().to_numpy()
    weights = with_missing.loc[rows, "fnlwgt"]
    mean = float((with_missing.loc[rows, "age"] * weights).sum() / weights.sum())
    assert written.loc[0, "age"] == round(mean)


def test_category_semantics_would_not_hold_if_missing_values_stayed_missing(with_missing):
    """Why a member's missing value takes its class's value: kept missing, a class splits
    into several combinations under the category semantics, and its records match records
    of other classes under matches-any."""
    release = tclose(with_missing, k=5, t=0.25, confidential=["income"], roles={"fnlwgt": "weight"},
                     method="merge")
    kept = release.frame.copy()
    for column in QUASI:
        kept.loc[with_missing[column].isna().to_numpy(), column] = np.nan
    assert not k_anonymity(kept, QUASI, "category").holds(5)


def test_merge_from_a_method_without_missing_values_says_which_can(with_missing):
    with pytest.raises(InputError, match=r"'age' has 4\d missing .*merge starts from vmdav, "
                                         r"which does not take them: start from mdav"):
        tclose(with_missing, k=5, t=0.25, confidential=["income"], roles={"fnlwgt": "weight"},
               method="merge", microaggregation="vmdav")


def test_without_a_schema_a_weight_is_refused_until_its_role_is_given(with_missing):
    with pytest.raises(InputError, match=r"'fnlwgt' would be masked, but it may be a sampling "
                                         "weight"):
        tclose(with_missing, k=5, t=0.25, confidential=["income"])


def test_an_ordered_confidential_attribute_with_missing_values_is_refused(with_missing):
    frame = with_missing.assign(pay=np.where(np.arange(len(with_missing)) % 50 == 0, np.nan,
                                             1.0 * np.arange(len(with_missing))))
    with pytest.raises(InputError, match=r"'pay' has 12 missing value\(s\).*declare the "
                                         "attribute nominal"):
        tclose(frame, k=5, t=0.25, quasi=["hours", "sex"], confidential=["pay"])


def test_cli_tclose_without_drop_incomplete_then_check(run_cli, tmp_path, with_missing):
    source = tmp_path / "in.csv"
    with_missing.to_csv(source, index=False)
    out = tmp_path / "out.csv"
    result = run_cli("tclose", source, "-o", out, "--k", "5", "--t", "0.25",
                     "--confidential", "income", "--weight", "fnlwgt", "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["t_closeness_holds"] and report["missing_semantics"] == "matches-any"
    sidecar = json.loads((tmp_path / "out.csv.report.json").read_text())
    assert "A missing value matches any value" in sidecar["guarantee"]["statement"]
    check = run_cli("check", out, "--k", "5", "--t", "0.25", "--quasi", ",".join(QUASI),
                    "--confidential", "income")
    assert check.code == 0, check.stdout
    assert "a missing value matches any value: region" in check.stdout
