"""The cluster path (microagg.at_scale) on a LocalCluster of 2 workers: data sets in and out,
block MDAV, the sort-bound DP releases, and the uniform order of the written rows."""

from __future__ import annotations

import itertools
import json
import os
import warnings
from pathlib import Path

import dask
import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from microagg.at_scale.anonymize import block_microaggregate, cut_tree, merge_small, pack_blocks
from microagg.at_scale.dataset import open_dataset, write_dataset
from microagg.at_scale.dp import dp_release_at_scale
from microagg.at_scale.evaluate import evaluate_at_scale
from microagg.at_scale.shuffle import shuffled_partitions, transfer_table
from microagg.at_scale.sort import Sortable, group_sums
from microagg.core.aggregate import cluster_means
from microagg.errors import InputError, PrivacyLeakWarning
from microagg.partition.blocks import block_mdav, median_blocks
from microagg.partition.insensitive import insensitive, order_keys
from microagg.partition.mdav import mdav
from microagg.partition.univariate import individual_ranking
from microagg.release import DPIndividualRanking, DPInsensitive, DPLaplace, dp_release
from microagg.release.functions import make_method
from microagg.release.methods import Family


def _write_parts(folder: Path, frames: list[pd.DataFrame], row_group_size: int = 500) -> Path:
    folder.mkdir()
    for i, f in enumerate(frames):
        f.to_parquet(folder / f"part-{i}.parquet", row_group_size=row_group_size)
    return folder


@pytest.fixture
def numeric_parts(tmp_path):
    """Four files (one empty) of 3 rounded normal columns (many ties), an id and a name."""
    rng = np.random.default_rng(3)
    frames, start = [], 0
    for size in (1200, 0, 900, 1401):
        f = pd.DataFrame(np.round(rng.standard_normal((size, 3)), 1), columns=list("abc"))
        f["id"] = np.arange(start, start + size)
        f["note"] = pd.array([f"r{i % 7}" for i in range(size)], dtype="string")
        frames.append(f)
        start += size
    folder = _write_parts(tmp_path / "in", frames)
    whole = pd.concat(frames, ignore_index=True)
    return folder, whole


# -- data sets --------------------------------------------------------------------------------

def test_open_dataset_cuts_row_groups_and_skips_empty_files(numeric_parts):
    folder, whole = numeric_parts
    dataset = open_dataset(folder, rows_per_partition=1000)
    assert dataset.n == len(whole)
    assert all(p.rows <= 1000 for p in dataset.pieces)
    assert dataset.columns == ("a", "b", "c", "id", "note")
    assert list(dataset.offsets) == list(np.cumsum([0, *[p.rows for p in dataset.pieces]])[:-1])


def test_open_dataset_refuses_bad_input(tmp_path, numeric_parts):
    folder, _ = numeric_parts
    with pytest.raises(InputError, match="no file matches"):
        open_dataset(tmp_path / "nothing-*.parquet")
    with pytest.raises(InputError, match="file not found"):
        open_dataset(tmp_path / "missing.parquet")
    pd.DataFrame({"a": [1.0], "b": [2.0], "x": [3.0], "id": [1], "note": ["q"]}).to_parquet(
        folder / "part-9.parquet")
    with pytest.raises(InputError, match="same columns"):
        open_dataset(folder)
    pd.DataFrame({"a": ["text"], "b": [2.0], "c": [3.0], "id": [1], "note": ["q"]}).to_parquet(
        folder / "part-9.parquet")
    with pytest.raises(InputError, match=r"column 'a' .* another type"):
        open_dataset(folder)
    (folder / "part-9.parquet").unlink()
    pd.DataFrame({"a": [1.0]}).to_csv(folder / "extra.csv", index=False)
    with pytest.raises(InputError, match="mixes CSV and Parquet"):
        open_dataset(folder)


def test_a_failed_write_leaves_nothing_and_keeps_an_older_output(client, tmp_path):
    import dask

    target = tmp_path / "out"

    def part(i: int) -> pd.DataFrame:
        if i == 3:
            raise InputError("partition 3 is broken")
        return pd.DataFrame({"x": [float(i)]})

    with pytest.raises(InputError, match="partition 3 is broken"):
        write_dataset(client, [dask.delayed(part)(i) for i in range(5)], target)
    assert os.listdir(tmp_path) == []
    write_dataset(client, [dask.delayed(part)(i) for i in range(3)], target)
    assert len(pd.read_parquet(target)) == 3
    with pytest.raises(InputError):
        write_dataset(client, [dask.delayed(part)(i) for i in range(5)], target)
    assert os.listdir(tmp_path) == ["out"] and len(pd.read_parquet(target)) == 3


def test_a_killed_run_leaves_temporaries_that_the_next_write_removes(client, tmp_path):
    target = tmp_path / "out"
    dead = tmp_path / ".out.microagg-999999999-abc.tmp"  # no such process
    dead.mkdir()
    (dead / "part-00000.parquet").write_bytes(b"x")
    write_dataset(client, [], target)
    assert os.listdir(tmp_path) == ["out"]


def _die_once(i: int, marker: str, always: bool) -> pd.DataFrame:
    if i == 2 and (always or not os.path.exists(marker)):
        Path(marker).touch()
        os._exit(1)  # the worker process dies in the middle of the run
    return pd.DataFrame({"x": [float(i)] * 10})


def test_a_killed_worker_gives_a_complete_output_or_none(client, tmp_path):
    import dask

    marker = str(tmp_path / "killed")
    rows, _ = write_dataset(client, [dask.delayed(_die_once, pure=False)(i, marker, False)
                                     for i in range(4)], tmp_path / "out")
    assert os.path.exists(marker) and rows == [10] * 4
    assert len(pd.read_parquet(tmp_path / "out")) == 40
    with pytest.raises(Exception, match=r"KilledWorker|died|lost"):
        write_dataset(client, [dask.delayed(_die_once, pure=False)(i, marker, True)
                               for i in range(4)], tmp_path / "never")
    assert not (tmp_path / "never").exists()
    assert sorted(os.listdir(tmp_path)) == ["killed", "out"]
    client.wait_for_workers(2, timeout=60)


# -- block MDAV -------------------------------------------------------------------------------

def test_median_blocks_halve_until_the_block_size():
    X = np.random.default_rng(0).standard_normal((1000, 3))
    blocks = median_blocks(X, 150)
    sizes = np.bincount(blocks)
    assert sizes.max() <= 150 and sizes.min() >= 75 and sizes.sum() == 1000
    # a cut separates the blocks along one attribute: block 0 and 1 come from one split
    labels = block_mdav(X, 5, 150)
    assert np.bincount(labels).min() >= 5 and np.bincount(labels).max() <= 9
    assert all(np.unique(blocks[labels == c]).size == 1 for c in range(labels.max() + 1))
    np.testing.assert_array_equal(block_mdav(X, 5, 1000), mdav(X, 5))
    with pytest.raises(InputError, match="at least 2k"):
        block_mdav(X, 5, 9)


def test_merge_small_and_cut_tree_route_consistently():
    np.testing.assert_array_equal(merge_small(np.array([5, 2, 0, 4, 6, 1]), 5),
                                  [0, 1, 1, 1, 2, 2])
    np.testing.assert_array_equal(merge_small(np.array([2, 2]), 5), [0, 0])
    sample = np.random.default_rng(1).standard_normal((400, 2))
    tree = cut_tree(sample, 50)
    leaves = tree.route(sample)
    assert np.bincount(leaves).max() <= 50 and tree.leaves == leaves.max() + 1
    same = cut_tree(np.ones((100, 2)), 10)  # all equal: one leaf, no endless split
    assert same.leaves == 1


def test_pack_blocks_fills_groups_up_to_the_capacity_in_order():
    rows = np.random.default_rng(2).integers(1, 120, size=300)
    rows[[10, 50]] = 400  # blocks alone above the capacity
    groups = pack_blocks(rows, 250)
    assert groups[0] == 0 and set(np.diff(groups)) <= {0, 1}
    held = np.bincount(groups, weights=rows)
    alone = np.bincount(groups) == 1
    assert np.all((held <= 250) | alone)
    # greedy: no group could have taken the next group's first block
    firsts = np.flatnonzero(np.diff(groups)) + 1
    assert np.all(held[groups[firsts] - 1] + rows[firsts] > 250)
    # two blocks of about half the records go to two tasks, not one
    np.testing.assert_array_equal(pack_blocks(np.array([480, 520]), 600), [0, 1])


def test_one_block_on_the_cluster_is_exact_mdav_of_the_z_scores(client, tmp_path):
    rng = np.random.default_rng(5)
    frames = [pd.DataFrame(rng.standard_normal((s, 3)) * [1, 10, 0.1] + [0, 5, -2],
                           columns=list("abc")) for s in (700, 500)]
    folder = _write_parts(tmp_path / "in", frames)
    whole = pd.concat(frames, ignore_index=True)
    report = block_microaggregate(client, open_dataset(folder), tmp_path / "out", k=4,
                                  block_size=5000)
    X = whole.to_numpy()
    s1 = sum(f.to_numpy().sum(axis=0) for f in frames)  # the cluster's sums, part by part
    s2 = sum((f.to_numpy() ** 2).sum(axis=0) for f in frames)
    center = s1 / len(X)
    sd = np.sqrt(s2 / len(X) - center ** 2)
    labels = block_mdav((X - center) / sd, 4, 5000)
    np.testing.assert_array_equal(labels, mdav((X - center) / sd, 4))
    out = pd.read_parquet(tmp_path / "out")[list("abc")].to_numpy()
    np.testing.assert_allclose(out, cluster_means(X, labels)[labels], rtol=0, atol=1e-12)
    assert report.blocks["count"] == 1


def test_two_blocks_of_half_the_records_each_on_the_cluster(client, tmp_path):
    rng = np.random.default_rng(6)
    frames = [pd.DataFrame(rng.standard_normal((1000, 3)), columns=list("abc"))
              for _ in range(2)]
    folder = _write_parts(tmp_path / "in", frames)
    report = block_microaggregate(client, open_dataset(folder), tmp_path / "out", k=5,
                                  block_size=1200)
    # the sample's median cut lands near n/2, within the slack of B above n/2: no re-cut;
    # each block runs in its own task
    assert report.blocks["count"] == 2 and report.blocks["largest"] <= 1200
    assert report.blocks["tasks"] == 2
    assert report.k_anonymity["holds"] and report.clusters["largest"] <= 9
    again = block_microaggregate(client, open_dataset(folder), tmp_path / "again", k=5,
                                 block_size=1200)  # same seed: the same release
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "again"),
                                  pd.read_parquet(tmp_path / "out"))
    assert again.sse == report.sse


def test_block_mdav_on_the_cluster_is_k_anonymous_and_keeps_the_rest(client, numeric_parts,
                                                                   tmp_path):
    folder, whole = numeric_parts
    dataset = open_dataset(folder, rows_per_partition=1000)
    report = block_microaggregate(client, dataset, tmp_path / "out", k=4, columns=list("abc"),
                                  block_size=400)
    out = pd.read_parquet(tmp_path / "out")
    assert list(out.columns) == ["a", "b", "c", "id", "note"]
    pd.testing.assert_frame_equal(out[["id", "note"]], whole[["id", "note"]])
    assert out.groupby(list("abc")).size().min() >= 4
    assert report.clusters["smallest"] >= 4 and report.clusters["largest"] <= 7
    assert report.blocks["largest"] <= 400 and report.k_anonymity["holds"]
    np.testing.assert_allclose(out[list("abc")].mean(), whole[list("abc")].mean(), atol=1e-12)
    sd = whole[list("abc")].std(ddof=0).to_numpy()
    sse = float((((whole[list("abc")] - out[list("abc")]).to_numpy() / sd) ** 2).sum())
    assert report.sse == pytest.approx(sse, rel=1e-9)
    assert report.sst == pytest.approx(3 * len(whole))


def test_block_mdav_refuses_missing_values_and_categories(client, tmp_path):
    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0] * 10, "b": np.arange(30.0)})
    folder = _write_parts(tmp_path / "in", [frame])
    with pytest.raises(InputError, match=r"column 'a' .* missing values"):
        block_microaggregate(client, open_dataset(folder), tmp_path / "out", k=3,
                             block_size=10)
    assert not (tmp_path / "out").exists()
    frame["a"] = ["x", "y", "z"] * 10
    folder = _write_parts(tmp_path / "cat", [frame])
    with pytest.raises(InputError, match="categorical"):
        block_microaggregate(client, open_dataset(folder), tmp_path / "out", k=3)


# -- sort-bound DP releases -------------------------------------------------------------------

def _sources(X: np.ndarray, cuts: list[int]) -> list[list[Sortable]]:
    out = []
    for a, b in itertools.pairwise([0, *cuts, len(X)]):
        x = X[a:b, 0]
        out.append([Sortable(x, np.empty((x.size, 0)), np.arange(a, b))])
    return out


def _insensitive_sources(X: np.ndarray, cuts: list[int], lows: np.ndarray, highs: np.ndarray
                        ) -> list[list[Sortable]]:
    out = []
    for a, b in itertools.pairwise([0, *cuts, len(X)]):
        key, ties = order_keys(X[a:b], lows, highs)
        out.append([Sortable(key, ties, np.arange(a, b), X[a:b])])
    return out


def test_group_sums_equal_the_single_machine_means_bit_for_bit(client, tmp_path):
    """Ranked groups of one column, and single-reference insensitive clusters of three (ties
    in the distance broken lexicographically), whatever the buckets; the exchange goes
    between the tasks, no file written."""
    X = np.round(np.random.default_rng(2).uniform(0, 3, (1003, 3)), 1) * 1.1
    lows, highs = np.zeros(3), np.full(3, 3.4)
    cases = [(individual_ranking(X[:, :1], 6)[:, 0], _sources(X[:, :1], [100, 101, 600]), 1),
             (insensitive(X, 6, lows, highs, reference="single"),
              _insensitive_sources(X, [100, 101, 600], lows, highs), 3)]
    for labels, sources, width in cases:
        expected = cluster_means(X[:, :width], labels)
        for buckets in (1, 3, 7):
            (sums,), extras = group_sums(client, sources, lambda s=sources: s, n=1003, k=6,
                                         widths=[width], buckets=buckets,
                                         extra=[dask.delayed(len)(sources)])
            np.testing.assert_array_equal(sums / np.bincount(labels)[:, None], expected)
            assert extras == [4] and os.listdir(tmp_path) == []


@pytest.mark.parametrize("method", ["individual-ranking", "insensitive"])
def test_seeded_cluster_release_equals_the_single_machine_release(client, numeric_parts,
                                                                  tmp_path, method):
    folder, whole = numeric_parts
    dataset = open_dataset(folder, rows_per_partition=1000)
    bounds = {c: (-2.5, 2.5) for c in "abc"}
    extra = {"reference": "single"} if method == "insensitive" else {}
    made = make_method(Family.DIFFERENTIAL_PRIVACY, method, {"epsilon": 2.0, "k": 5, **extra})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        scaled = dp_release_at_scale(client, dataset, tmp_path / "out", made,
                                     columns=list("abc"), bounds=bounds, rng=11,
                                     rows_per_bucket=700)
        single = dp_release(whole, method=method, epsilon=2.0, k=5, columns=list("abc"),
                            bounds=bounds, rng=11, **extra)
    out = pd.read_parquet(tmp_path / "out")
    assert not list(tmp_path.glob(".*"))  # no temporary left
    assert sum(scaled.rows) == len(whole) and len(scaled.rows) == -(-len(whole) // 700)
    if method == "insensitive":  # linked rows: the same multiset of records
        rows = sorted(map(tuple, out[list("abc")].to_numpy()))
        assert rows == sorted(map(tuple, single.frame[list("abc")].to_numpy()))
    for c in "abc":
        np.testing.assert_array_equal(np.sort(out[c]), np.sort(single.frame[c]))
    assert scaled.report.epsilon == single.report.epsilon
    assert scaled.report.sensitivities == single.report.sensitivities
    # seeded: both say so in every top-level field, and nothing else weakens them
    assert not scaled.report.differentially_private and scaled.report.guarantee_scope == "none"
    assert scaled.report.weaker_than_plain_dp == single.report.weaker_than_plain_dp == [
        "noise drawn from a known seed"]
    assert scaled.report.guarantee == single.report.guarantee
    assert any("clamped" in n for n in scaled.notices)


def test_categorical_insensitive_release_equals_the_single_machine_release(client, tmp_path):
    """Numeric, nominal and ordinal columns with declared categories: the same seeded release
    (the same multiset of records) on the cluster as on one machine, whose categories are
    concepts of the declared domains only."""
    from microagg.data.schema import Attribute, Kind, Role, Schema

    rng = np.random.default_rng(5)
    frames = []
    for size in (700, 0, 801):
        frames.append(pd.DataFrame({
            "x": np.round(rng.uniform(0, 10, size), 1),
            "colour": rng.choice(["red", "green", "blue"], size),
            "level": rng.choice(["low", "mid", "high"], size, p=[0.5, 0.3, 0.2]),
            "id": np.arange(size)}))
    folder = _write_parts(tmp_path / "in", frames)
    whole = pd.concat(frames, ignore_index=True)
    schema = Schema((
        Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 10)),
        Attribute("colour", Role.QUASI, Kind.NOMINAL, domain=("red", "green", "blue", "grey")),
        Attribute("level", Role.QUASI, Kind.ORDINAL, domain=("low", "mid", "high")),
        Attribute("id", Role.IDENTIFIER, Kind.NUMERIC)))
    dataset = open_dataset(folder, rows_per_partition=500)
    method = DPInsensitive(reference="single", epsilon=50.0, k=25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        scaled = dp_release_at_scale(client, dataset, tmp_path / "out", method,
                                     rows_per_bucket=600, schema=schema, rng=4)
        single = method.release(whole, schema=schema, rng=4)
    out = pd.read_parquet(tmp_path / "out")
    assert list(out.columns) == ["x", "colour", "level"] and len(out) == len(whole)
    columns = ["x", "colour", "level"]
    rows = sorted(map(tuple, out[columns].itertuples(index=False)))
    assert rows == sorted(map(tuple, single.frame[columns].itertuples(index=False)))
    assert set(out["level"]) <= {"low", "mid", "high"}
    assert scaled.report.sensitivities == single.report.sensitivities
    assert [e["mechanism"] for e in scaled.report.sensitivities].count("exponential") == 2
    with pytest.raises(InputError, match="individual ranking on a cluster"):
        dp_release_at_scale(client, dataset, tmp_path / "o",
                            DPIndividualRanking(epsilon=1.0, k=5), schema=schema)


@pytest.mark.parametrize("method", ["individual-ranking", "insensitive"])
def test_missing_values_are_read_as_declared_on_the_cluster_as_on_one_machine(
        client, tmp_path, method):
    """Missing cells (in a later partition too) are read as the schema's declared value, cell
    by cell: the seeded release, its report and the owner's counts are those of one machine;
    a missing value in a column that declares none is refused in one line."""
    from microagg.data.schema import Attribute, Kind, Role, Schema
    from microagg.errors import PrivacyError

    rng = np.random.default_rng(8)
    frames = []
    for size in (400, 0, 603):
        frame = pd.DataFrame({"a": rng.uniform(0, 10, size).round(2),
                              "b": rng.integers(0, 90, size).astype(float),
                              "c": rng.uniform(0, 1, size).round(3)})
        frame.loc[rng.random(size) < 0.1, "a"] = np.nan
        frame.loc[rng.random(size) < 0.05, "b"] = np.nan
        frames.append(frame)
    folder = _write_parts(tmp_path / "in", frames)
    whole = pd.concat(frames, ignore_index=True)
    schema = Schema((Attribute("a", Role.QUASI, Kind.NUMERIC, domain=(0, 10), missing=5),
                     Attribute("b", Role.QUASI, Kind.NUMERIC, domain=(0, 90), missing=0),
                     Attribute("c", Role.QUASI, Kind.NUMERIC, domain=(0, 1))))
    dataset = open_dataset(folder, rows_per_partition=300)
    extra = {"reference": "single"} if method == "insensitive" else {}
    made = make_method(Family.DIFFERENTIAL_PRIVACY, method, {"epsilon": 2.0, "k": 5, **extra})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        scaled = dp_release_at_scale(client, dataset, tmp_path / "out", made, schema=schema,
                                     rng=3, rows_per_bucket=700)
        single = made.release(whole, schema=schema, rng=3)
    out = pd.read_parquet(tmp_path / "out")
    for c in "abc":
        np.testing.assert_array_equal(np.sort(out[c]), np.sort(single.frame[c]))
    assert scaled.report.sensitivities == single.report.sensitivities
    assert scaled.report.domains == single.report.domains
    filled = sorted(n for n in scaled.notices if "missing" in n)
    assert filled == sorted(n for n in single.notices if "missing" in n)
    assert filled == [f"{int(whole[c].isna().sum()):,} missing value(s) of '{c}' were read as "
                      "the value the schema declares (missing:)" for c in "ab"]
    undeclared = Schema((Attribute("a", Role.QUASI, Kind.NUMERIC, domain=(0, 10)),
                         Attribute("b", Role.QUASI, Kind.NUMERIC, domain=(0, 90), missing=0),
                         Attribute("c", Role.QUASI, Kind.NUMERIC, domain=(0, 1))))
    with pytest.raises(PrivacyError, match="column 'a' has a missing value in row"):
        dp_release_at_scale(client, dataset, tmp_path / "refused", made, schema=undeclared)
    assert not (tmp_path / "refused").exists()


def test_cluster_dp_refuses_what_it_cannot_do(client, numeric_parts, tmp_path):
    folder, _ = numeric_parts
    dataset = open_dataset(folder)
    bounds = {c: (-3.0, 3.0) for c in "abc"}
    common = {"columns": list("abc"), "bounds": bounds}
    with pytest.raises(InputError, match="linked"):
        dp_release_at_scale(client, dataset, tmp_path / "o",
                            DPIndividualRanking(epsilon=1.0, k=5, linkage="linked"), **common)
    with pytest.raises(InputError, match="reference` single"):
        dp_release_at_scale(client, dataset, tmp_path / "o",
                            DPInsensitive(epsilon=1.0, k=5), **common)
    with pytest.raises(InputError, match="cannot run laplace: it runs on one machine only"):
        dp_release_at_scale(client, dataset, tmp_path / "o", DPLaplace(epsilon=1.0), **common)
    with pytest.raises(Exception, match="domain"):
        dp_release_at_scale(client, dataset, tmp_path / "o",
                            DPIndividualRanking(epsilon=1.0, k=5), columns=list("abc"))
    assert not (tmp_path / "o").exists()


def test_transfer_table_has_the_right_margins_and_law():
    """Every chunk sends its rows, every partition gets its rows; and the first partition's
    share of a chunk has the hypergeometric mean n_0 · rows_c / n."""
    rng = np.random.default_rng(0)
    table = transfer_table(np.array([5, 7, 3]), np.array([4, 4, 7]), rng)
    assert list(table.sum(axis=1)) == [5, 7, 3] and list(table.sum(axis=0)) == [4, 4, 7]
    first = [transfer_table(np.array([5, 7, 3]), np.array([4, 4, 7]), rng)[1, 0]
             for _ in range(4000)]
    assert abs(np.mean(first) - 4 * 7 / 15) < 0.05


@pytest.mark.slow
def test_written_order_is_a_uniform_permutation():
    """Four groups of one row, two output partitions: all 24 orders appear with equal
    frequency (chi-square test); and groups of two rows give the 6 orders of AABB."""
    import dask
    from scipy.stats import chisquare

    rng = np.random.default_rng(7)

    def orders(values, sizes, out_rows, runs):
        counts: dict[tuple, int] = {}
        for _ in range(runs):
            parts = shuffled_partitions(None, [(["x"], values)], sizes, out_rows, rng, ["x"])
            frames = dask.compute(*parts, scheduler="sync")
            order = tuple(int(v) for f in frames for v in f["x"])
            counts[order] = counts.get(order, 0) + 1
        return counts

    single = orders(np.arange(4.0)[:, None], np.ones(4, dtype=np.int64), [2, 2], 2400)
    assert len(single) == 24
    assert chisquare(list(single.values())).pvalue > 1e-4
    pairs = orders(np.arange(2.0)[:, None], np.full(2, 2, dtype=np.int64), [1, 3], 1200)
    assert len(pairs) == 6
    assert chisquare(list(pairs.values())).pvalue > 1e-4


# -- evaluation and the command line ----------------------------------------------------------

def test_evaluation_at_scale_matches_the_single_machine_measures(client, numeric_parts,
                                                                 tmp_path):
    from microagg.evaluation.risk import record_linkage
    from microagg.evaluation.utility import jsd, sse_percent

    folder, whole = numeric_parts
    dataset = open_dataset(folder, rows_per_partition=1000)
    block_microaggregate(client, dataset, tmp_path / "out", k=3, columns=list("abc"),
                         block_size=300)
    masked = open_dataset(tmp_path / "out", rows_per_partition=1000)
    result = evaluate_at_scale(client, dataset, masked, columns=list("abc"),
                               sample=len(whole), bins=20)
    x = whole[list("abc")].to_numpy()
    y = pd.read_parquet(tmp_path / "out")[list("abc")].to_numpy()
    assert result.aligned and result.records == len(whole)
    assert result.sse == pytest.approx(float(((x - y) ** 2).sum()), rel=1e-12)
    assert result.sse_percent == pytest.approx(sse_percent(x, y), rel=1e-9)
    np.testing.assert_allclose(result.jsd, jsd(x, y, x.min(axis=0), x.max(axis=0), bins=20),
                               atol=1e-12)
    # the whole data set as the sample: the single-machine record linkage exactly
    widths = x.max(axis=0) - x.min(axis=0)
    assert result.record_linkage_percent == pytest.approx(record_linkage(x, y, widths),
                                                          abs=1e-9)
    low, high = result.record_linkage_ci95
    assert low <= result.record_linkage_percent <= high
    small = evaluate_at_scale(client, dataset, masked, columns=list("abc"), sample=200)
    assert small.record_linkage_sample == 200


def test_cli_engine_dask_end_to_end(numeric_parts, tmp_path, run_cli):
    folder, whole = numeric_parts
    done = run_cli("microaggregate", folder, "-o", tmp_path / "k", "--k", "4", "--columns",
                   "a,b,c", "--engine", "dask", "--workers", "2", "--block-size", "500")
    assert done.code == 0, done.stderr
    assert pd.read_parquet(tmp_path / "k").groupby(list("abc")).size().min() >= 4
    record = json.loads((tmp_path / "k.report.json").read_text())
    assert record["format"] == "microagg-report/1" and record["records"] == len(whole)
    assert record["guarantee"]["holds"] and record["columns"]["masked"] == list("abc")
    assert record["utility"] is None and "Dask" in record["skipped"]["risk_and_utility"]
    done = run_cli("dp", f"{folder}/part-*.parquet", "-o", tmp_path / "d", "--method",
                   "individual-ranking", "--epsilon", "1", "--k", "5", "--columns", "a,b,c",
                   "--bounds", "a=-3:3,b=-3:3,c=-3:3", "--engine", "dask", "--workers", "1",
                   "--json")
    assert done.code == 0, done.stderr
    assert len(pd.read_parquet(tmp_path / "d")) == len(whole)
    assert '"differentially_private": true' in done.stdout
    assert (tmp_path / "d.privacy.json").exists()
    done = run_cli("dp", folder, "-o", tmp_path / "e", "--method", "individual-ranking",
                   "--epsilon", "1", "--k", "5", "--carry", "id", "--engine", "dask")
    assert done.code == 2 and "--carry is not available" in done.stderr
    done = run_cli("evaluate", folder, tmp_path / "k", "--columns", "a,b,c", "--engine",
                   "dask", "--workers", "1", "--json")
    assert done.code == 0, done.stderr
    assert '"record_linkage_sample": 1000' in done.stdout


def test_local_workers_write_no_stderr_of_their_own():
    """On Ctrl-C the terminal interrupts every process of the command; the local workers'
    stderr is the null device, so the command's one line is all that shows (each worker once
    printed its traceback, 13-84 lines in all). Their errors travel through the scheduler."""
    from microagg.at_scale.cluster import dask_client

    with dask_client(workers=1) as fresh:
        targets = fresh.run(lambda: os.readlink("/proc/self/fd/2"))
    assert targets and set(targets.values()) == {os.devnull}
    assert os.readlink("/proc/self/fd/2") != os.devnull  # the command's own stderr is kept


def test_evaluation_at_scale_skips_text_and_refuses_a_named_text_column(client, tmp_path,
                                                                       run_cli):
    folder = tmp_path / "mixed"
    folder.mkdir()
    pd.DataFrame({"x": np.arange(20.0), "city": ["a", "b"] * 10}).to_parquet(
        folder / "part-0.parquet")
    result = run_cli("evaluate", folder, folder, "--engine", "dask", "--workers", "1",
                     "--sample", "0")
    assert result.code == 0 and "compared 20 records on x" in result.stdout, result.stderr
    result = run_cli("evaluate", folder, folder, "--engine", "dask", "--workers", "1",
                     "--columns", "x,city")
    assert result.code == 2 and "column 'city'" in result.stderr and "not numeric" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
