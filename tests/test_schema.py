from pathlib import Path

import pandas as pd
import pytest

from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError, SchemaError


def test_attribute_parses_role_and_kind_from_strings():
    attribute = Attribute("AGE", role="Quasi", kind="NUMERIC", domain=[0, 120])
    assert attribute.role is Role.QUASI
    assert attribute.kind is Kind.NUMERIC
    assert attribute.bounds == (0.0, 120.0)
    assert attribute.categories is None


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"role": "secret"}, "unknown role 'secret'"),
        ({"kind": "text"}, "unknown kind 'text'"),
        ({"domain": [5, 1]}, "finite lo < hi"),
        ({"domain": [1, 1]}, "finite lo < hi"),
        ({"domain": [0, "x"]}, "must be numbers"),
        ({"domain": [0, 1, 2]}, "a numeric domain is [lo, hi]"),
        ({"domain": [0, float("inf")]}, "finite"),
        ({"kind": "nominal", "domain": []}, "list of categories is empty"),
        ({"kind": "nominal", "domain": ["a", "b", "a"]}, "category 'a' is listed twice"),
        ({"kind": "numeric", "taxonomy": "t.csv"}, "only meaningful for a nominal"),
        ({"domain": "abc"}, "domain must be a list"),
    ],
)
def test_attribute_validation_names_attribute_and_problem(kwargs, fragment):
    with pytest.raises(SchemaError) as info:
        Attribute("INCOME", **kwargs)
    assert "INCOME" in str(info.value)
    assert fragment in str(info.value)


def test_categorical_domain_is_stored_as_labels():
    attribute = Attribute("LEVEL", kind="ordinal", domain=[1, 2, 3])
    assert attribute.categories == ("1", "2", "3")
    assert attribute.bounds is None


def test_schema_refuses_duplicate_names():
    with pytest.raises(SchemaError, match="'A' is declared twice"):
        Schema((Attribute("A"), Attribute("A")))


def test_schema_yaml_round_trip(tmp_path: Path):
    taxonomy = tmp_path / "tax" / "occupation.csv"
    taxonomy.parent.mkdir()
    taxonomy.write_text("a;*\n")
    schema = Schema(
        (
            Attribute("AGE", Role.QUASI, Kind.NUMERIC, domain=(0, 120)),
            Attribute("EDU", Role.QUASI, Kind.ORDINAL, domain=("low", "mid", "high")),
            Attribute("JOB", Role.QUASI, Kind.NOMINAL, taxonomy=taxonomy),
            Attribute("INCOME", Role.CONFIDENTIAL, Kind.NUMERIC, domain=(0, 1e6)),
            Attribute("NAME", Role.IDENTIFIER, Kind.NOMINAL),
        )
    )
    path = tmp_path / "schema.yaml"
    schema.save(path)
    text = path.read_text()
    assert "domain: [0, 120]" in text
    assert "taxonomy: tax/occupation.csv" in text  # stored relative to the schema file
    loaded = Schema.load(path)
    assert loaded == schema
    assert loaded.quasi_identifiers == ("AGE", "EDU", "JOB")
    assert loaded.names_with_role("confidential") == ("INCOME",)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("attributes: {A: {role: quasi, colour: red}}", "unknown key 'colour'"),
        ("columns: {}", "one key 'attributes'"),
        ("attributes: {A: {role: quasi}}\nextra: 1", "unknown top-level key 'extra'"),
        ("attributes: [A, B]", "must map each column"),
        ("attributes: {A: 3}", "expected a mapping"),
        ("attributes: {A: {kind: numeric, domain: [9, 1]}}", "attribute 'A'"),
        ("attributes: {A: [", "not valid YAML"),
    ],
)
def test_schema_load_errors(tmp_path: Path, text, fragment):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SchemaError, match=None) as info:
        Schema.load(path)
    assert fragment in str(info.value)


def test_schema_load_missing_file(tmp_path: Path):
    with pytest.raises(SchemaError, match="schema file not found"):
        Schema.load(tmp_path / "absent.yaml")


def test_infer_kinds_roles_and_no_domains():
    frame = pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5], "c": ["x", "y"], "d": [True, False]})
    schema = Schema.infer(frame, roles={"a": "quasi"})
    assert [x.kind for x in schema] == [Kind.NUMERIC, Kind.NUMERIC, Kind.NOMINAL, Kind.NOMINAL]
    assert [x.role for x in schema] == [Role.QUASI, Role.OTHER, Role.OTHER, Role.OTHER]
    assert all(x.domain is None for x in schema)


def test_infer_refuses_unknown_role_column():
    with pytest.raises(SchemaError, match="unknown column 'zz'"):
        Schema.infer(pd.DataFrame({"a": [1]}), roles={"zz": "quasi"})


def test_complete_adds_undeclared_columns_in_frame_order():
    frame = pd.DataFrame({"x": [1.0], "name": ["bob"], "y": [2.0]})
    schema = Schema((Attribute("y", Role.QUASI, Kind.NUMERIC, domain=(0, 10)),))
    completed = schema.complete(frame)
    assert completed.names == ("x", "name", "y")
    assert completed["y"].bounds == (0.0, 10.0)
    assert completed["x"].role is Role.OTHER


def test_complete_refuses_declared_column_absent_from_data():
    schema = Schema((Attribute("missing"),))
    with pytest.raises(SchemaError, match="'missing' is declared in the schema but is not"):
        schema.complete(pd.DataFrame({"x": [1]}))


def test_duplicated_frame_columns_are_refused():
    frame = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(InputError, match="'a' appears more than once"):
        Schema.infer(frame)


def test_select_and_with_roles():
    schema = Schema((Attribute("a"), Attribute("b"), Attribute("c")))
    assert schema.select(["c", "a"]).names == ("c", "a")
    changed = schema.with_roles({"b": "confidential"})
    assert changed["b"].role is Role.CONFIDENTIAL
    assert changed["a"].role is Role.QUASI
    with pytest.raises(SchemaError, match="unknown attribute 'z'"):
        schema.with_roles({"z": "quasi"})


@pytest.mark.parametrize(("text", "fragment"), [
    ('a\n1\n"1,234"\n3\n', r"thousands separator \(row 2: '1,234'\)"),
    ("a\n1\n2\nlots\n", "row 3 holds the text 'lots'"),
    ("a\n99999999999999999999999\n2\n", "beyond the 64-bit range in row 1"),
])
def test_numbers_read_as_text_are_refused(tmp_path, text, fragment):
    """One odd cell would turn a numeric column into categories (and, before every column
    was masked, into a column released raw)."""
    from microagg.data.io import read_table
    from microagg.errors import InputError

    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=fragment):
        Schema.infer(read_table(path))


def test_the_number_check_parses_each_distinct_text_once_as_every_cell_would_be():
    import numpy as np

    from microagg.data.column_checks import _numbers

    values = ["1,234", " 12", "1e5", "inf", "nan", "-", "99999999999999999999",
              "9223372036854775808", "0x10", "True", "", "1", "2.5", "+3", "x"]
    rng = np.random.default_rng(0)
    for _ in range(60):
        chosen = list(rng.choice(values, size=int(rng.integers(1, 5))))
        text = pd.Series([chosen[i] for i in rng.integers(0, len(chosen), 25)],
                         index=rng.permutation(200)[:25])
        for dtype in (object, "str"):
            cells = text.astype(dtype)
            expected, parsed = pd.to_numeric(cells, errors="coerce"), _numbers(cells)
            assert parsed.index.equals(cells.index) and parsed.dtype == expected.dtype
            assert np.array_equal(parsed.to_numpy(), expected.to_numpy(), equal_nan=True)
