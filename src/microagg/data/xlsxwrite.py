"""An Excel ``.xlsx`` table written directly as the package's XML parts, a column at a time.

pandas' ``to_excel`` through openpyxl builds a Python object per cell and serializes it
through an XML tree: about 30 s for UCI Adult's 488,415 cells. This writer formats each
column once (numbers as openpyxl writes them, ``"%.16g"``; text as inline strings, XML
escaped; booleans as Excel's booleans; missing values as empty cells, infinities as the text
``inf`` and ``-inf``, as pandas writes them) and joins the rows, a sheet openpyxl and Excel
read as the table pandas would have written (tests/test_xlsxwrite.py compares both). A text
starting with ``=`` is written as text, never as a formula. Columns of other types (dates,
durations …) are not written here: :func:`writable` says so, and the caller then writes
through pandas.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import numpy as np
import pandas as pd

__all__ = ["writable", "write_xlsx"]

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_DOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_TYPES = "application/vnd.openxmlformats-officedocument.spreadsheetml"
_PARTS = {
    "[Content_Types].xml": (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{_TYPES}.sheet.main+xml"/>'
        f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{_TYPES}.worksheet+xml"/>'
        f'<Override PartName="/xl/styles.xml" ContentType="{_TYPES}.styles+xml"/></Types>'),
    "_rels/.rels": (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="{_RELS}">'
        f'<Relationship Id="rId1" Type="{_DOC}/officeDocument" Target="xl/workbook.xml"/>'
        "</Relationships>"),
    "xl/workbook.xml": (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="{_MAIN}" '
        f'xmlns:r="{_DOC}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets>'
        "</workbook>"),
    "xl/_rels/workbook.xml.rels": (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="{_RELS}">'
        f'<Relationship Id="rId1" Type="{_DOC}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{_DOC}/styles" Target="styles.xml"/></Relationships>'),
    "xl/styles.xml": (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><styleSheet xmlns="{_MAIN}">'
        '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
        '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill '
        'patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/>'
        '<top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf '
        'numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="1">'
        '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>'
        '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
        "</styleSheet>"),
}


def writable(frame: pd.DataFrame) -> bool:
    """Whether every column of ``frame`` is one this writer writes: numbers, booleans,
    text or categories of them (an object column holding those, or missing values)."""
    for position in range(frame.shape[1]):
        series = frame.iloc[:, position]
        dtype = series.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            dtype = dtype.categories.dtype
            series = pd.Series(series.cat.categories)
        if pd.api.types.is_bool_dtype(dtype) or (
                pd.api.types.is_numeric_dtype(dtype)
                and not pd.api.types.is_complex_dtype(dtype)):
            continue
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            kind = pd.api.types.infer_dtype(series, skipna=True)
            if kind in _SIMPLE or (kind.startswith("mixed") and all(
                    isinstance(v, str | int | float | bool | np.number | np.bool_) or _blank(v)
                    for v in series)):
                continue
        return False
    return True


_SIMPLE = frozenset({"string", "empty", "integer", "floating", "mixed-integer-float",
                     "boolean"})
"""What :func:`pandas.api.types.infer_dtype` says of an object column this writer takes."""


def _blank(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def _letters(index: int) -> str:
    """The column's letters (0: A, 25: Z, 26: AA …)."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def _text(value: str) -> str:
    space = ' xml:space="preserve"' if value != value.strip() else ""
    return f'" t="inlineStr"><is><t{space}>{escape(value)}</t></is></c>'


def _number(value: float) -> str:
    if np.isnan(value):
        return ""
    if np.isinf(value):
        return _text("inf" if value > 0 else "-inf")
    return f'" t="n"><v>{value:.16g}</v></c>'


def _cell(value: Any) -> str:
    """The end of one cell's XML after its reference (``<c r="A2`` is written before)."""
    if _blank(value):
        return ""
    if isinstance(value, bool | np.bool_):
        return f'" t="b"><v>{int(value)}</v></c>'
    if isinstance(value, str):
        return _text(value) if value else ""
    return _number(float(value)) if isinstance(value, float | np.floating) else (
        f'" t="n"><v>{int(value)}</v></c>')


def _column(series: pd.Series) -> list[str]:
    """The end of every cell's XML of one column (empty for a missing value)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        ends = [_cell(v) for v in series.cat.categories]
        return [ends[c] if c >= 0 else "" for c in series.cat.codes.to_numpy()]
    if pd.api.types.is_bool_dtype(dtype) and not series.hasnans:
        return [f'" t="b"><v>{int(v)}</v></c>' for v in series.to_numpy(dtype=bool)]
    if pd.api.types.is_integer_dtype(dtype) and not series.hasnans:
        return [f'" t="n"><v>{v}</v></c>' for v in series.to_numpy().tolist()]
    if pd.api.types.is_float_dtype(dtype):
        return [_number(v) for v in series.to_numpy(dtype=float, na_value=np.nan)]
    if pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty"):
        codes, uniques = pd.factorize(series)  # text: each value formatted once
        ends = [_cell(v) for v in uniques]
        return [ends[c] if c >= 0 else "" for c in codes.tolist()]
    return [_cell(v) for v in series.tolist()]


def _rows(frame: pd.DataFrame) -> Iterator[str]:
    letters = [_letters(j) for j in range(frame.shape[1])]
    header = "".join(f'<c r="{letter}1{_cell(name)}' for letter, name in zip(
        letters, frame.columns, strict=True) if _cell(name))
    yield f'<row r="1">{header}</row>'
    columns = [_column(frame.iloc[:, j]) for j in range(frame.shape[1])]
    for at, ends in enumerate(zip(*columns, strict=True), start=2):
        cells = "".join(f'<c r="{letter}{at}{end}' for letter, end in zip(letters, ends,
                                                                          strict=True) if end)
        yield f'<row r="{at}">{cells}</row>'


def write_xlsx(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` (every column :func:`writable`) to ``path`` as one sheet, named
    ``Sheet1``, its header in the first row and without the index.

    Examples
    --------
    >>> import tempfile
    >>> frame = pd.DataFrame({"age": [39, 50], "job": ["clerk", None], "w": [1.5, 2.0]})
    >>> path = Path(tempfile.mkdtemp()) / "t.xlsx"
    >>> write_xlsx(frame, path)
    >>> pd.read_excel(path).equals(frame)
    True
    """
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        for name, text in _PARTS.items():
            out.writestr(name, text)
        with out.open("xl/worksheets/sheet1.xml", "w") as sheet:
            sheet.write(f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet '
                        f'xmlns="{_MAIN}"><sheetData>'.encode())
            batch: list[str] = []
            for row in _rows(frame):
                batch.append(row)
                if len(batch) == 4096:
                    sheet.write("".join(batch).encode("utf-8"))
                    batch.clear()
            sheet.write(("".join(batch) + "</sheetData></worksheet>").encode("utf-8"))
