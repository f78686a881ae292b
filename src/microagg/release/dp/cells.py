"""How a differentially private release reads each cell of a protected column: by the cell
alone.

A reader guesses a column's type from all its cells (pandas makes a CSV column of numbers text
when one cell is a word, and a Parquet or SPSS column of codes holds floats that print ``1.0``
once one code is ``1.5``), so how one record's value is read could follow another record's.
A DP release reads every protected cell by the cell alone and by the column's declared kind,
so that its outcome is a function of the declarations and of each record on its own:

* a numeric column: a number as it is (an integer beyond 2^53, infinity and a huge value
  included: the domain clamps them), ``True``/``False`` (as booleans or as text) as 1 and 0,
  text parsed as a number in the file's dialect (``--decimal``, ``--thousands``); anything
  else is left as it is, and the release refuses it (outside the declared universe);
* a categorical column: the cell's text (a whole number without ``.0``, as
  :func:`~microagg.data.schema.category_text` writes it);
* a missing cell (empty, ``NA``, ``None``, NaN, ``pd.NA``) as missing.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.io import DIALECT_KEY
from microagg.data.schema import Attribute, category_text

__all__ = ["DIALECT_KEY", "cell_number", "cell_text", "declared_cells"]

_BOOLEAN = {"true": 1.0, "false": 0.0}


def _absent(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float | np.floating) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def cell_number(value: Any, dialect: Mapping[str, Any] | None = None) -> Any:
    """A numeric cell as a float (NaN when missing), or the cell as it is when it is not a
    number.

    Examples
    --------
    >>> cell_number("0,5", {"decimal": ","}), cell_number(True), cell_number("TRUE")
    (0.5, 1.0, 1.0)
    >>> cell_number(10**20), cell_number("abc")
    (1e+20, 'abc')
    """
    if _absent(value):
        return math.nan
    if isinstance(value, bool | np.bool_):
        return float(value)
    if isinstance(value, numbers.Real | Decimal) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer beyond the floats: the domain clamps it
            return math.copysign(math.inf, 1 if str(value).lstrip()[:1] != "-" else -1)
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _BOOLEAN:
            return _BOOLEAN[text.lower()]
        thousands = (dialect or {}).get("thousands")
        decimal = (dialect or {}).get("decimal") or "."
        if thousands:
            text = text.replace(thousands, "")
        if decimal != ".":
            text = text.replace(decimal, ".")
        try:
            return float(text)
        except ValueError:
            return value
    return value


def cell_text(value: Any) -> str | None:
    """A categorical cell as text (``None`` when missing).

    Examples
    --------
    >>> cell_text(1.0), cell_text(1.5), cell_text(" 01 "), cell_text(float("nan"))
    ('1', '1.5', '01', None)
    """
    if _absent(value):
        return None
    return category_text(value)


def declared_cells(series: pd.Series, attribute: Attribute,
                   dialect: Mapping[str, Any] | None = None) -> pd.Series:
    """``series`` read cell by cell as ``attribute``'s kind declares (module docstring):
    float64 for a numeric column whose every cell is a number, else objects."""
    if attribute.is_numeric:
        cells = [cell_number(v, dialect) for v in series.astype(object)]
        if all(isinstance(c, float) for c in cells):
            return pd.Series(np.asarray(cells, dtype=np.float64), index=series.index,
                             name=series.name)
        return pd.Series(cells, index=series.index, name=series.name, dtype=object)
    return pd.Series([cell_text(v) for v in series.astype(object)], index=series.index,
                     name=series.name, dtype=object)
