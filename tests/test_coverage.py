"""A declaration (categories, a taxonomy) checked against the column it describes when it
is made, not when a step or a comparison encodes the column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import datasets
from microagg.data.coverage import check_covered, outside
from microagg.data.io import read_table
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import SchemaError


def test_the_values_outside_are_those_the_declaration_leaves_out():
    rng = np.random.default_rng(0)
    declared = ("a", "b", "c")
    values = rng.choice(["a", "b", "c", "x", "y", "?"], 500).astype(object)
    values[rng.random(500) < 0.1] = None
    series = pd.Series(values)
    found = outside(series, Attribute("v", Role.QUASI, Kind.NOMINAL, domain=declared))
    expected = pd.Series([v for v in values if v is not None and v not in declared])
    assert found == expected.value_counts().to_dict()
    assert list(found.values()) == sorted(found.values(), reverse=True)
    # what is declared, missing or read off the data is never outside
    assert outside(series, Attribute("v", Role.QUASI, Kind.NOMINAL,
                                     domain=("a", "b", "c", "x", "y", "?"))) == {}
    assert outside(series, Attribute("v", Role.QUASI, Kind.NOMINAL, domain=declared,
                                     observed=True)) == {}
    assert outside(pd.Series([1.0, 7.5]), Attribute("n", Role.QUASI, Kind.NUMERIC)) == {}


def test_numbers_are_compared_as_the_categories_they_write():
    column = Attribute("code", Role.QUASI, Kind.ORDINAL, domain=("1", "2", "3"))
    assert outside(pd.Series([1.0, 2.0, np.nan, 4.0]), column) == {"4": 1}


def test_a_refusal_names_the_column_the_values_and_their_cells():
    schema = Schema((Attribute("sex", Role.QUASI, Kind.NOMINAL, domain=("F", "M")),
                     Attribute("age", Role.QUASI, Kind.NUMERIC)))
    frame = pd.DataFrame({"sex": ["F", "?", "?", "u", "v", "w", "M"], "age": range(7)})
    with pytest.raises(SchemaError) as caught:
        check_covered(frame, schema)
    said = str(caught.value)
    assert "column 'sex' holds 5 cells" in said and "'?' (2)" in said
    assert "and 1 other value;" in said and "\n" not in said
    check_covered(frame, schema, ["age"])  # a column not asked about is not checked
    check_covered(frame.assign(sex=["F", None, "M", "F", "M", "M", "F"]), schema)


@pytest.mark.reference_data
def test_an_adult_hierarchy_covers_workclass_once_question_marks_are_missing():
    """UCI Adult writes a missing value as ?, which the ARX hierarchies do not hold: read
    as is, the taxonomy is refused naming ? and its cells; read with ? as missing, it
    covers the column."""
    folder = datasets.data_dir("adult.csv")
    hierarchy = datasets.data_dir("hierarchies/adult_hierarchy_workclass.csv")
    if folder is None or hierarchy is None:
        pytest.skip("the Adult data and hierarchies are not in the reference data")
    path = folder / "adult.csv"
    schema = Schema((Attribute("workclass", Role.QUASI, Kind.NOMINAL,
                               taxonomy=hierarchy / "hierarchies" /
                               "adult_hierarchy_workclass.csv"),))
    raw = read_table(path)
    cells = int((raw["workclass"] == "?").sum())
    with pytest.raises(SchemaError, match=rf"leaf of its taxonomy.*: '\?' \({cells:,}\);"):
        check_covered(raw, schema)
    check_covered(read_table(path, na=["?"]), schema)
