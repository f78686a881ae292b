"""Roles without a schema, sampling weights, strata, and integer columns written as integers."""

import numpy as np
import pandas as pd
import pytest
import yaml

from microagg import MDAV, CorrelatedNoise, TClosenessFirst
from microagg.core.aggregate import cluster_means
from microagg.data.roles import suspect
from microagg.data.schema import Role
from microagg.errors import InputError


def _survey(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(1, n + 1),
        "age": rng.integers(18, 90, n),
        "household_size": rng.integers(1, 7, n),
        "income": rng.normal(3e4, 8e3, n).round(1),
        "region": rng.choice(["north", "south"], n),
        "wgt": rng.uniform(50, 500, n).round(3),
    })


@pytest.mark.parametrize(("name", "values", "role"), [
    ("id", [3, 1, 2], Role.IDENTIFIER),
    ("patient_id", ["a", "b"], Role.IDENTIFIER),
    ("UTILITYID", [7, 7], Role.IDENTIFIER),
    ("row", list(range(1, 30))[::-1], Role.IDENTIFIER),  # a running number
    ("name", [f"person {i}" for i in range(25)], Role.IDENTIFIER),  # distinct text
    ("fnlwgt", [1.5, 2.0], Role.WEIGHT),
    ("sampling_weight", [1.5, 2.0], Role.WEIGHT),
    ("hhid", [1, 1, 2], Role.HOUSEHOLD),
])
def test_suspected_roles(name, values, role):
    assert suspect(name, pd.Series(values))[0] is role


@pytest.mark.parametrize(("name", "values"), [
    ("age", list(range(18, 60))), ("n", list(range(2, 40))), ("household_size", [1, 2]),
    ("education-num", [9, 13]),
    ("income", list(np.arange(30) * 1.5 + 0.25)), ("paid", [1, 2]), ("valid", [0, 1]),
    ("AGI", list(range(100, 130, 3))),  # distinct amounts are not identifiers
])
def test_ordinary_columns_are_not_suspected(name, values):
    assert suspect(name, pd.Series(values)) is None


def test_an_identifier_is_never_averaged_without_a_schema():
    frame = _survey()
    with pytest.raises(InputError, match="column 'id' would be masked, but it may be an "
                                         "identifier"):
        MDAV(k=3).release(frame)
    with pytest.raises(InputError, match="column 'id'"):
        CorrelatedNoise(gamma=0.5).release(frame)
    release = MDAV(k=3).release(frame, roles={"id": "identifier", "wgt": "weight"})
    assert "id" not in release.frame.columns
    assert release.report.identifiers_dropped == ["id"]


def test_a_weight_is_never_changed_and_weights_the_means():
    frame = _survey()
    release = MDAV(k=4).release(frame, roles={"id": "identifier", "wgt": "weight"},
                                round_values=False)
    pd.testing.assert_series_equal(release.frame["wgt"], frame["wgt"])
    assert release.report.weight == "wgt"
    w = frame["wgt"].to_numpy()
    for column in ("age", "income"):
        # the weighted total of every cluster is kept: sum(w x) = sum(w mean_w)
        x, masked = frame[column].to_numpy(float), release.frame[column].to_numpy(float)
        totals = np.bincount(release.labels, weights=w * x)
        assert np.allclose(np.bincount(release.labels, weights=w * masked), totals)
        assert np.allclose(cluster_means(x, release.labels, w)[:, 0],
                           totals / np.bincount(release.labels, weights=w))
    with pytest.raises(InputError, match="'wgt' is the weight column, which is never masked"):
        MDAV(k=4).release(frame, roles={"wgt": "weight"}, columns=["age", "wgt"])


def test_each_stratum_is_protected_on_its_own():
    frame = _survey()
    release = MDAV(k=5).release(frame, roles={"id": "identifier", "wgt": "weight",
                                              "region": "stratum"})
    for label in np.unique(release.labels):
        assert frame.loc[release.labels == label, "region"].nunique() == 1
    assert release.report.n_strata == 2 and release.report.strata == ["region"]
    pd.testing.assert_series_equal(release.frame["region"], frame["region"])
    small = frame.copy()
    small.loc[:2, "region"] = "west"
    with pytest.raises(InputError, match="stratum region=west has 3 record"):
        MDAV(k=5).release(small, roles={"id": "identifier", "wgt": "weight",
                                        "region": "stratum"})


def test_integer_columns_stay_integer_and_decimals_keep_their_precision():
    frame = _survey().drop(columns=["id", "wgt"])
    release = MDAV(k=3).release(frame)
    out = release.frame
    assert out["age"].dtype == np.int64 and out["household_size"].dtype == np.int64
    assert np.array_equal(out["income"], out["income"].round(1))
    assert release.report.rounded == {"age": 0, "household_size": 0, "income": 1}
    assert release.report.k_anonymity["holds"]
    exact = MDAV(k=3).release(frame, round_values=False).frame
    assert exact["age"].dtype == np.float64
    # rounding moves each value by at most half a unit of its last decimal
    assert np.abs(out["age"] - exact["age"]).max() <= 0.5
    assert np.abs(out["income"] - exact["income"]).max() <= 0.05 + 1e-9


def test_tcloseness_rounds_its_quasi_identifiers_too():
    frame = _survey().drop(columns=["id", "wgt"])
    release = TClosenessFirst(k=3, t=0.3).release(frame, quasi=["age", "household_size"],
                                                   confidential=["income"])
    assert release.frame["age"].dtype == np.int64


def test_schema_command_writes_the_roles_to_edit(run_cli, tmp_path):
    source = tmp_path / "survey.csv"
    _survey().to_csv(source, index=False)
    target = tmp_path / "survey.yaml"
    result = run_cli("schema", source, "-o", target)
    assert result.code == 0, result.stderr
    roles = {name: spec["role"] for name, spec in
             yaml.safe_load(target.read_text())["attributes"].items()}
    assert roles == {"id": "identifier", "age": "quasi", "household_size": "quasi",
                     "income": "quasi", "region": "quasi", "wgt": "weight"}
    out = tmp_path / "out.csv"
    refused = run_cli("microaggregate", source, "-o", out, "--k", "3")
    assert refused.code == 2 and "--identifiers/--weight" in refused.stderr
    assert not out.exists()
    done = run_cli("microaggregate", source, "-o", out, "--k", "3", "--identifiers", "id",
                   "--weight", "wgt", "--strata", "region")
    assert done.code == 0, done.stderr
    written = pd.read_csv(out)
    assert "id" not in written.columns and written["age"].dtype == np.int64
    assert run_cli("microaggregate", source, "-o", tmp_path / "o2.csv", "--k", "3",
                   "--schema", target).code == 0


def test_categories_a_frame_holds_are_not_a_declared_domain_for_dp():
    from microagg import dp_laplace
    from microagg.errors import PrivacyError

    frame = pd.DataFrame({"age": [30.0, 40.0, 50.0, 60.0],
                          "job": pd.Categorical(["a", "b", "a", "c"])})
    with pytest.raises(PrivacyError, match="column 'job' has no declared domain"):
        dp_laplace(frame, epsilon=1.0, bounds={"age": (0.0, 100.0)})
