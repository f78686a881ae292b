"""Masking on the Dask engine: the covariance one machine computes, by a map-reduce; noise
drawn per partition from it (correlated noise) or restoring it (multiplicative noise); top and
bottom coding as one machine codes; rank swapping refused."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from microagg.at_scale.dataset import open_dataset
from microagg.at_scale.mask import mask_at_scale
from microagg.at_scale.moments import Moments
from microagg.core.masking import correlated_draw, noise_axes
from microagg.errors import InputError, ParameterError
from microagg.evaluation.utility import sse_percent
from microagg.release.methods import CorrelatedNoise, MultiplicativeNoise, RankSwap

COLUMNS = ["income", "age", "hours"]
SIZES = (700, 0, 900)


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """Three Parquet files (one without rows) of correlated numbers far from zero, an
    identifier and a text column; a schema declaring them; and the whole table."""
    tmp_path = tmp_path_factory.mktemp("mask")
    rng = np.random.default_rng(7)
    frames = []
    for size in SIZES:
        age = rng.uniform(18, 90, size)
        frames.append(pd.DataFrame({
            "id": np.arange(size), "income": 1e6 + 300.0 * age + rng.normal(0, 2e3, size),
            "age": age, "hours": rng.normal(38, 6, size) - 0.1 * age,
            "region": rng.choice(["a", "b"], size)}))
    folder = tmp_path / "in"
    folder.mkdir()
    for i, frame in enumerate(frames):
        frame.to_parquet(folder / f"part-{i}.parquet", index=False)
    schema = tmp_path / "schema.yaml"
    schema.write_text("attributes:\n  id: {kind: numeric, role: identifier}\n"
                      + "".join(f"  {c}: {{kind: numeric, role: quasi}}\n" for c in COLUMNS)
                      + "  region: {kind: nominal, role: other}\n")
    return folder, pd.concat(frames, ignore_index=True), schema


def test_the_moments_of_parts_combined_are_numpys():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5000, 4)) * [1.0, 1e-3, 1e4, 2.0] + [1e8, -5.0, 0.0, 3e5]
    x[:, 3] += 0.5 * x[:, 0] - 5e7  # correlated with a column far from zero
    cuts = [0, 1, 1, 17, 2600, 4999, 5000]  # parts of one record and of none
    shift = x[:100].mean(axis=0)  # the first rows' means, as the cluster takes them
    together = Moments.total(Moments.of(x[a:b], shift)
                             for a, b in itertools.pairwise(cuts))
    expected = np.cov(x, rowvar=False)
    scale = np.sqrt(np.outer(np.diag(expected), np.diag(expected)))
    assert together.n == len(x)
    mean = x.mean(axis=0)  # within rounding of the mean's size or of the column's spread
    assert np.all(np.abs(together.mean - mean) <= 1e-14 * (np.abs(mean) + x.std(axis=0)))
    assert np.all(np.abs(together.covariance() - expected) <= 1e-12 * scale)
    np.testing.assert_allclose(together.variance(), x.var(axis=0), rtol=1e-12)


def test_correlated_noise_is_drawn_per_partition_from_the_whole_tables_covariance(
        client, people, tmp_path):
    folder, whole, _ = people
    method = CorrelatedNoise(gamma=0.2)
    dataset = open_dataset(folder)
    report = mask_at_scale(client, dataset, tmp_path / "out", method, columns=COLUMNS, seed=9)
    written = pd.read_parquet(tmp_path / "out")
    x = whole[COLUMNS].to_numpy()
    # what every partition must have drawn: child i of the seed, along one machine's axes
    scale, axes = noise_axes(np.cov(x, rowvar=False), method.gamma)
    seeds = np.random.SeedSequence(9).spawn(len(dataset.pieces))
    parts = np.split(x, np.cumsum(dataset.sizes)[:-1])
    expected = np.vstack([part + correlated_draw(part.shape, scale, axes,
                                                 np.random.default_rng(s))
                          for part, s in zip(parts, seeds, strict=True)])
    y = written[COLUMNS].to_numpy()
    assert np.all(np.abs(y - expected) <= 1e-9 * x.std(axis=0)), np.abs(y - expected).max(0)
    assert list(written.columns) == ["id", *COLUMNS, "region"]  # no schema: id is a number
    pd.testing.assert_series_equal(written["region"], whole["region"])
    assert report.records == len(whole) and report.partitions >= 2 and report.seeded
    assert report.utility["sse_percent"] == pytest.approx(sse_percent(x, y), rel=1e-9)
    for j, name in enumerate(COLUMNS):
        figures = report.utility["per_attribute"][name]
        assert figures["mean_before"] == pytest.approx(x[:, j].mean(), rel=1e-12)
        assert figures["variance_after"] == pytest.approx(y[:, j].var(), rel=1e-9)
        assert figures["sse"] == pytest.approx(((x[:, j] - y[:, j]) ** 2).sum(), rel=1e-9)


def test_multiplicative_noise_restores_the_whole_tables_moments(client, people, tmp_path):
    folder, whole, _ = people
    method = MultiplicativeNoise(s=0.3)
    runs = {seed: mask_at_scale(client, open_dataset(folder), tmp_path / str(seed), method,
                                columns=COLUMNS, seed=seed) for seed in (1, 2)}
    again = mask_at_scale(client, open_dataset(folder), tmp_path / "again", method,
                          columns=COLUMNS, seed=1)
    x = whole[COLUMNS].to_numpy()
    y = pd.read_parquet(tmp_path / "1")[COLUMNS].to_numpy()
    np.testing.assert_allclose(y.mean(axis=0), x.mean(axis=0), rtol=1e-12)
    covariance = np.cov(x, rowvar=False)
    scale = np.sqrt(np.outer(np.diag(covariance), np.diag(covariance)))
    assert np.all(np.abs(np.cov(y, rowvar=False) - covariance) <= 1e-9 * scale)
    assert np.median(np.abs(y - x) / np.abs(x), axis=0).min() > 1e-3  # every column moved
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "again"),
                                  pd.read_parquet(tmp_path / "1"))
    assert not np.allclose(pd.read_parquet(tmp_path / "2")[COLUMNS].to_numpy(), y)
    assert again.utility == runs[1].utility != runs[2].utility


def test_what_one_machine_refuses_is_refused_in_its_words_and_nothing_written(
        client, people, tmp_path):
    folder, whole, _ = people
    gappy = tmp_path / "gappy"
    gappy.mkdir()
    for i, frame in enumerate((whole.iloc[:700].copy(), whole.iloc[700:].copy())):
        if i == 1:
            frame.iloc[5, frame.columns.get_loc("age")] = np.nan
        frame.to_parquet(gappy / f"part-{i}.parquet", index=False)
    constant = whole.assign(age=40.0, hours=38.0)
    flat = tmp_path / "flat"
    flat.mkdir()
    constant.to_parquet(flat / "part-0.parquet", index=False)
    gaps = pd.concat([pd.read_parquet(p) for p in sorted(gappy.iterdir())], ignore_index=True)
    for source, table, columns, said in ((gappy, gaps, COLUMNS, "missing value in row 706"),
                                         (flat, constant, ["age", "hours"], "no value")):
        for method in (CorrelatedNoise(gamma=0.1), MultiplicativeNoise(s=0.1)):
            with pytest.raises(InputError, match=said) as raised:
                method.release(table, columns=columns, rng=1)
            with pytest.raises(InputError) as ours:
                mask_at_scale(client, open_dataset(source), tmp_path / "out", method,
                              columns=columns, seed=1)
            assert str(ours.value) == str(raised.value)
    with pytest.raises(ParameterError, match="cannot run rank-swap"):
        mask_at_scale(client, open_dataset(folder), tmp_path / "out", RankSwap(fraction=0.1))
    # the refused data sets were written aside and removed: no output, no temporary left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flat", "gappy"]


def test_the_command_on_the_cluster(client, run_cli, people, tmp_path):
    folder, whole, schema = people
    cluster = ["--engine", "dask", "--scheduler", client.scheduler.address]
    done = run_cli("mask", folder, "-o", tmp_path / "out", "--method", "correlated-noise",
                   "--gamma", "0.1", "--schema", schema, "--seed", "4", *cluster, "--json")
    assert done.code == 0, done.stderr
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert json.loads(done.stdout) == report and report["engine"] == "dask"
    assert report["columns"] == COLUMNS and report["identifiers_dropped"] == ["id"]
    assert report["parameters"] == {"gamma": 0.1} and "risk" in report["omitted"]
    assert list(pd.read_parquet(tmp_path / "out").columns) == [*COLUMNS, "region"]
    done = run_cli("mask", folder, "-o", tmp_path / "coded", "--method", "top-bottom-coding",
                   "--top", "0.9", "--at", "quantile", "--columns", "income,age", *cluster)
    assert done.code == 0, done.stderr
    whole.to_parquet(tmp_path / "whole.parquet", index=False)
    local = run_cli("mask", tmp_path / "whole.parquet", "-o", tmp_path / "coded.parquet",
                    "--method", "top-bottom-coding", "--top", "0.9", "--at", "quantile",
                    "--columns", "income,age")
    assert local.code == 0, local.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "coded"),
                                  pd.read_parquet(tmp_path / "coded.parquet"),
                                  check_dtype=False)
    done = run_cli("mask", folder, "-o", tmp_path / "swapped", "--method", "rank-swap",
                   "--fraction", "0.1", *cluster)
    assert done.code == 2 and done.stderr.count("\n") == 1 and "correlated-noise" in \
        done.stderr, done.stderr
    assert not (tmp_path / "swapped").exists()
    for local_only in (["--report", tmp_path / "r.html"], ["--weight", "age"]):
        done = run_cli("mask", folder, "-o", tmp_path / "noisy", "--method",
                       "correlated-noise", "--gamma", "0.1", *local_only, *cluster)
        assert done.code == 2 and done.stderr.count("\n") == 1 and \
            "not available with --engine dask" in done.stderr, done.stderr
    assert not (tmp_path / "noisy").exists()
