"""Global recoding, local suppression and the k-anonymity check on the Dask engine give, row
for row and figure for figure, what one machine gives on the whole table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from microagg.at_scale.check import check_at_scale
from microagg.at_scale.dataset import open_dataset
from microagg.at_scale.per_record import per_record_at_scale
from microagg.at_scale.suppress import suppress_at_scale
from microagg.data.schema import Schema
from microagg.errors import ParameterError
from microagg.evaluation.check import check_table
from microagg.release.methods import GlobalRecoding, LocalSuppression

KEYS = ["region", "edu", "age"]


@pytest.fixture
def survey(tmp_path):
    """Three Parquet files (one without rows) of keys with missing values, records whose keys
    are all missing, a taxonomy file and a schema naming it; and the whole table."""
    rng = np.random.default_rng(3)
    frames = []
    for size in (800, 0, 1100):
        frame = pd.DataFrame({
            "region": rng.choice(["north", "south", "east", "west"], size),
            "edu": rng.choice(["low", "mid", "high"], size, p=[0.5, 0.4, 0.1]),
            "age": rng.integers(16, 90, size).astype(float), "x": rng.normal(size=size)})
        frame.loc[rng.random(size) < 0.05, "region"] = None
        frame.loc[rng.random(size) < 0.05, "age"] = np.nan
        frame.loc[:2, KEYS] = None  # all keys missing
        frames.append(frame)
    folder = tmp_path / "in"
    folder.mkdir()
    for i, frame in enumerate(frames):
        frame.to_parquet(folder / f"part-{i}.parquet", index=False)
    (tmp_path / "regions.yaml").write_text("any:\n  north-west: [north, west]\n"
                                           "  south-east: [south, east]\n")
    (tmp_path / "schema.yaml").write_text(
        "attributes:\n  region: {kind: nominal, role: quasi, taxonomy: regions.yaml}\n"
        "  edu: {kind: nominal, role: quasi}\n  age: {kind: numeric, role: quasi}\n")
    whole = pd.concat(frames, ignore_index=True)
    return folder, whole, Schema.load(tmp_path / "schema.yaml")


@pytest.mark.parametrize("closed", ["left", "right"])
def test_recoding_on_the_cluster_is_the_recoding_of_the_whole_table(client, survey, tmp_path,
                                                                      closed):
    folder, whole, schema = survey
    method = GlobalRecoding(levels={"region": 1}, breaks={"age": [-np.inf, 30, 45, 60, np.inf]},
                            closed=closed)
    report = per_record_at_scale(client, open_dataset(folder), tmp_path / "out", method,
                                 schema=schema, keys=KEYS)
    local = method.release(whole, keys=KEYS, schema=schema)
    written = pd.read_parquet(tmp_path / "out")
    assert written.astype(str).equals(local.frame.astype(str))
    assert written["region"].dropna().isin(["north-west", "south-east"]).all()
    assert report.records == len(whole) and report.changed == ["region", "age"]
    for ours, theirs in ((report.before, local.report.before),
                         (report.after, local.report.after)):
        assert ours["smallest_class"] == theirs.smallest_class
        assert ours["sample_uniques"] == theirs.sample_uniques
        assert ours["classes"] == theirs.classes
        assert ours["all_missing"] == theirs.all_missing == 6
        assert ours["below_k"] == theirs.below_k
    assert report.after["smallest_class"] > report.before["smallest_class"]


def test_a_method_that_reads_other_records_is_refused_by_name(client, survey, tmp_path):
    folder, _, schema = survey
    with pytest.raises(ParameterError, match="dask cannot run local-suppression"):
        per_record_at_scale(client, open_dataset(folder), tmp_path / "out",
                            LocalSuppression(k=3), schema=schema, keys=KEYS)
    assert not (tmp_path / "out").exists()


def test_suppression_on_the_cluster_is_the_suppression_of_the_whole_table(client, survey,
                                                                          tmp_path):
    folder, whole, _ = survey
    method = LocalSuppression(k=8, importance=("edu",))
    report = suppress_at_scale(client, open_dataset(folder), tmp_path / "out", method,
                               ["region", "edu", "age"])
    local = method.release(whole, keys=KEYS)
    written = pd.read_parquet(tmp_path / "out")
    assert written.astype(str).equals(local.frame.astype(str))
    assert report.total_suppressions == local.report.total_suppressions > 0
    assert report.suppressions == local.report.suppressions
    assert report.importance == local.report.importance
    assert report.k_anonymity == {"k": 8, "smallest_class": local.report.after.smallest_class,
                                  "holds": True}
    assert report.before["smallest_class"] == local.report.before.smallest_class < 8
    with pytest.raises(ParameterError, match="`combinations` is checked on one machine"):
        suppress_at_scale(client, open_dataset(folder), tmp_path / "out2",
                          LocalSuppression(k=8, combinations=(2,)), KEYS)


@pytest.mark.parametrize("missing", ["matches-any", "category"])
def test_the_check_on_the_cluster_is_the_check_of_the_whole_table(client, survey, missing):
    folder, whole, _ = survey
    ours = check_at_scale(client, open_dataset(folder), KEYS, 3, missing)
    theirs = check_table(whole, k=3, quasi=KEYS, missing=missing)
    assert ours.to_dict() == theirs.to_dict()
    assert ours.missing_values and ours.k_anonymity is not None
    assert ours.k_anonymity.report.all_missing == 6


def test_the_commands_on_the_cluster(client, run_cli, survey, tmp_path):
    folder, whole, _ = survey
    schema = str(tmp_path / "schema.yaml")
    cluster = ["--engine", "dask", "--scheduler", client.scheduler.address]
    done = run_cli("recode", folder, "-o", tmp_path / "rec", "--levels", "region=1",
                   "--keys", ",".join(KEYS), "--schema", schema, *cluster, "--json")
    assert done.code == 0, done.stderr
    report = json.loads((tmp_path / "rec.report.json").read_text())
    assert json.loads(done.stdout) == report and report["engine"] == "dask"
    assert len(pd.read_parquet(tmp_path / "rec")) == len(whole)
    done = run_cli("check", tmp_path / "rec", "--k", "2", "--quasi", ",".join(KEYS), *cluster)
    assert done.code in (0, 1) and "k-anonymity over region, edu, age" in done.stdout
    done = run_cli("recode", folder, "-o", tmp_path / "r2", "--breaks", "age=0:50:100",
                   "--decimal", ",", "--engine", "dask")
    said = "--decimal is not available with --engine dask"
    assert done.code == 2 and done.stderr.strip() == f"microagg: error: {said}", done.stderr
    assert not (tmp_path / "r2").exists()
