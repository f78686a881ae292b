"""A recipe loaded back in the web app reads its data as its ``read:`` says: its own data
file, or the data tab's file read again when that was read otherwise (ui/resume.py's
``recipe_table``, a plain function)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg.data.io import read_table
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError
from microagg.recipe import Recipe
from microagg.ui.limits import DEFAULT
from microagg.ui.resume import recipe_table, replay
from microagg.ui.state import Reading, Workspace

READ = {"na": ["?"], "separator": ";"}


@pytest.fixture
def written(tmp_path: Path):
    """A CSV file written with ';' and '?' for a missing cell, its recipe, a workspace."""
    rng = np.random.default_rng(5)
    n = 60
    frame = pd.DataFrame({"age": rng.integers(18, 90, n).astype(object),
                          "sex": rng.choice(["f", "m"], n)})
    frame.loc[[2, 9, 30], "age"] = "?"
    path = tmp_path / "people.csv"
    frame.to_csv(path, sep=";", index=False)
    schema = Schema((Attribute("age", Role.QUASI, Kind.NUMERIC, domain=(0, 120)),
                     Attribute("sex", Role.QUASI, Kind.NOMINAL)))
    recipe = Recipe(schema=schema, seed=1, read=READ).add(
        {"family": "microaggregate", "method": "mdav", "k": 3, "columns": ["age"]})
    space = Workspace()
    yield path, recipe, space
    space.close()


def _read_as_the_recipe_says(frame: pd.DataFrame) -> None:
    assert list(frame.columns) == ["age", "sex"]  # the separator applied
    assert frame["age"].isna().sum() == 3 and pd.api.types.is_numeric_dtype(frame["age"])


def test_its_own_data_file_is_read_with_the_recipes_read_and_runs(written):
    path, recipe, space = written
    upload = space.folder.parent / f"{space.folder.name}-upload.csv"  # the upload's copy
    shutil.copyfile(path, upload)
    loaded, notes = recipe_table(recipe, (upload, "people.csv"), None, None, space, DEFAULT)
    assert loaded is not None and loaded.path.parent == space.folder
    _read_as_the_recipe_says(loaded.frame)
    assert any("read as the recipe reads it" in n for n in notes)
    resumed = replay(recipe, loaded.path, loaded.frame, space.folder)
    assert len(resumed.run.results) == 1 and resumed.run.recipe.read == READ
    # given again (the card's recipe reloaded): read again where the session keeps it
    again, _ = recipe_table(recipe, (loaded.path, "people.csv"), None, None, space, DEFAULT)
    assert again is not None and again.frame.equals(loaded.frame)


def test_the_data_tabs_file_read_otherwise_is_read_again_as_the_recipe_says(written):
    path, recipe, space = written
    source = space.folder / path.name
    shutil.copyfile(path, source)
    plain = read_table(source)  # as the data tab read it, with its defaults
    loaded, notes = recipe_table(recipe, None, source, plain, space, DEFAULT)
    assert loaded is not None and loaded.path == source
    _read_as_the_recipe_says(loaded.frame)
    assert len(notes) == 1 and "read again as the recipe reads it" in notes[0]
    # read as the recipe says already: the table stays, nothing said
    same = read_table(source, **Reading.of(READ).options())
    assert recipe_table(recipe, None, source, same, space, DEFAULT) == (None, [])


def test_a_file_that_cannot_be_read_again_runs_as_read_and_says_so(written):
    path, recipe, space = written
    frame = read_table(path, **Reading.of(READ).options())
    frame.attrs.clear()  # a Parquet file keeps a frame's attrs: this one says nothing
    source = space.folder / "people.parquet"
    frame.to_parquet(source)
    loaded, notes = recipe_table(recipe, None, source, read_table(source), space, DEFAULT)
    assert loaded is None and len(notes) == 1
    assert "the recipe reads its input with" in notes[0] and "as read" in notes[0]


def test_no_table_and_a_token_the_app_cannot_hold_are_one_line(written):
    _, recipe, space = written
    with pytest.raises(InputError, match="data file") as caught:
        recipe_table(recipe, None, None, None, space, DEFAULT)
    assert "\n" not in str(caught.value)
    with pytest.raises(InputError, match="holds a comma"):
        Reading.of({"na": ["a,b"]})
