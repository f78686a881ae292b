"""Targeted record swapping (core/swapping.py, release/methods/record_swap.py, `microagg
swap`): the invariants as properties on a small synthetic census, a hand-worked census whose
result is forced, the refusals, and the command."""

import json

import numpy as np
import pandas as pd
import pytest

from microagg.core.swapping import area_codes, pair_households, quotas
from microagg.errors import InputError, ParameterError
from microagg.release.methods import RecordSwap
from microagg.release.reports.disclosure import view

HIERARCHY = ["nuts1", "nuts2", "nuts3"]


def census(households: int = 800, seed: int = 0) -> pd.DataFrame:
    """Households of 1-5 persons in 3 x 4 x 5 nested areas; age group and a skewed
    nationality per person (some rare in small areas), household size and type."""
    rng = np.random.default_rng(seed)
    size = rng.choice([1, 2, 3, 4, 5], households, p=[0.3, 0.3, 0.2, 0.15, 0.05])
    hid = np.repeat(rng.permutation(households) + 100, size)  # not in file order
    n1 = rng.integers(1, 4, households)
    n2 = n1 * 10 + rng.integers(1, 5, households)
    n3 = n2 * 10 + rng.integers(1, 6, households)
    frame = pd.DataFrame({
        "hid": hid, "nuts1": np.repeat(n1, size), "nuts2": np.repeat(n2, size),
        "nuts3": np.repeat(n3, size), "hsize": np.repeat(size, size),
        "htype": np.repeat(rng.integers(1, 4, households), size),
        "age": rng.integers(1, 8, size.sum()),
        "national": rng.choice([1, 2, 3, 4, 5], size.sum(), p=[0.9, 0.05, 0.03, 0.015, 0.005]),
        "income": rng.lognormal(10, 1, size.sum()).round(2)})
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _swap(frame, seed=1, **options):
    method = RecordSwap(**{"hierarchy": HIERARCHY, "similar": "hsize",
                           "risk_variables": ["age", "national"], "k": 3,
                           "swap_rate": 0.05, **options})
    return method.release(frame, roles={"hid": "household"}, rng=seed)


def _at_risk(frame, k=3):
    """The households at risk at each level, counted independently (pandas group-by)."""
    out = []
    for level in range(len(HIERARCHY)):
        by = [*HIERARCHY[:level + 1], "age", "national"]
        counts = frame.groupby(by)["hid"].transform("size")
        out.append(set(frame.loc[counts < k, "hid"]))
    return out


@pytest.fixture(scope="module")
def swapped():
    frame = census()
    return frame, _swap(frame)


def test_households_move_whole_and_every_area_keeps_its_households(swapped):
    frame, release = swapped
    written = release.frame
    assert written.index.equals(frame.index)
    unchanged = ["hid", "hsize", "htype", "age", "national", "income"]
    pd.testing.assert_frame_equal(written[unchanged], frame[unchanged])
    assert (written.groupby("hid")[HIERARCHY].nunique() == 1).all().all()
    for level in range(len(HIERARCHY)):
        cols = HIERARCHY[:level + 1]
        before = frame.drop_duplicates("hid").groupby(cols).size()
        after = written.drop_duplicates("hid").groupby(cols).size()
        pd.testing.assert_series_equal(before, after)
    moved = (written[HIERARCHY] != frame[HIERARCHY]).any(axis=1)
    assert moved.any()
    report = release.report
    assert all(level.household_counts_kept for level in report.levels)
    # swapped households keep the household size: persons per area kept too
    assert all(level.areas_persons_changed == 0 for level in report.levels)
    assert report.persons_swapped >= moved.sum()


def test_every_household_at_risk_is_swapped_across_its_level_or_reported(swapped):
    frame, release = swapped
    report, written = release.report, release.frame
    at_risk = _at_risk(frame)
    assert at_risk[-1], "the census should have households at risk"
    assert [level.at_risk for level in report.levels] == [len(s) for s in at_risk]
    first = {}
    for level, households in enumerate(at_risk):
        for h in households:
            first.setdefault(h, level)
    assert [level.first_at_risk for level in report.levels] == [
        sum(1 for v in first.values() if v == level) for level in range(len(HIERARCHY))]
    before = frame.drop_duplicates("hid").set_index("hid")[HIERARCHY]
    after = written.drop_duplicates("hid").set_index("hid")[HIERARCHY]
    stayed = {int(h) for h in report.without_donor_ids}
    assert len(stayed) == report.without_donor
    for h, level in first.items():
        if h in stayed:
            assert (before.loc[h] == after.loc[h]).all()
        else:  # moved across the coarsest level at which it is at risk
            assert before.loc[h].iloc[level] != after.loc[h].iloc[level], h
    for level, households in enumerate(at_risk):
        kept = sum(before.loc[h].iloc[level] == after.loc[h].iloc[level] for h in households)
        assert report.levels[level].in_place_after == kept


def test_the_pairing_keeps_profiles_and_crosses_the_level():
    rng = np.random.default_rng(3)
    n = 3000
    geography = np.stack([rng.integers(0, 3, n), rng.integers(0, 4, n), rng.integers(0, 5, n)])
    areas = area_codes(geography)
    risk = rng.choice([1.0, 0.5, 0.2, 0.01], size=(3, n), p=[0.01, 0.02, 0.07, 0.9])
    risk = np.maximum.accumulate(risk, axis=0)  # finer areas: counts no larger
    profiles = np.stack([rng.integers(0, 4, n), rng.integers(0, 2, n)])
    pairing = pair_households(areas, risk, 0.4, profiles, 0.1, rng)
    swapped = np.flatnonzero(pairing.partner >= 0)
    partner = pairing.partner[swapped]
    assert np.array_equal(pairing.partner[partner], swapped)  # pairs, each once
    assert np.array_equal(pairing.level[partner], pairing.level[swapped])
    same_first = profiles[0, swapped] == profiles[0, partner]
    drawn = swapped[pairing.role[swapped] != 3]
    assert (pairing.role[pairing.partner[drawn]] == 3).all()
    # the first profile whenever a donor of it was free; the second otherwise
    assert same_first.mean() > 0.9
    assert (same_first | (profiles[1, swapped] == profiles[1, partner])).all()
    level = pairing.level[swapped]
    assert (areas[level, swapped] != areas[level, partner]).all()
    must = pairing.at_risk < 3
    assert (must <= ((pairing.partner >= 0) | pairing.no_donor)).all()


@pytest.mark.parametrize("rate", [0.0, 0.03, 0.1, 0.5])
def test_without_risk_the_realised_rate_is_the_swap_rate(rate):
    frame = census(600, seed=2)
    report = _swap(frame, k=0, swap_rate=rate).report
    assert report.swaps_due in (int(np.floor(600 * rate / 2)), int(np.ceil(600 * rate / 2)))
    assert report.households_swapped == 2 * report.swaps_due
    assert abs(report.realised_rate - rate) <= 2 / 600
    assert report.levels[-1].swapped_at_random == report.swaps_due


def test_quotas_share_the_swaps_in_proportion_to_the_areas():
    sizes = np.array([1, 5, 10, 40, 44, 100])
    rng = np.random.default_rng(0)
    runs = [quotas(sizes, 0.3, rng) for _ in range(400)]
    for due, total in runs:
        assert due.sum() == total == 30
        share = sizes / sizes.sum() * total
        assert (due >= np.floor(share)).all() and (due <= np.ceil(share)).all()
    mean = np.mean([due for due, _ in runs], axis=0)
    assert np.allclose(mean, sizes / sizes.sum() * 30, atol=0.1)


def test_a_seed_repeats_the_release_and_another_seed_does_not():
    frame = census(400, seed=5)
    one, again, other = (_swap(frame, seed=s).frame for s in (7, 7, 8))
    pd.testing.assert_frame_equal(one, again)
    assert not one.equals(other)


def test_the_swap_is_the_same_whether_codes_were_read_as_numbers_or_text():
    """A household identifier and a geography read as text (as the web app reads a column
    with the role household or a nominal kind) swap as when read as numbers, though ``10``
    sorts before ``9`` only as text."""
    frame = census()
    frame["hid"] -= 95  # identifiers of one to three digits
    as_text = frame.astype({c: str for c in ["hid", *HIERARCHY]})
    numbers, text = _swap(frame).frame, _swap(as_text).frame
    for column in HIERARCHY:
        assert numbers[column].astype(str).tolist() == text[column].tolist()
    assert (numbers[HIERARCHY] != frame[HIERARCHY]).any(axis=None)


def test_a_hand_worked_census():
    """Region a holds households 1-3 (districts a1: 1 and 3, a2: 2), region b 4-6 (all in
    b1). With k = 2 only household 2 (the one person aged 70 in a) is at risk, at the
    region level: every other age is shared by two persons in its district. Its only donor
    of size 1 in another region is household 5 (4 and 6 have two persons), so 2 and 5
    exchange region and district whatever the seed, and nothing else moves (swap rate 0)."""
    frame = pd.DataFrame({
        "hid": [1, 1, 2, 3, 3, 4, 4, 5, 6, 6],
        "region": ["a", "a", "a", "a", "a", "b", "b", "b", "b", "b"],
        "district": ["a1", "a1", "a2", "a1", "a1", "b1", "b1", "b1", "b1", "b1"],
        "hsize": [2, 2, 1, 2, 2, 2, 2, 1, 2, 2],
        "age": [30, 31, 70, 30, 31, 30, 31, 30, 30, 31]})
    for seed in (1, 2, 3):
        release = RecordSwap(hierarchy=["region", "district"], similar="hsize",
                             risk_variables=["age"], k=2, swap_rate=0.0).release(
            frame, roles={"hid": "household"}, rng=seed)
        written = release.frame
        assert written.loc[2, ["region", "district"]].tolist() == ["b", "b1"]
        assert written.loc[7, ["region", "district"]].tolist() == ["a", "a2"]
        others = frame.index.difference([2, 7])
        pd.testing.assert_frame_equal(written.loc[others], frame.loc[others])
        report = release.report
        assert report.households_swapped == 2 and report.without_donor == 0
        assert [(lv.at_risk, lv.swapped_at_risk, lv.donors, lv.in_place_after)
                for lv in report.levels] == [(1, 1, 1, 0), (1, 0, 0, 0)]


def test_an_at_risk_household_without_donor_stays_and_is_named():
    frame = pd.DataFrame({"hid": [1, 2, 2, 3, 3], "region": ["a", "a", "a", "b", "b"],
                          "hsize": [1, 2, 2, 2, 2], "age": [70, 30, 30, 30, 30]})
    release = RecordSwap(hierarchy=["region"], similar="hsize", risk_variables=["age"],
                         k=2, swap_rate=0.0).release(frame, roles={"hid": "household"}, rng=1)
    assert release.report.without_donor_ids == ["1"]
    assert release.frame["region"].tolist() == ["a", "a", "a", "b", "b"]
    assert release.report.levels[0].no_donor == 1


def test_risk_columns_replace_the_k_rule():
    frame = census(300, seed=4)
    risk = np.where(frame["hid"] == frame["hid"].iloc[0], 0.9, 0.01)
    frame = frame.assign(r1=risk, r2=risk, r3=risk)
    release = _swap(frame, risk_variables=None, risk_columns=["r1", "r2", "r3"],
                    risk_threshold=0.5, swap_rate=0.0)
    assert [lv.at_risk for lv in release.report.levels] == [1, 1, 1]
    assert release.report.households_swapped == 2 or release.report.without_donor == 1


def test_the_report_shares_counts_and_keeps_the_risk_for_the_owner(swapped):
    _, release = swapped
    record = {"format": "microagg-report/1", "report": release.report.to_dict()}
    external = view(record, "external")["report"]
    assert external["households_swapped"] == release.report.households_swapped
    assert "without_donor_ids" not in external and "without_donor" not in external
    assert "at_risk" not in external["levels"][0]
    assert view(record, "public")["report"]["levels"][0] == {
        "level": "nuts1", "household_counts_kept": True}
    assert view(record, "owner")["report"] == json.loads(json.dumps(
        release.report.to_dict()))


@pytest.mark.parametrize(("change", "options", "words"), [
    (lambda f: f, {"roles": {}}, "household column"),
    (lambda f: f.assign(nuts3=np.arange(len(f))), {}, "'nuts3' differs within household"),
    (lambda f: f.assign(lau=f["nuts3"] * 10 + f["hid"] % 3), {}, "'lau' is a geography finer"),
    (lambda f: f.assign(nuts2=f["nuts2"].where(f.index != 3)), {}, "'nuts2' has missing"),
    (lambda f: f, {"hierarchy": ["nuts1", "nowhere"]}, "nowhere"),
    (lambda f: f, {"similar": "nuts1"}, "`similar` names a column of the hierarchy"),
    (lambda f: f, {"hierarchy": HIERARCHY[::-1]},
     r"`hierarchy`: column 'nuts2' comes after 'nuts3' but is coarser \(its code \d+ spans "),
    (lambda f: f, {"hierarchy": ["nuts2", "nuts1", "nuts3"]}, "'nuts1' comes after 'nuts2'"),
])
def test_bad_input_is_refused_in_one_line(change, options, words):
    frame = change(census(200, seed=6))
    roles = options.pop("roles", {"hid": "household"})
    method = RecordSwap(**{"hierarchy": HIERARCHY, "similar": "hsize",
                           "risk_variables": ["age"], **options})
    with pytest.raises(InputError, match=words) as raised:
        method.release(frame, roles=roles, rng=1)
    assert "\n" not in str(raised.value)


def test_codes_numbered_within_their_parent_name_one_area_in_each():
    """District 1 of region 1 and district 1 of region 2 are two districts (as sdcMicro
    reads them): the swap is the one of codes unique over the country."""
    frame = census(400, seed=9)
    within = frame.assign(nuts2=frame["nuts2"] % 10, nuts3=frame["nuts3"] % 10)
    unique, relative = _swap(frame, swap_rate=0.1), _swap(within, swap_rate=0.1)
    back = relative.frame.assign(nuts2=relative.frame["nuts1"] * 10 + relative.frame["nuts2"])
    back = back.assign(nuts3=back["nuts2"] * 10 + back["nuts3"])
    pd.testing.assert_frame_equal(back, unique.frame)
    assert [level.areas for level in relative.report.levels] == [3, 12, 60]


def test_a_level_that_renames_its_parents_areas_is_accepted():
    frame = census(200, seed=10)
    frame = frame.assign(code=frame["nuts2"] + 1000)
    release = _swap(frame, hierarchy=["nuts1", "nuts2", "code", "nuts3"])
    levels = release.report.levels
    assert levels[2].areas == levels[1].areas == frame["nuts2"].nunique()
    assert levels[2].first_at_risk == 0 and all(lv.household_counts_kept for lv in levels)


def test_a_finer_geography_carried_along_moves_with_its_household():
    frame = census(300, seed=7)
    frame = frame.assign(lau=frame["nuts3"] * 10 + frame["hid"] % 3)
    written = _swap(frame, carry_along=["lau"], swap_rate=0.2).frame
    assert (written["lau"] // 10 == written["nuts3"]).all()
    assert (written["lau"] != frame["lau"]).any()


@pytest.mark.parametrize(("spoil", "refused"), [
    (None, True),
    ("household", False),  # the value differs within a household split between the parts
    ("area", False),  # a value found in two areas of the finest level, one in each part
])
def test_a_finer_geography_is_told_apart_across_the_parts_of_a_table(spoil, refused):
    """The cluster's partitions: each says what it can, the refusal puts them together."""
    from microagg.release.methods.record_swap import finer_summary, refuse_finer

    frame = census(300, seed=14).sort_values("hid", kind="stable").reset_index(drop=True)
    frame = frame.assign(lau=frame["nuts3"] * 10 + frame["hid"] % 3)
    inside = np.flatnonzero(frame["hid"].duplicated().to_numpy())  # rows inside a household
    cut = int(inside[inside >= len(frame) // 2][0])
    if spoil == "household":
        frame.loc[cut:, "lau"] = frame.loc[cut:, "lau"] + 1_000_000
    elif spoil == "area":
        only_first = set(frame["lau"].iloc[:cut]) - set(frame["lau"].iloc[cut:])
        value = min(only_first)  # a lau of the first part alone, given to a household of
        home = frame.loc[frame["lau"] == value, "nuts3"].iloc[0]  # the second elsewhere
        row = int(np.flatnonzero((frame["nuts3"] != home).to_numpy()
                                 & (frame.index > cut) & ~frame["hid"].duplicated())[1])
        frame.loc[frame["hid"] == frame.loc[row, "hid"], "lau"] = value
    parts = [frame.iloc[:cut], frame.iloc[cut:]]
    method = RecordSwap(hierarchy=HIERARCHY, similar="hsize", risk_variables=["age"])
    summaries = [finer_summary(part, "hid", HIERARCHY, set(HIERARCHY)) for part in parts]
    assert all(summary["lau"] is not None for summary in summaries)  # no part can tell
    assert all(summary["age"] is None for summary in summaries)  # a person's value
    args = (summaries, list(frame.columns), frame["hid"].nunique(),
            frame.groupby(HIERARCHY).ngroups, method)
    if refused:
        with pytest.raises(InputError, match="'lau' is a geography finer"):
            refuse_finer(*args)
    else:
        refuse_finer(*args)


@pytest.mark.parametrize(("options", "name"), [
    ({"risk_variables": None}, "risk_variables"),
    ({"risk_columns": ["a"]}, "risk_columns"),
    ({"swap_rate": 1.5}, "swap_rate"),
    ({"k": -1}, "k"),
    ({"hierarchy": "a,a"}, "hierarchy"),
])
def test_bad_parameters_are_refused_by_name(options, name):
    given = {"hierarchy": ["a", "b"], "similar": "s", "risk_variables": ["x"], **options}
    with pytest.raises(ParameterError, match=f"`{name}`"):
        RecordSwap(**given)


@pytest.mark.parametrize(("options", "name"), [
    ({"carry_along": ["income"]}, "carry_along"),
    ({"similar": "age"}, "similar"),
    ({"hierarchy": ["nuts1", "age"]}, "hierarchy"),
])
def test_a_person_column_read_as_a_household_one_names_its_parameter(options, name):
    """The web app shows the refusal beside the field that named the column."""
    from microagg.release.params import method_fields
    from microagg.ui.forms import field_at_fault

    with pytest.raises(InputError, match=r"'(income|age)' differs within household") as raised:
        _swap(census(200, seed=6), **options)
    assert field_at_fault(raised.value, [f.name for f in method_fields(RecordSwap)]) == name


def test_a_hierarchy_out_of_order_is_shown_beside_its_field():
    from microagg.release.params import method_fields
    from microagg.ui.forms import field_at_fault

    with pytest.raises(InputError, match="comes after") as raised:
        _swap(census(200, seed=6), hierarchy=HIERARCHY[::-1])
    assert field_at_fault(raised.value, [f.name for f in method_fields(RecordSwap)]) == (
        "hierarchy")


def test_the_command_writes_the_table_and_its_report(run_cli, tmp_path):
    frame = census(300, seed=8)
    path, out = tmp_path / "census.csv", tmp_path / "out.csv"
    frame.to_csv(path, index=False)
    args = ["swap", path, "-o", out, "--household", "hid", "--hierarchy",
            ",".join(HIERARCHY), "--risk-variables", "age,national", "--similar",
            "hsize,htype;hsize", "--swap-rate", "0.1", "--k", "3", "--seed", "4"]
    result = run_cli(*args)
    assert result.code == 0, result.stderr
    written = pd.read_csv(out)
    assert written.shape == frame.shape
    report = json.loads((tmp_path / "out.csv.report.json").read_text())
    assert report["method"] == "targeted-record-swapping"
    assert report["report"]["households_swapped"] == int(
        (written.groupby("hid")["nuts3"].first() != frame.groupby("hid")["nuts3"].first()).sum())
    repeated = [*args[:10], "--similar", "hsize,htype", "--similar", "hsize", *args[12:]]
    repeated[3] = tmp_path / "again.csv"
    assert run_cli(*repeated).code == 0  # one profile per --similar: the same profiles
    assert (tmp_path / "again.csv").read_bytes() == out.read_bytes()
    out.unlink()
    refused = run_cli(*args[:-4], "--k", "3", "--seed", "4", "--carry-along", "nowhere")
    assert refused.code == 2 and not out.exists()
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "nowhere" in lines[0]


def test_a_recipe_step_swaps_as_the_method_and_repeats_from_its_yaml():
    import yaml

    from microagg.data.schema import Schema
    from microagg.recipe.model import Recipe

    frame = census(300, seed=9)
    schema = Schema.infer(frame).with_roles({"hid": "household"})
    recipe = Recipe(seed=3, schema=schema).add({
        "family": "keys", "method": "targeted-record-swapping", "hierarchy": HIERARCHY,
        "similar": "hsize,htype;hsize", "risk_variables": ["age", "national"],
        "swap_rate": 0.1})
    written = recipe.run(frame).frame
    again = Recipe.from_dict(yaml.safe_load(recipe.dumps())).run(frame).frame
    pd.testing.assert_frame_equal(written, again)
    moved = (written[HIERARCHY] != frame[HIERARCHY]).any(axis=1)
    assert moved.any() and (written.groupby("hid")[HIERARCHY].nunique() == 1).all().all()


def test_the_apps_steps_table_shows_the_swap_report_level_by_level():
    """Under a swap step, the steps table gives the households swapped, those at risk
    without a donor and each level's figures, as in the step's report."""
    pytest.importorskip("shiny", reason="the web app needs the extra ui (shiny)")
    from microagg.data.schema import Schema
    from microagg.recipe.model import Recipe
    from microagg.recipe.runner import RecipeRun
    from microagg.ui.steps_tab import steps_html

    frame = census(300, seed=9)
    schema = Schema.infer(frame, roles={"hid": "household"})
    run = RecipeRun.start(Recipe(schema=schema, seed=3), frame).then(
        {"family": "keys", "method": "targeted-record-swapping", "hierarchy": HIERARCHY,
         "similar": "hsize", "risk_variables": ["age", "national"], "k": 3})
    report = run.results[0].record.report
    shown = str(steps_html(run))
    assert f"swapped {report['households_swapped']:,} households" in shown
    assert f"{report['without_donor']:,} at risk without a donor" in shown
    for level in report["levels"]:
        assert (f"{level['level']}: {level['at_risk']:,} at risk, "
                f"{level['swapped_at_risk']:,} swapped for risk, "
                f"{level['swapped_at_random']:,} at random") in shown
    assert report["households_swapped"] > 0 and any(lv["at_risk"] for lv in report["levels"])
