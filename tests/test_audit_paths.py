"""A DP release judged by everything each path writes or prints beside it: ``microagg dp``,
``microagg run`` and the web app's own calls (microagg.audit_paths), on two kinds of
neighbours: one record replaced, and one cell missing where the schema declares what a
missing cell is read as. Everything but the table must be the same on both (files, stdout,
stderr, exit status); the table must keep the ε its privacy report claims.

A new path or a new output is caught here by being added to ``PATHS`` or written by a path."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg.audit_paths import PATHS, RELOADED, Case, side_outputs, table_audit
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import MicroaggError
from microagg.evaluation.audit import epsilon_lower_bound

pytest.importorskip("shiny")  # the app's path imports the app's modules

SCHEMA = Schema((
    Attribute("name", Role.IDENTIFIER, Kind.NOMINAL),
    Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1), missing=0),
    Attribute("y", Role.QUASI, Kind.NUMERIC, domain=(0, 100)),
    Attribute("c", Role.QUASI, Kind.NOMINAL, domain=("a", "b", "c"), missing="c"),
    Attribute("d", Role.OTHER, Kind.NOMINAL),
    Attribute("e", Role.QUASI, Kind.NOMINAL, domain=("01", "02", "x")),
    Attribute("flag", Role.QUASI, Kind.NUMERIC, domain=(0, 1), missing=0),
    Attribute("m", Role.QUASI, Kind.NUMERIC, domain=(0, 10), missing=2.5),
    Attribute("g", Role.QUASI, Kind.NOMINAL, domain=("1", "1.5", "2", "x"), missing="x"),
    Attribute("country", Role.QUASI, Kind.NOMINAL, domain=("NA", "ZA", "BW")),
    Attribute("w", Role.WEIGHT, Kind.NUMERIC),
))

TAXONOMY_SCHEMA = Schema(tuple(
    replace(a, taxonomy=Path(__file__).parent / "data" / "abc_taxonomy.csv")
    if a.name == "c" else a for a in SCHEMA))


def _table(rows: int = 24) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "name": [f"person {i}" for i in range(rows)],
        "x": rng.uniform(0, 1, rows).round(3),
        "y": rng.uniform(0, 100, rows).round(1),
        "c": rng.choice(["a", "b"], rows),
        "d": rng.choice(["p", "q"], rows),
        "e": rng.choice(["01", "02"], rows),  # codes: read as numbers unless some are text
        "flag": rng.choice([True, False], rows),  # read as 1 and 0
        "m": pd.array(rng.integers(0, 10, rows), dtype="Int64"),  # nullable integers
        "g": rng.choice([1.0, 2.0], rows),  # category codes stored as numbers
        "country": rng.choice(["ZA", "BW"], rows),  # NA (Namibia) is a missing-value token
        "weight": rng.uniform(1, 9, rows).round(1),  # undeclared, named like a weight
        "w": rng.uniform(1, 50, rows).round(2),
        "z": rng.integers(0, 100, rows),  # undeclared: no step reads it
        "tag": [f"t{i}" for i in range(rows)],  # undeclared, every value distinct
    })


def _neighbours(fmt: str) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """One record replaced (a category only that record has included: a Parquet column then
    lists it among its categories; a weight the risk measures would refuse; the only value
    above the top code of a step; text in an undeclared column of numbers; a value that makes
    the distinct values of an undeclared column repeat), and one cell of each protected
    column missing."""
    base = _table()
    replaced = base.astype({"z": object})
    replaced.loc[0, ["x", "y", "c", "d", "w", "z", "tag", "e"]] = [
        1.0, 100.0, "b", "z", -3.0, "abc", "t1", "01"]
    replaced["flag"] = replaced["flag"].astype(object)
    replaced.loc[0, "flag"] = 1  # a number among booleans
    replaced["weight"] = replaced["weight"].astype(object)
    replaced.loc[0, ["g", "weight", "country"]] = [1.5, "abc", "NA"]
    base.loc[0, "e"] = "x"  # the only text among the codes
    base.loc[0, ["x", "y", "c"]] = [0.0, 0.0, "a"]
    with_missing = base.copy()
    with_missing["flag"] = with_missing["flag"].astype(object)
    with_missing.loc[0, ["x", "c", "m", "flag", "g"]] = [np.nan, None, pd.NA, None, np.nan]
    extreme = base.copy()
    extreme.loc[0, ["x", "y"]] = [1e200, np.inf]  # clamped into their domains
    pairs = [(base, replaced), (with_missing, base), (extreme, base)]
    if fmt == "parquet":  # typed columns: text in a column of numbers is text throughout
        def typed(t: pd.DataFrame) -> pd.DataFrame:
            return t.assign(d=t["d"].astype("category"), z=t["z"].astype(str),
                            weight=t["weight"].astype(str),
                            flag=pd.array([None if pd.isna(v) else bool(v) for v in t["flag"]],
                                          dtype="boolean"))

        pairs = [(typed(a), typed(b)) for a, b in pairs]
    return pairs


LAPLACE = {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["x", "y"]}
INSENSITIVE = {"family": "dp", "method": "insensitive", "epsilon": 2.0, "k": 3,
               "columns": ["x", "c"]}
CASES = [
    Case("laplace", SCHEMA, (LAPLACE,)),
    Case("insensitive, a nominal column", SCHEMA, (INSENSITIVE,)),
    Case("laplace, Parquet with categories read off the data", SCHEMA, (LAPLACE,),
         fmt="parquet"),
    Case("a DP step carrying a column, then a DP step on it", SCHEMA, (
        {**LAPLACE, "epsilon": 0.1, "columns": ["x"], "carry": ["y"]},
        {**LAPLACE, "epsilon": 1.0, "columns": ["x", "y"]})),
    Case("top coding at a declared value, then DP", SCHEMA, (
        {"family": "mask", "method": "top-bottom-coding", "top": 80.0, "columns": ["y"]},
        INSENSITIVE)),
    Case("codes with leading zeros, one record's text among them", SCHEMA, (
        {**INSENSITIVE, "columns": ["x", "e"]},)),
    Case("codes with leading zeros in an Excel sheet", SCHEMA, (
        {**INSENSITIVE, "columns": ["x", "e", "country"]},), fmt="xlsx"),
    Case("a declared category that is a missing-value token", SCHEMA, (
        {**INSENSITIVE, "columns": ["x", "country"]},)),
    Case("booleans, nullable integers and codes stored as numbers", SCHEMA, (
        {**INSENSITIVE, "columns": ["flag", "m", "g"]},), fmt="parquet"),
    Case("codes with leading zeros in a CSV file with a byte-order mark", SCHEMA, (
        {**INSENSITIVE, "columns": ["x", "e"]},), fmt="csv-bom"),
    Case("booleans and nullable integers in CSV", SCHEMA, (
        {**LAPLACE, "columns": ["flag", "m"]},)),
    Case("a DP step carrying a column with a missing value, then a DP step on it", SCHEMA, (
        {**LAPLACE, "epsilon": 0.1, "columns": ["y"], "carry": ["x"]},
        {**LAPLACE, "epsilon": 1.0, "columns": ["x", "y"]})),
    Case("top coding that changes one neighbour only, then DP", SCHEMA, (
        {"family": "mask", "method": "top-bottom-coding", "top": 99.95, "columns": ["y"]},
        LAPLACE)),
    Case("intervals from -inf to inf, then DP on them", SCHEMA, (
        {"family": "keys", "method": "global-recoding",
         "breaks": {"y": [-np.inf, 50.0, np.inf]}},
        {**INSENSITIVE, "columns": ["x", "y"]})),
    Case("a level of a declared taxonomy, then DP on it", TAXONOMY_SCHEMA, (
        {"family": "keys", "method": "global-recoding", "levels": {"c": 1}}, INSENSITIVE)),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_nothing_but_the_table_differs_between_neighbours(path, case):
    if path == "dp" and not case.dp:
        pytest.skip("microagg dp makes one DP step")
    for pair in _neighbours(case.fmt):
        seen = side_outputs(path, case, pair)
        (code, *_), = seen if len(seen) == 1 else [(None,)]
        assert len(seen) == 1, _difference(seen)
        assert code == 0, seen


RELOADED_CASES = [c for c in CASES if c.name in (
    "a DP step carrying a column, then a DP step on it",
    "codes with leading zeros in an Excel sheet",
    "a DP step carrying a column with a missing value, then a DP step on it")]


@pytest.mark.parametrize("path", RELOADED)
@pytest.mark.parametrize("case", RELOADED_CASES, ids=[c.name for c in RELOADED_CASES])
def test_a_release_made_again_from_its_recipe_differs_in_its_table_only(path, case):
    """The app's recipe card reads the recipe and its data file and runs the steps again:
    the same audit on a few cases (two DP steps composing, an Excel sheet, a carried missing value),
    each neighbour once."""
    for pair in _neighbours(case.fmt):
        seen = side_outputs(path, case, pair, runs=1)
        assert len(seen) == 1, _difference(seen)
        assert next(iter(seen))[0] == 0, seen


FINITE_BREAKS = Case("intervals with finite outer breaks, then DP", SCHEMA, (
    {"family": "keys", "method": "global-recoding", "breaks": {"y": [0.0, 50.0, 100.0]}},
    {**INSENSITIVE, "columns": ["x", "y"]}))


def test_steps_that_cannot_compose_are_refused_before_the_data_is():
    """A recipe whose DP step follows a recoding with finite outer breaks is refused by its
    steps alone: run step by step, the recoding refused first a value beyond its breaks (an
    infinite y, clamped into its domain by the DP step), so one record chose which line
    ``microagg run`` and a recipe loaded back in the app said."""
    from microagg.recipe.model import Recipe, Step
    from microagg.ui.resume import replay

    pair = _neighbours("csv")[2]  # one y infinite
    seen = side_outputs("run", FINITE_BREAKS, pair, runs=1)
    assert len(seen) == 1, _difference(seen)
    assert next(iter(seen))[0] == 2
    recipe = Recipe(schema=SCHEMA, steps=tuple(Step.of(s) for s in FINITE_BREAKS.steps))
    said = set()
    for frame in pair:
        with pytest.raises(MicroaggError) as refused:
            replay(recipe, None, frame, Path("."))
        said.add(str(refused.value))
    assert len(said) == 1, said


def _difference(seen) -> str:
    """The first part in which the side outputs differ, for the failure message."""
    first, second = list(seen)[:2]
    names = ("exit status", "stdout", "stderr")
    for name, a, b in zip(names, first[:3], second[:3], strict=True):
        if a != b:
            return f"{name} differs: {a!r} / {b!r}"
    files_a, files_b = dict(first[3]), dict(second[3])
    for name in sorted(set(files_a) | set(files_b)):
        if files_a.get(name) != files_b.get(name):
            return f"{name} differs:\n{files_a.get(name)}\n---\n{files_b.get(name)}"
    return "?"


def _low_y(table: pd.DataFrame) -> bool:
    return bool((table["y"] <= 30).any())


@pytest.mark.slow
@pytest.mark.parametrize("path", ["run", "app"])
def test_a_dp_step_reading_a_carried_column_adds_its_epsilon(path):
    """Step 1 protects x at ε = 0.1 and carries y, raw; step 2 protects y at ε = 4. Step 2
    reads the input again, so the table is (0.1 + 4)-DP, not 0.1-DP: the event "a written
    y is at most 30" on D (y₀ = 0) and D' (y₀ = 100) proves more than 0.1 and stays below
    the claimed sum."""
    schema = Schema((Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1)),
                     Attribute("y", Role.QUASI, Kind.NUMERIC, domain=(0, 100))))
    case = Case("composition", schema, (
        {**LAPLACE, "epsilon": 0.1, "columns": ["x"], "carry": ["y"]},
        {**LAPLACE, "epsilon": 4.0, "columns": ["y"]}))
    low = pd.DataFrame({"x": [0.5, 0.5, 0.5], "y": [0.0, 100.0, 100.0]})
    high = low.assign(y=[100.0, 100.0, 100.0])
    result, claimed = table_audit(path, case, (low, high), _low_y, trials=250)
    proved = epsilon_lower_bound(*result.hits_written, result.trials)
    assert claimed == pytest.approx(4.1)
    assert 0.1 < proved <= claimed, (result, proved)


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
def test_the_written_table_keeps_its_claimed_epsilon(path):
    """Plain Laplace at ε = 1 on x ∈ [0, 1] (y dropped): one record at 0 or at 1, the event
    "a written x is at most 0.25", through every path."""
    schema = Schema((Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1)),
                     Attribute("y", Role.QUASI, Kind.NUMERIC, domain=(0, 100))))
    case = Case("laplace", schema, ({**LAPLACE, "columns": ["x"]},))
    low = pd.DataFrame({"x": [0.0, 0.5, 0.5], "y": [1.0, 2.0, 3.0]})
    high = low.assign(x=[1.0, 0.5, 0.5])
    result, claimed = table_audit(path, case, (low, high),
                                  lambda t: bool((t["x"] <= 0.25).any()), trials=200)
    assert claimed == 1.0
    assert epsilon_lower_bound(*result.hits_written, result.trials) <= claimed


KIDS = Schema((Attribute("kids", Role.QUASI, Kind.NUMERIC, domain=(0, 10)),
               Attribute("sex", Role.QUASI, Kind.NOMINAL, domain=("1", "2", "3"))))


@pytest.mark.parametrize("path", PATHS)
def test_an_spss_column_is_read_as_its_declaration_says(path):
    """An SPSS variable is read as its labels when every value has one: one unlabelled
    value switched how the whole column was read (kids declared numeric, with labels for 0
    and 1; sex declared by its codes, with labels for 1 and 2 only)."""
    labels = {"kids": {0: "none", 1: "one"}, "sex": {1: "male", 2: "female"}}
    dp = {**LAPLACE, "columns": ["kids", "sex"]}
    coding = {"family": "mask", "method": "top-bottom-coding", "top": 5.0, "columns": ["kids"]}
    base = pd.DataFrame({"kids": [0.0, 1.0] * 12, "sex": [1.0, 2.0] * 12})
    other = base.copy()
    other.loc[0, ["kids", "sex"]] = [3.0, 3.0]
    for steps in ((dp,), (coding, dp)):  # the DP step, and top coding before it
        if path == "dp" and len(steps) > 1:
            continue
        case = Case("SPSS labels", KIDS, steps, fmt="sav", labels=labels)
        seen = side_outputs(path, case, (base, other))
        assert len(seen) == 1, _difference(seen)
        assert next(iter(seen))[0] == 0


@pytest.mark.parametrize("fmt", ["sav", "parquet"])
def test_a_dp_release_writes_no_value_label_of_its_input(tmp_path, run_cli, fmt):
    """Which value labels an SPSS file holds may follow its data (labels written from the
    values present): a DP release writes codes and labels from its own categories, and
    only the variables' descriptions of the input."""
    pyreadstat = pytest.importorskip("pyreadstat")
    frame = pd.DataFrame({"c": [1.0, 1.0, 2.0, 1.0, 2.0, 1.0]})
    pyreadstat.write_sav(frame, str(tmp_path / "in.sav"),
                         variable_value_labels={"c": {1: "a", 2: "c", 3: "only-in-the-file"}},
                         column_labels={"c": "a described variable"})
    (tmp_path / "s.yaml").write_text(
        "attributes:\n  c: {role: quasi, kind: nominal, domain: [a, b, c]}\n")
    out = tmp_path / f"out.{fmt}"
    done = run_cli("dp", tmp_path / "in.sav", "-o", out, "--schema", tmp_path / "s.yaml",
                   "--method", "insensitive", "--epsilon", "1", "--k", "2")
    assert done.code == 0, done.stderr
    if fmt == "sav":
        _, meta = pyreadstat.read_sav(str(out))
        written = set(meta.variable_value_labels.get("c", {}).values())
        assert written <= {"a", "b", "c"} and "only-in-the-file" not in written
        assert meta.column_names_to_labels["c"] == "a described variable"
    else:
        assert b"only-in-the-file" not in out.read_bytes()


@pytest.mark.parametrize("path", PATHS)
def test_households_are_counted_by_the_ids_as_written(path):
    """Two household ids beyond 2^53 stay two households whatever another record's id is
    (read as numbers, one fractional id made them one float)."""
    schema = Schema((Attribute("hh", Role.HOUSEHOLD, Kind.NUMERIC),
                     Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1))))
    case = Case("households", schema, ({**LAPLACE, "columns": ["x"], "household_size": 1},))
    ids = [2**53, 2**53 + 1, *range(3, 25)]
    base = pd.DataFrame({"hh": ids, "x": np.linspace(0, 1, 24)})
    other = base.astype({"hh": object})
    other.loc[5, "hh"] = 3.5
    seen = side_outputs(path, case, (base, other))
    assert len(seen) == 1, _difference(seen)
    assert next(iter(seen))[0] == 0
