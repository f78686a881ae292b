"""Top and bottom coding on the Dask engine: the quantiles one machine takes, found without
gathering a column, and the values one machine writes, row for row."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from microagg.at_scale.dataset import open_dataset
from microagg.at_scale.topcode import order_statistic, quantile_rank, topcode_at_scale
from microagg.errors import InputError
from microagg.release.methods import TopBottomCoding


@pytest.fixture
def incomes(tmp_path):
    """Three Parquet files (one without rows) of skewed numbers with ties, missing values
    and an infinite value, an identifier and a text column; and the whole table."""
    rng = np.random.default_rng(5)
    frames = []
    for size in (700, 0, 900):
        frame = pd.DataFrame({
            "id": np.arange(size), "income": np.round(rng.lognormal(8, 1.2, size), -1),
            "age": rng.integers(16, 95, size).astype(float),
            "region": rng.choice(["a", "b"], size)})
        frame.loc[rng.random(size) < 0.05, "income"] = np.nan
        frames.append(frame)
    frames[2].loc[3, "age"] = np.inf
    folder = tmp_path / "in"
    folder.mkdir()
    for i, frame in enumerate(frames):
        frame.to_parquet(folder / f"part-{i}.parquet", index=False)
    (tmp_path / "schema.yaml").write_text(
        "attributes:\n  id: {kind: numeric, role: identifier}\n"
        "  income: {kind: numeric, role: quasi}\n  age: {kind: numeric, role: quasi}\n"
        "  region: {kind: nominal, role: other}\n")
    return folder, pd.concat(frames, ignore_index=True)


def test_the_rank_of_a_quantile_is_numpys():
    for n in (1, 2, 3, 7, 10, 99, 1000, 12345):
        values = np.arange(n, dtype=float)
        for q in (0.0, 0.001, 0.1, 0.25, 1 / 3, 0.5, 0.7, 0.9, 0.95, 0.99, 0.999, 1.0):
            expected = np.quantile(values, q, method="inverted_cdf")
            assert quantile_rank(n, q) == int(expected), (n, q)


def test_an_order_statistic_is_found_without_gathering_the_column(client):
    rng = np.random.default_rng(2)
    parts = [np.sort(rng.integers(0, 50, 3000)).astype(float), np.empty(0),
             np.sort(rng.uniform(0, 50, 5000)), np.array([25.0])]
    parts[2][-10:] = np.inf  # ties, distinct values and infinities, as a column may hold
    held = client.scatter([[p] for p in parts])
    whole = np.sort(np.concatenate(parts))
    for rank in (0, 4000, 4001, whole.size - 11, whole.size - 1):
        assert order_statistic(client, held, 0, rank, gathered=256) == whole[rank]


@pytest.mark.parametrize("method", [
    TopBottomCoding(top=20000.0, bottom=500.0),
    TopBottomCoding(top=0.9, bottom=0.05, at="quantile"),
    TopBottomCoding(top=0.99, at="quantile")])
def test_coding_on_the_cluster_is_the_coding_of_the_whole_table(client, incomes, tmp_path,
                                                                 method):
    folder, whole = incomes
    columns = ["income", "age"]
    report = topcode_at_scale(client, open_dataset(folder), tmp_path / "out", method,
                              columns=columns)
    local = method.release(whole, columns=columns)
    written = pd.read_parquet(tmp_path / "out")
    pd.testing.assert_frame_equal(written, local.frame, check_dtype=False)
    values = whole[columns].to_numpy()
    low, high = method.thresholds(values)
    for j, name in enumerate(columns):
        assert report.thresholds[name] == {
            "bottom": float(low[j]) if np.isfinite(low[j]) else None,
            "top": float(high[j]) if np.isfinite(high[j]) else None}
        present = values[:, j][~np.isnan(values[:, j])]
        assert report.coded[name] == {"bottom": int((present < low[j]).sum()),
                                      "top": int((present > high[j]).sum())}
    assert report.coded["income"]["top"] > 0
    assert report.columns == local.report.columns
    assert report.released_unchanged == local.report.released_unchanged
    assert report.records == len(whole) and report.partitions >= 2


def test_a_coding_that_changes_nothing_is_refused_and_nothing_written(client, incomes,
                                                                      tmp_path):
    folder, whole = incomes
    method = TopBottomCoding(top=1e12)
    with pytest.raises(InputError, match="changes no value") as raised:
        method.release(whole, columns=["income"])
    with pytest.raises(InputError) as ours:
        topcode_at_scale(client, open_dataset(folder), tmp_path / "out", method,
                         columns=["income"])
    assert str(ours.value) == str(raised.value)
    assert not (tmp_path / "out").exists()


def test_the_command_on_the_cluster(client, run_cli, incomes, tmp_path):
    folder, whole = incomes
    cluster = ["--engine", "dask", "--scheduler", client.scheduler.address]
    done = run_cli("topcode", folder, "-o", tmp_path / "out", "--top", "0.95", "--at",
                   "quantile", "--schema", tmp_path / "schema.yaml", *cluster, "--json")
    assert done.code == 0, done.stderr
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert json.loads(done.stdout) == report and report["engine"] == "dask"
    assert report["columns"] == ["income", "age"] and report["identifiers_dropped"] == ["id"]
    written = pd.read_parquet(tmp_path / "out")
    assert "id" not in written and len(written) == len(whole)
    assert written["income"].max() == report["thresholds"]["income"]["top"]
    done = run_cli("topcode", folder, "-o", tmp_path / "kept", "--top", "1e12",
                   "--columns", "income", *cluster)
    assert done.code == 2 and done.stderr.count("\n") == 1 and "changes no value" in \
        done.stderr, done.stderr
    assert not (tmp_path / "kept").exists()
    done = run_cli("topcode", folder, "-o", tmp_path / "kept", "--top", "0.9", "--at",
                   "quantile", "--identifiers", "id", *cluster)
    assert done.code == 2 and done.stderr.strip() == (
        "microagg: error: --identifiers, --weight, --strata and --household are not available "
        "with --engine dask: declare the roles in a schema (--schema)"), done.stderr
