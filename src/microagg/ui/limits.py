"""What the web app accepts: the size of an uploaded file, the rows and cells of its table,
and how far an Excel workbook (a zip archive) may expand. Set with ``microagg ui``'s
``--max-upload-mb``, ``--max-rows`` and ``--max-cells``, stated in the page.

Every check reads what the file says about itself before the table is read: the bytes of
the file, a CSV's lines, a Parquet, SPSS, Stata or SAS file's metadata, and an Excel file's
zip directory (each member's uncompressed size, and its ratio to the compressed size) and
then its rows and cells counted in the sheets' XML as it streams, so that a small file that
would expand to millions of rows (a "zip bomb") is refused before openpyxl expands it.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from microagg.errors import InputError

__all__ = ["DEFAULT", "RATIO", "Limits", "check_file", "check_frame", "too_large"]

RATIO = 100
"""The largest ratio of an Excel member's size to its compressed size (a sheet of numbers
compresses 10 to 30 times)."""

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What one upload may hold."""

    upload_bytes: int = 100_000_000
    rows: int = 1_000_000
    cells: int = 20_000_000

    @property
    def expanded_bytes(self) -> int:
        """The most an Excel workbook may expand to (all its members uncompressed)."""
        return 5 * self.upload_bytes

    def said(self) -> str:
        """The limits in one sentence, for the page."""
        return (f"Up to {self.upload_bytes / 1e6:,.0f} MB, {self.rows:,} records and "
                f"{self.cells:,} cells (an Excel file up to {self.expanded_bytes / 1e6:,.0f}"
                " MB uncompressed).")


DEFAULT = Limits()


def _size(count: float) -> str:
    return f"{count / 1e6:,.1f} MB" if count >= 100_000 else f"{count:,.0f} bytes"


def _refuse(name: str, what: str, limit: str, option: str) -> InputError:
    return InputError(f"{name} {what}: this server accepts at most {limit} (the server's "
                      f"operator sets it with microagg ui {option})")


def too_large(name: str, size: int, limits: Limits) -> InputError | None:
    """Why a file ``name`` of ``size`` bytes is refused, or ``None`` within ``limits``."""
    if size <= limits.upload_bytes:
        return None
    return _refuse(name, f"has {_size(size)}", _size(limits.upload_bytes), "--max-upload-mb")


def check_file(path: Path, limits: Limits) -> None:
    """Refuse ``path`` (an upload) when its size, or what its format says of its rows and
    cells, passes ``limits``; only the file's name is said."""
    name = path.name
    refusal = too_large(name, path.stat().st_size, limits)
    if refusal is not None:
        raise refusal
    suffix = path.suffix.lower()
    if suffix == ".csv":
        _check_rows(name, _csv_lines(path) - 1, None, limits)
    elif suffix in (".parquet", ".pq"):
        _check_rows(name, *_parquet_shape(path), limits)
    elif suffix in (".sav", ".dta", ".sas7bdat"):
        _check_rows(name, *_statistical_shape(path, suffix), limits)
    elif suffix == ".xlsx":
        _check_zip(path, limits)
        rows, cells = _xlsx_counts(path)
        _check_rows(name, rows - 1, None, limits)
        if cells > limits.cells:
            raise _refuse(name, f"holds {cells:,} cells", f"{limits.cells:,}", "--max-cells")


def check_frame(name: str, frame: pd.DataFrame, limits: Limits) -> None:
    """Refuse a table read from file ``name`` with more rows or cells than ``limits``."""
    _check_rows(name, len(frame), frame.shape[1], limits)


def _check_rows(name: str, rows: int | None, columns: int | None, limits: Limits) -> None:
    if rows is not None and rows > limits.rows:
        raise _refuse(name, f"holds {rows:,} records", f"{limits.rows:,}", "--max-rows")
    if rows is not None and columns is not None and rows * columns > limits.cells:
        raise _refuse(name, f"holds {rows * columns:,} cells ({rows:,} records × {columns} "
                      "columns)", f"{limits.cells:,}", "--max-cells")


def _csv_lines(path: Path) -> int:
    """The lines of a CSV file (at least its records, plus the header)."""
    lines, last = 0, b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def _parquet_shape(path: Path) -> tuple[int | None, int | None]:
    try:
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(path).metadata
        return int(meta.num_rows), int(meta.num_columns)
    except Exception:  # not Parquet: reading it says why
        return None, None


def _statistical_shape(path: Path, suffix: str) -> tuple[int | None, int | None]:
    try:
        import pyreadstat

        reader: Any = {".sav": pyreadstat.read_sav, ".dta": pyreadstat.read_dta,
                       ".sas7bdat": pyreadstat.read_sas7bdat}[suffix]
        _, meta = reader(str(path), metadataonly=True)
        return meta.number_rows, meta.number_columns
    except Exception:  # pyreadstat absent, or not such a file: reading it says why
        return None, None


def _check_zip(path: Path, limits: Limits) -> None:
    """An Excel file's zip directory: every member's declared size (zipfile never reads a
    member past it) and ratio, and their sum."""
    name = path.name
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        return  # not a zip: reading it says why
    total = sum(member.file_size for member in members)
    if total > limits.expanded_bytes:
        raise _refuse(name, f"expands to {_size(total)}",
                      f"{_size(limits.expanded_bytes)} uncompressed", "--max-upload-mb: 5 "
                      "times as much")
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > 1_000_000 and ratio > RATIO:
            raise InputError(f"{name} expands {ratio:,.0f} times ({member.filename}): this "
                             f"server refuses an Excel file whose parts expand more than "
                             f"{RATIO} times")


def _xlsx_counts(path: Path) -> tuple[int, int]:
    """The rows and cells of an Excel workbook's sheets, counted in their XML as it streams
    (all sheets together: an upper bound of the sheet that is read)."""
    rows = cells = 0
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                if not (member.filename.startswith("xl/worksheets/")
                        and member.filename.endswith(".xml")):
                    continue
                with archive.open(member) as handle:
                    tail = b""
                    while chunk := handle.read(_CHUNK):
                        text = tail + chunk
                        cut = text.rfind(b"<")  # no tag is cut in two: each starts at a <
                        cut = len(text) if cut < 0 else cut
                        rows, cells = _tags(text[:cut], rows, cells)
                        tail = text[cut:]
                    rows, cells = _tags(tail, rows, cells)
    except (zipfile.BadZipFile, OSError, RuntimeError):
        return 0, 0  # not a workbook: reading it says why
    return rows, cells


def _tags(text: bytes, rows: int, cells: int) -> tuple[int, int]:
    return (rows + text.count(b"<row ") + text.count(b"<row>"),
            cells + text.count(b"<c ") + text.count(b"<c>"))
