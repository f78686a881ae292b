"""Targeted record swapping on the Dask engine (microagg.at_scale.swap), LocalCluster of 2
workers: the written data set is the release of one machine for the same seed (households
that span partitions included), its report's figures those of one machine, and what one
machine refuses (a geography that differs within a household, a finer one left uncarried, a
hierarchy out of order) is refused with the same message."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

pytest.importorskip("distributed")

from microagg.at_scale.dataset import open_dataset
from microagg.at_scale.swap import swap_at_scale
from microagg.errors import InputError
from microagg.release.methods import RecordSwap
from tests.test_record_swap import HIERARCHY, census

pytestmark = pytest.mark.slow


def _parts(frame, folder):
    folder.mkdir()
    cuts = [0, len(frame) // 3, 2 * len(frame) // 3, len(frame)]
    for i, (a, b) in enumerate(itertools.pairwise(cuts)):
        frame.iloc[a:b].to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder


def _within_parent(frame):
    """The census with its districts and areas numbered within their parent (1, 2, ...)."""
    return frame.assign(nuts2=frame["nuts2"] % 10, nuts3=frame["nuts3"] % 10)


def _risk_columns(frame):
    """One risk column per level, the household's largest: its persons' share of age 7."""
    old = (frame["age"] == 7).groupby(frame["hid"]).transform("mean")
    return frame.assign(**{f"r{i}": old * (i + 1) / 3 for i in range(3)})


@pytest.mark.parametrize(("change", "options"), [
    (lambda f: f, {"risk_variables": ["age", "national"], "k": 3,
                   "similar": "hsize,htype;hsize"}),
    (lambda f: _risk_columns(_within_parent(f)),  # partners of other sizes: persons move
     {"risk_columns": ["r0", "r1", "r2"], "risk_threshold": 0.3, "similar": "htype"}),
])
def test_the_data_set_written_is_the_release_of_one_machine(client, tmp_path, change,
                                                            options):
    frame = change(census(900, seed=11))  # rows shuffled: households span the partitions
    method = RecordSwap(hierarchy=HIERARCHY, swap_rate=0.1, **options)
    local = method.release(frame, roles={"hid": "household"}, rng=5)
    result = swap_at_scale(client, open_dataset(_parts(frame, tmp_path / "in")),
                           str(tmp_path / "out"), method=method, household="hid", rng=5)
    written = pd.read_parquet(tmp_path / "out")
    pd.testing.assert_frame_equal(written, local.frame, check_dtype=False)
    ours, theirs = result.fields, local.report
    assert ours["households_swapped"] == theirs.households_swapped > 0
    assert ours["without_donor_ids"] == theirs.without_donor_ids
    # every figure of every level, the persons' cross-tabulation and the risk after included
    assert [a.to_dict() for a in ours["levels"]] == [b.to_dict() for b in theirs.levels]
    assert any(level.persons_moved for level in ours["levels"])
    if "k" in options:
        assert all(level.at_risk_after is not None for level in ours["levels"])
        assert ours["levels"][-1].at_risk_after < ours["levels"][-1].at_risk


@pytest.mark.parametrize(("change", "hierarchy", "carry"), [
    (lambda f: f.assign(lau=f["nuts3"] * 10 + f["hid"] % 3), HIERARCHY, None),
    (lambda f: f, ["nuts1", "nuts3", "nuts2"], None),
    (lambda f: f.assign(lau=f["nuts3"] * 10 + f["hid"] % 3), ["nuts1", "nuts2"], ["lau"]),
])
def test_the_refusals_of_one_machine_are_the_clusters(client, tmp_path, change, hierarchy,
                                                     carry):
    """A finer geography left uncarried (here 'lau', or 'nuts3' under nuts1,nuts2) and a
    hierarchy out of order are refused with the message of one machine."""
    frame = change(census(300, seed=13))
    method = RecordSwap(hierarchy=hierarchy, similar="hsize", risk_variables=["age"],
                        carry_along=carry)
    with pytest.raises(InputError) as alone:
        method.release(frame, roles={"hid": "household"}, rng=1)
    with pytest.raises(InputError) as cluster:
        swap_at_scale(client, open_dataset(_parts(frame, tmp_path / "in")),
                      str(tmp_path / "out"), method=method, household="hid", rng=1)
    assert str(cluster.value) == str(alone.value)
    assert "finer than the hierarchy" in str(alone.value) or "coarser" in str(alone.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad", [-0.5, None])
def test_a_risk_column_with_a_negative_or_missing_value_is_refused(client, tmp_path, bad):
    """A risk column must hold a number of at least 0 in every row, on the cluster as on one
    machine, and nothing is written."""
    frame = _risk_columns(_within_parent(census(300, seed=17)))
    frame["r1"] = frame["r1"].astype(object)
    frame.loc[frame.index[len(frame) // 2], "r1"] = bad
    method = RecordSwap(hierarchy=HIERARCHY, similar="htype",
                        risk_columns=["r0", "r1", "r2"], risk_threshold=0.3)
    with pytest.raises(InputError) as alone:
        method.release(frame, roles={"hid": "household"}, rng=1)
    frame["r1"] = pd.to_numeric(frame["r1"])  # Parquet holds it as numbers
    with pytest.raises(InputError) as cluster:
        swap_at_scale(client, open_dataset(_parts(frame, tmp_path / "in")),
                      str(tmp_path / "out"), method=method, household="hid", rng=1)
    assert str(cluster.value) == str(alone.value)
    assert "risk column 'r1'" in str(alone.value)
    assert not (tmp_path / "out").exists()


def test_a_household_whose_geography_differs_is_refused(client, tmp_path):
    frame = census(300, seed=12)
    rows = frame.index[frame["hid"] == frame.loc[frame["hsize"] > 1, "hid"].iloc[0]]
    frame.loc[rows[0], "nuts3"] = frame.loc[rows[0], "nuts3"] + 1
    method = RecordSwap(hierarchy=HIERARCHY, similar="hsize", risk_variables=["age"])
    with pytest.raises(InputError, match="'nuts3' differs within household"):
        swap_at_scale(client, open_dataset(_parts(frame, tmp_path / "in")),
                      str(tmp_path / "out"), method=method, household="hid", rng=1)
    assert not (tmp_path / "out").exists()
