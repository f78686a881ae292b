"""Targeted record swapping on the Dask engine (microagg.at_scale.swap), LocalCluster of 2
workers: the written data set is the release of one machine for the same seed (households
that span partitions included), and a household whose geography differs is refused."""

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


@pytest.fixture(scope="module")
def client():
    from microagg.at_scale.cluster import dask_client

    with dask_client(workers=2) as c:
        yield c


def _parts(frame, folder):
    folder.mkdir()
    cuts = [0, len(frame) // 3, 2 * len(frame) // 3, len(frame)]
    for i, (a, b) in enumerate(itertools.pairwise(cuts)):
        frame.iloc[a:b].to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder


def test_the_data_set_written_is_the_release_of_one_machine(client, tmp_path):
    frame = census(900, seed=11)  # rows shuffled: households span the partitions
    method = RecordSwap(hierarchy=HIERARCHY, similar="hsize,htype;hsize",
                        risk_variables=["age", "national"], k=3, swap_rate=0.1)
    local = method.release(frame, roles={"hid": "household"}, rng=5)
    result = swap_at_scale(client, open_dataset(_parts(frame, tmp_path / "in")),
                           str(tmp_path / "out"), method=method, household="hid", rng=5)
    written = pd.read_parquet(tmp_path / "out")
    pd.testing.assert_frame_equal(written, local.frame, check_dtype=False)
    ours, theirs = result.fields, local.report
    assert ours["households_swapped"] == theirs.households_swapped > 0
    assert ours["without_donor_ids"] == theirs.without_donor_ids
    for a, b in zip(ours["levels"], theirs.levels, strict=True):
        assert {**a.to_dict(), "at_risk_after": None, "persons_moved": None} == {
            **b.to_dict(), "at_risk_after": None, "persons_moved": None}


def test_a_household_whose_geography_differs_is_refused(client, tmp_path):
    frame = census(300, seed=12)
    rows = frame.index[frame["hid"] == frame.loc[frame["hsize"] > 1, "hid"].iloc[0]]
    frame.loc[rows[0], "nuts3"] = frame.loc[rows[0], "nuts3"] + 1
    method = RecordSwap(hierarchy=HIERARCHY, similar="hsize", risk_variables=["age"])
    with pytest.raises(InputError, match="'nuts3' differs within household"):
        swap_at_scale(client, open_dataset(_parts(frame, tmp_path / "in")),
                      str(tmp_path / "out"), method=method, household="hid", rng=1)
    assert not (tmp_path / "out").exists()
