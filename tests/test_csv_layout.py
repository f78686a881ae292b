"""How a CSV file is written, as sdcApp's import asks it: its own missing-value tokens
(`?` in UCI Adult), its separator and whether it has a header row; what the app's upload
reads with them reaches the recipe it offers, so `microagg run` reads the file the same
way."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from microagg.data.io import READ_KEY, read_table
from microagg.errors import InputError, MicroaggError
from microagg.recipe import Recipe
from microagg.ui.state import Reading, begin_run, read_upload, write_downloads

ADULTISH = ("age,workclass,hours,country\n"
            "39,State-gov,40,United-States\n"
            "50,?,13,?\n"
            "38,Private,?,Mexico\n"
            "53,NA,40,United-States\n"
            "28,Private,,?\n")


def test_a_files_own_tokens_are_read_as_missing_besides_the_defaults(tmp_path):
    path = tmp_path / "adult.csv"
    path.write_text(ADULTISH)
    plain = read_table(path)
    read = read_table(path, na=["?"])
    assert (plain == "?").to_numpy().sum() == 4  # without the token, `?` is a category
    assert READ_KEY not in plain.attrs and read.attrs[READ_KEY] == {"na": ["?"]}
    # every `?` cell, and only those, turns missing; the default tokens stay missing
    turned = read.isna() & plain.notna()
    assert turned.equals(plain == "?")
    assert read.isna().sum().sum() == plain.isna().sum().sum() + 4
    # a numeric column whose only text was the token is read as numbers
    assert read["hours"].dtype == np.float64
    assert not pd.api.types.is_numeric_dtype(plain["hours"])


def test_a_declared_category_stays_itself_even_when_it_is_a_token(tmp_path):
    path = tmp_path / "adult.csv"
    path.write_text(ADULTISH)
    read = read_table(path, na=["?"], text={"country": ["?", "Mexico", "United-States"]})
    assert list(read["country"]) == ["United-States", "?", "Mexico", "United-States", "?"]
    assert read["workclass"].isna().sum() == 2  # `?` and NA elsewhere still missing


def test_the_separator_given_and_a_file_without_header(tmp_path):
    path = tmp_path / "plain.csv"
    rows = ["1;a,b;x", "2;c;?", "3;d;y"]
    path.write_text("\n".join(rows) + "\n")
    read = read_table(path, separator=";", header=False, na=["?"])
    assert list(read.columns) == ["V1", "V2", "V3"]
    assert len(read) == len(rows)  # the first row is data
    assert list(read["V2"]) == ["a,b", "c", "d"]
    assert read["V3"].isna().tolist() == [False, True, False]
    assert read.attrs[READ_KEY] == {"na": ["?"], "separator": ";", "header": False}
    # read off the header, the comma of the first row would be the separator
    assert list(read_table(path).columns) != ["V1", "V2", "V3"]


@pytest.mark.parametrize(("options", "named"), [
    ({"na": "?"}, "`na`"), ({"na": [1]}, "`na`"), ({"separator": "ab"}, "`separator`"),
    ({"separator": "x"}, "`separator`"), ({"header": "no"}, "`header`"),
])
def test_bad_reading_options_are_refused_in_one_line(tmp_path, options, named):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=named) as caught:
        read_table(path, **options)
    assert "\n" not in str(caught.value)


def test_reading_options_apply_to_csv_files_only(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"a": ["?", "x"]}).to_parquet(path)
    with pytest.raises(InputError, match="`na` applies to CSV files only"):
        read_table(path, na=["?"])
    assert read_upload(path)[0]["a"].tolist() == ["?", "x"]
    with pytest.raises(InputError, match="CSV files only"):
        read_upload(path, Reading(na="?"))


def test_the_upload_fields_are_the_readers_options():
    assert Reading().options() == {}
    assert Reading(na=" ?, -99,?, ", separator="tab", header=False).options() == {
        "na": ["?", "-99"], "separator": "\t", "header": False}
    assert Reading(na="x", separator=";", header=True).options() == {
        "na": ["x"], "separator": ";"}


def test_a_recipe_keeps_how_its_input_is_read():
    recipe = Recipe(read={"na": ["?", "-99"], "separator": ";", "header": False},
                    steps=({"family": "microaggregate", "method": "mdav", "k": 3},))
    again = Recipe.from_dict(recipe.to_dict())
    assert dict(again.read) == dict(recipe.read)
    with pytest.raises(MicroaggError, match="reading option"):
        Recipe(read={"na_values": ["?"]})


def test_the_apps_recipe_reads_the_tokens_and_reproduces_the_release(tmp_path, run_cli):
    """The upload read with `?` as missing, a local suppression step, the files the download
    tab offers: `?` is missing in the risk and in the release, and `microagg run` on the
    recipe reads the file the same way and writes the same release."""
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame({
        "age": rng.integers(17, 90, n),
        "workclass": rng.choice(["Private", "Self-emp", "?", "Local-gov"], n),
        "sex": rng.choice(["Male", "Female"], n),
        "country": rng.choice(["United-States", "Mexico", "?"], n, p=[0.8, 0.1, 0.1]),
    })
    source = tmp_path / "adult.csv"
    frame.to_csv(source, index=False)
    table, inferred, _ = read_upload(source, Reading(na="?"))
    tokens = int((frame[["workclass", "country"]] == "?").to_numpy().sum())
    assert int(table.isna().to_numpy().sum()) == tokens
    run = begin_run(source, table, inferred, None, "matches-any")
    assert dict(run.recipe.read) == {"na": ["?"]}
    run = run.then({"family": "keys", "method": "local-suppression", "k": 3,
                    "keys": ["workclass", "sex", "country"]})
    files = write_downloads(run, source, "csv", "internal")
    release = pd.read_csv(files.table, keep_default_na=False, na_values=[""])
    assert "?" not in set(release["workclass"]) | set(release["country"])
    assert Recipe.load(files.recipe).read == {"na": ["?"]}
    again = tmp_path / "again.csv"
    result = run_cli("run", files.recipe, "-o", again)
    assert result.code == 0, result.stderr
    assert again.read_bytes() == files.table.read_bytes()


def test_a_dp_release_reads_the_tokens_as_declared_missing_and_publishes_them(tmp_path):
    """A numeric column written with `?` for a missing value: read with the token, the
    missing cells take the schema's declared value and the DP step runs; the recipe
    published beside the release (its public view) says how the file is read, and holds
    nothing read off the data."""
    from microagg.ui.state import ColumnEdit, build_schema

    rng = np.random.default_rng(5)
    hours = rng.integers(1, 99, 200).astype(object)
    hours[rng.random(200) < 0.1] = "?"
    source = tmp_path / "people.csv"
    pd.DataFrame({"hours": hours, "sex": rng.choice(["f", "m"], 200)}).to_csv(
        source, index=False)
    table, inferred, _ = read_upload(source, Reading(na="?"))
    assert inferred["hours"].is_numeric  # read as is, `?` would make it text
    schema = build_schema(inferred, {"hours": ColumnEdit(role="quasi", kind="numeric",
                                                         domain="0, 100", missing="40"),
                                     "sex": ColumnEdit(role="other")})
    run = begin_run(source, table, schema, None, "matches-any").then(
        {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["hours"]})
    files = write_downloads(run, source, "csv", "external")
    release = pd.read_csv(files.table)
    assert release["hours"].notna().all() and release["hours"].between(0, 100).all()
    public = yaml.safe_load(files.recipe.read_text())
    assert public["read"] == {"na": ["?"]}
    assert "observed" not in files.recipe.read_text() and "seed" not in public


def test_a_decimal_comma_file_is_read_as_numbers_and_its_recipe_says_so(tmp_path):
    """A `;` file with a decimal comma (a European office's): read with the decimal mark,
    its amounts are numbers and the recipe's `read:` has the mark; read without it, they
    are text, and setting their kind to numeric is refused naming a value."""
    pytest.importorskip("shiny", reason="the web app needs the extra ui (shiny)")
    from microagg.ui.data_tab import numbers_refused
    from microagg.ui.state import ColumnEdit

    source = tmp_path / "survey.csv"
    source.write_text("region;income\nnorth;28107,0\nsouth;372,43\nnorth;\n")
    how = Reading(separator=";", decimal=",")
    table, inferred, _ = read_upload(source, how)
    assert table["income"].tolist()[:2] == [28107.0, 372.43]
    assert numbers_refused(table, {"income": ColumnEdit(kind="numeric")}) is None
    run = begin_run(source, table, inferred, None, "matches-any")
    assert dict(run.recipe.read) == {"separator": ";", "decimal": ","}
    as_text, _, _ = read_upload(source, Reading(separator=";"))
    refusal = numbers_refused(as_text, {"income": ColumnEdit(kind="numeric"),
                                        "region": ColumnEdit(kind="nominal")})
    assert refusal is not None and "'28107,0' is not a number" in str(refusal)
    assert "decimal mark" in str(refusal) and "income" in str(refusal)
    assert numbers_refused(as_text, {"income": ColumnEdit(role="other")}) is None


def test_a_new_file_starts_from_detection_unless_its_fields_were_changed():
    semicolon = Reading(na="-9", separator=";", header=False, decimal=",")
    fresh = semicolon.for_next_file(semicolon)  # the fields as the last file left them
    assert fresh.options() == {"na": ["-9"]}  # the tokens stay (the page lists them)
    assert semicolon.for_next_file(Reading()) == semicolon  # changed for this file
    assert semicolon.for_next_file(None) == semicolon  # the first file
