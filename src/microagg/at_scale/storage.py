"""Where a data set lives: a local path, or the URL of an fsspec file system (``s3://``,
``gs://``, ``abfs://``, ``hdfs://`` ...) with its storage options.

A local path, or a ``file://`` URL, is read and written as a local folder (atomic renames).
Any other URL is listed, read and written through fsspec: the file system of its protocol
(s3fs for ``s3://``, gcsfs, adlfs ...) must be installed where the command runs and on every
worker, which open the files themselves; no folder is shared.

Storage options are fsspec's keyword arguments of that file system (``endpoint_url``,
``key``, ``secret``, ``anon``, ``profile`` ...). They come from the usual places: the file
system's own (the ``AWS_*``, ``GOOGLE_*``, ``AZURE_*`` variables, credential files, an
instance's role), fsspec's configuration (``FSSPEC_*`` variables, its configuration folder),
and the options given (``--storage-option KEY=VALUE``), which win. Given options travel with
the tasks to the workers; the others are looked up by every worker in its own environment.
They are never printed nor written to a report: a :class:`Location` shows its URL without
any ``user:password@`` or query string, and its options not at all.

Writing a data set to a URL (:func:`commit`): the partitions are written under a hidden
temporary prefix beside the target (``.NAME.microagg-<pid>-<random>.tmp/``), then, only
once all are written, the target's ``_SUCCESS`` marker is removed, the partitions are
copied to the target (a server-side copy on an object store), partitions of an older data
set beyond the new ones are deleted, the ``_SUCCESS`` marker is written and the temporary
prefix deleted. An object store has no rename, so "atomic" means there: a reader that waits
for ``_SUCCESS`` sees a complete data set or none; a failed run removes its temporary prefix
and leaves the target untouched; a run that dies while committing can leave the target
without ``_SUCCESS`` (incomplete: write it again), and a run killed hard its temporary prefix
(safe to delete).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from glob import has_magic
from pathlib import Path
from typing import Any

from microagg.errors import InputError

__all__ = ["MARKER", "PART", "Location", "check_output_at", "commit", "list_files", "locate",
           "parse_storage_options", "public_url", "refuse_foreign", "remove_prefix",
           "temporary_prefix_of", "write_beside"]

MARKER = "_SUCCESS"
"""The empty object that marks a complete data set written to a URL."""

PART = re.compile(r"part-\d{5}\.parquet")
"""The name of a partition file of a data set microagg writes."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):(//|[/\\](?![/\\]))(.*)", re.S)


def public_url(url: str) -> str:
    """``url`` without a ``user:password@`` and without its query string or fragment: what
    may be printed or written to a report.

    Parameters
    ----------
    url : str
        A URL as given, or a local path (returned as it is).

    Returns
    -------
    str
        The URL that may be shown.

    Examples
    --------
    >>> public_url("s3://key:secret@bucket/data?versionId=3")
    's3://bucket/data'
    >>> public_url("abfs://container@account/data")
    'abfs://container@account/data'
    """
    match = _SCHEME.fullmatch(url)
    if match is None:
        return url
    scheme, rest = match.group(1), match.group(3)
    host, slash, path = rest.partition("/")
    if scheme.lower() not in _CONTAINER_AT_HOST:  # a password may hold '?' or '#'
        host = host.rpartition("@")[2]
    shown = re.split(r"[?#]", f"{host}{slash}{path}", maxsplit=1)[0]
    return f"{scheme}://{shown}"


_CONTAINER_AT_HOST = frozenset({"abfs", "abfss", "az", "wasb", "wasbs"})
"""Azure's schemes, whose ``container@account`` names a place, not a user."""


def store_errors() -> tuple[type[BaseException], ...]:
    """What a store's client raises for a failed call: ``OSError``, and botocore's own
    errors (missing credentials, an endpoint that does not answer), which are not one.
    Imported only once an error is being handled (``except store_errors()``).

    Returns
    -------
    tuple of type
        The exception classes to catch.
    """
    try:
        from botocore.exceptions import BotoCoreError
    except ImportError:
        return (OSError,)
    return (OSError, BotoCoreError)


@dataclass(frozen=True)
class Location:
    """A file or folder of an fsspec file system: its URL as it may be shown (``url``), the
    URL as given (credentials included, never shown) and the storage options."""

    url: str
    given: str = field(default="", repr=False, compare=False)
    options: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __str__(self) -> str:
        return self.url

    @property
    def name(self) -> str:
        """The last part of the URL's path."""
        return self.url.rstrip("/").rpartition("/")[2]

    def filesystem(self) -> Any:
        """The fsspec file system (cached by fsspec for the same options); a protocol whose
        package is missing is a one-line error."""
        import fsspec.core

        try:
            fs, _ = fsspec.core.url_to_fs(self.given or self.url, **dict(self.options))
        except (ImportError, ValueError) as exc:
            raise InputError(f"cannot open {self.url}: {self.hide(exc)}") from None
        return fs

    def hide(self, error: BaseException) -> str:
        """The text of ``error`` with the URL as given (and any credentials in it) replaced
        by the URL as it may be shown."""
        text = str(error)
        return text.replace(self.given, self.url) if self.given else text

    def inner(self, url: str | None = None) -> str:
        """The path of ``url`` (default: this location) inside the file system."""
        return str(self.filesystem()._strip_protocol(url or self.given or self.url))

    def child(self, inner_path: str) -> str:
        """The URL, as it may be shown, of a path inside the file system."""
        return public_url(str(self.filesystem().unstrip_protocol(inner_path)))

    def open(self, url: str, mode: str = "rb") -> Any:
        """The file ``url`` (of this file system) opened; a missing file is an error naming
        it."""
        try:
            return self.filesystem().open(self.inner(url), mode)
        except FileNotFoundError:
            raise InputError(f"file not found: {url}") from None
        except store_errors() as exc:
            raise InputError(f"cannot open {url}: {self.hide(exc)}") from None

    @contextlib.contextmanager
    def local_copy(self, url: str) -> Iterator[Path]:
        """A copy of the file ``url`` in a temporary folder of this process, removed after
        use (for readers that need a local file)."""
        with tempfile.TemporaryDirectory(prefix="microagg-") as folder:
            local = Path(folder) / url.rstrip("/").rpartition("/")[2]
            with self.open(url) as source, local.open("wb") as target:
                for block in iter(lambda: source.read(1 << 20), b""):
                    target.write(block)
            yield local


def locate(target: str | Path | Location, options: Mapping[str, Any] | None = None
           ) -> Path | Location:
    """A local path for a path or a ``file://`` URL, else a :class:`Location` with
    ``options``. A URL that went through :class:`~pathlib.Path` (``s3:/bucket/key``, as a
    command line's path arguments arrive) is read as the URL it was.

    Parameters
    ----------
    target : str, Path or Location
        A path or URL as given.
    options : mapping, optional
        The storage options of a URL's file system.

    Returns
    -------
    Path or Location
        Where the data set lives.

    Examples
    --------
    >>> locate("s3:/bucket/key").url
    's3://bucket/key'
    >>> locate("data/census.parquet").name
    'census.parquet'
    """
    if isinstance(target, Location):
        return target
    text = str(target)
    match = _SCHEME.fullmatch(text)
    if match is None:
        return Path(target)
    scheme, rest = match.group(1), match.group(3).replace("\\", "/")
    if scheme.lower() == "file":
        from urllib.request import url2pathname

        return Path(url2pathname(rest if match.group(2) == "//" else "/" + rest))
    given = f"{scheme}://{rest}"
    return Location(public_url(given), given, dict(options or {}))


def parse_storage_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as storage options; a VALUE that reads as JSON (``true``, ``3``,
    ``{"region_name": "eu-west-1"}``) is that value, any other is text.

    Parameters
    ----------
    pairs : sequence of str
        The ``--storage-option`` values.

    Returns
    -------
    dict
        The options, by name.

    Raises
    ------
    InputError
        For a pair without ``=`` or without a key.

    Examples
    --------
    >>> parse_storage_options(["anon=true", "endpoint_url=http://localhost:9000"])
    {'anon': True, 'endpoint_url': 'http://localhost:9000'}
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"`storage_option` must be KEY=VALUE, got '{key.strip()}"
                             f"{'=…' if sep else ''}'")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    return options


def list_files(store: Location) -> list[str]:
    """The files of a folder, glob or file at a URL, as URLs that may be shown.

    Parameters
    ----------
    store : Location
        A folder (its ``.parquet``, ``.pq`` and ``.csv`` files that are not hidden), a glob
        or one file.

    Returns
    -------
    list of str
        The files' URLs, sorted.

    Raises
    ------
    InputError
        When nothing matches, or the store cannot be read.
    """
    fs = store.filesystem()
    path = store.inner()
    try:
        fs.invalidate_cache()
        if has_magic(path):
            found = sorted(p for p in fs.glob(path) if fs.isfile(p))
            if not found:
                raise InputError(f"no file matches {store.url}")
        elif fs.isdir(path):
            found = sorted(p for p in fs.ls(path, detail=False) if fs.isfile(p)
                           and not p.rstrip("/").rpartition("/")[2].startswith((".", "_"))
                           and Path(p).suffix.lower() in (".parquet", ".pq", ".csv"))
            if not found:
                raise InputError(f"folder {store.url} holds no .parquet or .csv file")
        elif fs.isfile(path):
            found = [path]
        else:
            raise InputError(f"file not found: {store.url}")
    except store_errors() as exc:
        raise InputError(f"cannot read {store.url}: {store.hide(exc)}") from None
    return [store.child(p) for p in found]


def refuse_foreign(target: Path | Location, names: Sequence[str]) -> None:
    """Refuse an output folder holding anything but the partitions of a data set microagg
    wrote (and, at a URL, its ``_SUCCESS`` marker): replacing it would delete them.

    Parameters
    ----------
    target : Path or Location
        The output folder.
    names : sequence of str
        The names of the files it holds.

    Raises
    ------
    InputError
        Naming the first foreign file.
    """
    foreign = sorted(n for n in names if not PART.fullmatch(n)
                     and not (isinstance(target, Location) and n == MARKER))
    if foreign:
        raise InputError(f"output folder {target} holds files microagg did not write "
                         f"('{foreign[0]}'{' and others' if len(foreign) > 1 else ''}); "
                         "writing the data set would delete them: name a new or empty "
                         "folder, or a data set microagg wrote")


def check_output_at(target: Location, source: str | Path | None) -> None:
    """:func:`~microagg.at_scale.dataset.check_dataset_output` for a URL: not the input, not
    a file, no foreign object in it, and an object can be written beside it.

    Parameters
    ----------
    target : Location
        The output data set.
    source : str, Path or None
        The input, which the output may not be.

    Raises
    ------
    InputError
        For each of those faults, or a store that refuses the probe.
    """
    fs = target.filesystem()
    path = target.inner().rstrip("/")
    if source is not None and public_url(str(source)).rstrip("/") == target.url.rstrip("/"):
        raise InputError(f"output {target} is the input; choose another name")
    parent = path.rpartition("/")[0]
    probe = f"{parent}/.microagg-check-{uuid.uuid4().hex[:12]}"
    try:
        fs.invalidate_cache()
        if fs.isfile(path):
            raise InputError(f"output {target} is a file; a Parquet data set is a folder")
        if fs.isdir(path):
            refuse_foreign(target, [p.rstrip("/").rpartition("/")[2]
                                     for p in fs.ls(path, detail=False)])
        fs.pipe_file(probe, b"")
        fs.rm_file(probe)
    except store_errors() as exc:
        raise InputError(f"cannot write to {target.child(parent)}: {target.hide(exc)}") from None


def temporary_prefix_of(target: Location) -> str:
    """A new hidden temporary prefix beside ``target`` (inside the file system).

    Parameters
    ----------
    target : Location
        The output data set.

    Returns
    -------
    str
        ``.NAME.microagg-<pid>-<random>.tmp`` in the target's parent, inside the file system.
    """
    from microagg.data.io import temporary_prefix

    parent = target.inner().rstrip("/").rpartition("/")[0]
    name = f"{temporary_prefix(Path(target.name))}{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp"
    return f"{parent}/{name}" if parent else name


def commit(target: Location, temporary: str, parts: int) -> None:
    """Put the ``parts`` partitions written under ``temporary`` in place at ``target``
    (module docstring: copy, delete what is left of an older data set, mark complete).

    Parameters
    ----------
    target : Location
        The output data set.
    temporary : str
        The temporary prefix the partitions were written under, inside the file system.
    parts : int
        The number of partitions (``part-00000.parquet`` ...).

    Raises
    ------
    InputError
        When the store fails part way: the target then has no ``_SUCCESS`` marker.
    """
    fs = target.filesystem()
    path = target.inner().rstrip("/")
    fs.invalidate_cache()
    with contextlib.suppress(FileNotFoundError):
        fs.rm_file(f"{path}/{MARKER}")
    older = [p for p in (fs.ls(path, detail=False) if fs.isdir(path) else [])
             if PART.fullmatch(p.rstrip("/").rpartition("/")[2])]
    names = [f"part-{i:05d}.parquet" for i in range(parts)]
    try:
        fs.copy([f"{temporary}/{name}" for name in names], [f"{path}/{name}" for name in names])
        stale = [p for p in older if p.rstrip("/").rpartition("/")[2] not in names]
        if stale:
            fs.rm(stale)
        fs.pipe_file(f"{path}/{MARKER}", b"")
    except store_errors() as exc:
        raise InputError(f"putting {target.url} in place failed part way: it has no {MARKER} "
                         f"and is incomplete until the command runs again "
                         f"({target.hide(exc)})") from None
    fs.invalidate_cache()


def remove_prefix(location: Location, prefix: str, patience: float = 2.0) -> None:
    """Delete every object under ``prefix``, and again during ``patience`` seconds if a task
    that was still running when the run failed wrote one more (0 after a run whose tasks
    have all ended: once).

    Parameters
    ----------
    location : Location
        Where the data set goes (its file system and options).
    prefix : str
        The temporary prefix, inside the file system.
    patience : float
        How long to look again for objects written late.
    """
    fs = location.filesystem()
    deadline = time.monotonic() + patience
    while True:
        fs.invalidate_cache()
        with contextlib.suppress(FileNotFoundError):
            if fs.find(prefix):
                fs.rm(prefix, recursive=True)
        if time.monotonic() >= deadline:
            return
        time.sleep(min(0.5, patience))


def write_beside(target: Location, suffix: str, text: str) -> Location:
    """Write ``text`` to the object named ``target`` + ``suffix`` (one object: written
    whole or not at all) and return where.

    Parameters
    ----------
    target : Location
        The output data set.
    suffix : str
        Added to its name (``.report.json`` ...).
    text : str
        Written as UTF-8.

    Returns
    -------
    Location
        The object written.
    """
    beside = Location(target.url.rstrip("/") + suffix, target.given.rstrip("/") + suffix,
                      target.options)
    try:
        beside.filesystem().pipe_file(beside.inner(), text.encode("utf-8"))
    except store_errors() as exc:
        raise InputError(f"cannot write {beside.url}: {beside.hide(exc)}") from None
    return beside
