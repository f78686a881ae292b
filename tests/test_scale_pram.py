"""Invariant PRAM on the Dask engine: the matrices one machine builds, from frequencies
counted on the cluster; draws seeded per partition that keep the categories, the missing
values and, in expectation, the marginal."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from microagg.at_scale.dataset import open_dataset
from microagg.at_scale.pram import pram_at_scale
from microagg.data.schema import Schema
from microagg.errors import InputError
from microagg.release.methods import InvariantPram

KEYS = ["region", "edu"]


@pytest.fixture(scope="module")
def survey(tmp_path_factory):
    """Three Parquet files (one without rows) of keys with missing values, a sampling weight,
    an identifier and a numeric column; a schema declaring them; and the whole table."""
    tmp_path = tmp_path_factory.mktemp("pram")
    rng = np.random.default_rng(11)
    frames = []
    for size in (9000, 0, 11000):
        frame = pd.DataFrame({
            "id": np.arange(size), "region": rng.choice(["n", "s", "e", "w", "c"], size,
                                                        p=[0.4, 0.3, 0.15, 0.1, 0.05]),
            "edu": rng.choice(["low", "mid", "high"], size, p=[0.6, 0.3, 0.1]),
            "w": rng.uniform(1, 50, size).round(2), "x": rng.normal(size=size)})
        frame.loc[rng.random(size) < 0.03, "edu"] = None
        frames.append(frame)
    folder = tmp_path / "in"
    folder.mkdir()
    for i, frame in enumerate(frames):
        frame.to_parquet(folder / f"part-{i}.parquet", index=False)
    (tmp_path / "schema.yaml").write_text(
        "attributes:\n  id: {kind: numeric, role: identifier}\n"
        "  region: {kind: nominal, role: quasi}\n  edu: {kind: nominal, role: quasi}\n"
        "  w: {kind: numeric, role: weight}\n")
    return folder, pd.concat(frames, ignore_index=True), tmp_path / "schema.yaml"


def _run(client, folder, out, seed, method=None, schema=None, keys=KEYS):
    report = pram_at_scale(client, open_dataset(folder), out, method or InvariantPram(),
                           keys=keys, schema=schema, seed=seed)
    return report, pd.read_parquet(out)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_matrices_are_those_of_one_machine(client, survey, tmp_path, weighted):
    folder, whole, schema_path = survey
    schema = Schema.load(schema_path) if weighted else None
    method = InvariantPram(retention=0.7, alpha=0.8)
    report, _ = _run(client, folder, tmp_path / "out", 1, method, schema)
    local = method.release(whole, keys=KEYS, schema=schema, rng=1).report
    assert len(report.matrices) == len(local.matrices) == 2
    for ours, theirs in zip(report.matrices, local.matrices, strict=True):
        assert (ours.column, ours.categories) == (theirs.column, theirs.categories)
        np.testing.assert_allclose(ours.marginal, theirs.marginal, rtol=1e-12)
        np.testing.assert_allclose(ours.matrix, theirs.matrix, rtol=1e-12, atol=1e-15)
    assert report.marginal == local.marginal and report.weight == local.weight
    assert report.before == {**report.before, "smallest_class": local.before.smallest_class,
                             "sample_uniques": local.before.sample_uniques,
                             "classes": local.before.classes}
    if not weighted:  # counts are integers: the same matrix to the last bit
        assert [m.matrix for m in report.matrices] == [m.matrix for m in local.matrices]


def test_the_draws_keep_categories_missing_values_and_the_marginal(client, survey, tmp_path):
    folder, whole, schema_path = survey
    report, written = _run(client, folder, tmp_path / "out", 7,
                           schema=Schema.load(schema_path))
    assert "id" not in written and report.identifiers_dropped == ["id"]
    pd.testing.assert_frame_equal(written[["w", "x"]], whole[["w", "x"]])
    for key in KEYS:
        before, after = whole[key], written[key]
        assert (before.isna() == after.isna()).all()
        assert set(after.dropna()) <= set(before.dropna())
        assert report.changed_values[key] == int((before != after)[before.notna()].sum()) > 0
    # unweighted: the expected count of every category after is its count before (p'R = p')
    report, written = _run(client, folder, tmp_path / "plain", 7, InvariantPram(alpha=1.0))
    for entry in report.matrices:
        R = np.array(entry.matrix)
        codes = pd.Index(entry.categories).get_indexer(whole[entry.column].dropna())
        expected = R[codes].sum(axis=0)
        spread = np.sqrt((R[codes] * (1 - R[codes])).sum(axis=0))
        counts = written[entry.column].value_counts().reindex(entry.categories).to_numpy()
        np.testing.assert_allclose(expected, np.bincount(codes, minlength=len(R)))
        assert np.all(np.abs(counts - expected) <= 4 * spread), (entry.column, counts, expected)


def test_a_seed_draws_the_same_data_set_and_another_seed_another(client, survey, tmp_path):
    folder, _, _ = survey
    first = _run(client, folder, tmp_path / "a", 3)[1]
    again = _run(client, folder, tmp_path / "b", 3)[1]
    other = _run(client, folder, tmp_path / "c", 4)[1]
    pd.testing.assert_frame_equal(first, again)
    assert not first["region"].equals(other["region"])


def test_keys_that_cannot_change_or_strata_are_refused_and_nothing_written(client, survey,
                                                                          tmp_path):
    folder, whole, schema_path = survey
    with pytest.raises(InputError, match="PRAM can change no value") as raised:
        InvariantPram().release(whole.assign(edu="low"), keys=["edu"])
    single = tmp_path / "single"
    single.mkdir()
    whole.assign(edu="low").to_parquet(single / "part-0.parquet", index=False)
    with pytest.raises(InputError) as ours:
        _run(client, single, tmp_path / "out", 1, keys=["edu"])
    assert str(ours.value) == str(raised.value)
    stratified = tmp_path / "strata.yaml"
    stratified.write_text(schema_path.read_text().replace(
        "role: identifier", "role: stratum"))
    with pytest.raises(InputError, match="strata are redrawn on one machine"):
        _run(client, folder, tmp_path / "out", 1, schema=Schema.load(stratified))
    assert not (tmp_path / "out").exists()


def test_the_command_on_the_cluster(client, run_cli, survey, tmp_path):
    folder, whole, schema = survey
    cluster = ["--engine", "dask", "--scheduler", client.scheduler.address]
    done = run_cli("pram", folder, "-o", tmp_path / "out", "--schema", schema, "--seed", "5",
                   "--alpha", "0.6", *cluster, "--json")
    assert done.code == 0, done.stderr
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert json.loads(done.stdout) == report and report["engine"] == "dask"
    assert report["keys"] == KEYS and report["seeded"] and report["alpha"] == 0.6
    assert len(pd.read_parquet(tmp_path / "out")) == len(whole)
    done = run_cli("pram", folder, "-o", tmp_path / "o2", "--keys", "region", "--seed", "5",
                   "--thousands", ".", *cluster)
    assert done.code == 2 and done.stderr.strip() == \
        "microagg: error: --thousands is not available with --engine dask", done.stderr
    assert not (tmp_path / "o2").exists()


def test_small_integer_keys_are_drawn_and_keep_their_type(client, tmp_path):
    """Keys stored as int8 (as census-synthetic writes them): the drawn values are written
    back as int8, values the column held."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"sex": rng.integers(1, 3, 4000).astype(np.int8),
                          "x": rng.normal(size=4000)})
    frame.to_parquet(tmp_path / "in.parquet", index=False, row_group_size=1000)
    report = pram_at_scale(client, open_dataset(tmp_path / "in.parquet",
                                                rows_per_partition=1000),
                           tmp_path / "out", InvariantPram(), keys=["sex"], seed=2)
    written = pd.read_parquet(tmp_path / "out")
    assert written["sex"].dtype == np.int8 and set(written["sex"]) <= {1, 2}
    assert report.changed_values["sex"] == int((written["sex"] != frame["sex"]).sum()) > 0
