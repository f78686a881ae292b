"""What the commands share: reading inputs, reserving outputs, printing, progress, and the
engine switch. The library speaks Python; these helpers turn the command line's text into its
arguments and its results into lines."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer

from microagg.cli.kernel_notice import NoticeOnce
from microagg.errors import InputError

__all__ = [
    "DECIMAL",
    "ENGINE_HELP",
    "OWNER_NOTICES_HELP",
    "PROGRESS_MIN_ROWS",
    "READS",
    "REPORT_HELP",
    "REPORT_KIND_HELP",
    "ROLE_FLAGS",
    "SCHEDULER_HELP",
    "THOUSANDS",
    "THREADS_HELP",
    "WORKERS_HELP",
    "WRITES",
    "check_report",
    "check_weight",
    "compile_notice",
    "engine_is_dask",
    "fmt",
    "load",
    "names",
    "outputs",
    "owner_notices",
    "print_json",
    "print_notes",
    "progress_bar",
    "read_input",
    "schema_of",
    "sources",
    "steps",
    "warn",
    "write_as",
    "write_release",
]

# Runs on fewer records finish too quickly for a progress bar to help.
PROGRESS_MIN_ROWS = 20_000
_NOTICE = NoticeOnce()  # the compile notice is said once per process, whatever the command

ENGINE_HELP = ("local (default) | dask: run on a Dask cluster; IN is then a folder or glob of "
               "Parquet (or CSV) files and OUT a Parquet data set (a folder).")
SCHEDULER_HELP = "With --engine dask: the scheduler's address (default: start a LocalCluster)."
WORKERS_HELP = "With --engine dask and no --scheduler: LocalCluster workers (default: CPUs)."
STORAGE_OPTION_HELP = ("With --engine dask and an fsspec URL (s3://bucket/prefix ...): a storage "
                       "option KEY=VALUE of its file system (endpoint_url, profile, anon ...); "
                       "repeatable. Credentials otherwise come from the usual places (AWS_* "
                       "variables, fsspec's configuration).")


# The table formats, by extension, that the commands read and write (microagg.data.io).
READS = "CSV, Parquet, .sav, .dta, .xlsx, .sas7bdat"
WRITES = "CSV, Parquet, .sav, .dta, .xlsx"

# The dialect of a CSV input, shared by every command that reads one (`read_input`).
DECIMAL = typer.Option(None, "--decimal", help="CSV input: the decimal mark, e.g. ',' for "
                       "69,5 (such files separate columns with ';'). Default '.'.")
THOUSANDS = typer.Option(None, "--thousands", help="CSV input: the thousands separator, "
                         "e.g. '.' for 1.234,5 or ',' for 1,234.5. Default: none.")

THREADS_HELP = ("Threads of the partitioner (default: all available, split passes only "
                "when measured to pay off).")


def print_notes(report: Any) -> None:
    """The notes of a k-anonymous release, and on stderr how many values were clamped into
    their declared domains."""
    from microagg.cli.app import out

    for note in report.notes:
        out.print(f"  note: {note}")
    for name, count in report.clamped.items():
        warn(f"{count:,} value(s) of '{name}' were clamped into its declared domain")


OWNER_NOTICES_HELP = (
    "Print on stderr what the data owner alone may read: how many values lay outside their "
    "declared domain or were read as the declared missing value, and what a step or a library "
    "said about the data. Beside a differentially private release these describe the data, "
    "not the release, so they are never printed by default (a log that others read would "
    "leak them).")


class Notices:
    """What a command says about the raw data (see :func:`owner_notices`)."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def say(self, notice: str) -> None:
        self.said.append(notice)


@contextlib.contextmanager
def owner_notices(private: bool, show: bool) -> Iterator[Notices]:
    """Collect what the command inside says about the raw data: every Python warning raised
    there, and the notices it adds with ``say``. Without a DP release (``private`` False)
    they are printed on stderr as warnings; beside one, only when the owner asks (``show``,
    ``--owner-notices``), marked as the owner's. Printed when the command has succeeded (a
    refusal is one line)."""
    import warnings

    notices = Notices()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield notices
    said = [*(str(w.message) for w in caught), *notices.said]
    if show or not private:
        for notice in dict.fromkeys(said):
            warn(notice + (" (for the data owner only: not published)" if private else ""))


REPORT_HELP = ("Also write the report as one HTML page (self-contained), for a "
               "data-protection officer.")
REPORT_KIND_HELP = ("internal (default): every figure, for the data owner | external: no "
                    "record-level figure, cluster size or value of the data, to share.")


def clusters_text(clusters: Any, classes: int) -> str:
    """The clusters of a release's partition (its ``clusters`` entry) and, where they differ,
    the equivalence classes of the table as written, which ``check`` counts: two clusters
    whose written values coincide (equal means, or equal once rounded) are one class."""
    text = (f"{clusters['count']:,} clusters of {clusters['smallest']} to "
            f"{clusters['largest']} records")
    if classes != clusters["count"]:
        text += (f", {classes:,} classes as written (clusters written with the same values "
                 "are one class, as check counts them)")
    return text


def check_report(report: Path | None, kind: str) -> Any:
    """The kind of HTML report asked for; ``report`` must name an .html file."""
    from microagg.options import ReportKind, parse

    if report is not None and report.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--report must name an .html file, got '{report}'")
    return parse(ReportKind, kind, "`report_kind`")


def write_release(method: Any, *, input: Path, schema_path: Path | None, output: Path,
                  labels_out: Path | None, title: str, json_out: bool,
                  show: Callable[[Any, Path], None], report: Path | None = None,
                  report_kind: str = "internal", with_progress: bool = True,
                  decimal: str | None = None, thousands: str | None = None,
                  **options: Any) -> None:
    """Read ``input`` (a CSV one in the dialect ``decimal``, ``thousands``), release it by
    ``method.release(frame, schema=…, progress=…, **options)`` under a progress bar
    (``with_progress``), write the table to ``output`` with the input's labels, its report to
    ``OUT.report.json`` (and the partition to ``labels_out``, the HTML report to ``report``),
    all or nothing; then print the method's report as JSON or by ``show``."""
    from microagg.data.formats import carry_labels
    from microagg.data.io import json_text
    from microagg.evaluation.release_record import release_record
    from microagg.release.reports.sidecar import sidecar_path

    kind = check_report(report, report_kind)
    schema = schema_of(schema_path)
    record_path = sidecar_path(output)
    with outputs([output, record_path, labels_out, report],
                 sources(input, schema_path, schema=schema)) as files:
        frame = read_input(input, decimal, thousands)
        check_weight(frame, schema, options.get("roles"), bool(options.get("drop_incomplete")))
        notice = compile_notice() if with_progress else contextlib.nullcontext()
        with notice:  # the partitioners' kernels, then the report's
            with progress_bar(len(frame), title) as progress:
                if with_progress:  # a method with progress runs the compiled partitioners
                    options["progress"] = progress
                release = method.release(frame, schema=schema, **options)
            record = release_record(release, frame, method=method, source=input,
                                    schema=schema)
        write_as(carry_labels(frame, release.frame), files[output], output)
        files[record_path].write_text(json_text(record.to_dict()), encoding="utf-8")
        if labels_out is not None:
            write_as(release.labels_frame(), files[labels_out], labels_out)
        if report is not None:
            from microagg.evaluation.report_html import release_html

            files[report].write_text(release_html(record, kind), encoding="utf-8")
    if json_out:
        print_json(release.report.to_dict())
        return
    show(release.report, output)
    from microagg.cli.app import out

    out.print(f"  report: {record_path}" + (f" and {report}" if report is not None else ""))


def check_weight(frame: Any, schema: Any, roles: dict[str, Any] | None,
                 drop_incomplete: bool = False) -> None:
    """The sampling weight a release is given (``--weight``, else the schema's), checked by
    the one rule (:mod:`microagg.data.weights`) before the release reads the table's kinds,
    so that a text or an infinite number in it is refused as a weight, as ``risk`` refuses
    it; rows ``--drop-incomplete`` drops are not read."""
    import numpy as np

    from microagg.data.schema import Role
    from microagg.data.weights import sampling_weights

    given = [name for name, role in (roles or {}).items() if Role(role) is Role.WEIGHT]
    declared = [] if schema is None else list(schema.names_with_role(Role.WEIGHT))
    for name in given or declared[:1]:
        if name in frame.columns:
            rows = (np.flatnonzero(frame.notna().all(axis=1).to_numpy()) if drop_incomplete
                    else np.arange(len(frame)))
            sampling_weights(frame[name].iloc[rows], name, rows)


ROLE_FLAGS = "--identifiers, --weight, --strata and --household"
"""The options that give columns their roles over the schema (``roles``)."""


def engine_is_dask(engine: str, scheduler: str | None, workers: int | None, *,
                   storage: list[str] | None = None, **local_only: Any) -> bool:
    """True for --engine dask. Options of the local engine only must keep their defaults;
    ``storage`` (--storage-option) applies to the Dask engine only."""
    from microagg.options import Engine, parse

    if parse(Engine, engine, "engine") is Engine.LOCAL:
        if scheduler is not None or workers is not None:
            raise InputError("--scheduler and --workers apply to --engine dask only")
        if storage:
            raise InputError("--storage-option applies to --engine dask only")
        return False
    for option, value in local_only.items():
        if value not in (None, False, "auto"):
            flag = (ROLE_FLAGS + " are" if option == "roles"
                    else f"--{option.replace('_', '-')} is")
            raise InputError(f"{flag} not available with --engine dask" + (
                ": declare the roles in a schema (--schema)" if option == "roles" else ""))
    return True


def write_sidecar(target: Any, text: str, *, private: bool = False) -> Any:
    """Write ``text``, the report of the data set written to ``target`` (a path or a
    :class:`~microagg.at_scale.storage.Location`), beside it as ``OUT.report.json`` (or
    ``OUT.privacy.json``: ``private``): a local file atomically, an object at a URL whole.
    Returns where."""
    from microagg.at_scale.storage import Location, write_beside
    from microagg.data.io import write_text
    from microagg.release.reports.sidecar import sidecar_path

    if isinstance(target, Location):
        suffix = sidecar_path(Path(target.name), private=private).name[len(target.name):]
        return write_beside(target, suffix, text)
    path = sidecar_path(Path(target), private=private)
    write_text(path, text)
    return path


def names(value: str | None, option: str) -> list[str] | None:
    """Column names separated by commas; a name that holds a comma is written in double
    quotes, as in a CSV header (--columns 'age,"income, net"')."""
    if value is None:
        return None
    import csv

    from microagg.data.io import column_name, quoted

    try:
        fields = next(csv.reader([value], skipinitialspace=True), [])
    except csv.Error:  # the only one it raises here: a line break outside double quotes
        broken = next((part for part in value.split(",") if "\n" in part or "\r" in part),
                      value)
        raise InputError(f"{option}: the name {quoted(broken.strip())} holds a line break; "
                         "write a name that holds one in double quotes, as a CSV header "
                         "does") from None
    names = [column_name(v) for v in fields if v.strip()]
    if not names:
        raise InputError(f"{option} needs at least one column name")
    return names


def shown(path: Path) -> Path | str:
    """``path`` as a command may print it: a URL without its credentials and query."""
    from microagg.at_scale.storage import Location, locate

    where = locate(path)
    return where.url if isinstance(where, Location) else path


def local_only(path: Path) -> Path:
    """``path``, refused in one line (credentials never shown) when it is a URL, which only
    the Dask engine reads and writes."""
    where = shown(path)
    if isinstance(where, str):
        raise InputError(f"{where} is a URL: the local engine reads and writes files of this "
                         "machine; a data set at a URL needs --engine dask")
    return path


def read_input(path: Path, decimal: str | None = None, thousands: str | None = None,
               schema: Any = None) -> Any:
    """The table ``path`` (a CSV one in the dialect of ``--decimal`` and ``--thousands``;
    with a ``schema``, its categorical columns read as text, as a DP release reads them)."""
    from microagg.data.io import declared_text, read_table

    return read_table(local_only(path), decimal=decimal, thousands=thousands,
                      text=declared_text(schema))


def load(path: Path, schema_path: Path | None, decimal: str | None = None,
         thousands: str | None = None) -> tuple[Any, Any]:
    """The table ``path`` and the schema ``schema_path`` (or ``None``)."""
    schema = schema_of(schema_path)
    return read_input(path, decimal, thousands), schema


def schema_of(schema_path: Path | None):
    from microagg.data.schema import Schema

    return Schema.load(schema_path) if schema_path is not None else None


def sources(*paths: Path | None, schema: Any = None) -> list[Path]:
    """Every file a command reads, which no output may replace: its inputs, the schema file
    and the taxonomy files the schema names."""
    found = [p for p in paths if p is not None]
    if schema is not None:
        found += [a.taxonomy for a in schema if a.taxonomy is not None]
    return found


@contextlib.contextmanager
def outputs(targets: list[Path | None], sources: list[Path]) -> Iterator[dict[Path, Path]]:
    """Reserve every output of a command before it computes (a bad path fails at once), and
    rename them all into place at the end, or none: yields each target's temporary file."""
    from microagg.data.io import atomic_paths, output_format

    chosen = [local_only(t) for t in targets if t is not None]
    for target in chosen:
        if target.suffix.lower() not in (".json", ".html", ".htm", ".yaml", ".yml"):
            output_format(target)
    with atomic_paths(chosen, sources) as temporaries:
        yield dict(zip(chosen, temporaries, strict=True))


def print_json(obj: Any) -> None:
    from microagg.data.io import json_text

    sys.stdout.write(json_text(obj))


def fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.6g}"


@contextlib.contextmanager
def compile_notice() -> Iterator[None]:
    """Say on stderr, once per process, when numba compiles microagg's kernels, where they
    go and whom that serves (:mod:`microagg.cli.kernel_notice`). Later runs load them from
    numba's cache and compile nothing (tests/test_kernel_cache.py checks it); numba's own
    helpers say nothing: they take a fraction of a second."""
    from numba.core import config, event

    from microagg.cli.kernel_notice import cache_scope, notice_text

    class Notice(event.Listener):
        def on_start(self, compile_event: event.Event) -> None:
            dispatcher = (compile_event.data or {}).get("dispatcher")
            function = getattr(dispatcher, "py_func", None)
            if _NOTICE.should_say(getattr(function, "__module__", None)):
                cache_path = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
                source = getattr(getattr(function, "__code__", None), "co_filename", None)
                scope = cache_scope(cache_path, source, getattr(config, "CACHE_DIR", None))
                sys.stderr.write(notice_text(scope, cache_path))
                sys.stderr.flush()

        def on_end(self, _event: event.Event) -> None:
            pass

    with event.install_listener("numba:compile", Notice()):
        yield


@contextlib.contextmanager
def progress_bar(total: int, description: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr for long runs on a terminal; a no-op otherwise."""
    if total < PROGRESS_MIN_ROWS or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed:,}/{task.total:,} records"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)


@contextlib.contextmanager
def steps(description: str) -> Iterator[Callable[[str], None] | None]:
    """A spinner with the current evaluation on stderr for a terminal; a no-op otherwise."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"),
                  TextColumn("{task.completed} evaluations"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=None)
        yield lambda text: bar.update(task, advance=1, description=text)


def warn(message: str) -> None:
    sys.stderr.write(f"microagg: warning: {' '.join(message.split())}\n")


def write_as(frame: Any, tmp: Path, target: Path, *, release: bool = True) -> None:
    """Write ``frame`` to ``tmp`` in the format of ``target``'s extension."""
    from microagg.data.io import output_format, write_frame

    write_frame(frame, tmp, output_format(target), release=release)
