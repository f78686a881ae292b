"""Reading and writing tables (CSV, Parquet, SPSS, Stata, SAS, Excel) and reports, atomically.

The format is chosen by the file extension: ``.csv``, ``.parquet`` / ``.pq``, and with the
optional extra ``formats`` (``pip install "microagg[formats]"``) SPSS ``.sav``, Stata ``.dta``,
Excel ``.xlsx`` and, for reading only, SAS ``.sas7bdat`` (:mod:`microagg.data.formats`: value
labels become categories and are written back). Every write
goes to a temporary file in the target folder and is renamed over the target only when complete,
so a failed run never leaves a partial output behind; a command with several outputs renames
them together (:func:`write_all`). A signal that ends the command (:mod:`microagg.interrupts`)
removes the temporaries on its way out, and one that arrives while they are made, renamed or
removed waits until that step is whole (the renames are then undone). A process killed outright
(SIGKILL) can leave hidden ``.<name>.microagg-<pid>-*.tmp`` files; the next write to the same
name removes them.

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

import contextlib
import csv
import errno
import io
import json
import math
import os
import re
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

import pandas as pd

import microagg.interrupts as interrupts
from microagg.errors import InputError

__all__ = ["READ_KEY", "READ_OPTIONS", "TMP_TAG", "atomic_path", "atomic_paths",
           "check_names", "check_output",
           "column_name", "declared_text", "json_text", "missing_tokens", "output_format",
           "quoted",
           "read_table",
           "remove_stale_temporaries", "table_format", "temporary_prefix", "write_all",
           "write_frame", "write_json", "write_table", "write_text"]

MISSING_TOKENS = ["", "NA", "N/A", "NaN", "nan", "NULL", "null"]
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


def missing_tokens(kept: Collection[str] = (), extra: Sequence[str] = ()) -> list[str]:
    """The tokens read as missing (the defaults and a file's own ``extra`` ones), but the
    ``kept`` ones (a column's declared categories)."""
    return [t for t in dict.fromkeys((*MISSING_TOKENS, *extra)) if t not in kept]


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


def column_name(name: object) -> str:
    """A column name as microagg compares it: text, stripped, in Unicode normal form C (so
    that 'naïve' typed on the command line matches 'naïve' written decomposed by a file)."""
    return unicodedata.normalize("NFC", str(name).strip())


def quoted(name: object) -> str:
    """A column name as a message writes it: in quotes, its line breaks, tabs and other
    control characters as escapes, so that the message stays one line and says which name.

    Examples
    --------
    >>> print(quoted("income"), quoted("net" + chr(10) + "income"))
    'income' 'net\\nincome'
    """
    text = "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c
                   for c in str(name))
    return f"'{text}'"


def check_names(names: list[str], path: Path) -> None:
    """Refuse a header with an unnamed column or a name given twice."""
    seen: set[str] = set()
    for position, raw in enumerate(names, start=1):
        name = column_name(raw)
        if not name:
            raise InputError(f"column {position} of {path} has no name: name every column in "
                             "the header")
        if name in seen:
            raise InputError(f"column name '{name}' appears more than once in {path}")
        seen.add(name)


# Temporary files are named .<target>.microagg-<pid>-<random>.tmp (the target's name cut to
# STEM characters, so that a name near the file system's limit still has a temporary): a later
# write to the same target removes those whose process is gone (e.g. killed during a write).
TMP_TAG = ".microagg-"
STEM = 64


def temporary_prefix(path: Path) -> str:
    """The name prefix of the temporaries of writes to ``path``."""
    return f".{path.name[:STEM]}{TMP_TAG}"


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (when in doubt, yes: its temporaries stay)."""
    if sys.platform == "win32":  # os.kill would end the process (or signal a console group)
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(ctypes.get_last_error() == 5)  # ERROR_ACCESS_DENIED: it exists
        try:
            status = ctypes.c_ulong()
            return (not kernel32.GetExitCodeProcess(handle, ctypes.byref(status))
                    or status.value == 259)  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    else:
        try:
            os.kill(pid, 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True


def remove_stale_temporaries(path: Path, remove: Callable[[Path], None] | None = None,
                             keep: Sequence[str | Path] = ()) -> None:
    """Remove the hidden temporaries of writes to ``path`` whose process is gone (files by
    default; ``remove`` removes anything else, e.g. a temporary folder), except the files
    ``keep`` names (a command's inputs, whatever they are called)."""
    prefix = temporary_prefix(path)
    kept = {Path(k).resolve() for k in keep}
    for stale in path.parent.glob(f"{glob_escape(prefix)}*.tmp"):
        pid_text = stale.name[len(prefix):].split("-", 1)[0]
        if (pid_text.isdigit() and not _process_alive(int(pid_text))
                and not any(stale.resolve() == k or stale.resolve() in k.parents
                            for k in kept)):
            with contextlib.suppress(OSError):
                (remove or Path.unlink)(stale)


def _file_mode() -> int:
    """The mode a new file gets under the process's umask (0666 & ~umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _name_limit(folder: Path) -> int:
    """The longest file name ``folder``'s file system takes (255 where the system does not
    say: Windows has no pathconf)."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):
        return 255


def check_output(path: str | Path, sources: Sequence[str | Path] = ()) -> Path:
    """Refuse an output path that is a folder, lies in a missing folder, has a name longer
    than the file system allows, or is one of the ``sources`` (every file the command reads:
    writing it would destroy an input)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"output folder does not exist: {folder}")
    if len(os.fsencode(path.name)) > _name_limit(folder):
        raise InputError(f"output name is too long for its file system ({len(path.name)} "
                         f"characters): {path.name[:40]}...")
    if path.is_dir():
        raise InputError(f"output {path} is a folder; name a file")
    for source in sources:
        if Path(source).exists() and path.exists() and os.path.samefile(source, path):
            raise InputError(f"output {path} is an input of this command ({source}); writing "
                             "it would destroy the input: choose another name")
    return path


def _reserve(target: Path, keep: Sequence[str | Path] = ()) -> Path:
    """A new empty temporary file beside ``target``: proof, before any work, that the folder
    takes the output. Stale temporaries of earlier writes go, the files ``keep`` names stay."""
    remove_stale_temporaries(target, keep=keep)
    try:
        handle, name = tempfile.mkstemp(prefix=f"{temporary_prefix(target)}{os.getpid()}-",
                                        suffix=".tmp",
                                        dir=target.parent if str(target.parent) else ".")
    except OSError as exc:
        raise InputError(f"cannot write to {target.parent if str(target.parent) else '.'}: "
                         f"{exc.strerror or exc}") from None
    os.close(handle)
    return Path(name)


def _commit(temporaries: Sequence[Path], targets: Sequence[Path]) -> None:
    """Rename every temporary over its target, or none: targets that exist are first moved
    aside, and any failure puts them back and removes what was already renamed. Run under
    :func:`microagg.interrupts.held`: a signal that arrived meanwhile undoes the renames too,
    so that an interrupted command has written nothing."""
    mode = _file_mode()
    aside: list[tuple[Path, Path]] = []  # (target, its previous version)
    placed: list[Path] = []
    try:
        for target in targets:
            if target.exists():
                previous = _reserve(target)
                os.replace(target, previous)
                aside.append((target, previous))
        for tmp, target in zip(temporaries, targets, strict=True):
            os.chmod(tmp, mode)
            os.replace(tmp, target)
            placed.append(target)
    except BaseException as exc:
        _undo(placed, aside)
        if isinstance(exc, OSError):
            failed = targets[min(len(placed), len(targets) - 1)]
            raise InputError(f"cannot write {failed}: {exc.strerror or exc}; no output was "
                             "written") from None
        raise
    if interrupts.pending():
        _undo(placed, aside)
        return
    for _, previous in aside:
        with contextlib.suppress(OSError):
            previous.unlink()
    interrupts.wrote(targets)


def _undo(placed: Sequence[Path], aside: Sequence[tuple[Path, Path]]) -> None:
    """Remove the outputs ``placed`` and put back the previous versions set ``aside``."""
    for target in placed:
        with contextlib.suppress(OSError):
            target.unlink()
    for target, previous in aside:
        with contextlib.suppress(OSError):
            os.replace(previous, target)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds.

    On any exception the temporary file is removed and ``path`` is left untouched. The file
    gets the mode the umask allows, like any new file.
    """
    with atomic_paths([path]) as (tmp,):
        yield tmp


@contextlib.contextmanager
def atomic_paths(paths: Sequence[str | Path], sources: Sequence[str | Path] = ()
                 ) -> Iterator[list[Path]]:
    """Temporary paths beside every one of ``paths``, renamed to them together if the block
    succeeds; on any exception none of ``paths`` is touched. Outputs equal to one of the
    ``sources``, to each other, naming a folder, or in a folder that cannot be written are
    refused before the block runs, so a command that computes inside the block fails before
    its work, not after. A write that fails for lack of space becomes an :class:`InputError`."""
    targets = [check_output(p, sources) for p in paths]
    resolved = [t.resolve() for t in targets]
    if len(set(resolved)) < len(resolved):
        twice = next(t for t, r in zip(targets, resolved, strict=True)
                     if resolved.count(r) > 1)
        raise InputError(f"{twice} is named as two different outputs of one command")
    temporaries: list[Path] = []
    try:
        for target in targets:
            with interrupts.held():  # a temporary is made and recorded, or not made
                temporaries.append(_reserve(target, sources))
        try:
            yield temporaries
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS,
                             errno.EACCES, errno.EPERM):
                raise InputError(f"cannot write the output: {exc.strerror or exc}; no output "
                                 "was written") from None
            raise
        with interrupts.held():
            _commit(temporaries, targets)
    finally:
        with interrupts.held():
            for tmp in temporaries:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()


def write_all(writers: Sequence[tuple[Path, Callable[[Path], None]]],
              sources: Sequence[str | Path] = ()) -> None:
    """Write every output of one command, or none: each writer fills a temporary file, and
    all are renamed at the end. Outputs equal to a source, to each other, or naming a folder
    are refused before anything is written."""
    with atomic_paths([target for target, _ in writers], sources) as temporaries:
        for tmp, (_, write) in zip(temporaries, writers, strict=True):
            write(tmp)


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


def write_text(path: str | Path, text: str) -> None:
    """Write a text file atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    write_text(path, json_text(obj))


def json_text(obj: Any) -> str:
    """``obj`` as indented, strictly valid JSON: numpy scalars and arrays as numbers and
    lists, paths and other objects as text, and a number that is not finite (NaN, ±inf,
    which JSON has no word for) as ``null``."""
    return json.dumps(_plain(obj), indent=2, allow_nan=False) + "\n"


def _plain(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        return _plain(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    return str(obj)
