"""Reading and writing tables (CSV, Parquet) and reports, atomically.

The format is chosen by the file extension: ``.csv`` or ``.parquet`` / ``.pq``. Every write
goes to a temporary file in the target folder and is renamed over the target only when complete,
so a failed run never leaves a partial output behind; a command with several outputs renames
them together (:func:`write_all`). A run killed during the rename step can leave hidden
``.<name>.microagg-<pid>-*.tmp`` files; the next write to the same name removes them.

CSV conventions: one header row, UTF-8, comma separator (a header with semicolons, tabs or
bars and no comma selects that separator). Empty fields and the tokens ``NA``,
``N/A``, ``NaN``, ``nan``, ``NULL``, ``null`` are read as missing values; nothing else is (so a
category called ``None`` or ``?`` stays a category).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

import pandas as pd

from microagg.errors import InputError

__all__ = ["TMP_TAG", "atomic_path", "atomic_paths", "check_output", "read_table",
           "remove_stale_temporaries", "table_format", "write_all", "write_frame", "write_json",
           "write_table", "write_text"]

MISSING_TOKENS = ["", "NA", "N/A", "NaN", "nan", "NULL", "null"]
_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def table_format(path: str | Path) -> str:
    """``"csv"`` or ``"parquet"`` according to the extension; raises on anything else."""
    suffix = Path(path).suffix.lower()
    try:
        return _FORMATS[suffix]
    except KeyError:
        raise InputError(
            f"cannot tell the format of '{path}': use a .csv or .parquet extension"
        ) from None


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet file into a DataFrame.

    Raises :class:`InputError` for a missing or unreadable file, an empty file, or duplicated
    column names.
    """
    path = Path(path)
    fmt = table_format(path)
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if not path.is_file():
        raise InputError(f"not a file: {path}")
    if fmt == "csv":
        return _read_csv(path)
    return _read_parquet(path)


def _read_csv(path: Path) -> pd.DataFrame:
    with path.open(newline="", encoding="utf-8") as handle:
        try:
            sample = handle.read(65536)
        except UnicodeDecodeError as exc:
            raise InputError(f"cannot read {path} as UTF-8 CSV: {exc}") from None
    separator = _separator(sample)
    try:
        header = next(csv.reader(sample.splitlines()[:1], delimiter=separator), None)
    except csv.Error as exc:
        raise InputError(f"cannot read {path} as UTF-8 CSV: {exc}") from None
    if not header:
        raise InputError(f"file {path} is empty (no header row)")
    _refuse_duplicates([h.strip() for h in header], path)
    try:
        frame = pd.read_csv(
            path, sep=separator, keep_default_na=False, na_values=MISSING_TOKENS,
            skipinitialspace=True
        )
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot parse {path}: {message}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


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
    _refuse_duplicates(names, path)
    return pd.read_parquet(path)


def _refuse_duplicates(names: list[str], path: Path) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"column name '{name}' appears more than once in {path}")
        seen.add(name)


# Temporary files are named .<target>.microagg-<pid>-<random>.tmp: a later write to the same
# target removes those whose process is gone (e.g. killed during a write).
TMP_TAG = ".microagg-"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def remove_stale_temporaries(path: Path,
                             remove: Callable[[Path], None] | None = None) -> None:
    """Remove the hidden temporaries of writes to ``path`` whose process is gone (files by
    default; ``remove`` removes anything else, e.g. a temporary folder)."""
    for stale in path.parent.glob(f".{glob_escape(path.name)}{TMP_TAG}*.tmp"):
        pid_text = stale.name[len(path.name) + 1 + len(TMP_TAG):].split("-", 1)[0]
        if pid_text.isdigit() and not _process_alive(int(pid_text)):
            with contextlib.suppress(OSError):
                (remove or Path.unlink)(stale)


def _file_mode() -> int:
    """The mode a new file gets under the process's umask (0666 & ~umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def check_output(path: str | Path, sources: Sequence[str | Path] = ()) -> Path:
    """Refuse an output path that is a folder, lies in a missing folder, or is one of the
    ``sources`` (writing it would destroy the input)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"output folder does not exist: {folder}")
    if path.is_dir():
        raise InputError(f"output {path} is a folder; name a file")
    for source in sources:
        if Path(source).exists() and path.exists() and os.path.samefile(source, path):
            raise InputError(f"output {path} is the input file; writing it would destroy "
                             "the input: choose another name")
    return path


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
    ``sources``, to each other, or naming a folder are refused before anything is created."""
    targets = [check_output(p, sources) for p in paths]
    resolved = [t.resolve() for t in targets]
    if len(set(resolved)) < len(resolved):
        twice = next(t for t, r in zip(targets, resolved, strict=True)
                     if resolved.count(r) > 1)
        raise InputError(f"{twice} is named as two different outputs of one command")
    temporaries: list[Path] = []
    try:
        for target in targets:
            remove_stale_temporaries(target)
            handle, name = tempfile.mkstemp(
                prefix=f".{target.name}{TMP_TAG}{os.getpid()}-", suffix=".tmp",
                dir=target.parent if str(target.parent) else ".")
            os.close(handle)
            temporaries.append(Path(name))
        yield temporaries
        mode = _file_mode()
        for tmp, target in zip(temporaries, targets, strict=True):
            os.chmod(tmp, mode)
            os.replace(tmp, target)
    finally:
        for tmp in temporaries:
            if tmp.exists():
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
    """Write ``frame`` as CSV or Parquet (by extension), atomically, without the index."""
    fmt = table_format(path)
    with atomic_path(path) as tmp:
        write_frame(frame, tmp, fmt)


# Released CSV numbers: 15 significant digits, so a mean of 10.551 and 10.553 prints 10.552, not
# the float noise 10.552000000000001 (doubles hold 15 decimal digits exactly). Tables that are
# not the product of a computation (an exported data set) keep every digit.
RELEASE_FLOAT_FORMAT = "%.15g"


def write_frame(frame: pd.DataFrame, path: str | Path, fmt: str, *,
                release: bool = False) -> None:
    """Write ``frame`` to ``path`` as ``fmt`` ("csv" or "parquet"), without the index; a
    ``release`` CSV writes numbers with 15 significant digits, others round-trip exactly."""
    if fmt == "csv":
        frame.to_csv(path, index=False,
                     float_format=RELEASE_FLOAT_FORMAT if release else None)
    else:
        frame.to_parquet(path, index=False)


def write_text(path: str | Path, text: str) -> None:
    """Write a text file atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n")


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")
