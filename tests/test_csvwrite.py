"""microagg's CSV writer (pyarrow's) writes what pandas' to_csv writes, read back bit for bit."""

import numpy as np
import pandas as pd
import pytest

from microagg.data.csvwrite import (
    RELEASE_FLOAT_FORMAT,
    _numeric_csv,
    _release_values,
    write_csv,
)
from microagg.data.io import read_table


def _next_to_powers_of_ten() -> np.ndarray:
    powers = 10.0 ** np.arange(-9, 17)
    near = [powers]
    for direction in (np.inf, -np.inf):
        x = powers
        for _ in range(3):
            x = np.nextafter(x, direction)
            near.append(x)
    return np.concatenate(near)


def _nasty_floats(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([
        rng.normal(size=n) * 10.0 ** rng.integers(-20, 45, n),
        rng.uniform(0, 1000, n),
        np.round(rng.uniform(0, 100, n), 2),
        np.arange(1, n + 1) / 1000.0 + 0.0005,  # decimal ties at the 15th digit and beyond
        rng.integers(0, 2**53, n).astype(np.float64),
        _next_to_powers_of_ten(),  # where log10 misses the decade
        [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 2.2250738585072014e-308,
         1.7976931348623157e308, 1e15, 999999999999999.5, 0.1 + 0.2, 1e-5, 2.0**-20],
    ])


def test_release_rounding_is_that_of_percent_15g():
    values = _nasty_floats(20_000, 1)
    expected = np.array([float(RELEASE_FLOAT_FORMAT % v) for v in values])
    got = _release_values(values)
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    assert same.all(), values[~same][:5]
    assert np.array_equal(np.signbit(got), np.signbit(expected))


def test_a_numeric_release_is_written_byte_for_byte_as_pandas_writes_it(tmp_path):
    """The compiled writer (float64 and int64 columns) against pandas' own formatting,
    ``"%.15g" % x`` and ``str(i)``, value by value: decimal ties, both notations, whole
    numbers with zeros before the point, missing values, signed zeros and infinities."""
    rng = np.random.default_rng(4)
    values = np.concatenate([
        _nasty_floats(3_000, 5),
        [1200.0, 1e14, 123456789012345678.0, 0.0001, 0.00001234, 9.99999999999999e-5,
         99999999999999.95, 0.5, -1.5, 1e100, 1e-100, 12.5e-5],
        rng.integers(-10**6, 10**6, 3_000) / 100.0,  # values with few digits
    ])
    integers = rng.integers(-2**63, 2**63 - 1, len(values), dtype=np.int64)
    integers[:3] = [-2**63, 0, 2**63 - 1]
    frame = pd.DataFrame({"i": integers, "x": values, "y": values[::-1].copy()})
    assert _numeric_csv(frame, True) is not None  # the compiled writer, not a fallback
    ours, theirs = tmp_path / "ours.csv", tmp_path / "pandas.csv"
    write_csv(frame, ours, release=True)
    frame.to_csv(theirs, index=False, float_format=RELEASE_FLOAT_FORMAT)
    mine, expected = ours.read_bytes().split(b"\n"), theirs.read_bytes().split(b"\n")
    assert len(mine) == len(expected)
    wrong = [(a, b) for a, b in zip(mine, expected, strict=True) if a != b]
    assert not wrong, wrong[:3]


def test_only_releases_of_plain_numbers_take_the_compiled_writer():
    numbers = pd.DataFrame({"x": [1.5, 2.5], "i": np.array([1, 2], dtype=np.int64)})
    assert _numeric_csv(numbers, False) is None  # an export keeps every digit
    assert _numeric_csv(numbers.assign(t=["a", "b"]), True) is None
    assert _numeric_csv(numbers.astype({"i": "Int64"}), True) is None
    assert _numeric_csv(pd.DataFrame({"x": [1.0, np.nan]}), True) is None  # a lone missing value


def _assert_same_read_back(frame: pd.DataFrame, tmp_path, release: bool) -> None:
    ours, theirs = tmp_path / "ours.csv", tmp_path / "pandas.csv"
    write_csv(frame, ours, release=release)
    frame.to_csv(theirs, index=False,
                 float_format=RELEASE_FLOAT_FORMAT if release else None)
    pd.testing.assert_frame_equal(read_table(ours), read_table(theirs))
    for name in frame.columns:
        a, b = read_table(ours)[name], read_table(theirs)[name]
        if pd.api.types.is_float_dtype(a):
            assert np.array_equal(np.signbit(a.to_numpy()), np.signbit(b.to_numpy()))


@pytest.mark.parametrize("release", [False, True])
def test_floats_read_back_as_pandas_wrote_them(tmp_path, release):
    values = _nasty_floats(5_000, 2)
    values = values[np.isfinite(values) | np.isnan(values)]
    frame = pd.DataFrame({"x": values, "y": values[::-1].copy()})
    _assert_same_read_back(frame, tmp_path, release)
    assert (tmp_path / "ours.csv").read_text().splitlines()[0] == "x,y"


@pytest.mark.parametrize("release", [False, True])
def test_every_kind_of_column_reads_back_as_pandas_wrote_it(tmp_path, release):
    frame = pd.DataFrame({
        "whole": [1.0, 2.0, 3.0, -0.0],  # pandas writes 1.0: must not read back as integers
        "int": np.array([1, -2, 2**62, 0], dtype=np.int64),
        "flag": [True, False, True, True],
        "text": ["a,b", 'say "hi"', "two\nlines", ""],
        "missing": ["x", None, "NA", "?"],
        "category": pd.Categorical(["u", "v", None, "u"]),
        "with space": [0.1, np.nan, 1e300, 2.5e-10],
        "numbers as text": ["1", "2", "3", "4"],
    })
    _assert_same_read_back(frame, tmp_path, release)
    header = (tmp_path / "ours.csv").read_text().splitlines()[0]
    assert header == (tmp_path / "pandas.csv").read_text().splitlines()[0]
    back = read_table(tmp_path / "ours.csv")
    # "%.15g" writes a whole release bare (1, not 1.0), as pandas did before
    assert back["whole"].dtype == (np.int64 if release else np.float64)
    assert back["int"].dtype == np.int64
    assert back["flag"].dtype == bool
    assert back["missing"].isna().tolist() == [False, True, True, False]


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"only": [1.0, np.nan, 2.0]}),  # pyarrow would write an empty line
    pd.DataFrame({"when": pd.date_range("2020-01-01", periods=3)}),
    pd.DataFrame({"mixed": [1, "a", 2.5]}, dtype=object),
    pd.DataFrame({0: [1.5, 2.5]}),
])
def test_what_pyarrow_cannot_write_exactly_goes_to_pandas(tmp_path, frame):
    write_csv(frame, tmp_path / "ours.csv")
    frame.to_csv(tmp_path / "pandas.csv", index=False)
    assert (tmp_path / "ours.csv").read_text() == (tmp_path / "pandas.csv").read_text()
