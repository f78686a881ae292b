"""``microagg risk --engine dask``: the frequency-based measures by one group-by on a
LocalCluster of 2 workers are those of one machine (microagg.categorical_risk), records in
input order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from microagg import categorical_risk
from microagg.at_scale.dataset import open_dataset
from microagg.at_scale.risk import risk_at_scale
from microagg.errors import InputError

KEYS = ["sex", "region", "age"]


@pytest.fixture
def survey_parts(tmp_path):
    """Three Parquet files (one empty) of keys with missing values (None, NaN and a blank
    text) and a weight; and the whole table."""
    rng = np.random.default_rng(8)
    frames = []
    for size in (700, 0, 900):
        frame = pd.DataFrame({"sex": rng.choice(["f", "m"], size),
                              "region": rng.choice(["n", "s", "e", "w", ""], size,
                                                   p=[.3, .3, .2, .18, .02]),
                              "age": rng.choice([20.0, 30.0, 40.0, 50.0, 60.0], size),
                              "w": rng.uniform(1, 300, size)})
        frame.loc[rng.random(size) < 0.05, "region"] = None
        frame.loc[rng.random(size) < 0.05, "age"] = np.nan
        frames.append(frame)
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, frame in enumerate(frames):
        frame.to_parquet(folder / f"part-{i}.parquet", row_group_size=250)
    return folder, pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("missing", ["matches-any", "category"])
@pytest.mark.parametrize("weight", ["w", None])
def test_the_measures_are_those_of_one_machine(client, survey_parts, tmp_path, missing,
                                               weight):
    folder, whole = survey_parts
    out = tmp_path / "records"
    result = risk_at_scale(client, open_dataset(folder, rows_per_partition=500), KEYS,
                           weight=weight, missing=missing, k=[4], records_out=out)
    local = categorical_risk(whole, KEYS, weight=weight, missing=missing, k=[4])
    ours, theirs = result.to_dict(), local.to_dict()
    for key in ("n", "keys", "weight", "missing", "sample_uniques", "violations",
                "weighted_violations"):
        assert ours[key] == theirs[key], key
    for key in ("global_risk", "expected_reidentifications", "largest_risk"):
        assert ours[key] == pytest.approx(theirs[key], rel=1e-12), key
    assert ours["suda"] is None and "suda" in ours["skipped"]
    records = pd.read_parquet(out)
    expected = local.records()[["fk", "Fk", "risk"]]
    assert records["fk"].tolist() == expected["fk"].tolist()
    np.testing.assert_allclose(records["Fk"], expected["Fk"], rtol=1e-12)
    np.testing.assert_allclose(records["risk"], expected["risk"], rtol=1e-12)


def test_refusals(client, survey_parts):
    folder, _ = survey_parts
    dataset = open_dataset(folder)
    with pytest.raises(InputError, match="'nowhere' is not in"):
        risk_at_scale(client, dataset, ["sex", "nowhere"])
    with pytest.raises(InputError, match="also a key"):
        risk_at_scale(client, dataset, KEYS, weight="sex")
    with pytest.raises(InputError, match="weight column 'age'"):
        risk_at_scale(client, dataset, ["sex"], weight="age")  # missing ages


def test_command_line(survey_parts, tmp_path, run_cli):
    folder, whole = survey_parts
    done = run_cli("risk", folder, "--keys", "sex,region,age", "--weight", "w", "--engine",
                   "dask", "--workers", "2", "--records-out", tmp_path / "r", "--k", "7")
    assert done.code == 0, done.stderr
    assert "not measured with --engine dask: suda" in done.stdout
    assert len(pd.read_parquet(tmp_path / "r")) == len(whole)
    refused = run_cli("risk", folder, "--keys", "sex", "--sensitive", "age", "--engine",
                      "dask")
    assert refused.code == 2 and "--sensitive is not available with --engine dask" in (
        refused.stderr)


@pytest.mark.parametrize("weight", ["w", None])
def test_the_household_risk_is_that_of_one_machine(client, survey_parts, tmp_path, weight):
    """Households of 1-4 records, some cut by a partition's edge (their partial sums meet on
    the client): the household risk and each record's are one machine's."""
    _, whole = survey_parts
    rng = np.random.default_rng(2)
    hid = np.repeat(np.arange(len(whole)), rng.integers(1, 5, len(whole)))[:len(whole)]
    whole = whole.assign(hid=hid * 7 + 1000)  # any values, not row numbers
    homes = tmp_path / "homes"
    homes.mkdir()
    whole.iloc[:700].to_parquet(homes / "part-0.parquet", row_group_size=250)
    whole.iloc[700:].to_parquet(homes / "part-1.parquet", row_group_size=250)
    dataset = open_dataset(homes, rows_per_partition=250)
    assert len(dataset.pieces) > 4
    result = risk_at_scale(client, dataset, KEYS, weight=weight, household="hid",
                           records_out=tmp_path / "records")
    local = categorical_risk(whole, KEYS, weight=weight, household="hid")
    ours, theirs = result.to_dict()["household_risk"], local.to_dict()["household_risk"]
    assert ours["column"] == theirs["column"] == "hid"
    for key in ("expected_reidentifications", "global_risk", "global_risk_percent"):
        assert ours[key] == pytest.approx(theirs[key], rel=1e-12), key
    assert ours["expected_reidentifications"] > result.to_dict()["expected_reidentifications"]
    assert "household_risk" not in result.to_dict()["skipped"]
    records = pd.read_parquet(tmp_path / "records")
    assert list(records.columns[:4]) == ["fk", "Fk", "risk", "household_risk"]
    np.testing.assert_allclose(records["household_risk"], local.records()["household_risk"],
                               rtol=1e-12)
    # a household's risk is 1 - prod(1 - r) over its members, whichever partition holds them
    by_hand = 1 - (1 - records["risk"]).groupby(whole["hid"].to_numpy()).prod()
    np.testing.assert_allclose(records["household_risk"], by_hand.loc[whole["hid"]],
                               rtol=1e-10)  # 1 - prod(...) loses digits for small risks


def test_a_record_without_its_household_is_refused(client, survey_parts, tmp_path):
    _, whole = survey_parts
    whole = whole.assign(hid=np.arange(len(whole), dtype=float))
    whole.loc[900, "hid"] = np.nan
    whole.to_parquet(tmp_path / "homes.parquet")
    with pytest.raises(InputError, match=r"household column .hid.: a record of .* has none"):
        risk_at_scale(client, open_dataset(tmp_path / "homes.parquet"), KEYS, household="hid")
    with pytest.raises(InputError, match="also a key variable"):
        risk_at_scale(client, open_dataset(tmp_path / "homes.parquet"), KEYS,
                      household="sex")
