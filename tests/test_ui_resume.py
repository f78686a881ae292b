"""Loading a recipe back in the web app (ui/resume.py), as plain functions: the recipe the
download tab and ``microagg run`` write is read, checked against the table, and its steps
run again to the same table; a recipe that does not fit the table is refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg.data.io import read_table
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError, MicroaggError
from microagg.recipe import Recipe
from microagg.recipe.write import write_run
from microagg.ui.progress import Feed
from microagg.ui.resume import read_recipe, replay, unknown_columns
from microagg.ui.state import build_schema

TAXONOMY = "north;land;*\nsouth;land;*\neast;sea;*\nwest;sea;*\n"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, pd.DataFrame]:
    """A table (CSV) and the recipe a seeded run of two steps on it wrote, with an inline
    taxonomy; and the table that run released."""
    folder = tmp_path_factory.mktemp("resume")
    rng = np.random.default_rng(3)
    n = 240
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "sex": rng.choice(["f", "m"], n),
                          "region": rng.choice(["north", "south", "east", "west"], n),
                          "income": rng.normal(3000, 800, n).round(2),
                          "weight": rng.integers(1, 50, n)})
    source = folder / "people.csv"
    frame.to_csv(source, index=False)
    (folder / "region.csv").write_text(TAXONOMY)
    schema = Schema((Attribute("age", Role.QUASI, Kind.NUMERIC, domain=(0, 120)),
                     Attribute("sex", Role.QUASI, Kind.NOMINAL),
                     Attribute("region", Role.QUASI, Kind.NOMINAL,
                               taxonomy=folder / "region.csv"),
                     Attribute("income", Role.CONFIDENTIAL, Kind.NUMERIC),
                     Attribute("weight", Role.WEIGHT, Kind.NUMERIC)))
    recipe = (Recipe(input=source, schema=schema, seed=7)
              .add({"family": "microaggregate", "method": "mdav", "k": 4,
                    "columns": ["age", "income"]})
              .add({"family": "keys", "method": "global-recoding", "levels": {"region": 1},
                    "keys": ["region"]})
              .add({"family": "keys", "method": "invariant-pram", "keys": ["sex"]}))
    run = recipe.run(read_table(source), source=source)
    files, _ = write_run(run, folder / "out.csv", sources=[source])
    return source, files.recipe, run.frame


def test_the_recipe_written_runs_again_to_the_same_table(
        made: tuple[Path, Path, pd.DataFrame], tmp_path: Path) -> None:
    source, recipe_file, released = made
    recipe = read_recipe(recipe_file)
    feed = Feed("steps")
    resumed = replay(recipe, source, read_table(source), tmp_path, feed)
    assert len(resumed.run.results) == 3 and resumed.notes == ()
    pd.testing.assert_frame_equal(resumed.run.frame, released)
    assert feed.read()[1].startswith("step 3 of 3")
    # the edits declare the recipe's schema on the data tab, taxonomy included
    inferred = Schema.infer(read_table(source), strict=False)
    rebuilt = build_schema(inferred, resumed.edits)
    for attribute in recipe.schema or ():
        assert (rebuilt[attribute.name].role, rebuilt[attribute.name].kind) == (
            attribute.role, attribute.kind)
    region = rebuilt["region"].taxonomy
    assert region is not None and region.parent == tmp_path
    assert region.read_text().split() == TAXONOMY.split()
    assert rebuilt["age"].domain == (0, 120)
    # the run goes on: one more step on top of those loaded
    more = resumed.run.then({"family": "keys", "method": "local-suppression", "k": 2,
                             "keys": ["sex", "age"]})
    assert len(more.results) == 4 and more.results[-1].risk.violations[2] <= (
        resumed.run.results[-1].risk.violations[2])


def test_a_recipe_for_another_file_runs_and_is_said(
        made: tuple[Path, Path, pd.DataFrame], tmp_path: Path) -> None:
    source, recipe_file, _ = made
    other = tmp_path / "people.csv"
    frame = read_table(source).iloc[:200]
    frame.to_csv(other, index=False)
    resumed = replay(read_recipe(recipe_file), other, read_table(other), tmp_path)
    assert len(resumed.run.frame) == 200
    assert len(resumed.notes) == 1 and "SHA-256 differs" in resumed.notes[0]


def test_the_public_recipe_of_a_dp_release_loads(made: tuple[Path, Path, pd.DataFrame],
                                                  tmp_path: Path) -> None:
    source, _, _ = made
    step = {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["income"],
            "bounds": {"income": [0, 10_000]}}
    run = Recipe(input=source).add(step).run(read_table(source), source=source)
    files, _ = write_run(run, tmp_path / "dp.csv", sources=[source])
    text = files.recipe.read_text()
    assert "sha256:" not in text and "seed:" not in text  # the public view
    resumed = replay(read_recipe(files.recipe), source, read_table(source), tmp_path)
    assert resumed.run.private and list(resumed.run.frame.columns) == ["income"]
    assert any("fresh noise" in note for note in resumed.notes)


def test_a_recipe_that_does_not_fit_the_table_is_refused(
        made: tuple[Path, Path, pd.DataFrame], tmp_path: Path) -> None:
    source, recipe_file, _ = made
    recipe = read_recipe(recipe_file)
    frame = read_table(source)
    assert unknown_columns(recipe, frame) is None
    without = frame.drop(columns=["income"])
    with pytest.raises(InputError, match=r"schema names column 'income'.*load the table"):
        replay(recipe, None, without, tmp_path)
    stepless = Recipe(schema=None, steps=recipe.steps)
    why = unknown_columns(stepless, without)
    assert why is not None and why.startswith("step 1 (microaggregate mdav) names column "
                                              "'income'")


def test_a_step_the_table_refuses_is_named(made: tuple[Path, Path, pd.DataFrame],
                                           tmp_path: Path) -> None:
    source, _, _ = made
    recipe = Recipe(steps=({"family": "microaggregate", "method": "mdav", "k": 1000},))
    with pytest.raises(MicroaggError, match=r"^step 1 \(microaggregate mdav \(k=1000\)\): "):
        replay(recipe, source, read_table(source), tmp_path)


@pytest.mark.parametrize(("text", "said"), [
    ("format: microagg-recipe/1\nschema: schema.yaml\nsteps: []\n", "schema file 'schema"),
    ("format: microagg-recipe/1\nsteps:\n  - {family: microaggregate, method: nope}\n",
     "step 1"),
    ("steps: [\n", "recipe file mine.yaml is not valid YAML"),
    ("", "steps"),
])
def test_a_broken_recipe_is_one_clear_line(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(text)
    with pytest.raises(MicroaggError, match=said) as caught:
        read_recipe(path, "mine.yaml")
    assert "\n" not in str(caught.value) and str(tmp_path) not in str(caught.value)
