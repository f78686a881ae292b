"""The synthetic census: households, geography, keys, determinism, chunks; its export."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg.data.synthetic_census import (
    CITIZENSHIP_CONTINENT,
    COLUMNS,
    census_plan,
    chunk_bounds,
    synthetic_census,
)
from microagg.errors import InputError


def _census(persons: int, **kwargs) -> pd.DataFrame:
    return pd.concat(synthetic_census(persons, **kwargs), ignore_index=True)


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return _census(20_000, seed=5, chunk=3_000)


def test_persons_and_households_are_as_asked(people):
    assert len(people) == 20_000
    assert people["hid"].nunique() == 8_000
    assert list(people.columns) == list(COLUMNS)
    other = _census(1_000, households=900, seed=1)
    assert len(other) == 1_000 and other["hid"].nunique() == 900


def test_household_sizes_and_person_numbers_are_consistent(people):
    by = people.groupby("hid")
    assert (by["hhsize"].first() == by.size()).all()
    assert (by["hhsize"].nunique() == 1).all()
    numbers = people["person"].to_numpy()
    sizes = people["hhsize"].to_numpy()
    assert (by["person"].max() == by.size()).all() and (numbers >= 1).all()
    assert (np.diff(people["hid"].to_numpy()) >= 0).all()  # households are contiguous
    assert sizes.min() == 1 and sizes.max() >= 5  # one-person and large households both


def test_geography_is_nested_and_households_live_in_one_area(people):
    assert ((people["district"] // 100) == people["region"]).all()
    assert ((people["area"] // 100) == people["district"]).all()
    assert (people.groupby("hid")["area"].nunique() == 1).all()
    assert people["region"].between(1, 8).all()
    plan = census_plan(1_000_000, seed=5)
    areas = np.unique(plan.area)
    assert 1_500 <= areas.size <= 2_500 and np.unique(areas // 100).size == 50
    counts = np.unique(plan.area, return_counts=True)[1]
    assert counts.max() > 5 * np.median(counts)  # skewed area populations


def test_keys_follow_age_and_household_roles(people):
    assert people["age"].between(0, 99).all()
    children = people["age"] < 16
    assert (people.loc[children, "marital"] == 1).all()
    assert (people.loc[people["age"] < 15, "activity"] == 0).all()
    assert (people.loc[people["person"] == 1, "age"] >= 18).all()
    assert set(people["marital"]) == {1, 2, 3, 4} and set(people["sex"]) == {1, 2}
    assert set(people["education"]) <= set(range(6)) and set(people["activity"]) <= set(range(6))
    counts = people["citizenship"].value_counts()
    assert counts.index[0] == "national" and 0.8 < counts.iloc[0] / len(people) < 0.97
    assert set(people["citizenship"].cat.categories) == set(CITIZENSHIP_CONTINENT)
    assert (counts[counts > 0] < 10).sum() >= 5  # rare categories
    shared = people.groupby("hid")["citizenship"].nunique()
    assert (shared == 1).mean() > 0.85  # a household's citizenship, as a rule


def test_same_seed_same_census_whatever_the_chunks():
    one = _census(7_000, seed=3, chunk=10**6)
    pieces = _census(7_000, seed=3, chunk=501)
    pd.testing.assert_frame_equal(one, pieces)
    assert len(chunk_bounds(census_plan(7_000, seed=3), 501)) >= 14
    # across the blocks of 65,536 persons and households that draw the random numbers
    whole = _census(70_000, households=66_000, seed=3)
    pd.testing.assert_frame_equal(whole, _census(70_000, households=66_000, seed=3,
                                                 chunk=9_999))
    other = _census(7_000, seed=4)
    assert not one[["age", "sex", "area"]].equals(other[["age", "sex", "area"]])


def test_out_of_range_sizes_are_refused():
    with pytest.raises(InputError, match="at least 1 person"):
        census_plan(0)
    with pytest.raises(InputError, match="between 1 and 5 households"):
        census_plan(5, households=9)
    # households of 50,000 persons on average would not fit the sizes' 16 bits
    with pytest.raises(InputError, match="between 1,000 and 100,000 households"):
        census_plan(100_000, households=2)
    assert census_plan(100_000, households=1_000).size.min() >= 1
    with pytest.raises(InputError, match="seed must be at least 0"):
        census_plan(10, seed=-1)


def test_export_writes_csv_parquet_and_a_dataset(run_cli, tmp_path):
    base = ["datasets", "export", "census-synthetic", "--persons", "3000", "--seed", "2"]
    expected = _census(3_000, seed=2)
    for target in ("c.csv", "c.parquet", "parts"):
        done = run_cli(*base, "-o", tmp_path / target)
        assert done.code == 0, done.stderr
        assert "3,000 persons in 1,200 households" in done.stdout
    read = pd.read_csv(tmp_path / "c.csv", keep_default_na=False)
    assert read["age"].tolist() == expected["age"].tolist()
    assert read["citizenship"].tolist() == expected["citizenship"].astype(str).tolist()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "c.parquet"), expected)
    parts = pd.read_parquet(tmp_path / "parts")
    assert parts["hid"].tolist() == expected["hid"].tolist()
    assert (tmp_path / "parts" / "part-00000.parquet").exists()


def test_export_to_a_url_is_a_complete_dataset(run_cli):
    import fsspec

    url = "memory://census-export-test/census"
    done = run_cli("datasets", "export", "census-synthetic", "--persons", "2500", "-o", url)
    assert done.code == 0, done.stderr
    fs = fsspec.filesystem("memory")
    try:
        names = {name.rpartition("/")[2] for name in fs.ls(url, detail=False)}
        assert names == {"_SUCCESS", "part-00000.parquet"}
        with fs.open(f"{url}/part-00000.parquet", "rb") as handle:
            pd.testing.assert_frame_equal(pd.read_parquet(handle), _census(2_500))
    finally:
        fs.rm("memory://census-export-test", recursive=True)


@pytest.mark.parametrize(("args", "message"), [
    (["census-synthetic", "--n", "5", "-o", "x.csv"],
     "--n applies to the synthetic data set only"),
    (["census", "--persons", "5", "-o", "x.csv"],
     "--persons applies to the census-synthetic data set only"),
    (["census-synthetic", "--drop-incomplete", "-o", "x.csv"],
     "--drop-incomplete applies to the adult data sets only"),
    (["eia", "--seed", "5", "-o", "x.csv"],
     "--seed applies to the synthetic and census-synthetic data sets only"),
    (["census-synthetic", "--persons", "5", "-o", "x.sav"], "not as .sav"),
    (["census-synthetic", "--persons", "5", "--households", "6", "-o", "x.csv"],
     "between 1 and 5 households"),
    (["census-synthetic", "--persons", "100000", "--households", "2", "-o", "x.csv"],
     "between 1,000 and 100,000 households"),
    (["census-synthetic", "--persons", "5", "--seed", "-1", "-o", "x.csv"],
     "seed must be at least 0"),
])
def test_export_refuses_in_one_line(run_cli, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    done = run_cli("datasets", "export", *args)
    assert done.code == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "x.sav").exists()
