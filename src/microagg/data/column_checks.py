"""Checks that a column read without a declared kind holds what its kind says: numbers read
as text because of one odd cell, numbers written with a decimal comma or thousands separators,
dates, times and nested values are refused with a message naming the row and the way out
(a schema, or the reading options ``decimal`` and ``thousands``)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from microagg.errors import InputError

__all__ = ["check_categories", "refuse_numbers_read_as_text"]

_DECIMAL_COMMA = re.compile(r"[+-]?(\d{1,3}(\.\d{3})+|\d+),\d+")
_THOUSANDS_COMMA = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")
_DECLARE = ("declare the column in a schema (kind numeric to read it as numbers, nominal for "
            "codes)")


def _refuse_times(name: str, series: pd.Series) -> None:
    """Dates, times and durations are neither numbers nor categories to microagg: masking
    them as categories would generalize every one of them away."""
    kind = series.dtype.kind if isinstance(series.dtype, np.dtype) else ""
    if kind in ("m", "M") or isinstance(series.dtype, pd.DatetimeTZDtype | pd.PeriodDtype):
        what = "durations" if kind == "m" else "dates or times"
        raise InputError(f"column '{name}' holds {what}, which microagg does not mask: convert "
                         "it to a number (a year, an age, days since a date) or declare its "
                         "role in a schema (identifier to drop it, other to keep it unchanged)")


def _refuse_nested(name: str, series: pd.Series) -> None:
    """A column whose cells hold lists, arrays or mappings (a Parquet nested type) has no
    category microagg could compare."""
    if not pd.api.types.is_object_dtype(series):
        return
    nested = series.map(lambda v: isinstance(v, list | tuple | dict | set | np.ndarray))
    if nested.any():
        row = int(np.flatnonzero(nested.to_numpy(dtype=bool))[0]) + 1
        raise InputError(f"column '{name}' holds lists or mappings (row {row}), not numbers or "
                         "categories: flatten it into columns, or drop it")


def _first_row(series: pd.Series, present: pd.Series, at: int) -> int:
    return int(np.flatnonzero(series.index == present.index[at])[0]) + 1


def _numbers(text: pd.Series) -> pd.Series:
    """``pd.to_numeric(text, errors="coerce")``, each distinct value parsed once (a column of
    categories holds few: parsing every cell cost most of reading an upload).

    Examples
    --------
    >>> _numbers(pd.Series(["1", "x", "1", "2.5"], index=[3, 4, 5, 6])).tolist()
    [1.0, nan, 1.0, 2.5]
    """
    codes, distinct = pd.factorize(text)
    parsed = pd.to_numeric(pd.Series(distinct, dtype=object), errors="coerce").to_numpy()
    return pd.Series(parsed[codes], index=text.index)


def refuse_numbers_read_as_text(name: str, series: pd.Series) -> None:
    """A column of numbers read as text because of one odd cell (a word, ``1,234``, an
    integer beyond 64 bits) would be treated as categories; refuse it, naming the row."""
    present = series[series.notna()]
    if present.empty:
        return
    text = present.astype(str).str.strip()
    numbers = _numbers(text)
    parsed = numbers.notna().to_numpy()
    too_large = (numbers.abs() >= 2.0**63).to_numpy()
    if parsed.all() and too_large.any():
        row = int(np.flatnonzero(series.index.isin(present.index[too_large]))[0]) + 1
        raise InputError(f"column '{name}' holds an integer beyond the 64-bit range in row "
                         f"{row} ('{text.iloc[int(np.flatnonzero(too_large)[0])]}'): store "
                         "it as text in a schema-declared nominal column, or rescale it")
    if not parsed.all() and parsed.mean() >= 0.5:
        first = int(np.flatnonzero(~parsed)[0])
        _refuse_separators(name, series, present, text, parsed)
        raise InputError(f"column '{name}' is mostly numbers but row "
                         f"{_first_row(series, present, first)} holds the text "
                         f"'{text.iloc[first]}'; fix the value, or declare the column's kind "
                         "in a schema")


def _refuse_separators(name: str, series: pd.Series, present: pd.Series, text: pd.Series,
                       parsed: np.ndarray) -> None:
    """Refuse a column that is mostly numbers written with a decimal comma (``69,5``) or a
    thousands separator (``31,931``), which are not read as numbers; the message names the
    reading options (``decimal``, ``thousands``) that read them as numbers."""
    for pattern, form in ((_THOUSANDS_COMMA, "a thousands separator"),
                          (_DECIMAL_COMMA, "a decimal comma")):
        matches = text.str.fullmatch(pattern).to_numpy(dtype=bool)
        if matches.any() and (matches | parsed).mean() >= 0.5:
            first = int(np.flatnonzero(matches)[0])
            if pattern is _THOUSANDS_COMMA:
                options = "`thousands` ,"
            elif text[matches].str.contains(".", regex=False).any():
                options = "`decimal` , `thousands` ."
            else:
                options = "`decimal` ,"
            raise InputError(f"column '{name}' holds numbers written with {form} (row "
                             f"{_first_row(series, present, first)}: '{text.iloc[first]}'), "
                             "which are not read as numbers and would be masked as categories: "
                             f"read the CSV file with {options}, or save it with a decimal "
                             "point and no thousands separators")


def check_categories(name: str, series: pd.Series) -> None:
    """Refuse to mask as categories a column whose kind was inferred, not declared, when its
    values are not categories: dates, times or durations; lists or mappings; numbers stored
    as text (a Parquet string column) or written with a decimal comma or thousands separators.
    Masking them as categories would generalize every value away."""
    _refuse_times(name, series)
    _refuse_nested(name, series)
    present = series[series.notna()]
    if present.empty:
        return
    text = present.astype(str).str.strip()
    parsed = _numbers(text).notna().to_numpy()
    if parsed.all():
        raise InputError(f"column '{name}' holds numbers stored as text (row "
                         f"{_first_row(series, present, 0)}: '{text.iloc[0]}'): {_DECLARE}")
    _refuse_separators(name, series, present, text, parsed)
