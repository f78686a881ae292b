"""Writing CSV files fast: pyarrow's writer, with the values pandas' ``to_csv`` would write.

pandas formats every float in Python (about 10 s for 10⁶ rows of 10 columns); pyarrow's writer
takes about a second. It is used whenever it writes what pandas would, read back equal by
:func:`microagg.data.io.read_table`: the same numbers bit for bit, the same missing values,
texts, booleans and types. So

- a float is written as its shortest round-trip text (as Python's ``repr``); a column of
  whole numbers gets its ``.0`` (as texts), so that it reads back as floats;
- a release whose columns are all float64 or int64 (the usual numeric release) is written
  by the compiled writer of :mod:`microagg.data._decimal_text`: every float as ``"%.15g" % x``
  writes it, every integer as ``str``, byte for byte what pandas' ``to_csv`` writes with that
  format, and missing values as empty fields;
- in any other release a float is first rounded to the double nearest its 15 significant
  digits (``float("%.15g" % x)``, the same exact rounding), whose shortest text is those
  digits (whole numbers bare, as ``"%.15g"`` writes them);
- the header is written as pandas writes it; booleans ``True`` / ``False``; missing values as
  empty fields; texts in double quotes (pandas quotes only those holding a separator, a quote
  or a line break: the values read back the same);
- anything else (dates, mixed-type columns, names that are not text …) goes to pandas.

The 15-digit rounding is exact, in double precision with Dekker's exact product (the
docstring of :mod:`microagg.data._decimal_text` gives the argument); the rare values below
10⁻⁸ or from 10¹⁵ in magnitude are rounded by Python itself.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from microagg.data._decimal_text import (
    EXACT_TENS,
    FINITE,
    NEGATIVE,
    PYTHON,
    csv_lengths,
    fifteen_digits,
    fill_csv,
    release_doubles,
)

__all__ = ["RELEASE_FLOAT_FORMAT", "write_csv"]

RELEASE_FLOAT_FORMAT = "%.15g"
"""Released CSV numbers: 15 significant digits, so a mean of 10.551 and 10.553 prints 10.552,
not the float noise 10.552000000000001 (doubles hold 15 decimal digits exactly). Tables that
are not the product of a computation (an exported data set) keep every digit."""

RELEASE_SCIENTIFIC = "%.14e"
"""The digits of :data:`RELEASE_FLOAT_FORMAT` with their decimal exponent."""


def write_csv(frame: pd.DataFrame, path: str | Path, *, release: bool = False) -> None:
    """Write ``frame`` to ``path`` as CSV without the index (see the module's docstring)."""
    rows = _numeric_csv(frame, release) if all(isinstance(c, str) for c in frame.columns) \
        else None
    if rows is not None:
        with open(path, "wb") as handle:
            handle.write(_header(list(frame.columns)))
            handle.write(rows.data)
        return
    table = _arrow_table(frame, release)
    if table is None:
        frame.to_csv(path, index=False,
                     float_format=RELEASE_FLOAT_FORMAT if release else None)
        return
    import pyarrow.csv as pacsv

    with open(path, "wb") as handle:
        handle.write(_header(table.column_names))
        pacsv.write_csv(table, handle, pacsv.WriteOptions(include_header=False,
                                                          quoting_style="needed"))


def _header(names: list[str]) -> bytes:
    """The header line as pandas writes it."""
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(names)
    return header.getvalue().encode("utf-8")


def _arrow_table(frame: pd.DataFrame, release: bool) -> Any:
    """The table pyarrow writes as pandas would, or ``None`` when it cannot."""
    import pyarrow as pa

    if not all(isinstance(c, str) for c in frame.columns):
        return None
    if frame.shape[1] == 1 and frame.iloc[:, 0].isna().any():
        return None  # pandas writes a lone missing value "", pyarrow an empty line (skipped)
    arrays = []
    for _, series in frame.items():
        array = _arrow_column(series, release)
        if array is None:
            return None
        arrays.append(array)
    return pa.Table.from_arrays(arrays, names=[str(c) for c in frame.columns])


def _arrow_column(series: pd.Series, release: bool) -> Any:
    import pyarrow as pa

    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return pa.array(np.where(series.to_numpy(dtype=bool), "True", "False"))
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return pa.array(series.to_numpy())
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        values = series.to_numpy(dtype=np.float64)
        if release:  # "%.15g" writes whole numbers bare, as pyarrow does
            return pa.array(_release_values(values), from_pandas=True)
        return _float_column(values)
    if isinstance(dtype, pd.CategoricalDtype):
        if not all(isinstance(c, str) for c in dtype.categories):
            return None
        return pa.array(series.astype(object).where(series.notna(), None).to_numpy(),
                        type=pa.string())
    if pd.api.types.is_string_dtype(dtype):
        present = series.notna().to_numpy()
        values = series.to_numpy(dtype=object)
        if not all(isinstance(v, str) for v in values[present]):
            return None  # mixed types: pandas writes each as str() does
        return pa.array(values, type=pa.string(), mask=~present)
    return None


def _float_column(values: np.ndarray) -> Any:
    """Floats as pyarrow writes them (shortest round-trip texts); a column of whole numbers,
    which pyarrow writes bare ('60'), as texts with '.0', so that it reads back as floats."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = pa.array(values, from_pandas=True)  # NaN: missing, an empty field
    if np.isnan(values).any() or not np.all(values == np.round(values)):
        return array
    text = pc.cast(array, pa.string())
    bare = pc.invert(pc.match_substring_regex(text, "[.eEn]"))  # not 1.5, 1e+20, inf
    return pc.if_else(bare, pc.binary_join_element_wise(text, ".0", ""), text)


def _release_values(values: np.ndarray) -> np.ndarray:
    """``float("%.15g" % x)`` for every ``x``: their shortest texts are those 15 digits."""
    digits = _digits(np.ascontiguousarray(values, dtype=np.float64))
    out = values.astype(np.float64, copy=True)
    release_doubles(digits.mantissa, digits.exponent, digits.kind, out)
    power = digits.exponent.astype(np.int64) - 14
    inexact = ((digits.kind & (NEGATIVE - 1)) == FINITE) & (np.abs(power) > EXACT_TENS)
    out[inexact] = [float(RELEASE_FLOAT_FORMAT % v) for v in values[inexact]]
    return out


class _Digits(NamedTuple):
    """Each value rounded to 15 significant digits, N·10^(X−14) (:mod:`._decimal_text`)."""

    mantissa: np.ndarray
    exponent: np.ndarray
    kind: np.ndarray


def _digits(values: np.ndarray) -> _Digits:
    """:func:`fifteen_digits` of ``values``, with the rare values outside its exact range
    rounded by Python (``"%.14e"``: the same digits as ``"%.15g"``)."""
    mantissa = np.zeros(values.shape, dtype=np.int64)
    exponent = np.zeros(values.shape, dtype=np.int16)
    kind = np.zeros(values.shape, dtype=np.uint8)
    fifteen_digits(values.reshape(-1), mantissa.reshape(-1), exponent.reshape(-1),
                   kind.reshape(-1))
    for i in np.flatnonzero((kind & (NEGATIVE - 1)) == PYTHON):
        digits, power = (RELEASE_SCIENTIFIC % abs(values.flat[i])).split("e")
        mantissa.flat[i] = int(digits.replace(".", ""))
        exponent.flat[i] = int(power)
        kind.flat[i] &= NEGATIVE  # FINITE, with its sign
    return _Digits(mantissa, exponent, kind)


def _numeric_csv(frame: pd.DataFrame, release: bool) -> np.ndarray | None:
    """A release of float64 and int64 columns as the bytes of its CSV rows, written by the
    compiled writer (``"%.15g"`` and ``str``, as pandas writes them), or ``None`` for any
    other table."""
    if not release or frame.shape[1] == 0 or any(
            not isinstance(d, np.dtype) or d not in (np.float64, np.int64)
            for d in frame.dtypes):
        return None
    floats = [j for j, d in enumerate(frame.dtypes) if d == np.float64]
    ints = [j for j, d in enumerate(frame.dtypes) if d == np.int64]
    if len(floats) == 1 and len(ints) == 0 and frame.iloc[:, 0].isna().any():
        return None  # a lone missing value: pandas writes "", kept to pandas
    n = len(frame)
    float_values = np.empty((n, len(floats)))
    for slot, j in enumerate(floats):
        float_values[:, slot] = frame.iloc[:, j].to_numpy()
    integers = np.empty((n, len(ints)), dtype=np.int64)
    for slot, j in enumerate(ints):
        integers[:, slot] = frame.iloc[:, j].to_numpy()
    order = np.empty(frame.shape[1], dtype=np.int64)
    order[floats] = np.arange(len(floats))
    order[ints] = -1 - np.arange(len(ints))
    digits = _digits(float_values)
    lengths = np.empty(n, dtype=np.int64)
    csv_lengths(digits.mantissa, digits.exponent, digits.kind, integers, order, lengths)
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    buffer = np.empty(int(lengths.sum()), dtype=np.uint8)
    fill_csv(digits.mantissa, digits.exponent, digits.kind, integers, order, starts, buffer,
             np.uint8(ord(",")))
    return buffer
