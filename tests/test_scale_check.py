"""l-diversity and t-closeness on the Dask engine give, figure for figure, what one machine
gives on the whole table (the k-anonymity check: tests/test_scale_per_record.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg.at_scale.check import check_at_scale
from microagg.at_scale.dataset import open_dataset
from microagg.evaluation.check import check_table

KEYS = ["region", "edu"]


@pytest.fixture(scope="module")
def survey(tmp_path_factory):
    """Three Parquet files of keys and a sensitive attribute with missing values (records
    whose keys are all missing among them, a class of one sensitive value), and the whole
    table."""
    rng = np.random.default_rng(5)
    frames = []
    for size in (120, 90, 150):
        frame = pd.DataFrame({
            "region": rng.choice(["north", "south", "east"], size),
            "edu": rng.choice(["low", "mid", "high"], size, p=[0.5, 0.4, 0.1]),
            "s": rng.choice(["a", "b", "c", "d"], size, p=[0.55, 0.25, 0.15, 0.05]),
            "x": rng.integers(0, 6, size).astype(float)})
        frame.loc[rng.random(size) < 0.08, "region"] = None
        frame.loc[rng.random(size) < 0.05, "edu"] = None
        frame.loc[rng.random(size) < 0.05, "s"] = None
        frame.loc[:1, KEYS] = None  # all keys missing
        frames.append(frame)
    frames[1].loc[5:7, ["region", "edu", "s"]] = ["west", "low", "a"]  # one value only
    folder = tmp_path_factory.mktemp("check") / "in"
    folder.mkdir()
    for i, frame in enumerate(frames):
        frame.to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder, pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("missing", ["matches-any", "category"])
@pytest.mark.parametrize(("kind", "least"), [("distinct", 4), ("entropy", 3), ("recursive", 2.5)])
def test_l_diversity_on_the_cluster_is_that_of_the_whole_table(client, survey, kind, least,
                                                                missing):
    folder, whole = survey
    asked = {"l": least, "sensitive": "s", "l_kind": kind, "l_c": 1.5}
    ours = check_at_scale(client, open_dataset(folder), KEYS, None, missing, **asked)
    theirs = check_table(whole, quasi=KEYS, missing=missing, **asked)
    assert ours.l_diversity is not None and theirs.l_diversity is not None
    assert ours.l_diversity.smallest == pytest.approx(theirs.l_diversity.smallest)
    assert ours.l_diversity.violations == theirs.l_diversity.violations > 0
    assert theirs.l_diversity.violations < len(whole)
    assert not ours.holds and ours.records == theirs.records == len(whole)
    assert ours.missing_values == theirs.missing_values
    mine, one = ours.to_dict(), theirs.to_dict()
    assert mine["l_diversity"].pop("smallest") == pytest.approx(
        one["l_diversity"].pop("smallest"))
    assert mine == one


def test_the_command_on_the_cluster_exits_as_one_machine(client, run_cli, survey):
    folder, whole = survey
    table = folder.parent / "whole.parquet"
    whole.to_parquet(table, index=False)
    cluster = ["--engine", "dask", "--scheduler", client.scheduler.address]
    quasi = ["--quasi", ",".join(KEYS)]
    for asked, code in ((["--l", "2", "--sensitive", "s"], 0),
                        (["--l", "4", "--sensitive", "s"], 1),
                        (["--t", "0.3", "--confidential", "s,x"], 0),
                        (["--t", "0.3", "--confidential", "s", "--missing", "category"], 1)):
        asked = [*asked, *quasi]
        ours, theirs = run_cli("check", folder, *asked, *cluster), run_cli("check", table, *asked)
        assert ours.code == theirs.code == code, ours.stderr
        assert ours.stdout == theirs.stdout and "of s" in ours.stdout
    done = run_cli("check", folder, "--t", "0.3", "--confidential", "s", "--distance",
                   "hierarchical", *quasi, *cluster)
    assert done.code == 2 and done.stderr.count("\n") == 1
    assert "check the hierarchical one with --engine local" in done.stderr
    for args in (["--confidential", "x", "--distance", "equal"],  # x is numeric
                 ["--confidential", "s", "--distance", "ordered"]):
        ours = run_cli("check", folder, "--t", "0.3", *args, *quasi, *cluster)
        theirs = run_cli("check", table, "--t", "0.3", *args, *quasi)
        assert ours.code == theirs.code == 2 and ours.stderr == theirs.stderr


@pytest.mark.parametrize("missing", ["matches-any", "category"])
def test_t_closeness_on_the_cluster_is_that_of_the_whole_table(client, survey, missing):
    folder, whole = survey
    asked = {"t": 0.3, "confidential": ["s", "x"]}  # nominal with missing values; numeric
    ours = check_at_scale(client, open_dataset(folder), KEYS, None, missing, **asked)
    theirs = check_table(whole, quasi=KEYS, missing=missing, **asked)
    assert ours.t_closeness is not None and theirs.t_closeness is not None
    for mine, one in zip(ours.t_closeness, theirs.t_closeness, strict=True):
        assert mine.report.distance == one.report.distance
        assert mine.report.t == pytest.approx(one.report.t)
        assert np.sort(mine.report.emd) == pytest.approx(np.sort(one.report.emd))
    # the class of one value is far from the table when missing values match nothing else
    assert ours.holds is theirs.holds is (missing == "matches-any")
    assert {c.report.distance.value for c in ours.t_closeness} == {"equal", "ordered"}


def test_an_ordinal_attribute_is_ordered_by_the_schema(client, survey, tmp_path):
    from microagg.data.schema import Attribute, Schema
    from microagg.errors import InputError

    folder, whole = survey
    present = whole[whole["s"].notna()].reset_index(drop=True)
    parts = tmp_path / "present"
    parts.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(present)), 3)):
        present.iloc[rows].to_parquet(parts / f"part-{i}.parquet", index=False)
    found = []
    for order in (("a", "b", "c", "d"), ("d", "a", "c", "b")):
        schema = Schema([Attribute("region", kind="nominal"), Attribute("edu", kind="nominal"),
                         Attribute("s", role="confidential", kind="ordinal", domain=order)])
        asked = {"t": 0.3, "confidential": ["s"], "schema": schema}
        ours = check_at_scale(client, open_dataset(parts), KEYS, **asked)
        theirs = check_table(present, quasi=KEYS, **asked)
        assert ours.t_closeness is not None and theirs.t_closeness is not None
        assert ours.t_closeness[0].report.t == pytest.approx(theirs.t_closeness[0].report.t)
        found.append(ours.t_closeness[0].report.t)
    assert found[0] != pytest.approx(found[1])  # the order of the levels is the schema's
    with pytest.raises(InputError) as theirs_error:
        check_table(whole, schema=schema, quasi=KEYS, t=0.3, confidential=["s"])
    with pytest.raises(InputError) as ours_error:  # a missing value has no place in the order
        check_at_scale(client, open_dataset(folder), KEYS, t=0.3, confidential=["s"],
                       schema=schema)
    assert str(ours_error.value) == str(theirs_error.value)
