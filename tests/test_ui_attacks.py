"""The web app's panel of attack risks as plain functions: the fields checked as a recipe's
section (each error beside its field), the figures those of the library on the release and
the control records, the upload's limits, and nothing of them in a DP release's downloads."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("shiny", reason="the web app needs the extra ui (shiny)")

import microagg
from microagg.errors import InputError
from microagg.recipe import Recipe
from microagg.risk.attacks import AttackSettings, release_attacks
from microagg.ui.attack_panel import (
    FIELDS,
    MAX_ATTACKS,
    attack_request,
    field_of,
    measure_attacks,
    said,
)
from microagg.ui.limits import Limits

KINDS = ["singling-out", "linkability", "inference"]


@pytest.mark.parametrize(("fields", "where"), [
    (([], "held.csv", [], [], [], 500, None), "attack_kinds"),
    ((KINDS, None, [], [], [], 500, None), "attack_control"),
    ((KINDS, "held.csv", [], [], [], 0, None), "attack_n"),
    ((KINDS, "held.csv", [], [], [], MAX_ATTACKS + 1, None), "attack_n"),
    ((KINDS, "held.csv", [], [], [], 2.5, None), "attack_n"),
    ((KINDS, "held.csv", [], [], [], 500, -1), "attack_seed"),
    ((KINDS, "held.csv", [], ["age"], [], 500, None), "attack_links"),
])
def test_a_wrong_field_is_said_beside_it_in_one_line(fields, where):
    kinds, control, *rest = fields
    with pytest.raises(InputError) as refused:
        attack_request(kinds, None if control is None else Path(control), *rest)
    text = str(refused.value)
    assert field_of(text) == where and "\n" not in said(text)
    assert not said(text).startswith("the recipe's")


def test_a_field_of_an_attack_not_chosen_is_left_aside():
    asked = attack_request(["linkability"], Path("held.csv"), ["income"], ["age"], ["region"],
                           300.0, 2.0)
    assert asked.secret is None and asked.linkability_columns == (("age",), ("region",))
    assert (asked.n, asked.seed) == (300, 2) and set(FIELDS) == {
        "kinds", "control", "secret", "linkability_columns", "n", "seed"}


def _run(tmp_path: Path, step: dict) -> tuple[object, Path]:
    data = microagg.datasets.synthetic(400, 2, seed=0)
    data.frame.iloc[300:].to_csv(tmp_path / "held.csv", index=False)
    run = Recipe(schema=data.schema, seed=1).add(step).run(data.frame.iloc[:300])
    return run, tmp_path / "held.csv"


def test_the_panel_measures_what_the_library_measures_and_refuses_a_wrong_control(tmp_path):
    import pandas as pd

    run, held = _run(tmp_path, {"family": "microaggregate", "method": "mdav", "k": 5})
    asked = attack_request(["linkability", "inference"], held, ["income"], [], [], 150, 4)
    found = measure_attacks(run, asked, Limits())
    direct = release_attacks(run.original, run.frame, pd.read_csv(held),
                             ["linkability", "inference"],
                             settings=AttackSettings(n_attacks=150, secrets=["income"]), rng=4)
    assert found == direct.to_dict() and set(found["inference"]) == {"income"}
    with pytest.raises(InputError) as refused:
        measure_attacks(run, asked, Limits(rows=50))  # the upload's limits hold
    assert "50" in str(refused.value)
    pd.read_csv(held).drop(columns="age").to_csv(tmp_path / "other.csv", index=False)
    wrong = attack_request(["inference"], tmp_path / "other.csv", [], [], [], 100, None)
    with pytest.raises(InputError) as refused:
        measure_attacks(run, wrong, Limits())
    assert field_of(str(refused.value)) == "attack_control"
    secret = attack_request(["linkability"], held, [], ["age"], ["age"], 100, None)
    with pytest.raises(InputError) as refused:
        measure_attacks(run, secret, Limits())
    assert field_of(str(refused.value)) == "attack_links"


def test_a_dp_releases_downloads_hold_no_attack(tmp_path):
    from microagg.ui.state import write_downloads

    dp = {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["age", "income"],
          "bounds": {"age": [16, 100], "income": [0, 200000]}}
    run, held = _run(tmp_path, dp)
    source = tmp_path / "in.csv"
    run.original.to_csv(source, index=False)
    found = measure_attacks(run, attack_request(["inference"], held, ["income"], [], [], 100,
                                                0), Limits())
    assert "income" in found["inference"]
    # the panel measures beside the run: the recipe the downloads are written from is unchanged
    assert run.recipe.attacks is None
    files = write_downloads(run, source, "csv", "internal")
    owner = [p for p in files.all if p not in files.release]
    for path in files.release:
        if path.suffix in (".json", ".yaml", ".html"):
            text = path.read_text(encoding="utf-8").lower()
            assert "attack" not in text and "guesses the person" not in text, path.name
    assert owner and all("guesses the person" not in p.read_text() for p in owner)


def test_each_control_upload_is_kept_aside_and_never_replaces_the_table(tmp_path):
    """A control file goes to a folder of its own: a second upload of the same name is a new
    path (a new measurement, never an earlier result or error), and no control upload can
    replace the table, whatever the two are called."""
    from microagg.ui.state import Workspace

    space = Workspace(folder=tmp_path / "session")
    space.folder.mkdir()
    for name, text in (("x.csv", "table"), ("up1", "a"), ("up2", "b")):
        (tmp_path / name).write_text(text)
    table = space.adopt(tmp_path / "x.csv", "control-1.csv")
    first = space.adopt(tmp_path / "up1", "x.csv", aside="control-1")
    second = space.adopt(tmp_path / "up2", "x.csv", aside="control-2")
    assert len({table, first, second}) == 3
    assert (table.read_text(), first.read_text(), second.read_text()) == ("table", "a", "b")
    assert all(p.parent != space.folder for p in (first, second))
    assert space.place("control-1") != first.parent and space.place(".control-1") != first.parent


def test_a_measurement_stops_between_attacks_and_the_check_changes_no_figure(tmp_path):
    run, held = _run(tmp_path, {"family": "microaggregate", "method": "mdav", "k": 5})
    asked = attack_request(["linkability", "inference"], held, ["income"], [], [], 120, 2)
    calls: list[int] = []

    def count() -> None:
        calls.append(1)

    assert measure_attacks(run, asked, Limits(), count) == measure_attacks(run, asked, Limits())
    assert len(calls) == 2  # before each of the two attacks

    class Stopped(Exception):
        pass

    def stop() -> None:
        if calls:
            raise Stopped
        calls.append(1)

    calls.clear()
    with pytest.raises(Stopped):
        measure_attacks(run, asked, Limits(), stop)  # stopped before the second attack
