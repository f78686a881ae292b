"""CSV files written with a decimal comma or thousands separators: `--decimal`, `--thousands`,
and the refusal that names them."""

import numpy as np
import pandas as pd
import pytest

import microagg.data.io
from microagg.data.io import read_table
from microagg.data.schema import Schema
from microagg.data.table import encode
from microagg.errors import InputError

SEMICOLON = "age;income;city\n69,5;1.234,5;Reus\n70,25;31.931,0;Valls\n71,0;2.000.500,75;Reus\n"


def test_a_semicolon_file_with_decimal_commas_reads_as_numbers(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text(SEMICOLON)
    frame = read_table(path, decimal=",", thousands=".")
    assert frame["age"].dtype == np.float64
    assert list(frame["age"]) == [69.5, 70.25, 71.0]
    assert list(frame["income"]) == [1234.5, 31931.0, 2000500.75]
    assert list(frame["city"]) == ["Reus", "Valls", "Reus"]
    assert [a.kind.value for a in Schema.infer(frame)] == ["numeric", "numeric", "nominal"]


def test_thousands_separators_read_as_numbers(tmp_path):
    path = tmp_path / "us.csv"
    path.write_text('income,w\n"31,931",1\n"1,234",2\n"2,000,500",3\n')
    frame = read_table(path, thousands=",")
    assert frame["income"].dtype == np.int64
    assert list(frame["income"]) == [31931, 1234, 2000500]


@pytest.mark.parametrize(("text", "options"), [
    ("age;w\n69,5;1\n70,25;2\n71,0;3\n", "read the CSV file with `decimal` ,"),
    ("age;w\n1.069,5;1\n70,25;2\n71,0;3\n", "read the CSV file with `decimal` , `thousands` ."),
    ('income,w\n"31,931",1\n"1,234",2\n"2,000,500",3\n', "read the CSV file with `thousands` ,"),
])
def test_the_refusal_names_the_options_that_read_the_numbers(tmp_path, text, options):
    path = tmp_path / "x.csv"
    path.write_text(text)
    frame = read_table(path)
    with pytest.raises(InputError, match=options):
        encode(frame, Schema.infer(frame, default_role="quasi"))


@pytest.mark.parametrize(("text", "flags", "args"), [
    ("age;w\n69,5;1\n70,25;2\n71,0;3\n72,5;4\n", "--decimal ,", ["--decimal", ","]),
    ('income,w\n"31,931",1\n"1,234",2\n"2,000,500",3\n"4,100",4\n', "--thousands ,",
     ["--thousands", ","]),
])
def test_the_command_line_refuses_then_reads_with_the_flag(run_cli, tmp_path, text, flags,
                                                           args):
    path = tmp_path / "in.csv"
    path.write_text(text)
    out = tmp_path / "out.csv"
    refused = run_cli("microaggregate", path, "-o", out, "--k", "2")
    assert refused.code == 2
    assert flags in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert not out.exists()
    done = run_cli("microaggregate", path, "-o", out, "--k", "2", *args)
    assert done.code == 0, done.stderr
    written = pd.read_csv(out)
    assert all(pd.api.types.is_float_dtype(written[c]) or pd.api.types.is_integer_dtype(
        written[c]) for c in written.columns)


@pytest.mark.parametrize("command", [
    ["check", "IN", "--k", "2"],
    ["evaluate", "IN", "IN", "--columns", "age"],
    ["mask", "IN", "-o", "OUT", "--method", "rank-swap", "--param", "0.5", "--seed", "1"],
    ["dp", "IN", "-o", "OUT", "--epsilon", "1", "--k", "2", "--bounds", "age=0:120,w=0:10",
     "--seed", "1"],
    ["tclose", "IN", "-o", "OUT", "--k", "2", "--t", "0.9", "--quasi", "age",
     "--confidential", "w"],
    ["compare", "IN", "--target-risk", "mdav=2", "--methods", "mdav", "--columns", "age,w"],
])
def test_every_command_that_reads_a_csv_takes_the_dialect(run_cli, tmp_path, command,
                                                         monkeypatch):
    path = tmp_path / "in.csv"
    path.write_text("age;w\n" + "".join(f"{60 + i},{i % 10};{i % 3 + 1}\n" for i in range(12)))
    args = [str(path) if a == "IN" else str(tmp_path / "out.csv") if a == "OUT" else a
            for a in command]
    read = microagg.data.io.read_table
    ages: list[pd.Series] = []

    def reading(*a, **kw):
        frame = read(*a, **kw)
        ages.append(frame["age"])
        return frame

    monkeypatch.setattr(microagg.data.io, "read_table", reading)
    result = run_cli(*args, "--decimal", ",")
    assert result.code in (0, 1), result.stderr  # check exits 1 when k-anonymity fails
    assert ages and all(list(age) == [60 + i + (i % 10) / 10 for i in range(12)]
                        for age in ages)


@pytest.mark.parametrize(("decimal", "thousands", "fragment"), [
    (".", ".", "both '.'"),
    ("ab", None, "one character"),
])
def test_contradictory_dialects_are_refused(tmp_path, decimal, thousands, fragment):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=fragment):
        read_table(path, decimal=decimal, thousands=thousands)


def test_the_dialect_applies_to_csv_only(tmp_path):
    pd.DataFrame({"a": [1.5]}).to_parquet(tmp_path / "x.parquet")
    with pytest.raises(InputError, match="apply to CSV files only"):
        read_table(tmp_path / "x.parquet", decimal=",")
