"""The direct ``.xlsx`` writer (microagg.data.xlsxwrite) against pandas' own writer: the
sheet each writes reads back as the same table, for every kind of column a release holds."""

from __future__ import annotations

import zipfile

import numpy as np
import pandas as pd
import pytest

from microagg.data.formats import write_format
from microagg.data.xlsxwrite import writable, write_xlsx

pytest.importorskip("openpyxl")


def _mixed(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    floats = rng.normal(size=n) * 10.0 ** rng.integers(-8, 12, n)
    floats[::7] = np.nan
    floats[3], floats[5] = np.inf, -np.inf
    floats[4] = 0.1 + 0.2
    text = rng.choice(["Private", " lead", "trail ", "a & b", "<tag>", "Ünïcode", "=1+1",
                       ""], n).astype(object)
    text[::5] = None
    return pd.DataFrame({
        "int": rng.integers(-(2**40), 2**40, n),
        "float": floats,
        "whole": rng.integers(0, 100, n).astype(float),
        "nullable": pd.array(np.where(rng.random(n) < 0.2, None, rng.integers(0, 9, n)),
                             dtype="Int64"),
        "flag": rng.random(n) < 0.5,
        "text": text,
        "category": pd.Categorical(rng.choice(["low", "mid", "high"], n),
                                   categories=["low", "mid", "high"]),
        "numbers as objects": pd.Series(rng.integers(0, 5, n).tolist(), dtype=object),
    })


def _pandas(frame: pd.DataFrame, path) -> None:
    with open(path, "wb") as handle:
        frame.to_excel(handle, index=False, engine="openpyxl")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_sheet_reads_back_as_pandas_writes_it(tmp_path, seed):
    frame = _mixed(seed=seed)
    frame.loc[frame["text"] == "=1+1", "text"] = "plain"  # pandas writes it as a formula
    ours, theirs = tmp_path / "ours.xlsx", tmp_path / "theirs.xlsx"
    assert writable(frame)
    write_xlsx(frame, ours)
    _pandas(frame, theirs)
    read, expected = pd.read_excel(ours), pd.read_excel(theirs)
    pd.testing.assert_frame_equal(read, expected)
    assert read["text"].str.startswith(" ").any() and read["text"].str.endswith(" ").any()
    assert (read["int"] == frame["int"]).all()  # whole numbers of 13 digits kept exactly


def test_a_text_that_looks_like_a_formula_stays_text(tmp_path):
    path = tmp_path / "t.xlsx"
    write_xlsx(pd.DataFrame({"a": ["=1+1", "x"]}), path)
    assert pd.read_excel(path)["a"].tolist() == ["=1+1", "x"]
    sheet = zipfile.ZipFile(path).read("xl/worksheets/sheet1.xml").decode()
    assert "<f>" not in sheet


def test_other_columns_go_through_pandas(tmp_path):
    dates = pd.DataFrame({"when": pd.to_datetime(["2020-01-02", "2021-03-04"]), "n": [1, 2]})
    assert not writable(dates)
    assert not writable(pd.DataFrame({"o": [pd.Timestamp("2020-01-01"), "x"]}))
    path = tmp_path / "d.xlsx"
    write_format(dates, path, "xlsx")
    pd.testing.assert_frame_equal(pd.read_excel(path), dates)


def test_write_format_takes_the_direct_writer_and_keeps_the_table(tmp_path):
    frame = _mixed(n=3000, seed=5)
    path = tmp_path / "r.xlsx"
    write_format(frame, path, "xlsx")
    package = zipfile.ZipFile(path)
    assert "docProps/app.xml" not in package.namelist()  # not openpyxl's package
    assert package.read("xl/worksheets/sheet1.xml").decode().count("<row ") == len(frame) + 1
    read = pd.read_excel(path)
    assert list(read.columns) == list(frame.columns)
    assert read["int"].equals(frame["int"]) and (read["whole"] == frame["whole"]).all()
    assert read["category"].tolist() == frame["category"].astype(str).tolist()
