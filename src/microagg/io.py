"""Reading and writing tables (CSV, Parquet) and reports, atomically.

The format is chosen by the file extension: ``.csv`` or ``.parquet`` / ``.pq``. Every write
goes to a temporary file in the target folder and is renamed over the target only when complete,
so a failed run never leaves a partial output behind.

CSV conventions: one header row, comma separator, UTF-8. Empty fields and the tokens ``NA``,
``N/A``, ``NaN``, ``nan``, ``NULL``, ``null`` are read as missing values; nothing else is (so a
category called ``None`` or ``?`` stays a category).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from microagg.errors import InputError

__all__ = ["atomic_path", "read_table", "table_format", "write_json", "write_table", "write_text"]

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
            header = next(csv.reader(handle), None)
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {path} as UTF-8 CSV: {exc}") from None
    if not header:
        raise InputError(f"file {path} is empty (no header row)")
    _refuse_duplicates([h.strip() for h in header], path)
    try:
        frame = pd.read_csv(
            path, keep_default_na=False, na_values=MISSING_TOKENS, skipinitialspace=True
        )
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot parse {path}: {message}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


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


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds.

    On any exception the temporary file is removed and ``path`` is left untouched.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"output folder does not exist: {folder}")
    handle, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(handle)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """Write ``frame`` as CSV or Parquet (by extension), atomically, without the index."""
    fmt = table_format(path)
    with atomic_path(path) as tmp:
        if fmt == "csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp, index=False)


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
