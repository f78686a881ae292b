from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg.data.io import atomic_path, read_table, table_format, write_json, write_table
from microagg.errors import InputError


@pytest.mark.parametrize("name", ["t.csv", "t.parquet", "t.pq"])
def test_round_trip_by_extension(tmp_path: Path, name):
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [0.1, 1 / 3, 2e-300], "c": ["x", "y", "z"]})
    path = tmp_path / name
    write_table(frame, path)
    back = read_table(path)
    assert list(back.columns) == ["a", "b", "c"]
    np.testing.assert_array_equal(back["b"].to_numpy(), frame["b"].to_numpy())  # exact floats
    assert list(back["c"]) == ["x", "y", "z"]
    assert list(back["a"]) == [1, 2, 3]


def test_unknown_extension(tmp_path: Path):
    with pytest.raises(InputError, match=r"use a \.csv, \.parquet, \.sav, \.dta, \.xlsx or "
                       r"\.sas7bdat \(read only\) extension"):
        table_format(tmp_path / "t.ods")


def test_missing_file(tmp_path: Path):
    with pytest.raises(InputError, match="file not found"):
        read_table(tmp_path / "nothing.csv")


def test_empty_csv(tmp_path: Path):
    path = tmp_path / "e.csv"
    path.write_text("")
    with pytest.raises(InputError, match="is empty"):
        read_table(path)


def test_duplicate_header(tmp_path: Path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,a\n1,2,3\n")
    with pytest.raises(InputError, match="column name 'a' appears more than once"):
        read_table(path)


def test_missing_tokens(tmp_path: Path):
    path = tmp_path / "m.csv"
    path.write_text("a,b\n1,NA\n,x\n3,None\n")
    frame = read_table(path)
    assert frame["a"].isna().tolist() == [False, True, False]
    assert frame["b"].isna().tolist() == [True, False, False]
    assert frame["b"].iloc[2] == "None"  # not a missing-value token


def test_atomic_path_leaves_nothing_on_failure(tmp_path: Path):
    target = tmp_path / "out.csv"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("partial")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_replaces_existing_file(tmp_path: Path):
    target = tmp_path / "r.json"
    target.write_text("old")
    write_json(target, {"x": np.int64(3), "y": np.arange(2)})
    assert target.read_text().strip().startswith("{")
    assert '"x": 3' in target.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_output_folder_must_exist(tmp_path: Path):
    with pytest.raises(InputError, match="output folder does not exist"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "no" / "such" / "x.csv")


def test_a_parquet_index_that_pandas_stored_is_read_as_what_it_is(tmp_path):
    """A named index is a column of the data (``set_index("id")`` before ``to_parquet``);
    unnamed row labels (a filtered or reordered frame) are pandas' own and not data."""
    path = tmp_path / "t.parquet"
    pd.DataFrame({"id": [5, 6, 7], "x": [1.0, 2.0, 3.0]}).set_index("id").to_parquet(path)
    read = read_table(path)
    assert list(read.columns) == ["id", "x"] and read["id"].tolist() == [5, 6, 7]
    assert isinstance(read.index, pd.RangeIndex) and read.index.start == 0
    pd.DataFrame({"x": [1.0, 2.0, 3.0]}).iloc[[2, 0]].to_parquet(path)
    read = read_table(path)
    assert list(read.columns) == ["x"] and read["x"].tolist() == [3.0, 1.0]
    assert list(read.index) == [0, 1]


def test_a_row_with_more_fields_than_the_header_is_refused_wherever_it_is(tmp_path: Path):
    """pandas reads a first row longer than the header as row labels, every column shifted
    one place; that row is refused like any other, naming the file and the line."""
    cases = {"first.csv": ("a,b\n1,2,3\n4,5\n6,7\n", 2),
             "blank.csv": ("a,b\n\n1,2,3\n4,5\n", 3),
             "later.csv": ("a,b\n1,2\n4,5,6\n6,7\n", 3),
             "trailing.csv": ("a,b\n1,2,\n4,5,\n", 2),
             "quoted.csv": ('a,b\n"x\ny",2,3\n4,5\n', 2)}
    for name, (text, line) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(InputError) as caught:
            read_table(path)
        message = str(caught.value)
        assert str(path) in message and f"line {line} has 3 fields" in message, message
        assert "header names 2 columns" in message
    long_first = tmp_path / "long.csv"  # its first row lies beyond what is sampled first
    long_first.write_text('a,b\n"' + "x" * 70_000 + '",2,3\n4,5\n')
    with pytest.raises(InputError, match="first row of data has more fields"):
        read_table(long_first)


def test_rows_with_quoted_separators_blank_lines_or_fewer_fields_are_read(tmp_path: Path):
    path = tmp_path / "fine.csv"
    path.write_text('a,b,c\n\n"1,5",2,"x\ny"\n4,5\n')
    frame = read_table(path)
    assert list(frame.columns) == ["a", "b", "c"]
    assert isinstance(frame.index, pd.RangeIndex)
    assert frame["a"].tolist() == ["1,5", "4"] and frame["b"].tolist() == [2, 5]
    assert frame["c"].iloc[0] == "x\ny" and pd.isna(frame["c"].iloc[1])
