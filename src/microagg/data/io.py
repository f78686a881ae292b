"""Reading and writing tables (CSV, Parquet, SPSS, Stata, SAS, Excel) and reports, atomically.

The format is chosen by the file extension: ``.csv``, ``.parquet`` / ``.pq``, and with the
optional extra ``formats`` (``pip install "microagg[formats]"``) SPSS ``.sav``, Stata ``.dta``,
Excel ``.xlsx`` and, for reading only, SAS ``.sas7bdat`` (:mod:`microagg.data.formats`: value
labels become categories and are written back). Every write is atomic: a temporary file
renamed over the target only when complete, a command's outputs together
(:mod:`microagg.data.atomic`, whose functions are re-exported here); column names are
compared and quoted as :mod:`microagg.data.column_names` says.

CSV conventions: one header row, UTF-8, comma separator (a header with semicolons, tabs or
bars and no comma selects that separator). A row with fewer fields than the header has
missing values at its end; a row with more is refused, naming its line (pandas would read a
first row with one field too many as row labels and every value one column off). Empty
fields and the tokens ``NA``, ``N/A``, ``NaN``, ``nan``, ``NULL``, ``null`` are read as missing
values; nothing else is (so a category called ``None`` or ``?`` stays a category) unless the
file's own tokens are given (``na=["?"]``, as UCI Adult writes a missing value). Numbers
are written with a decimal point and no thousands separator; a file written otherwise is read
with ``decimal=","`` and ``thousands="."`` (or another separator), which the command line
calls ``--decimal`` and ``--thousands``. The separator may be given (``separator=";"``), and a
file without a header row read with ``header=False`` (its columns named ``V1``, ``V2`` … as R
names them). How a table was read, when not by the defaults, travels with it in
``DataFrame.attrs`` (:data:`READ_KEY`), so that a recipe made on it reads the file again the
same way (its ``read:``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from microagg.data.atomic import (
    TMP_TAG,
    atomic_path,
    atomic_paths,
    check_output,
    json_text,
    remove_stale_temporaries,
    temporary_prefix,
    write_all,
    write_json,
    write_text,
)
from microagg.data.column_names import check_names, column_name, quoted
from microagg.data.missing_tokens import missing_tokens
from microagg.errors import InputError

__all__ = ["READ_KEY", "READ_OPTIONS", "TMP_TAG", "atomic_path", "atomic_paths",
           "check_names", "check_output",
           "column_name", "declared_text", "json_text", "missing_tokens", "output_format",
           "quoted",
           "read_table",
           "remove_stale_temporaries", "table_format", "temporary_prefix", "write_all",
           "write_frame", "write_json", "write_table", "write_text"]

DIALECT_KEY = "microagg_dialect"
"""The key of ``DataFrame.attrs`` under which a CSV file's decimal mark and thousands
separator are kept, when not the defaults (a release that reads a cell alone parses it so)."""
READ_KEY = "microagg_read"
"""The key of ``DataFrame.attrs`` under which the options a CSV file was read with are kept
(those of :data:`READ_OPTIONS` not at their defaults): a recipe's ``read:``."""
READ_OPTIONS = ("decimal", "thousands", "na", "separator", "header")
"""The options of :func:`read_table` that say how a CSV file is written."""
_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".sav": "sav",
            ".dta": "dta", ".xlsx": "xlsx", ".sas7bdat": "sas7bdat"}
_EXTENSIONS = ".csv, .parquet, .sav, .dta, .xlsx or .sas7bdat (read only)"


def table_format(path: str | Path) -> str:
    """The format of ``path`` by its extension: ``"csv"``, ``"parquet"``, ``"sav"``,
    ``"dta"``, ``"xlsx"`` or ``"sas7bdat"``; raises on anything else.

    Examples
    --------
    >>> table_format("survey.SAV"), table_format("x.pq")
    ('sav', 'parquet')
    """
    suffix = Path(path).suffix.lower()
    try:
        return _FORMATS[suffix]
    except KeyError:
        raise InputError(
            f"cannot tell the format of '{path}': use a {_EXTENSIONS} extension"
        ) from None


def output_format(path: str | Path) -> str:
    """The format of the output ``path`` (:func:`table_format`); raises for a format that
    microagg reads but does not write (SAS)."""
    from microagg.data.formats import FORMAT_NAMES, READ_ONLY

    fmt = table_format(path)
    if fmt in READ_ONLY:
        raise InputError(f"{path}: microagg reads {FORMAT_NAMES[fmt]} files but cannot write "
                         "them: write .sav, .dta, .xlsx, .csv or .parquet")
    return fmt


def read_table(path: str | Path, *, decimal: str | None = None,
               thousands: str | None = None, na: Sequence[str] = (),
               separator: str | None = None, header: bool = True,
               text: Mapping[str, Collection[str]] | Collection[str] = ()) -> pd.DataFrame:
    """Read a table (CSV, Parquet, SPSS, Stata, SAS or Excel, by extension) into a DataFrame.

    ``decimal`` and ``thousands`` are a CSV file's decimal mark (default ``.``) and thousands
    separator (default none), for files saved in a locale that writes ``1.234,5``. The CSV
    and Excel columns named in ``text`` are read as the text they hold (``01`` stays ``01``,
    ``TRUE`` stays ``TRUE``): a column declared categorical, whose reading must not depend on
    whether some other cell of it is text (:func:`declared_text`). Given as a mapping, each
    column's declared categories are read as themselves even when they are missing-value
    tokens (``NA`` declared as Namibia is not missing).
    ``na`` are a CSV file's own missing-value tokens, read as missing besides the defaults
    (``?`` in UCI Adult); ``separator`` its column separator (default: read off the header);
    ``header=False`` reads a file without a header row, its columns named ``V1``, ``V2`` ….
    Raises :class:`InputError` for a missing or unreadable file, an empty file, or duplicated
    column names.
    """
    path = Path(path)
    fmt = table_format(path)
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if not path.is_file():
        raise InputError(f"not a file: {path}")
    kept = {c: frozenset(map(str, v)) for c, v in text.items()} if isinstance(text, Mapping) \
        else {c: frozenset() for c in text}
    layout = _layout(na, separator, header)
    if fmt == "csv":
        frame = _read_csv(path, _dialect(decimal, thousands), kept, layout)
        if decimal is not None or thousands is not None:
            frame.attrs[DIALECT_KEY] = {"decimal": decimal or ".", "thousands": thousands}
        given = {"decimal": decimal, "thousands": thousands, "na": list(layout[0]) or None,
                 "separator": separator, "header": None if header else False}
        if any(v is not None for v in given.values()):
            frame.attrs[READ_KEY] = {k: v for k, v in given.items() if v is not None}
        return frame
    if decimal is not None or thousands is not None:
        raise InputError(f"{path}: `decimal` and `thousands` apply to CSV files only")
    named = [n for n, v in (("na", na), ("separator", separator), ("header", not header))
             if v]
    if named:
        raise InputError(f"{path}: `{named[0]}` applies to CSV files only")
    if fmt == "parquet":
        return _read_parquet(path)
    from microagg.data.formats import read_format

    return read_format(path, fmt, kept)


def _dialect(decimal: str | None, thousands: str | None) -> tuple[str, str | None]:
    """The decimal mark and thousands separator of a CSV file, checked."""
    decimal = "." if decimal is None else decimal
    for name, value in (("decimal", decimal), ("thousands", thousands)):
        if value is not None and (len(value) != 1 or value.isalnum() or value in "\"\n\r"):
            raise InputError(f"`{name}` must be one character such as . or , (got '{value}')")
    if thousands == decimal:
        raise InputError(f"`decimal` and `thousands` are both '{decimal}': give two "
                         "different characters")
    return decimal, thousands


def _layout(na: Sequence[str], separator: str | None,
            header: bool) -> tuple[tuple[str, ...], str | None, bool]:
    """A CSV file's missing-value tokens, separator and header, checked."""
    if isinstance(na, str) or not all(isinstance(t, str) for t in na):
        raise InputError(f"`na` is a list of missing-value tokens such as ['?'], got {na!r}")
    tokens = tuple(dict.fromkeys(t.strip() for t in na if t.strip()))
    if separator is not None and (not isinstance(separator, str) or len(separator) != 1
                                  or separator.isalnum() or separator in "\"\n\r"):
        raise InputError(f"`separator` must be one character such as , ; or a tab, got "
                         f"{separator!r}")
    if not isinstance(header, bool):
        raise InputError(f"`header` is true or false, got {header!r}")
    return tokens, separator, header


def declared_text(schema: Any) -> dict[str, frozenset[str]]:
    """The columns a schema declares categorical (ordinal or nominal), with their declared
    categories (or taxonomy leaves), and its household identifiers (compared as the text
    they hold: ``01`` and ``1`` are two households, and two long numbers never merge into
    one float): read as text, a declared category as itself."""
    if schema is None:
        return {}
    from microagg.data.schema import taxonomy_leaves

    out: dict[str, frozenset[str]] = {}
    for a in schema:
        if a.is_categorical or a.role.value == "household":
            leaves = taxonomy_leaves(a.taxonomy) if a.taxonomy is not None else ()
            out[a.name] = frozenset(map(str, (*(a.categories or ()), *leaves)))
    return out


def _read_csv(path: Path, dialect: tuple[str, str | None],
              text: Mapping[str, frozenset[str]] | None = None,
              layout: tuple[tuple[str, ...], str | None, bool] = ((), None, True)
              ) -> pd.DataFrame:
    with path.open(newline="", encoding="utf-8-sig") as handle:  # a BOM is not the header's
        try:
            sample = handle.read(65536)
        except UnicodeDecodeError as exc:
            raise InputError(f"cannot read {path} as UTF-8 CSV: {exc}") from None
    if "\x00" in sample:
        raise InputError(f"{path} holds NUL bytes: it is not a CSV text file (a spreadsheet or "
                         "a binary file renamed .csv?)")
    tokens, given, has_header = layout
    separator = given or _separator(sample)
    reader = csv.reader(io.StringIO(sample, newline=""), delimiter=separator,
                        skipinitialspace=True)
    try:
        header = next(reader, None)
    except csv.Error:  # the only one it raises here: a field beyond the csv module's limit
        raise InputError(f"cannot read the header of {path}: a name is longer than "
                         f"{csv.field_size_limit():,} characters") from None
    if not header:
        raise InputError(f"file {path} is empty (no header row)")
    if has_header:
        check_names([h.strip() for h in header], path)
    else:  # the first row is data: the columns are named by position, as R names them
        header = [f"V{i}" for i in range(1, len(header) + 1)]
    first = _first_row(reader)
    if first is not None and first[1] > len(header):
        raise _too_many_fields(path, first[0], first[1], len(header))
    try:
        frame = pd.read_csv(
            path, sep=separator, keep_default_na=False,
            header=0 if has_header else None, names=None if has_header else header,
            na_values={raw: missing_tokens((text or {}).get(column_name(raw), ()), tokens)
                       for raw in header},
            skipinitialspace=True, decimal=dialect[0], thousands=dialect[1],
            dtype={raw: str for raw in header if column_name(raw) in (text or {})} or None)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        fields = _FIELDS.search(message)
        if fields is not None:
            expected, line, seen = (int(v) for v in fields.groups())
            raise _too_many_fields(path, line, seen, expected) from None
        raise InputError(f"cannot parse {path}: {message}") from None
    if not isinstance(frame.index, pd.RangeIndex):
        # pandas reads a first row longer than the header as row labels and the rest shifted
        # one column: a first row beyond the sample read above
        raise InputError(f"cannot parse {path}: its first row of data has more fields than "
                         f"the header has columns ({len(header)})")
    frame.columns = [column_name(c) for c in frame.columns]
    return frame


_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _first_row(reader: Any) -> tuple[int, int] | None:
    """The line and the number of fields of the first row of data that ``reader`` (a
    ``csv.reader`` of the file's first characters, past its header) gives, blank lines
    skipped; ``None`` when they hold none. A row they cut short has fewer fields, never
    more."""
    try:
        while True:
            line = reader.line_num + 1
            row = next(reader)
            if row:
                return line, len(row)
    except (StopIteration, csv.Error):
        return None


def _too_many_fields(path: Path, line: int, fields: int, columns: int) -> InputError:
    return InputError(f"cannot parse {path}: line {line} has {fields} fields but the header "
                      f"names {columns} columns (a value that holds the separator must be "
                      "quoted)")


def _separator(sample: str) -> str:
    """The column separator: a comma, unless the header holds no comma but semicolons or tabs
    (spreadsheets in locales with a decimal comma write semicolons)."""
    header = sample.splitlines()[0] if sample else ""
    if "," in header:
        return ","
    for candidate in (";", "\t", "|"):
        if candidate in header:
            return candidate
    return ","


def _read_parquet(path: Path) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"cannot read {path} as Parquet: {exc}") from None
    check_names(names, path)
    frame = pd.read_parquet(path)
    named = [name for name in frame.index.names if name is not None]
    if named:  # pandas stores a named index in the file: it is a column of the data
        frame = frame.reset_index(level=named)
    frame = frame.reset_index(drop=True)  # unnamed row labels are pandas' own, not data
    frame.columns = [column_name(c) for c in frame.columns]
    return frame


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """Write ``frame`` as CSV, Parquet, SPSS, Stata or Excel (by extension), atomically,
    without the index."""
    fmt = output_format(path)
    with atomic_path(path) as tmp:
        write_frame(frame, tmp, fmt)


def write_frame(frame: pd.DataFrame, path: str | Path, fmt: str, *,
                release: bool = False) -> None:
    """Write ``frame`` to ``path`` as ``fmt`` (see :func:`table_format`), without the index;
    a ``release`` CSV writes numbers with 15 significant digits, others round-trip exactly
    (:mod:`microagg.data.csvwrite`). ``path`` may have any extension (it is usually a
    temporary file)."""
    if fmt == "csv":
        from microagg.data.csvwrite import write_csv

        write_csv(frame, path, release=release)
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        from microagg.data.formats import write_format

        write_format(frame, Path(path), fmt)
