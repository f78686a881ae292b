"""SPSS, Stata, Excel and SAS tables: reading, writing, value labels, and round trips through
the command line."""

import builtins
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg.data.formats import LABELS_KEY, carry_labels
from microagg.data.io import read_table, write_table
from microagg.data.schema import Kind, Schema
from microagg.data.table import decode, encode
from microagg.errors import InputError

pyreadstat = pytest.importorskip("pyreadstat")
pytest.importorskip("openpyxl")

DATA = Path(__file__).parent / "data"
N = 24
SEX = {1: "male", 2: "female"}
EDUCATION = {1: "primary", 2: "secondary", 3: "tertiary", 9: "doctorate"}
REGION = {10: "north", 20: "south", 30: "east"}


def _source() -> pd.DataFrame:
    """Labelled (sex, education, region) and unlabelled columns, an integer one (age) and
    a float one (income), the way a statistics package stores them: labels as codes."""
    rng = np.random.default_rng(7)
    return pd.DataFrame({
        "age": rng.integers(18, 90, N).astype(np.int64),
        "income": np.round(rng.lognormal(10, 1, N), 2),
        "sex": rng.choice([1, 2], N).astype(np.float64),
        "education": rng.choice([1, 2, 3], N).astype(np.float64),  # 9 is never used
        "region": rng.choice([10, 20, 30], N).astype(np.float64),
        "weight": rng.uniform(0.5, 2.0, N),
        "household": rng.integers(1, 9, N).astype(np.int64),
    })


def _write_source(path: Path) -> pd.DataFrame:
    frame = _source()
    labels = {"sex": SEX, "education": EDUCATION, "region": REGION}
    column_labels = {"age": "Age in years", "sex": "Sex of the respondent"}
    if path.suffix == ".sav":
        pyreadstat.write_sav(frame, str(path), column_labels=column_labels,
                             variable_value_labels=labels,
                             variable_measure={"education": "ordinal", "sex": "nominal",
                                               "region": "nominal"},
                             variable_format={"age": "F3.0", "household": "F2.0"})
    else:  # a Stata long, as Stata stores integers (pyreadstat writes int64 as double)
        pyreadstat.write_dta(frame.astype({"age": np.int32, "household": np.int32}), str(path),
                             column_labels=column_labels,
                             variable_value_labels=labels)
    return frame


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_value_labels_are_read_as_categories(tmp_path, suffix):
    source = _write_source(tmp_path / f"in{suffix}")
    frame = read_table(tmp_path / f"in{suffix}")
    assert frame["age"].dtype == np.int64
    assert list(frame["age"]) == list(source["age"])
    assert frame["income"].dtype == np.float64
    sex = frame["sex"]
    assert isinstance(sex.dtype, pd.CategoricalDtype)
    assert list(sex.cat.categories) == ["male", "female"]  # code order
    assert list(sex) == [SEX[int(v)] for v in source["sex"]]
    education = frame["education"].dtype
    assert list(education.categories) == ["primary", "secondary", "tertiary", "doctorate"]
    assert education.ordered is (suffix == ".sav")  # Stata has no measure level
    variables = frame.attrs[LABELS_KEY]["variables"]
    assert variables["age"]["label"] == "Age in years"
    assert variables["region"]["value_labels"] == REGION
    schema = Schema.infer(frame)
    assert schema["education"].domain == ("primary", "secondary", "tertiary", "doctorate")
    assert schema["education"].kind is (Kind.ORDINAL if suffix == ".sav" else Kind.NOMINAL)
    assert schema["region"].kind is Kind.NOMINAL
    assert schema["age"].kind is Kind.NUMERIC


def test_a_variable_with_unlabelled_values_stays_numeric(tmp_path):
    frame = pd.DataFrame({"age": [30.0, 41.0, 99.0, 52.0]})
    pyreadstat.write_sav(frame, str(tmp_path / "a.sav"),
                         variable_value_labels={"age": {99: "refused"}})
    back = read_table(tmp_path / "a.sav")
    assert pd.api.types.is_float_dtype(back["age"])
    assert list(back["age"]) == [30.0, 41.0, 99.0, 52.0]
    write_table(back, tmp_path / "b.sav")
    _, meta = pyreadstat.read_sav(str(tmp_path / "b.sav"))
    assert meta.variable_value_labels["age"] == {99.0: "refused"}


def _run_release(run_cli, tmp_path, suffix, *extra):
    _write_source(tmp_path / f"in{suffix}")
    out = tmp_path / f"out{suffix}"
    result = run_cli("microaggregate", tmp_path / f"in{suffix}", "-o", out, "--k", "3",
                     "--columns", "age,income,sex,region", *extra)
    assert result.code == 0, result.stderr
    return out


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_a_release_round_trips_values_labels_and_types(run_cli, tmp_path, suffix):
    source = _source()
    out = _run_release(run_cli, tmp_path, suffix)
    raw, meta = (pyreadstat.read_sav if suffix == ".sav" else pyreadstat.read_dta)(str(out))
    # unmasked columns come back as they were
    np.testing.assert_array_equal(raw["weight"].to_numpy(), source["weight"].to_numpy())
    np.testing.assert_array_equal(raw["education"].to_numpy(), source["education"].to_numpy())
    # the labels, on the columns that had them, with their original codes
    assert meta.variable_value_labels["education"] == EDUCATION
    assert meta.column_names_to_labels["age"] == "Age in years"
    assert meta.column_names_to_labels["sex"] == "Sex of the respondent"
    released = read_table(out)
    assert released["household"].dtype == np.int64  # unmasked integers stay integers
    assert list(released["household"]) == list(source["household"])
    assert released["age"].dtype == np.int64  # cluster means rounded to whole years
    assert list(released.columns) == list(source.columns)
    # masked categories are labelled categories: the original ones keep their code, a
    # generalized '*' (if any) gets the next code after the largest with its own label
    for name, labels in (("sex", SEX), ("region", REGION)):
        written = meta.variable_value_labels[name]
        assert {c: written[c] for c in labels} == labels
        assert set(written) - set(labels) <= {max(labels) + 1}
        codes = raw[name].to_numpy()
        assert set(np.unique(codes)) <= set(written)
        assert isinstance(released[name].dtype, pd.CategoricalDtype)
        assert list(released[name].cat.categories)[:len(labels)] == list(labels.values())
    # k-anonymity holds on the released file as read back
    classes = released.groupby(["age", "income", "sex", "region"], observed=True).size()
    assert classes.min() >= 3
    assert released["education"].dtype.categories.tolist() == list(EDUCATION.values())


def test_labels_survive_a_parquet_file_between_two_runs(run_cli, tmp_path):
    """Parquet keeps the labels (pandas stores ``attrs`` as JSON, codes as text)."""
    _write_source(tmp_path / "in.sav")
    for source, target in (("in.sav", "mid.parquet"), ("mid.parquet", "out.sav")):
        result = run_cli("microaggregate", tmp_path / source, "-o", tmp_path / target,
                         "--k", "3", "--columns", "age,income")
        assert result.code == 0, result.stderr
    raw, meta = pyreadstat.read_sav(str(tmp_path / "out.sav"))
    assert meta.variable_value_labels["education"] == EDUCATION
    np.testing.assert_array_equal(raw["education"].to_numpy(), _source()["education"])


def test_an_integer_column_stays_integer_when_its_values_do(tmp_path):
    frame = pd.DataFrame({"n": np.array([3, 5, 7], dtype=np.int64), "x": [0.5, 1.5, 2.5],
                          "big": np.array([1, 2, 2**40], dtype=np.int64)})
    for suffix in (".sav", ".dta"):
        write_table(frame, tmp_path / f"t{suffix}")
        back = read_table(tmp_path / f"t{suffix}")
        assert back["n"].dtype == np.int64, suffix
        assert back["x"].dtype == np.float64, suffix
        assert list(back["big"]) == [1, 2, 2**40], suffix


def test_a_generalized_category_gets_the_next_code_and_its_own_label(tmp_path):
    frame = pd.DataFrame({"region": pd.Categorical(["north", "*", "east"],
                                                   categories=["north", "south", "east", "*"])})
    frame.attrs[LABELS_KEY] = {"format": "dta", "variables": {"region": {
        "value_labels": REGION, "label": "Region"}}}
    write_table(frame, tmp_path / "r.dta")
    raw, meta = pyreadstat.read_dta(str(tmp_path / "r.dta"))
    assert list(raw["region"]) == [10, 31, 30]
    assert meta.variable_value_labels["region"] == {**REGION, 31: "*"}
    assert meta.column_names_to_labels["region"] == "Region"


def test_text_categories_of_a_labelled_variable_are_written_as_its_codes(tmp_path):
    """A DP release writes categories as text: they go back to the file's codes."""
    frame = pd.DataFrame({"sex": ["female", "male", "female"]}, dtype=object)
    frame.attrs[LABELS_KEY] = {"format": "sav", "variables": {"sex": {"value_labels": SEX}}}
    write_table(frame, tmp_path / "s.sav")
    raw, meta = pyreadstat.read_sav(str(tmp_path / "s.sav"))
    assert list(raw["sex"]) == [2.0, 1.0, 2.0]
    assert meta.variable_value_labels["sex"] == {1.0: "male", 2.0: "female"}


def test_carry_labels_keeps_the_released_columns_only():
    source = pd.DataFrame({"a": [1], "b": [2]})
    source.attrs[LABELS_KEY] = {"format": "sav", "variables": {"a": {"label": "A"},
                                                               "b": {"label": "B"}}}
    released = carry_labels(source, pd.DataFrame({"b": [0]}))
    assert released.attrs[LABELS_KEY]["variables"] == {"b": {"label": "B"}}
    assert carry_labels(pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [1]})).attrs == {}


def test_decode_keeps_a_categorical_column_categorical_with_its_categories():
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0],
                          "c": pd.Categorical(["b", "a", "b", "a"],
                                              categories=["b", "c", "a"], ordered=True)})
    table = encode(frame)
    assert table.categories["c"] == ("b", "c", "a")
    back = decode(table)
    assert back["c"].dtype == frame["c"].dtype
    assert list(back["c"]) == list(frame["c"])


def test_xlsx_round_trip(tmp_path):
    frame = pd.DataFrame({"n": [1, 2, 3], "x": [0.5, -1.25, 1e-7], "t": ["a,b", 'q"', "é"],
                          "m": [np.nan, 1.5, 2.0]})
    write_table(frame, tmp_path / "t.xlsx")
    back = read_table(tmp_path / "t.xlsx")
    assert list(back.columns) == ["n", "x", "t", "m"]
    assert back["n"].dtype == np.int64
    np.testing.assert_array_equal(back["x"].to_numpy(), frame["x"].to_numpy())
    assert list(back["t"]) == ["a,b", 'q"', "é"]
    assert np.isnan(back["m"][0]) and list(back["m"][1:]) == [1.5, 2.0]


def test_a_release_round_trips_through_xlsx(run_cli, tmp_path):
    frame = _source()[["age", "income", "weight"]]
    write_table(frame, tmp_path / "in.xlsx")
    result = run_cli("microaggregate", tmp_path / "in.xlsx", "-o", tmp_path / "out.xlsx",
                     "--k", "3", "--columns", "age,income")
    assert result.code == 0, result.stderr
    back = read_table(tmp_path / "out.xlsx")
    assert list(back.columns) == ["age", "income", "weight"]
    np.testing.assert_allclose(back["weight"], frame["weight"], rtol=1e-14)
    assert back.groupby(["age", "income"]).size().min() >= 3


def test_an_xlsx_output_refuses_a_text_a_cell_cannot_hold(run_cli, tmp_path):
    """A text over 32,767 characters would be cut short in the cell (and reported as written
    unchanged), a control character is refused by openpyxl: each is one line naming the
    column and the limit, and nothing is written; a text of exactly 32,767 is written whole."""
    notes = ["short"] * 12
    schema = tmp_path / "s.yaml"
    schema.write_text("attributes:\n  age: {role: quasi, kind: numeric}\n"
                      "  note: {role: other, kind: nominal}\n")
    out = tmp_path / "out"
    out.mkdir()
    cases = {"long": ("x" * 32_768, ["'note'", "32,768 characters", "32,767"]),
             "control": ("a\x01b", ["'note'", "U+0001"])}
    for name, (text, fragments) in cases.items():
        source = tmp_path / f"{name}.csv"
        pd.DataFrame({"age": range(20, 32), "note": [*notes[:5], text, *notes[6:]]}).to_csv(
            source, index=False)
        result = run_cli("microaggregate", source, "-o", out / "o.xlsx", "--k", "3",
                         "--schema", schema)
        lines = result.stderr.strip().splitlines()
        assert result.code == 2 and len(lines) == 1, result.stderr
        assert all(f in lines[0] for f in [*fragments, "row 6"]), lines[0]
        assert list(out.iterdir()) == []
    whole = pd.DataFrame({"note": ["y" * 32_767, "z"]})
    write_table(whole, tmp_path / "whole.xlsx")
    assert read_table(tmp_path / "whole.xlsx")["note"].str.len().tolist() == [32_767, 1]
    with pytest.raises(InputError, match="its name has 32,768 characters"):
        write_table(pd.DataFrame({"n" * 32_768: [1]}), tmp_path / "name.xlsx")
    assert not (tmp_path / "name.xlsx").exists()


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_names_spss_or_stata_does_not_take_are_written_legal_with_the_original_as_label(
        run_cli, tmp_path, suffix):
    """UCI Adult's ``education-num``, a space, a newline, a name too long, one beginning
    with a digit, a reserved word and two names that become one: each column is written
    under a name its format takes, every name distinct, with its original name as its
    variable label and its values unchanged; a name no label holds whole is refused in one
    line naming the column, and nothing is written."""
    from microagg.data.varnames import RULES

    rules = RULES[suffix[1:]]
    names = ["age", "education-num", "education_num", "a b", "a\nb", "n" * 70, "1st", "with",
             "AND", "é" * 40]
    source = tmp_path / "in.parquet"
    frame = pd.DataFrame({name: np.arange(12.0) + i for i, name in enumerate(names)})
    frame.to_parquet(source)
    out = tmp_path / f"out{suffix}"
    result = run_cli("mask", source, "-o", out, "--method", "top-bottom-coding",
                     "--top", "5", "--columns", "age")
    assert result.code == 0, result.stderr
    back = read_table(out)
    written = [str(c) for c in back.columns]
    assert len({rules.key(c) for c in written}) == len(names)
    assert all(rules.legal(c) for c in written), written
    assert "age" in written and "education_num" in written  # a legal name is kept
    labels = back.attrs[LABELS_KEY]["variables"]
    by_label = {labels.get(c, {}).get("label") or c: c for c in written}
    assert set(by_label) == set(names)
    for i, name in enumerate(names[1:], start=1):  # age is top-coded
        assert back[by_label[name]].tolist() == (np.arange(12.0) + i).tolist()
    longest = "x" * (rules.label_longest + 1) + "-"
    pd.DataFrame({"age": range(20, 32), longest: np.arange(12.0)}).to_parquet(source)
    out.unlink()
    result = run_cli("mask", source, "-o", out, "--method", "top-bottom-coding",
                     "--top", "5", "--columns", "age")
    lines = result.stderr.strip().splitlines()
    assert result.code == 2 and len(lines) == 1, result.stderr
    assert f"cannot write column '{longest}' to {rules.format_name} data" in lines[0]
    assert "rename the column" in lines[0] and not out.exists()


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_values_a_statistical_file_would_change_are_refused(tmp_path, suffix):
    """Whole numbers beyond 2^53 would lose digits as doubles, and SPSS cuts a value label at
    120 bytes (a category of 100 'é' came back as one character): refused, naming the
    column; the largest exact numbers and labels are written whole."""
    fmt = "SPSS" if suffix == ".sav" else "Stata"
    with pytest.raises(InputError, match=rf"column 'id' to {fmt} data: its value in row 2, "
                                         "9007199254740993, has more digits"):
        write_table(pd.DataFrame({"id": [1, 2**53 + 1]}), tmp_path / f"i{suffix}")
    write_table(pd.DataFrame({"id": [1, 2**53]}), tmp_path / f"exact{suffix}")
    assert read_table(tmp_path / f"exact{suffix}")["id"].tolist() == [1, 2**53]
    long = pd.DataFrame({"job": pd.Categorical(["é" * 100, "b"])})
    if suffix == ".sav":
        with pytest.raises(InputError, match="column 'job' to SPSS data: its category "
                                              r"'é{40}\.\.\.' has 200 bytes, more than the 120"):
            write_table(long, tmp_path / "l.sav")
        assert not (tmp_path / "l.sav").exists()
        fits = pd.DataFrame({"job": pd.Categorical(["é" * 60, "b"])})
        write_table(fits, tmp_path / "fits.sav")
        assert read_table(tmp_path / "fits.sav")["job"].tolist() == ["é" * 60, "b"]
    else:  # Stata's value labels hold them
        write_table(long, tmp_path / "l.dta")
        assert read_table(tmp_path / "l.dta")["job"].tolist() == ["é" * 100, "b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"exact{suffix}", "fits.sav" if suffix == ".sav" else "l.dta"])


def test_xlsx_with_a_header_cell_missing_is_refused(tmp_path):
    pd.DataFrame([["a", None], [1, 2]]).to_excel(tmp_path / "h.xlsx", header=False,
                                                 index=False)
    with pytest.raises(InputError, match=r"column 2 of .* has no name"):
        read_table(tmp_path / "h.xlsx")


def test_sas7bdat_is_read(tmp_path):
    """pyreadstat's own test file (tests/data/README.md says where it comes from)."""
    frame = read_table(DATA / "pyreadstat_sample.sas7bdat")
    assert list(frame.columns) == ["mychar", "mynum", "mydate", "dtime", "mylabl", "myord",
                                   "mytime"]
    assert list(frame["mychar"]) == ["a", "b", "c", "d", "e"]
    assert list(frame["mynum"]) == [1.1, 1.2, -1000.3, -1.4, 1000.3]


def test_sas7bdat_cannot_be_written(run_cli, tmp_path):
    (tmp_path / "in.csv").write_text("a,b\n1,2\n3,4\n5,6\n")
    with pytest.raises(InputError, match="cannot write"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.sas7bdat")
    result = run_cli("microaggregate", tmp_path / "in.csv", "-o", tmp_path / "o.sas7bdat",
                     "--k", "2")
    assert result.code == 2
    assert "cannot write" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.sas7bdat").exists()


@pytest.mark.parametrize("suffix", [".sav", ".dta", ".xlsx", ".sas7bdat"])
def test_a_file_that_is_not_what_its_extension_says_is_refused(tmp_path, suffix):
    (tmp_path / f"x{suffix}").write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=f"cannot read .*x{suffix}"):
        read_table(tmp_path / f"x{suffix}")


@pytest.mark.parametrize("suffix", [".sav", ".xlsx"])
def test_without_the_extra_a_one_line_error_says_how_to_install_it(tmp_path, monkeypatch,
                                                                   suffix, run_cli):
    _write_source(tmp_path / "in.sav")
    write_table(_source(), tmp_path / "in.xlsx")
    real = builtins.__import__

    def no_formats(name, *args, **kwargs):
        if name in ("pyreadstat", "openpyxl") or name.startswith("openpyxl."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    for module in ("pyreadstat", "openpyxl"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setattr(builtins, "__import__", no_formats)
    result = run_cli("check", tmp_path / f"in{suffix}", "--k", "2")
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert 'pip install "microagg[formats]"' in lines[0]


def test_an_excel_formula_without_a_saved_value_is_refused_not_read_as_missing(tmp_path):
    """openpyxl writes formulas without their values (no spreadsheet computed them); read as
    missing they would be a silent misread. A missing cell that holds no formula stays
    missing."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["age", "income"])
    for i in range(6):
        sheet.append([20 + i, 100 * i if i != 4 else f"=A{i + 2}*100"])
    book.save(tmp_path / "formula.xlsx")
    with pytest.raises(InputError, match="cell B6 holds a formula without a saved value"):
        read_table(tmp_path / "formula.xlsx")
    sheet["B6"] = None
    book.save(tmp_path / "missing.xlsx")
    frame = read_table(tmp_path / "missing.xlsx")
    assert frame["income"].isna().tolist() == [False] * 4 + [True, False]
