"""SPSS ``.sav``, Stata ``.dta``, SAS ``.sas7bdat`` (read only) and Excel ``.xlsx`` tables.

These formats need the optional extra ``formats`` (pyreadstat and openpyxl): without it, a
read or a write says in one line how to install it. :mod:`microagg.data.io` chooses them by
extension; the functions here are its readers and writers.

Value labels. A numeric SPSS or Stata variable whose every value has a value label is read as
a pandas ``Categorical`` of its labels, categories in code order, ``ordered`` when its SPSS
measure level is ordinal: microagg then treats it as a categorical attribute whose categories
are declared (:meth:`microagg.data.schema.Schema.infer`). A variable with unlabelled values
(e.g. an age whose code 99 means "refused") stays numeric. Integer variables stay integer
where the data allow (a Stata integer type, or an SPSS format without decimals, with no
missing value). What the file said about its variables (variable labels, value labels and
their original codes, measure levels, formats) is kept in ``frame.attrs["microagg_labels"]``
(:data:`LABELS_KEY`); :func:`carry_labels` copies it onto a released table, and a ``.sav`` or
``.dta`` write maps each categorical column back to its original codes with their labels. A
category the file did not label (the ``*`` to which microaggregation generalizes a nominal
value) gets the next code after the largest one, and its own label.

Excel files are read from their first sheet with the CSV reader's missing-value tokens; Excel
stores 15 significant digits of a number, so an ``.xlsx`` keeps what Excel would. A text that
an Excel cell cannot hold whole (over 32,767 characters, or with a control character) is
refused before anything is written, naming its column and row; so is a category longer than
an SPSS value label holds (120 bytes) and a whole number beyond 2^53 in a ``.sav`` or ``.dta``
(stored as a double, it would lose digits). A write the file format refuses names its
column.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.column_names import quoted
from microagg.data.varnames import RULES, legal_names
from microagg.errors import InputError

__all__ = ["EXCEL_CELL_CHARACTERS", "FORMAT_NAMES", "LABELS_KEY", "READ_ONLY", "as_declared",
           "carry_labels", "read_format", "write_format"]

LABELS_KEY = "microagg_labels"
"""The key of ``DataFrame.attrs`` under which the variables' labels are kept."""

FORMAT_NAMES = {"sav": "SPSS", "dta": "Stata", "sas7bdat": "SAS", "xlsx": "Excel"}
READ_ONLY = frozenset({"sas7bdat"})
EXCEL_CELL_CHARACTERS = 32_767
"""The most characters an Excel cell holds; a longer text would be cut short."""
INSTALL = 'pip install "microagg[formats]"'

_NAME_LIMITS = {"sav": "64 bytes", "dta": "32 characters"}
SPSS_LABEL_BYTES = 120
"""The longest SPSS value label, in bytes of UTF-8: a longer category would be cut short."""
EXACT_INTEGERS = 2**53
"""Whole numbers beyond it lose digits as doubles, which SPSS stores every number as (and
Stata every integer beyond its long)."""

# Stata's long holds -2,147,483,647 to 2,147,483,620 (the largest values code missing ones).
_STATA_LONG = (-2_147_483_647, 2_147_483_620)
_SPSS_WHOLE = re.compile(r"^[A-Z]+\d+(\.0)?$")  # F8, F8.0, N3 ...: no decimals shown


def _module(name: str, path: Path) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise InputError(f"{path}: {FORMAT_NAMES[_fmt(path)]} files need the optional "
                         f"package {name}: {INSTALL}") from None


def _fmt(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def read_format(path: Path, fmt: str,
                text: Mapping[str, Collection[str]] | None = None) -> pd.DataFrame:
    """Read ``path`` as ``fmt`` ("sav", "dta", "sas7bdat" or "xlsx"); an Excel sheet's
    ``text`` columns are read as the text their cells hold, their declared categories as
    themselves (the other formats store their types)."""
    if fmt == "xlsx":
        return _read_xlsx(path, text or {})
    return _read_statistical(path, fmt)


def _read_statistical(path: Path, fmt: str) -> pd.DataFrame:
    from microagg.data.column_names import check_names, column_name

    pyreadstat = _module("pyreadstat", path)
    reader = {"sav": pyreadstat.read_sav, "dta": pyreadstat.read_dta,
              "sas7bdat": pyreadstat.read_sas7bdat}[fmt]
    try:
        frame, meta = reader(str(path))
    except Exception as exc:  # pyreadstat raises its own types and OSError alike
        raise InputError(f"cannot read {path} as {FORMAT_NAMES[fmt]} data: "
                         f"{_first_line(exc)}") from None
    check_names([str(c) for c in frame.columns], path)
    variables: dict[str, dict[str, Any]] = {}
    columns: dict[str, pd.Series] = {}
    for raw in frame.columns:
        info = _variable(meta, raw)
        columns[column_name(raw)] = _column(frame[raw], info, fmt)
        variables[column_name(raw)] = info
    out = pd.DataFrame(columns, index=pd.RangeIndex(len(frame)))
    out.attrs[LABELS_KEY] = {"format": fmt, "variables": variables}
    return out


def _variable(meta: Any, raw: str) -> dict[str, Any]:
    """What the file says about the variable ``raw``."""
    info: dict[str, Any] = {}
    label = (meta.column_names_to_labels or {}).get(raw)
    if label:
        info["label"] = str(label)
    value_labels = (meta.variable_value_labels or {}).get(raw)
    if value_labels:
        info["value_labels"] = {_code(k): str(v) for k, v in value_labels.items()}
    measure = (getattr(meta, "variable_measure", None) or {}).get(raw)
    if measure and measure != "unknown":
        info["measure"] = measure
    file_format = (meta.original_variable_types or {}).get(raw)
    if file_format:
        info["format"] = str(file_format)
    return info


def _code(value: Any) -> Any:
    """A value-label code: a whole number as int, anything else as it is."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _with_codes(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` with its value-label codes as numbers again where they were stored as text
    (a Parquet file keeps ``attrs`` as JSON, whose keys are text)."""
    out = dict(info)
    if out.get("value_labels"):
        out["value_labels"] = {_code(_number(k)): v for k, v in out["value_labels"].items()}
    return out


def _number(value: Any) -> Any:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return float(value)
    return value


def _column(series: pd.Series, info: Mapping[str, Any], fmt: str) -> pd.Series:
    """A column as microagg reads it: a Categorical of its labels when every value has one,
    int64 when its type says whole numbers and no value is missing, else as pyreadstat
    gives it."""
    labels = info.get("value_labels")
    if labels and pd.api.types.is_numeric_dtype(series):
        categorical = _labelled(series, labels, ordered=info.get("measure") == "ordinal")
        if categorical is not None:
            return categorical
    if (pd.api.types.is_float_dtype(series) and fmt == "sav"
            and _SPSS_WHOLE.match(info.get("format", "").upper())
            and series.notna().all()):
        values = series.to_numpy()
        if np.all(values == np.round(values)) and np.all(np.abs(values) < 2.0**53):
            return pd.Series(values.astype(np.int64), index=series.index)
    return series


def as_declared(frame: pd.DataFrame, schema: Any) -> pd.DataFrame:
    """``frame`` with each labelled SPSS/Stata column in the form its declared kind reads:
    a column is read as its labels only when every value has one (:func:`_column`), which
    one value can switch; a differentially private release reads it by its declaration
    instead. A column declared numeric holds the codes; one declared categorical holds the
    labels, or the codes as text when no declared category is a label.

    Examples
    --------
    >>> from microagg.data.schema import Attribute, Kind, Schema
    >>> frame = pd.DataFrame({"kids": pd.Categorical(["none", "one"])})
    >>> frame.attrs[LABELS_KEY] = {"variables": {"kids": {
    ...     "value_labels": {0: "none", 1: "one"}}}}
    >>> as_declared(frame, Schema((Attribute("kids", kind=Kind.NUMERIC),)))["kids"].tolist()
    [0, 1]
    >>> as_declared(frame, Schema((Attribute("kids", kind=Kind.NOMINAL, domain=("0", "1")),))
    ...             )["kids"].tolist()
    ['0', '1']
    """
    variables = (frame.attrs.get(LABELS_KEY) or {}).get("variables", {})
    out = frame
    for name, info in variables.items():
        labels = {_code(c): str(v) for c, v in (info.get("value_labels") or {}).items()}
        if labels and name in frame.columns and name in schema:
            if out is frame:
                out = frame.copy()
            out[name] = _declared_column(frame[name], labels, schema[name])
    return out


def _declared_column(series: pd.Series, labels: Mapping[Any, str], attribute: Any
                     ) -> pd.Series:
    """One labelled column (``labels``: code -> label) as ``attribute`` declares it."""
    from microagg.data.schema import category_text

    code_of = {label: code for code, label in labels.items()}
    codes = series.astype(object).map(
        lambda v: None if pd.isna(v) else code_of.get(v, v) if isinstance(v, str)
        else _code(v))
    if attribute.is_numeric:  # numbers, and any text that is no label (refused when encoded)
        return pd.to_numeric(codes, errors="coerce").where(
            codes.map(lambda c: not isinstance(c, str)), codes)
    declared = set(attribute.categories or ())
    as_codes = bool(declared) and not declared & set(labels.values())  # declared by codes
    return codes.map(lambda c: None if c is None else category_text(c)
                     if as_codes or c not in labels else labels[c])


def _labelled(series: pd.Series, labels: Mapping[Any, str], *, ordered: bool
              ) -> pd.Series | None:
    """The Categorical of ``series``'s labels, or ``None`` when a value has no label or two
    codes share a label (the codes could then not be written back)."""
    codes = sorted(labels, key=float)
    categories = [labels[c] for c in codes]
    if len(set(categories)) < len(categories):
        return None
    values = series.to_numpy(dtype=np.float64)
    present = ~np.isnan(values)
    positions = pd.Index(np.asarray(codes, dtype=np.float64)).get_indexer(values[present])
    if (positions < 0).any():
        return None
    full = np.full(len(values), -1, dtype=np.int64)
    full[present] = positions
    dtype = pd.CategoricalDtype(pd.Index(categories), ordered=ordered)
    return pd.Series(pd.Categorical.from_codes(full, dtype=dtype), index=series.index)


def _read_xlsx(path: Path, text: Mapping[str, Collection[str]] | None = None
               ) -> pd.DataFrame:
    from microagg.data.column_names import check_names, column_name
    from microagg.data.missing_tokens import missing_tokens

    _module("openpyxl", path)
    try:
        header = pd.read_excel(path, engine="openpyxl", header=None, nrows=1)
    except Exception as exc:  # openpyxl and zipfile raise several unrelated types
        raise InputError(f"cannot read {path} as Excel data: {_first_line(exc)}") from None
    if header.empty:
        raise InputError(f"file {path} is empty (no header row)")
    raws = list(header.iloc[0])  # as pandas names the columns: a number stays a number
    names = ["" if pd.isna(v) else str(v) for v in raws]
    check_names(names, path)
    text = text or {}
    pairs = list(zip(raws, names, strict=True))
    frame = pd.read_excel(path, engine="openpyxl", keep_default_na=False,
                          na_values={raw: missing_tokens(text.get(column_name(name), ()))
                                     for raw, name in pairs},
                          dtype={raw: str for raw, name in pairs
                                 if column_name(name) in text} or None)
    frame.columns = [column_name(c) for c in frame.columns]
    unsaved = _formula_without_value(path, frame)
    if unsaved is not None:
        raise InputError(f"{path}: cell {unsaved} holds a formula without a saved value (the "
                         "file was written by a program, never opened in a spreadsheet): open "
                         "it in a spreadsheet and save it, or export it as CSV")
    return frame


def _formula_without_value(path: Path, frame: pd.DataFrame) -> str | None:
    """The first cell (``B7``) of the first sheet that holds a formula and was read as
    missing: a formula whose value no spreadsheet has saved, which pandas reads as missing
    (checked only when something was read as missing)."""
    read_missing = frame.isna().to_numpy()
    if not read_missing.any():
        return None
    from openpyxl import load_workbook
    from openpyxl.utils import get_column_letter

    book = load_workbook(path, read_only=True, data_only=False)
    try:
        rows = book.worksheets[0].iter_rows(min_row=2, max_row=len(frame) + 1,
                                            max_col=frame.shape[1], values_only=True)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                formula = (isinstance(value, str) and value.startswith("=")) or \
                    type(value).__name__ == "ArrayFormula"
                if formula and read_missing[r, c]:
                    return f"{get_column_letter(c + 1)}{r + 2}"
    finally:
        book.close()
    return None


def write_format(frame: pd.DataFrame, path: Path, fmt: str) -> None:
    """Write ``frame`` to ``path`` as ``fmt`` ("sav", "dta" or "xlsx"), without the index;
    ``path`` may have any extension (a temporary file)."""
    if fmt in READ_ONLY:
        raise InputError(f"microagg reads {FORMAT_NAMES[fmt]} files but cannot write them: "
                         "write .sav, .dta, .xlsx, .csv or .parquet")
    if fmt == "xlsx":
        _module("openpyxl", Path(f"x.{fmt}"))
        _check_excel_cells(frame)
        from microagg.data.xlsxwrite import writable, write_xlsx

        if writable(frame):
            write_xlsx(frame, path)
            return
        try:
            with open(path, "wb") as handle:
                frame.to_excel(handle, index=False, engine="openpyxl")
        except ValueError as exc:  # more rows or columns than a sheet holds
            raise InputError(f"cannot write Excel data: {_first_line(exc)}") from None
        return
    _write_statistical(frame, path, fmt)


def _check_excel_cells(frame: pd.DataFrame) -> None:
    """Refuse a name or a text that an Excel cell cannot hold whole: more than
    :data:`EXCEL_CELL_CHARACTERS` characters (which would be cut short) or a control
    character (which openpyxl refuses)."""
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    def refuse(name: object, where: str, text: str) -> None:
        if len(text) > EXCEL_CELL_CHARACTERS:
            raise InputError(f"cannot write column {quoted(name)} to Excel: {where} has "
                             f"{len(text):,} characters, more than the "
                             f"{EXCEL_CELL_CHARACTERS:,} an Excel cell holds; write .csv, "
                             ".parquet, .sav or .dta instead")
        control = ILLEGAL_CHARACTERS_RE.search(text)
        if control is not None:
            raise InputError(f"cannot write column {quoted(name)} to Excel: {where} holds the "
                             f"control character U+{ord(control.group()):04X}, which an "
                             "Excel cell cannot hold; write .csv, .parquet, .sav or .dta "
                             "instead")

    for position, name in enumerate(frame.columns):
        refuse(name, "its name", str(name))
        series = frame.iloc[:, position]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        present = series.notna().to_numpy()
        text = series[present].astype(str)
        too_long = text.str.len().to_numpy() > EXCEL_CELL_CHARACTERS
        control = text.str.contains(ILLEGAL_CHARACTERS_RE, regex=True).to_numpy(dtype=bool)
        bad = np.flatnonzero(too_long | control)
        if bad.size:
            row = int(np.flatnonzero(present)[bad[0]]) + 1
            refuse(name, f"its value in row {row:,}", text.iloc[bad[0]])


def _write_statistical(frame: pd.DataFrame, path: Path, fmt: str) -> None:
    """Write ``frame`` as SPSS or Stata data, each column under a legal name
    (:mod:`microagg.data.varnames`) with its original name as its label when it had none."""
    pyreadstat = _module("pyreadstat", Path(f"x.{fmt}"))
    known = {name: _with_codes(info) for name, info in
             frame.attrs.get(LABELS_KEY, {}).get("variables", {}).items()}
    legal = legal_names([str(c) for c in frame.columns], fmt)
    data: dict[str, Any] = {}
    value_labels: dict[str, dict[Any, str]] = {}
    measures: dict[str, str] = {}
    formats: dict[str, str] = {}
    labels = _variable_labels(legal, known, fmt)
    for position, original in enumerate(frame.columns):
        info = known.get(original, {})
        series = frame.iloc[:, position]
        name = legal[str(original)]
        if _categorical(series, info):
            data[name], value_labels[name] = _to_codes(series, info.get("value_labels"), fmt)
            if fmt == "sav":
                _check_value_labels(str(original), value_labels[name])
            ordered = (getattr(series.dtype, "ordered", False)
                       or info.get("measure") == "ordinal")
            measures[name] = "ordinal" if ordered else "nominal"
            formats[name] = "F8.0"  # codes are whole numbers
            continue
        shown: dict[str, str] = {}  # its display format, under its original name
        data[name] = _numeric_or_text(series, fmt, shown, str(original))
        if shown:
            formats[name] = shown[str(original)]
        if info.get("value_labels") and pd.api.types.is_numeric_dtype(series):
            value_labels[name] = dict(info["value_labels"])
        if info.get("measure"):
            measures[name] = info["measure"]
    options: dict[str, Any] = {"column_labels": labels, "variable_value_labels": value_labels}
    if fmt == "sav":
        options.update(variable_measure=measures, variable_format=formats)
    writer = pyreadstat.write_sav if fmt == "sav" else pyreadstat.write_dta
    try:
        writer(pd.DataFrame(data), str(path), **options)
    except Exception as exc:  # pyreadstat's own error types, and ValueError
        fault = _column_at_fault(writer, data, options, path)
        named = {v: k for k, v in legal.items()}
        where = f"column {quoted(named[fault])} to " if fault is not None else ""
        raise InputError(f"cannot write {where}{FORMAT_NAMES[fmt]} data: "
                         f"{_reason(exc, fmt)}") from None


def _variable_labels(legal: Mapping[str, str], known: Mapping[str, Mapping[str, Any]],
                     fmt: str) -> dict[str, str]:
    """The variable label of each column written, by its legal name: the label it was read
    with, else its original name when it is written under another; a name the label cannot
    hold whole is refused."""
    rules = RULES[fmt]
    labels = {}
    for original, name in legal.items():
        label = known.get(original, {}).get("label")
        if not label and name != original:
            if rules.size(original) > rules.label_longest:
                raise InputError(
                    f"cannot write column {quoted(original)} to {rules.format_name} data: its "
                    f"name is not a legal {rules.format_name} name, and it is longer than a "
                    f"variable label holds to keep it ({rules.label_longest} {rules.unit}); "
                    "rename the column")
            label = original
        if label:
            labels[name] = label
    return labels


def _column_at_fault(writer: Any, data: Mapping[str, Any], options: Mapping[str, Any],
                     path: Path) -> str | None:
    """The first column that cannot be written alone (the writer's messages do not always
    say which), tried on ``path`` (the failed write's temporary file)."""
    for name in data:
        alone = {key: ({name: value[name]} if name in value else {})
                 if isinstance(value, dict) else value for key, value in options.items()}
        try:
            writer(pd.DataFrame({name: data[name]}), str(path), **alone)
        except Exception:  # the same failure, now of one column
            return str(name)
    return None


def _reason(exc: BaseException, fmt: str) -> str:
    """The writer's reason, with the limit where it only says "too long"."""
    reason = _first_line(exc)
    if "name is too long" in reason:
        return (f"its name is longer than {FORMAT_NAMES[fmt]} allows "
                f"({_NAME_LIMITS[fmt]}); rename the column")
    return reason


def _check_value_labels(name: str, labels: Mapping[Any, str]) -> None:
    """Refuse a category longer than an SPSS value label holds (it would be cut short)."""
    for label in labels.values():
        size = len(label.encode("utf-8"))
        if size > SPSS_LABEL_BYTES:
            raise InputError(f"cannot write column {quoted(name)} to SPSS data: its category "
                             f"'{label[:40]}...' has {size:,} bytes, more than the "
                             f"{SPSS_LABEL_BYTES} an SPSS value label holds; write .dta, .csv "
                             "or .parquet instead")


def _categorical(series: pd.Series, info: Mapping[str, Any]) -> bool:
    """A column written as codes with value labels: a Categorical, or text whose variable
    had value labels (a release writes categories as text)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return True
    codes = info.get("value_labels") or {}
    return bool(codes) and all(isinstance(c, int | float) for c in codes) and not (
        pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series))


def _to_codes(series: pd.Series, original: Mapping[Any, str] | None, fmt: str
              ) -> tuple[np.ndarray, dict[Any, str]]:
    """The codes of a categorical column and its value labels: the file's codes for the
    labels it had, the next codes after the largest for the others (in category order).
    Every label the file had is written, used or not."""
    present = series.notna().to_numpy()
    text = series.astype(object).where(present, None)
    if isinstance(series.dtype, pd.CategoricalDtype):
        labels = [str(c) for c in series.dtype.categories]
    else:
        labels = sorted({str(v) for v in text[present]})
    code_of: dict[str, Any] = {}
    for code, label in (original or {}).items():
        code_of.setdefault(label, code)
    numeric = [float(c) for c in code_of.values() if isinstance(c, int | float)]
    following = int(np.floor(max(numeric))) + 1 if numeric else 1
    for label in labels:
        if label not in code_of:
            code_of[label] = following
            following += 1
    codes = np.full(len(series), np.nan)
    keys = list(code_of)
    positions = pd.Index(keys).get_indexer(pd.Index(text[present].astype(str)))
    codes[present] = np.array([float(code_of[k]) for k in keys])[positions]
    value_labels = {code: label for label, code in code_of.items()}
    if present.all() and fmt == "dta" and _fits_long(codes):
        return codes.astype(np.int32), value_labels
    return codes, value_labels


def _fits_long(values: np.ndarray) -> bool:
    return bool(values.size == 0 or (values.min() >= _STATA_LONG[0]
                                     and values.max() <= _STATA_LONG[1]))


def _numeric_or_text(series: pd.Series, fmt: str, formats: dict[str, str], name: str
                     ) -> pd.Series:
    """A column ready for pyreadstat: whole numbers as Stata longs or an SPSS format without
    decimals, so that they read back as integers; other columns as they are."""
    if pd.api.types.is_bool_dtype(series):
        return series.astype(np.int8)
    if not pd.api.types.is_integer_dtype(series):
        return series
    values = series.to_numpy(dtype=np.int64)
    if fmt == "dta" and _fits_long(values):
        return series.astype(np.int32)
    beyond = np.flatnonzero((values > EXACT_INTEGERS) | (values < -EXACT_INTEGERS))
    if beyond.size:
        raise InputError(f"cannot write column {quoted(name)} to {FORMAT_NAMES[fmt]} data: its "
                         f"value in row {int(beyond[0]) + 1:,}, {int(values[beyond[0]])}, has "
                         f"more digits than {FORMAT_NAMES[fmt]} keeps in a number (whole "
                         "numbers up to 2^53); write .csv or .parquet, or the column as text")
    if fmt == "sav":
        digits = max((len(str(v)) for v in (values.min(), values.max())), default=1)
        formats[name] = f"F{max(8, digits + 1)}.0"
    return series


def carry_labels(source: pd.DataFrame, released: pd.DataFrame, *,
                 private: bool = False) -> pd.DataFrame:
    """Give ``released`` the labels ``source`` was read with (SPSS/Stata value and variable
    labels, measure levels), for the columns it keeps; returns ``released``. Beside a
    differentially ``private`` release only what describes a variable is carried (its label
    and measure level): which value labels a file holds, with which codes, and its storage
    formats (a text width) may follow the data, so the written codes and labels come from
    the released categories alone.

    Examples
    --------
    >>> import pandas as pd
    >>> source = pd.DataFrame({"sex": [1, 2]})
    >>> source.attrs[LABELS_KEY] = {"format": "sav", "variables": {
    ...     "sex": {"value_labels": {1: "male", 2: "female"}, "label": "Sex"},
    ...     "age": {"label": "Age"}}}
    >>> released = carry_labels(source, pd.DataFrame({"sex": ["male", "female"]}))
    >>> released.attrs[LABELS_KEY]["variables"]
    {'sex': {'value_labels': {1: 'male', 2: 'female'}, 'label': 'Sex'}}
    >>> private = carry_labels(source, pd.DataFrame({"sex": ["male"]}), private=True)
    >>> private.attrs[LABELS_KEY]["variables"]
    {'sex': {'label': 'Sex'}}
    """
    labels = source.attrs.get(LABELS_KEY)
    if labels:
        kept = ("label", "measure") if private else None
        variables = {name: {k: v for k, v in info.items() if kept is None or k in kept}
                     for name, info in labels.get("variables", {}).items()
                     if name in released.columns}
        released.attrs[LABELS_KEY] = {**labels, "variables": variables}
    return released
