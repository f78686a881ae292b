"""Writing CSV files fast: pyarrow's writer, with the values pandas' ``to_csv`` would write.

pandas formats every float in Python (about 10 s for 10⁶ rows of 10 columns); pyarrow's writer
takes about a second. It is used whenever it writes what pandas would, read back equal by
:func:`microagg.data.io.read_table`: the same numbers bit for bit, the same missing values,
texts, booleans and types. So

- a float is written as its shortest round-trip text (as Python's ``repr``); a column of
  whole numbers gets its ``.0`` (as texts), so that it reads back as floats;
- a released float (``release``) is first rounded to the double nearest its 15 significant
  digits (``float("%.15g" % x)``), whose shortest text is those digits (whole numbers bare,
  as ``"%.15g"`` writes them);
- the header is written as pandas writes it; booleans ``True`` / ``False``; missing values as
  empty fields; texts in double quotes (pandas quotes only those holding a separator, a quote
  or a line break: the values read back the same);
- anything else (dates, mixed-type columns, names that are not text …) goes to pandas.

The 15-digit rounding is exact: a value is scaled into [10¹⁴, 10¹⁵) by an exact power of ten
in 64-bit extended precision (``numpy.longdouble``; the error is below 10⁻⁴ of a unit of the
last digit) and rounded, then scaled back and rounded to a double; the few values within 10⁻³
of a decimal tie, next to a midpoint between two doubles, or beyond 10⁻¹³ … 10⁴¹, are rounded
by Python itself. On a platform without extended precision every release goes to pandas.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["RELEASE_FLOAT_FORMAT", "write_csv"]

RELEASE_FLOAT_FORMAT = "%.15g"
"""Released CSV numbers: 15 significant digits, so a mean of 10.551 and 10.553 prints 10.552,
not the float noise 10.552000000000001 (doubles hold 15 decimal digits exactly). Tables that
are not the product of a computation (an exported data set) keep every digit."""

_EXTENDED = np.finfo(np.longdouble).nmant >= 63
_FOUR_ULPS = np.longdouble(2.0**-61)  # four units in the last place of extended precision
_TIE_BAND = 1e-3  # distance to a rounding tie under which Python formats the value
_EXACT_POWERS = 27  # 10**27 = 2**27 * 5**27, and 5**27 < 2**64: exact in extended precision
# 10**0 … 10**27, each the product of exact ones, so exact itself
_TENS = np.cumprod(np.full(_EXACT_POWERS + 1, 10, dtype=np.longdouble)) / np.longdouble(10)


def write_csv(frame: pd.DataFrame, path: str | Path, *, release: bool = False) -> None:
    """Write ``frame`` to ``path`` as CSV without the index (see the module's docstring)."""
    table = _arrow_table(frame, release)
    if table is None:
        frame.to_csv(path, index=False,
                     float_format=RELEASE_FLOAT_FORMAT if release else None)
        return
    import pyarrow.csv as pacsv

    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(table.column_names)  # as pandas writes it
    with open(path, "wb") as handle:
        handle.write(header.getvalue().encode("utf-8"))
        pacsv.write_csv(table, handle, pacsv.WriteOptions(include_header=False,
                                                          quoting_style="needed"))


def _arrow_table(frame: pd.DataFrame, release: bool) -> Any:
    """The table pyarrow writes as pandas would, or ``None`` when it cannot."""
    import pyarrow as pa

    if not all(isinstance(c, str) for c in frame.columns) or (release and not _EXTENDED):
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
    mantissa, power, python = _fifteen_digits(values)
    scaled = _scale(np.abs(mantissa).astype(np.longdouble), -power)
    rounded = scaled.astype(np.float64)
    # one rounding in extended precision, then one to double: wrong only next to a midpoint
    # between two doubles (or at a power of two, where the spacing halves)
    half = np.spacing(rounded) / 2
    off = np.abs(np.abs(scaled - rounded.astype(np.longdouble)) - half)
    near = (off <= scaled * _FOUR_ULPS) | (np.frexp(rounded)[0] == 0.5)
    python |= near
    out = np.where(mantissa < 0, -rounded, rounded)
    out[python] = [float(RELEASE_FLOAT_FORMAT % v) for v in values[python]]
    return out


def _fifteen_digits(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(m, p, python)``: ``x`` rounded to 15 significant digits is ``m * 10**-p`` (m an
    integer below 10**15 in magnitude), except where ``python`` is set (near a tie, zero,
    not finite, or beyond the exact powers of ten), which Python formats."""
    finite = np.isfinite(values) & (values != 0)
    safe = np.abs(np.where(finite, values, 1.0))
    magnitude = safe.astype(np.longdouble)
    power = 14 - np.floor(np.log10(safe)).astype(np.int64)
    for _ in range(2):  # log10 can miss by one next to a power of ten
        scaled = _scale(magnitude, power)
        power = power + (scaled < 1e14) - (scaled >= 1e15)
    scaled = _scale(magnitude, power)
    outside = (np.abs(power) > _EXACT_POWERS) | (scaled >= 1e15)
    whole = np.where(outside, 0, scaled).astype(np.int64)  # floor: positive, below 10**15
    fraction = scaled - whole.astype(np.longdouble)
    tie = np.abs(fraction - 0.5) < _TIE_BAND
    python = ~finite | tie | outside
    mantissa = np.where(python, 0, whole + (fraction > 0.5))
    return np.where(values < 0, -mantissa, mantissa), power, python


def _scale(magnitude: np.ndarray, power: np.ndarray) -> np.ndarray:
    """``magnitude * 10**power`` in extended precision, by one rounded operation with an
    exact power of ten (the power is clipped to the exact ones; others are formatted by
    Python)."""
    clipped = np.clip(power, -_EXACT_POWERS, _EXACT_POWERS)
    ten = _TENS[np.abs(clipped)]
    return np.where(clipped >= 0, magnitude * ten, magnitude / ten)
