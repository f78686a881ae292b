"""Data sets of many files: read partition by partition, written atomically as a whole.

Input: a folder (every ``*.parquet``, ``*.pq`` or ``*.csv`` file in it, in name order, but
names starting with ``.`` or ``_``), a glob (``data/part-*.parquet``) or one file, local or
at an fsspec URL (``s3://bucket/prefix``: :mod:`~microagg.at_scale.storage`). A Parquet
file is cut into partitions of whole row groups of at most ``rows_per_partition`` rows; a
CSV file is one partition. Every file must have the columns of the first, in the same order
and, for Parquet, of the same types; a file with no rows is allowed and gives no partition;
a missing or unreadable file is an error naming it. Row counts of Parquet files come from
their metadata, without reading the data.

Output: a Parquet data set, a folder of ``part-00000.parquet`` ... files, one per partition,
each written by the worker that computed it. They are written into a hidden temporary folder
beside the target, which is renamed to the target only when every partition is written; on any
failure the temporary folder is removed, so a failed run leaves nothing. A run killed hard
can leave ``.<name>.microagg-<pid>-*.tmp`` folders; the next write to the same name removes
those whose process is gone. A data set written to a URL is committed as
:mod:`~microagg.at_scale.storage` says (copy, then a ``_SUCCESS`` marker).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import microagg.interrupts as interrupts
from microagg.at_scale.storage import (
    Location,
    check_output_at,
    commit,
    list_files,
    locate,
    refuse_foreign,
    remove_prefix,
    temporary_prefix_of,
)
from microagg.data.io import (
    check_output,
    read_table,
    remove_stale_temporaries,
    table_format,
    temporary_prefix,
)
from microagg.errors import InputError

__all__ = ["Dataset", "Piece", "open_dataset", "read_matrix", "read_piece", "remove_folder",
           "replace_folder", "write_dataset", "write_parts_here"]

ROWS_PER_PARTITION = 1_000_000


@dataclass(frozen=True)
class Piece:
    """One partition of the input: a file, or some row groups of a Parquet file (``path``:
    as it may be shown; ``store``: the file system of a URL, None for a local file)."""

    path: str
    fmt: str
    row_groups: tuple[int, ...] | None
    rows: int
    store: Location | None = field(default=None, repr=False, compare=False)


def read_piece(piece: Piece, columns: Sequence[str] | None = None,
               text: Mapping[str, Collection[str]] | Sequence[str] = ()) -> pd.DataFrame:
    """The rows of one partition (only ``columns``, if given; a CSV file's ``text`` columns
    read as the text they hold, as :func:`~microagg.data.io.read_table` reads them)."""
    if piece.store is not None:
        return _read_remote(piece, piece.store, columns, text)
    path = Path(piece.path)
    if not path.is_file():
        raise InputError(f"file not found: {path}")
    if piece.fmt == "csv":
        frame = read_table(path, text=text)
        return frame if columns is None else frame[list(columns)]
    return _read_groups(path, piece, columns)


def _read_groups(source: Any, piece: Piece, columns: Sequence[str] | None) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(source).read_row_groups(
            list(piece.row_groups or ()), columns=None if columns is None else list(columns))
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"cannot read {piece.path} as Parquet: {exc}") from None
    return table.to_pandas()


def _read_remote(piece: Piece, store: Location, columns: Sequence[str] | None,
                 text: Mapping[str, Collection[str]] | Sequence[str]) -> pd.DataFrame:
    if piece.fmt == "csv":
        with store.local_copy(piece.path) as local:
            frame = _csv(local, piece.path, text)
        return frame if columns is None else frame[list(columns)]
    with store.open(piece.path) as handle:
        return _read_groups(handle, piece, columns)


def _csv(local: Path, shown: str,
         text: Mapping[str, Collection[str]] | Sequence[str] = ()) -> pd.DataFrame:
    """A local copy of the CSV file ``shown`` read as :func:`read_table` reads it, an error
    naming ``shown``."""
    try:
        return read_table(local, text=text)
    except InputError as exc:
        raise InputError(str(exc).replace(str(local), shown)) from None


def read_matrix(piece: Piece, columns: Sequence[str], allow_missing: bool = False
                ) -> np.ndarray:
    """The partition's ``columns`` as a float matrix; a missing (unless ``allow_missing``: then
    NaN) or infinite value is an error naming the column and the file."""
    frame = read_piece(piece, columns)
    text = [c for c in columns if not (pd.api.types.is_numeric_dtype(frame[c])
                                       and not pd.api.types.is_bool_dtype(frame[c]))]
    if text:
        raise InputError(f"column '{text[0]}' of {piece.path} is not numeric; the cluster path "
                         "works on numeric columns (name others with `columns`)")
    X = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isinf(X) if allow_missing else ~np.isfinite(X)
    if bad.any():
        column = columns[int(np.flatnonzero(bad.any(axis=0))[0])]
        raise InputError(f"column '{column}' of {piece.path} has missing values or infinities; "
                         "the cluster path needs complete numeric columns")
    return X


@dataclass(frozen=True)
class Dataset:
    """The partitions of a data set, their row counts and the columns they share."""

    source: str
    pieces: tuple[Piece, ...]
    columns: tuple[str, ...]
    files: tuple[_File, ...] = ()  # as open_dataset found them

    def check_types(self, columns: Sequence[str]) -> None:
        """Refuse a file whose Parquet type of one of ``columns`` differs from the first file
        with rows (:func:`open_dataset` with ``typed`` False leaves this to the command,
        which knows which columns it reads)."""
        if self.files:
            _check_alike(self.files, columns)

    @property
    def n(self) -> int:
        return int(sum(p.rows for p in self.pieces))

    @property
    def sizes(self) -> np.ndarray:
        return np.array([p.rows for p in self.pieces], dtype=np.int64)

    @property
    def offsets(self) -> np.ndarray:
        """The global row number of each partition's first row (input order)."""
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    def require(self, names: Sequence[str]) -> None:
        """Raise if a column is missing."""
        missing = [c for c in names if c not in self.columns]
        if missing:
            raise InputError(f"column '{missing[0]}' is not in {self.source} (columns: "
                             f"{', '.join(self.columns)})")

    def head(self, rows: int = 1000,
             text: Mapping[str, Collection[str]] | Sequence[str] = ()) -> pd.DataFrame:
        """The first rows of the first partition (to check a schema, in this process), the
        ``text`` columns of a CSV file read as text."""
        return read_piece(self.pieces[0], text=text).head(rows)


_SUFFIXES = (".parquet", ".pq", ".csv")


def _files(source: str | Path) -> list[Path]:
    text = str(source)
    path = Path(text)
    if path.is_dir():
        files = sorted(p for p in path.iterdir()
                       if p.is_file() and not p.name.startswith((".", "_"))
                       and p.suffix.lower() in _SUFFIXES)
        if not files:
            raise InputError(f"folder {path} holds no .parquet or .csv file")
        return files
    if glob.has_magic(text):
        files = sorted(Path(p) for p in glob.glob(text) if Path(p).is_file())
        if not files:
            raise InputError(f"no file matches {text}")
        return files
    if not path.exists():
        raise InputError(f"file not found: {path}")
    return [path]


def _parquet_pieces(path: Path | str, rows_per_partition: int, store: Location | None = None
                    ) -> tuple[list[str], Any, list[Piece]]:
    import pyarrow.parquet as pq

    with contextlib.ExitStack() as stack:
        source = path if store is None else stack.enter_context(store.open(str(path)))
        try:
            file = pq.ParquetFile(source)
            meta, schema = file.metadata, file.schema_arrow
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise InputError(f"cannot read {path} as Parquet: {exc}") from None
    pieces: list[Piece] = []
    groups: list[int] = []
    rows = 0
    for g in range(meta.num_row_groups):
        size = meta.row_group(g).num_rows
        if groups and rows + size > rows_per_partition:
            pieces.append(Piece(str(path), "parquet", tuple(groups), rows, store))
            groups, rows = [], 0
        if size:
            groups.append(g)
            rows += size
    if groups:
        pieces.append(Piece(str(path), "parquet", tuple(groups), rows, store))
    names = [n for n in schema.names if n != "__index_level_0__"]
    types = [str(schema.field(n).type) for n in names]
    return names, types, pieces


@dataclass(frozen=True)
class _File:
    """One input file as :func:`open_dataset` finds it: its columns, their Parquet types
    (None for CSV) and its partitions (none when it has no rows)."""

    path: Path | str
    columns: list[str]
    types: list[str] | None
    pieces: list[Piece]


def _describe(path: Path | str, fmt: str, rows_per_partition: int,
              store: Location | None = None) -> _File:
    if fmt == "parquet":
        return _File(path, *_parquet_pieces(path, rows_per_partition, store))
    if store is None:
        frame = read_table(path)
    else:
        with store.local_copy(str(path)) as local:
            frame = _csv(local, str(path))
    return _File(path, [str(c) for c in frame.columns], None,
                 [Piece(str(path), "csv", None, len(frame), store)] if len(frame) else [])


def _kind_of(parquet_type: str) -> str:
    """A Parquet type as a release reads it: every integer and floating type is a number."""
    return "number" if re.fullmatch(r"u?int\d*|float\d*|double|halffloat|decimal.*",
                                    parquet_type) else parquet_type


def _check_alike(described: Sequence[_File], columns: Sequence[str] | None = None) -> None:
    """Refuse a file whose columns differ from the first file's, or (if it has rows) whose
    Parquet types of ``columns`` (default: all) differ from those of the first file with rows
    (integers and floats alike: numbers)."""
    first = described[0]
    typed = next((d for d in described if d.pieces), first)  # types of a file with rows
    for d in described:
        if d.columns != first.columns:
            raise InputError(f"{d.path} has columns {d.columns}, but {first.path} has "
                             f"{first.columns}: every file of a data set needs the same "
                             "columns in the same order")
        bad = [c for c, a, b in zip(first.columns, d.types or (), typed.types or (),
                                    strict=False)
               if (columns is None or c in columns) and _kind_of(a) != _kind_of(b)
               and "null" not in (a, b)]
        if d.pieces and bad:
            raise InputError(f"column '{bad[0]}' of {d.path} has another type than in "
                             f"{typed.path}: every file of a data set needs the same column "
                             "types")


def open_dataset(source: str | Path | Location, *,
                 rows_per_partition: int = ROWS_PER_PARTITION, typed: bool = True,
                 storage_options: Mapping[str, Any] | None = None) -> Dataset:
    """The partitions of ``source`` (folder, glob or file, local or at a URL read with
    ``storage_options``: :mod:`~microagg.at_scale.storage`), after checking that every file has
    the same columns as the first (and, if it has rows and ``typed``, the Parquet types of
    the first file with rows; an all-missing column fits any type, integers and floats are
    alike; not ``typed``: :meth:`Dataset.check_types` checks the columns a command reads).
    CSV files are read once here to count their rows and check their header."""
    where = locate(source, storage_options)
    store = where if isinstance(where, Location) else None
    files: Sequence[Path | str]
    if store is not None:
        shown, files = store.url, list_files(store)
    else:  # a file:// URL is read as its path
        shown = str(source) if str(where) == str(Path(str(source))) else str(where)
        files = _files(shown)
    formats = {table_format(Path(str(f))) for f in files}
    if len(formats) > 1:
        raise InputError(f"{shown} mixes CSV and Parquet files; use one format")
    fmt = formats.pop()
    described = [_describe(f, fmt, rows_per_partition, store) for f in files]
    _check_alike(described, None if typed else ())
    pieces = [p for d in described for p in d.pieces]
    if not pieces:
        raise InputError(f"{shown} holds no rows")
    return Dataset(shown, tuple(pieces), tuple(described[0].columns), tuple(described))


def _write_part(frame: pd.DataFrame, path: str, store: Location | None = None) -> int:
    if store is None:
        frame.to_parquet(path, index=False)
    else:
        with store.filesystem().open(path, "wb") as handle:
            frame.to_parquet(handle, index=False)
    return len(frame)


def check_dataset_output(target: str | Path | Location, source: str | Path | None = None,
                         storage_options: Mapping[str, Any] | None = None) -> Path | Location:
    """Refuse a target in a missing folder, an existing file, the input itself, or an
    existing folder that holds anything but the partition files of a data set microagg wrote
    (replacing the folder would delete the other files); a URL (read with
    ``storage_options``) likewise, its ``_SUCCESS`` marker allowed."""
    where = locate(target, storage_options)
    if isinstance(where, Location):
        check_output_at(where, source)
        return where
    target = where
    if target.exists() and not target.is_dir():
        raise InputError(f"output {target} is a file; a Parquet data set is a folder")
    if source is not None:
        src = Path(str(source))
        if src.exists() and target.exists() and os.path.samefile(src, target):
            raise InputError(f"output {target} is the input; choose another name")
    if target.is_dir():
        refuse_foreign(target, [p.name for p in target.iterdir()])
    else:
        check_output(target)
    _check_writable(target.parent if str(target.parent) else Path("."))
    return target


def _check_writable(folder: Path) -> None:
    """Refuse, before any work, a folder in which no data set can be created."""
    try:
        Path(tempfile.mkdtemp(prefix=".microagg-check-", dir=folder)).rmdir()
    except OSError as exc:
        raise InputError(f"cannot write to {folder}: {exc.strerror or exc}") from None


def _compute(client: Any, writes: Sequence[Any], extra: Sequence[Any],
             progress: Callable[[int], None] | None) -> tuple[list[int], list[Any]]:
    """The rows of every write and the ``extra`` results, computed in one graph; on any
    failure the unfinished tasks are cancelled."""
    futures: list[Any] = []
    try:
        futures = client.compute([*writes, *extra])
        rows: list[int] = []
        for future in futures[:len(writes)]:
            rows.append(int(future.result()))
            if progress is not None:
                progress(sum(rows))
        return rows, [future.result() for future in futures[len(writes):]]
    except BaseException:
        # Cancel only what failed: cancelling finished futures races the scheduler's release
        # of their keys (an internal assertion of distributed), and the original error is the
        # one to report.
        with contextlib.suppress(Exception):
            client.cancel(futures)
        raise


def write_dataset(client: Any, parts: Sequence[Any], target: str | Path | Location, *,
                  source: str | Path | None = None,
                  progress: Callable[[int], None] | None = None,
                  extra: Sequence[Any] = (),
                  storage_options: Mapping[str, Any] | None = None,
                  check: Callable[[list[Any]], None] | None = None
                  ) -> tuple[list[int], list[Any]]:
    """Write the delayed DataFrames ``parts`` as the Parquet data set ``target`` (a path, or
    a URL read with ``storage_options``), all or nothing (module docstring). An existing data
    set at ``target`` is replaced only once the new one is complete. ``extra`` delayed
    results are computed in the same graph (so shared tasks run once); ``check``, called
    with them once every part is written and before the data set is put in place, may still
    refuse it by raising (nothing is then written); ``progress`` is called with the rows
    written so far. Returns the rows of every part and the ``extra`` results."""
    import dask

    where = check_dataset_output(target, source, storage_options)
    if isinstance(where, Location):
        return _write_remote(client, parts, where, extra, progress, check)
    target = where
    remove_stale_temporaries(target, lambda stale: shutil.rmtree(stale, ignore_errors=True),
                             keep=[source] if source is not None else ())
    tmp: Path | None = None
    try:
        with interrupts.held():  # the folder is made and recorded, or not made
            tmp = Path(tempfile.mkdtemp(prefix=f"{temporary_prefix(target)}{os.getpid()}-",
                                        suffix=".tmp",
                                        dir=target.parent if str(target.parent) else "."))
        writes = [dask.delayed(_write_part)(part, str(tmp / f"part-{i:05d}.parquet"))
                  for i, part in enumerate(parts)]
        rows, results = _compute(client, writes, extra, progress)
        if check is not None:
            check(results)
        os.chmod(tmp, 0o777 & ~_umask())
        with interrupts.held():  # the renames are not cut in two
            replace_folder(tmp, target)
            interrupts.wrote([target])
        return rows, results
    finally:
        if tmp is not None:
            with interrupts.held():
                remove_folder(tmp)


def replace_folder(folder: Path, target: Path) -> None:
    """Put ``folder`` (beside ``target``, on the same file system) in place as ``target``:
    an existing ``target`` is moved aside first and deleted once the new one is in place.
    Call it inside :func:`microagg.interrupts.held`, so that no signal cuts it in two."""
    if target.exists():
        old = target.with_name(f"{temporary_prefix(target)}{os.getpid()}-old.tmp")
        os.replace(target, old)
        os.replace(folder, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(folder, target)


class _Done:
    """A computed value in the place of a Dask future."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


class _Here:
    """The part of a Dask client :func:`write_dataset` uses, computing in this process, one
    task after another (a part is made, written and dropped before the next is made)."""

    def compute(self, tasks: Sequence[Any]) -> list[_Done]:
        import dask

        return [_Done(value) for value in dask.compute(*tasks, scheduler="synchronous")]

    def cancel(self, futures: Sequence[Any]) -> None:
        """Nothing runs once :meth:`compute` has returned."""


def write_parts_here(parts: Sequence[Any], target: str | Path | Location, *,
                     storage_options: Mapping[str, Any] | None = None) -> list[int]:
    """:func:`write_dataset` without a cluster: the delayed DataFrames ``parts`` computed
    and written one after another by this process, as the Parquet data set ``target`` (a
    folder or a URL), all or nothing.

    Parameters
    ----------
    parts : sequence of dask.delayed
        The partitions, in order.
    target : str, Path or Location
        The data set to write.
    storage_options : mapping, optional
        The storage options of a URL's file system.

    Returns
    -------
    list of int
        The rows of every partition.
    """
    rows, _ = write_dataset(_Here(), parts, target, storage_options=storage_options)
    return rows


def _write_remote(client: Any, parts: Sequence[Any], target: Location, extra: Sequence[Any],
                  progress: Callable[[int], None] | None,
                  check: Callable[[list[Any]], None] | None = None
                  ) -> tuple[list[int], list[Any]]:
    """:func:`write_dataset` to a URL: the parts under a temporary prefix, then
    :func:`~microagg.at_scale.storage.commit`; the prefix is deleted whatever happens."""
    import dask

    tmp = temporary_prefix_of(target)
    done = False
    try:
        writes = [dask.delayed(_write_part)(part, f"{tmp}/part-{i:05d}.parquet", target)
                  for i, part in enumerate(parts)]
        rows, results = _compute(client, writes, extra, progress)
        done = True  # every task has ended: none can write under the prefix any more
        if check is not None:
            check(results)
        with interrupts.held():  # the commit is not cut in two by Ctrl-C
            commit(target, tmp, len(writes))
            interrupts.wrote([target.url])
        return rows, results
    finally:
        with interrupts.held():
            remove_prefix(target, tmp, patience=0.0 if done else 2.0)


def remove_folder(folder: Path, patience: float = 30.0) -> None:
    """Remove ``folder`` although cancelled tasks that are still running may add a part to
    it while it is being removed (cancelling does not stop a running task): retry until it is
    gone. A part written after that fails, since no task creates the folder."""
    deadline = time.monotonic() + patience
    while folder.exists():
        try:
            shutil.rmtree(folder)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
