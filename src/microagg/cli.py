"""The ``microagg`` command line.

Exit codes: 0 success; 1 a ``check`` found the property violated; 2 bad input (a one-line
message on stderr names the file, column, value or option at fault, and no output is written).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from microagg import __version__
from microagg.errors import InputError, MicroaggError

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
DATASET_NAMES = ("census, eia, tarragona, adult, adult-categorical, adult-mixed or synthetic")

app = typer.Typer(
    name="microagg",
    context_settings=HELP_OPTIONS,
    help="Publish microdata with a stated privacy guarantee through microaggregation.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
datasets_app = typer.Typer(help=f"Reference data sets ({DATASET_NAMES}).",
                           short_help="Reference data sets: list, export.",
                           no_args_is_help=True, context_settings=HELP_OPTIONS)
app.add_typer(datasets_app, name="datasets")

out = Console(highlight=False, soft_wrap=True)

# Runs on fewer records finish too quickly for a progress bar to help.
PROGRESS_MIN_ROWS = 20_000


def _version(value: bool) -> None:
    if value:
        out.print(f"microagg {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Publish microdata with a stated privacy guarantee through microaggregation."""


# -- helpers -------------------------------------------------------------------------------

ENGINE_HELP = ("local (default) | dask: run on a Dask cluster; IN is then a folder or glob of "
               "Parquet (or CSV) files and OUT a Parquet data set (a folder).")
SCHEDULER_HELP = "With --engine dask: the scheduler's address (default: start a LocalCluster)."
WORKERS_HELP = "With --engine dask and no --scheduler: LocalCluster workers (default: CPUs)."


def _engine(engine: str, scheduler: str | None, workers: int | None, **local_only: Any
            ) -> bool:
    """True for --engine dask. Options of the local engine only must keep their defaults."""
    from microagg.options import Engine, parse

    if parse(Engine, engine, "engine") is Engine.LOCAL:
        if scheduler is not None or workers is not None:
            raise InputError("--scheduler and --workers apply to --engine dask only")
        return False
    for option, value in local_only.items():
        if value not in (None, False, "auto"):
            raise InputError(f"--{option.replace('_', '-')} is not available with "
                             "--engine dask")
    return True


def _names(value: str | None, option: str) -> list[str] | None:
    """Column names separated by commas; a name that holds a comma is written in double
    quotes, as in a CSV header (--columns 'age,"income, net"')."""
    if value is None:
        return None
    import csv

    from microagg.data.io import column_name

    try:
        fields = next(csv.reader([value], skipinitialspace=True), [])
    except csv.Error as exc:
        raise InputError(f"{option}: cannot read '{value}' as comma-separated names: {exc}"
                         ) from None
    names = [column_name(v) for v in fields if v.strip()]
    if not names:
        raise InputError(f"{option} needs at least one column name")
    return names


def _load(path: Path, schema_path: Path | None):
    from microagg.data.io import read_table

    schema = _schema(schema_path)
    return read_table(path), schema


def _schema(schema_path: Path | None):
    from microagg.data.schema import Schema

    return Schema.load(schema_path) if schema_path is not None else None


def _sources(*paths: Path | None, schema: Any = None) -> list[Path]:
    """Every file a command reads, which no output may replace: its inputs, the schema file
    and the taxonomy files the schema names."""
    found = [p for p in paths if p is not None]
    if schema is not None:
        found += [a.taxonomy for a in schema if a.taxonomy is not None]
    return found


@contextlib.contextmanager
def _outputs(targets: list[Path | None], sources: list[Path]) -> Iterator[dict[Path, Path]]:
    """Reserve every output of a command before it computes (a bad path fails at once), and
    rename them all into place at the end, or none: yields each target's temporary file."""
    from microagg.data.io import atomic_paths, table_format

    chosen = [t for t in targets if t is not None]
    for target in chosen:
        if target.suffix.lower() not in (".json", ".html", ".htm", ".yaml", ".yml"):
            table_format(target)
    with atomic_paths(chosen, sources) as temporaries:
        yield dict(zip(chosen, temporaries, strict=True))


def _require_columns(available: tuple[str, ...], names: tuple[str, ...] | list[str]) -> None:
    for name in names:
        if name not in available:
            raise InputError(f"unknown column '{name}' (the data has: {', '.join(available)})")


def _print_json(obj: Any) -> None:
    from microagg.data.io import json_text

    sys.stdout.write(json_text(obj))


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.6g}"


# -- datasets ------------------------------------------------------------------------------

@datasets_app.command("list")
def datasets_list(
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """List the data sets and where their files are (docs/datasets.md: where to get them)."""
    from microagg.data.datasets import DOCS, ENV_VAR, describe, search_path_text

    rows = describe()
    if json_out:
        _print_json(rows)
        return
    for line in _dataset_lines(rows):
        out.print(line, markup=False)
    if any(row["location"] == "missing" for row in rows):
        out.print(f"missing files are looked for in {search_path_text()}; set {ENV_VAR} to "
                  f"the folder that holds them ({DOCS} says where to get each)", markup=False)
    else:
        out.print(f"reference files are looked for in {search_path_text()}", markup=False)


def _dataset_lines(rows: list[dict[str, str]]) -> list[str]:
    """Two plain lines per data set (name, size and description; then its file), never cut,
    so that paths survive a pipe or a narrow terminal whole."""
    width = max(len(row["name"]) for row in rows)
    lines = []
    for row in rows:
        lines.append(f"{row['name']:<{width}}  {row['shape']} - {row['description']}")
        lines.append(f"{'':<{width}}  file: {row['location']}")
    return lines


@datasets_app.command("export")
def datasets_export(
    name: str = typer.Argument(..., help=DATASET_NAMES + "."),
    output: Path = typer.Option(..., "-o", "--output", help="Output CSV or Parquet file."),
    schema_out: Path | None = typer.Option(
        None, "--schema-out", help="Also write the data set's schema (YAML), and a copy of "
        "each of its taxonomy files beside it (SCHEMA-STEM.ATTRIBUTE.csv)."),
    drop_incomplete: bool = typer.Option(False, "--drop-incomplete",
                                         help="Drop rows with a missing value (adult)."),
    n: int | None = typer.Option(None, "--n", help="Rows of the synthetic data (default "
                                 "1000)."),
    d: int | None = typer.Option(None, "--d", help="Numeric columns of the synthetic data "
                                 "(default 6)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the synthetic data "
                                    "(default 0)."),
) -> None:
    """Write a data set (and optionally its schema and taxonomies) to files, all or none."""
    from microagg.data.datasets import load
    from microagg.data.io import check_output, table_format, write_all

    given = {"--n": n, "--d": d, "--seed": seed}
    if name.strip().lower() != "synthetic" and any(v is not None for v in given.values()):
        option = next(o for o, v in given.items() if v is not None)
        raise InputError(f"{option} applies to the synthetic data set only, not '{name}'")
    n, d, seed = 1000 if n is None else n, 6 if d is None else d, 0 if seed is None else seed
    if drop_incomplete and not name.strip().lower().startswith("adult"):
        raise InputError(f"--drop-incomplete applies to the adult data sets only, not '{name}'")

    table_format(output)
    check_output(output)
    if schema_out is not None:
        check_output(schema_out)
    dataset = load(name, drop_incomplete=drop_incomplete, n=n, d=d, seed=seed)
    outputs = [(output, lambda path: _write_as(dataset.frame, path, output, release=False))]
    copies: list[tuple[Path, Path]] = []
    if schema_out is not None:
        schema_outputs, copies = _schema_outputs(dataset.schema, schema_out)
        outputs += schema_outputs
    write_all(outputs, sources=[source for source, _ in copies])
    rows, cols = dataset.frame.shape
    out.print(f"wrote {name}: {rows:,} rows x {cols} columns to {output}"
              + (f" (schema: {schema_out}" if schema_out else "")
              + (f"; taxonomies: {', '.join(str(c) for _, c in copies)}" if copies else "")
              + (")" if schema_out else ""), markup=False)


def _schema_outputs(schema: Any, schema_out: Path
                    ) -> tuple[list[tuple[Path, Callable[[Path], None]]], list[tuple[Path, Path]]]:
    """The writers of an exported schema and of its taxonomy copies (beside the schema, so
    that the schema names them by bare file name and survives being moved with them), and
    the ``(taxonomy, copy)`` pairs."""
    import shutil

    from microagg.data.datasets import taxonomy_copies

    bundled, copies = taxonomy_copies(schema, schema_out)
    text = bundled.dumps(base_dir=schema_out.parent)
    writers: list[tuple[Path, Callable[[Path], None]]] = [
        (schema_out, lambda path: path.write_text(text, encoding="utf-8"))]
    for source, copy in copies:
        writers.append((copy, lambda path, source=source: shutil.copyfile(source, path)))
    return writers, copies


# -- check -----------------------------------------------------------------------------------

@app.command(short_help="Verify k-anonymity and/or t-closeness of a table.")
def check(
    input: Path = typer.Argument(..., metavar="IN", help="CSV or Parquet file to verify."),
    k: int | None = typer.Option(None, "--k", help="Required smallest equivalence class."),
    quasi: str | None = typer.Option(None, "--quasi", help="Quasi-identifiers, comma-separated "
                                     "(default: the schema's, else every column but the "
                                     "confidential ones)."),
    t: float | None = typer.Option(None, "--t", help="Largest allowed EMD (t-closeness)."),
    confidential: str | None = typer.Option(None, "--confidential",
                                            help="Confidential attribute(s) for --t."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    distance: str | None = typer.Option(None, "--distance",
                                        help="EMD ground distance of nominal confidential "
                                        "attributes: equal (default) or hierarchical (on "
                                        "the schema's taxonomy)."),
    drop_incomplete: bool = typer.Option(False, "--drop-incomplete",
                                         help="Drop rows with a missing value first."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Verify k-anonymity and/or t-closeness of a table (exit 0 holds, 1 violated)."""
    from microagg.core.verifiers import k_anonymity, table_t_closeness
    from microagg.data.schema import Kind
    from microagg.data.table import decode, encode
    from microagg.options import GroundDistance, parse
    from microagg.partition._validate import check_k

    if k is None and t is None:
        raise InputError("nothing to check: give --k and/or --t")
    if distance is not None and t is None:
        raise InputError("--distance applies with --t (the EMD of t-closeness)")
    confidential_names = _names(confidential, "--confidential") or []
    if t is not None:
        if not confidential_names:
            raise InputError("--t needs --confidential")
        if not 0 <= t <= 1:
            raise InputError(f"--t must lie in [0, 1], got {t}")
    frame, schema_obj = _load(input, schema)
    table = encode(frame, schema_obj, drop_incomplete=drop_incomplete, released=True)
    frame = decode(table)
    quasi_names = _names(quasi, "--quasi")
    if quasi_names is None:
        declared = table.schema.quasi_identifiers if schema_obj is not None else ()
        quasi_names = list(declared) or [c for c in table.schema.names
                                         if c not in confidential_names]
    _require_columns(table.schema.names, (*quasi_names, *confidential_names))
    result: dict[str, Any] = {"records": table.n_rows, "quasi_identifiers": quasi_names}
    holds = True
    lines = []
    if k is not None:
        check_k(k, table.n_rows)
        report = k_anonymity(frame, quasi_names)
        ok = report.holds(k)
        holds &= ok
        result["k_anonymity"] = {"k": k, "holds": ok, "smallest_class": report.smallest_class,
                                 "largest_class": report.largest_class,
                                 "classes": report.classes}
        lines.append(f"k-anonymity over {', '.join(quasi_names)}: smallest class "
                     f"{report.smallest_class:,} of {report.classes:,} classes "
                     f"({report.records:,} records): {'holds' if ok else 'VIOLATED'} for k = {k}")
    if t is not None:
        result["t_closeness"] = []
        nominal = parse(GroundDistance, distance, "--distance") if distance else None
        if nominal is GroundDistance.ORDERED:
            raise InputError("--distance is for nominal attributes: equal or hierarchical")
        if nominal is not None and not any(table.schema[c].kind is Kind.NOMINAL
                                           for c in confidential_names):
            raise InputError(f"--distance chooses the EMD of nominal attributes; "
                             f"{', '.join(confidential_names)} use the ordered distance")
        for name in confidential_names:
            chosen = nominal if table.schema[name].kind is Kind.NOMINAL else None
            report_t = table_t_closeness(table, quasi_names, name, chosen)
            ok = report_t.holds(t)
            holds &= ok
            result["t_closeness"].append({"attribute": name, "t": t, "holds": ok,
                                          "largest_emd": report_t.t,
                                          "distance": report_t.distance.value})
            lines.append(f"t-closeness of {name} ({report_t.distance.value} EMD): largest class "
                         f"EMD "
                         f"{report_t.t:.6g}: {'holds' if ok else 'VIOLATED'} for t = {t:g}")
    result["holds"] = holds
    if json_out:
        _print_json(result)
    else:
        for line in lines:
            out.print(line)
    if not holds:
        raise typer.Exit(code=1)


# -- evaluate ------------------------------------------------------------------------------

@app.command(short_help="Utility loss and disclosure risk of a masked table.")
def evaluate(
    original: Path = typer.Argument(..., metavar="ORIGINAL",
                                    help="Original table (CSV or Parquet)."),
    masked: Path = typer.Argument(..., metavar="MASKED",
                                  help="Masked release of it, same rows in the same order."),
    columns: str | None = typer.Option(None, "--columns", help="Columns to compare, "
                                       "comma-separated (default: the schema's numeric "
                                       "quasi-identifiers, else every numeric column)."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    engine: str = typer.Option("local", "--engine", help="local (default) | dask: compare "
                               "two data sets (folders or globs) by map-reduce, record "
                               "linkage on a sample."),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    sample: int | None = typer.Option(None, "--sample", help="With --engine dask: masked "
                                      "records linked against all originals (default 1000; "
                                      "0: no record linkage)."),
) -> None:
    """Measure the utility loss and disclosure risk of a masked table."""
    from microagg.data.io import read_table
    from microagg.evaluation.evaluate import evaluate as run_evaluation

    if _engine(engine, scheduler, workers, schema=schema):
        _evaluate_at_scale(original, masked, columns=_names(columns, "--columns"),
                           sample=1000 if sample is None else sample, scheduler=scheduler,
                           workers=workers, json_out=json_out)
        return
    if sample is not None:
        raise InputError("--sample applies to --engine dask (the local engine links every "
                         "record)")

    original_frame, schema_obj = _load(original, schema)
    masked_frame = read_table(masked)
    with _compile_notice():
        result = run_evaluation(original_frame, masked_frame, schema_obj,
                                _names(columns, "--columns"))
    if json_out:
        _print_json(result)
        return
    out.print(f"compared {result['rows']:,} rows on {', '.join(result['columns'])}")
    measures = (("sse", "SSE (raw values; δ² for categories)"),
                ("sse_percent", "SSE/SST (%, numeric)"),
                ("record_linkage_percent", "record linkage (%)"),
                ("relative_error", "relative error"), ("jsd", "JSD (mean)"),
                ("variance_variation", "variance variation (mean)"),
                ("mean_variation", "mean variation (mean)"))
    width = max(len(label) for _, label in measures)
    for key, label in measures:
        out.print(f"  {label:{width}s}  {_fmt(result[key])}")


def _evaluate_at_scale(original: Path, masked: Path, *, columns: list[str] | None,
                       sample: int, scheduler: str | None, workers: int | None,
                       json_out: bool) -> None:
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import open_dataset
    from microagg.at_scale.evaluate import evaluate_at_scale

    if sample < 0:
        raise InputError(f"--sample must be 0 or more, got {sample}")
    before, after = open_dataset(original), open_dataset(masked)
    with dask_client(scheduler, workers) as client:
        result = evaluate_at_scale(client, before, after, columns=columns, sample=sample)
    if json_out:
        _print_json(result.to_dict())
        return
    out.print(f"compared {result.records:,} records on {', '.join(result.columns)}"
              + ("" if result.aligned else " (not row-aligned: distributions only)"))
    out.print(f"  SSE/SST (%)            {_fmt(result.sse_percent)}")
    if result.record_linkage_ci95 is not None:
        low, high = result.record_linkage_ci95
        out.print(f"  record linkage (%)     {_fmt(result.record_linkage_percent)} "
                  f"(95% CI {low:.2f}-{high:.2f}, sample of {result.record_linkage_sample:,})")
    out.print(f"  JSD (mean)             {_fmt(float(sum(result.jsd) / len(result.jsd)))}")


# -- microaggregate -----------------------------------------------------------------------

@contextlib.contextmanager
def _compile_notice() -> Iterator[None]:
    """Say on stderr, once, when numba compiles microagg's kernels.

    Every kernel is compiled with ``cache=True``, so numba compiles one only when its cache is
    missing or stale: on the first run after an install or an upgrade, about 20 s. Later runs
    load the kernels from the cache and compile nothing (tests/test_kernel_cache.py checks
    it). Numba's own helpers say nothing: they take a fraction of a second.
    """
    from numba.core import event

    class Notice(event.Listener):
        said = False

        def on_start(self, compile_event: event.Event) -> None:
            dispatcher = (compile_event.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
            if not self.said and module.partition(".")[0] == "microagg":
                self.said = True
                sys.stderr.write("microagg: compiling the kernels (first run only, about "
                                 "20 s)...\n")
                sys.stderr.flush()

        def on_end(self, _event: event.Event) -> None:
            pass

    with event.install_listener("numba:compile", Notice()):
        yield


@contextlib.contextmanager
def _progress(total: int, description: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr for long runs on a terminal; a no-op otherwise."""
    if total < PROGRESS_MIN_ROWS or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed:,}/{task.total:,} records"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)


THREADS_HELP = ("Threads of the partitioner (default: all available, split passes only "
                "when measured to pay off).")


@app.command(short_help="k-anonymity: replace quasi-identifiers by cluster means.")
def microaggregate(
    input: Path = typer.Argument(..., metavar="IN", help="Table to protect (CSV or Parquet)."),
    output: Path = typer.Option(..., "-o", "--output", help="Masked table (CSV or Parquet)."),
    k: int = typer.Option(..., "--k", help="Smallest cluster size."),
    method: str = typer.Option("mdav", "--method",
                               help="mdav | vmdav | individual-ranking | optimal-univariate | "
                                    "insensitive"),
    columns: str | None = typer.Option(None, "--columns", help="Columns to microaggregate, "
                                       "comma-separated (default: the schema's "
                                       "quasi-identifiers, else every non-identifier column)."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    standardize: str = typer.Option("auto", "--standardize",
                                    help="Scaling of numeric attributes in mdav/vmdav "
                                         "distances: auto (zscore for numeric data, range for "
                                         "mixed data) | zscore | range | none."),
    gamma: float | None = typer.Option(None, "--gamma", help="V-MDAV group extension "
                                       "parameter (default 0.2)."),
    reference: str | None = typer.Option(None, "--reference",
                                         help="Insensitive orders: corners (default) | "
                                              "single."),
    labels_out: Path | None = typer.Option(None, "--labels-out",
                                           help="Also write the cluster of each row."),
    drop_incomplete: bool = typer.Option(False, "--drop-incomplete",
                                         help="Drop rows with a missing value first."),
    clamp: bool = typer.Option(False, "--clamp",
                               help="Clamp values outside their declared domain."),
    threads: int | None = typer.Option(None, "--threads", help=THREADS_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP + " It runs block MDAV."),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
    block_size: int | None = typer.Option(None, "--block-size", help="With --engine dask: "
                                          "records per block of block MDAV (default 100000)."),
) -> None:
    """Replace quasi-identifiers by cluster means (k-anonymity by microaggregation)."""
    from microagg.core.threads import check_threads
    from microagg.data.io import read_table
    from microagg.release import microaggregate as run

    if _engine(engine, scheduler, workers, schema=schema, gamma=gamma, reference=reference,
               labels_out=labels_out, drop_incomplete=drop_incomplete, clamp=clamp,
               threads=threads, standardize=standardize):
        _block_mdav(input, output, k=k, method=method, columns=_names(columns, "--columns"),
                    block_size=block_size, scheduler=scheduler, workers=workers,
                    json_out=json_out)
        return
    if block_size is not None:
        raise InputError("--block-size applies to --engine dask only")
    threads = check_threads(threads)
    schema_obj = _schema(schema)
    with _outputs([output, labels_out], _sources(input, schema, schema=schema_obj)) as files:
        frame = read_table(input)
        with _compile_notice(), _progress(len(frame), f"{method} k={k}") as progress:
            release = run(frame, k=k, schema=schema_obj, method=method,
                          columns=_names(columns, "--columns"), scaling=standardize,
                          gamma=gamma, reference=reference, drop_incomplete=drop_incomplete,
                          clamp=clamp, threads=threads, progress=progress)
        _write_as(release.frame, files[output], output)
        if labels_out is not None:
            _write_as(release.labels_frame(), files[labels_out], labels_out)
    report = release.report
    if json_out:
        _print_json(report.to_dict())
        return
    clusters = report.clusters
    out.print(f"{report.method} k={report.k}: {report.records:,} records, "
              f"columns {', '.join(report.columns)} -> {output}")
    if "count" in clusters:
        out.print(f"  {clusters['count']:,} clusters of {clusters['smallest']} to "
                  f"{clusters['largest']} records")
    for label, anonymity, columns_text in (
            ("the masked columns", report.k_anonymity, ", ".join(report.columns)),
            ("the table as written", report.k_anonymity_as_written, "all written columns")):
        verdict = "holds" if anonymity["holds"] else "does NOT hold"
        out.print(f"  k-anonymity over {label} ({columns_text}): smallest class "
                  f"{anonymity['smallest_class']:,} ({verdict})")
        if not report.released_unchanged:
            break
    for name, concepts in report.generalized_categories.items():
        out.print(f"  {name}: generalized to inner concepts {', '.join(concepts)}")
    for note in report.notes:
        out.print(f"  note: {note}")
    for name, count in report.clamped.items():
        _warn(f"{count:,} value(s) of '{name}' were clamped into its declared domain")


def _block_mdav(input: Path, output: Path, *, k: int, method: str, columns: list[str] | None,
                block_size: int | None, scheduler: str | None, workers: int | None,
                json_out: bool) -> None:
    from microagg.at_scale.anonymize import block_microaggregate
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import check_dataset_output, open_dataset
    from microagg.partition.blocks import DEFAULT_BLOCK_SIZE, check_block_size

    if method != "mdav":
        raise InputError("--engine dask runs block MDAV: use --method mdav")
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    block_size = check_block_size(DEFAULT_BLOCK_SIZE if block_size is None else block_size, k)
    check_dataset_output(output, input)
    dataset = open_dataset(input)
    with dask_client(scheduler, workers) as client, \
            _progress(dataset.n, f"block MDAV k={k}") as progress:
        report = block_microaggregate(client, dataset, output, k=k, columns=columns,
                                      block_size=block_size,
                                      progress=progress)
    if json_out:
        _print_json(report.to_dict())
        return
    out.print(f"block MDAV k={k}, blocks of at most {report.block_size:,} records: "
              f"{report.records:,} records in {report.partitions} partitions, columns "
              f"{', '.join(report.columns)} -> {output}")
    out.print(f"  {report.blocks['count']:,} blocks of {report.blocks['smallest']:,} to "
              f"{report.blocks['largest']:,} records; {report.clusters['count']:,} clusters of "
              f"{report.clusters['smallest']} to {report.clusters['largest']} records")
    out.print(f"  SSE/SST {report.sse / report.sst:.4%} (z-scores)")
    for note in report.notes:
        out.print(f"  note: {note}")


@app.command(short_help="k-anonymous t-closeness (paper 002): merge, k-anonymity-first, "
             "t-closeness-first.")
def tclose(
    input: Path = typer.Argument(..., metavar="IN", help="Table to protect (CSV or Parquet)."),
    output: Path = typer.Option(..., "-o", "--output", help="Masked table (CSV or Parquet)."),
    k: int = typer.Option(..., "--k", help="Smallest class size."),
    t: float = typer.Option(..., "--t", help="Largest EMD of a class to the whole table, in "
                            "(0, 1]."),
    quasi: str | None = typer.Option(None, "--quasi", help="Quasi-identifiers, comma-separated "
                                     "(default: the schema's)."),
    confidential: str | None = typer.Option(None, "--confidential",
                                            help="Confidential attribute(s), comma-separated "
                                                 "(default: the schema's)."),
    method: str = typer.Option("t-closeness-first", "--method",
                               help="t-closeness-first (Alg. 3) | k-anonymity-first (Alg. 2) "
                                    "| merge (Alg. 1)."),
    microaggregation: str = typer.Option("mdav", "--microaggregation",
                                         help="Partitioner merge starts from: mdav | vmdav | "
                                              "insensitive | ..."),
    distance: str | None = typer.Option(None, "--distance",
                                        help="EMD of nominal confidential attributes: equal "
                                             "(default) | hierarchical (schema taxonomy)."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    standardize: str = typer.Option("auto", "--standardize",
                                    help="Scaling of numeric quasi-identifiers: auto | zscore "
                                         "| range | none."),
    labels_out: Path | None = typer.Option(None, "--labels-out",
                                           help="Also write the class of each row."),
    drop_incomplete: bool = typer.Option(False, "--drop-incomplete",
                                         help="Drop rows with a missing value first."),
    clamp: bool = typer.Option(False, "--clamp",
                               help="Clamp values outside their declared domain."),
    threads: int | None = typer.Option(None, "--threads", help=THREADS_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Replace quasi-identifiers by class centroids so that every class has at least k
    records and every confidential attribute an EMD of at most t (k-anonymous t-closeness)."""
    from microagg.core.threads import check_threads
    from microagg.data.io import read_table
    from microagg.release import tclose as run

    threads = check_threads(threads)
    schema_obj = _schema(schema)
    with _outputs([output, labels_out], _sources(input, schema, schema=schema_obj)) as files:
        frame = read_table(input)
        with _compile_notice(), _progress(len(frame), f"{method} k={k} t={t:g}") as progress:
            release = run(frame, k=k, t=t, quasi=_names(quasi, "--quasi"),
                          confidential=_names(confidential, "--confidential"), method=method,
                          schema=schema_obj, distance=distance,
                          microaggregation=microaggregation, scaling=standardize,
                          drop_incomplete=drop_incomplete, clamp=clamp, threads=threads,
                          progress=progress)
        _write_as(release.frame, files[output], output)
        if labels_out is not None:
            _write_as(release.labels_frame(), files[labels_out], labels_out)
    report = release.report
    if json_out:
        _print_json(report.to_dict())
        return
    clusters = report.clusters
    out.print(f"{report.method} k={report.k} t={report.t:g}: {report.records:,} records, "
              f"quasi-identifiers {', '.join(report.quasi_identifiers)} -> {output}")
    if report.effective_k != report.k:
        out.print(f"  cluster size raised to {report.effective_k} by 002 eq. (3)-(4)")
    out.print(f"  {clusters['count']:,} classes of {clusters['smallest']} to "
              f"{clusters['largest']} records (k-anonymity "
              f"{'holds' if report.k_anonymity['holds'] else 'does NOT hold'})")
    for name, value in report.largest_emd.items():
        verdict = "holds" if value <= report.t + 1e-9 else "VIOLATED"
        out.print(f"  {name}: largest class EMD {value:.6g} ({report.distances[name]} "
                  f"distance): t = {report.t:g} {verdict}")
    for note in report.notes:
        out.print(f"  note: {note}")
    for name, count in report.clamped.items():
        _warn(f"{count:,} value(s) of '{name}' were clamped into its declared domain")


def _warn(message: str) -> None:
    sys.stderr.write(f"microagg: warning: {' '.join(message.split())}\n")


def _write_as(frame: Any, tmp: Path, target: Path, *, release: bool = True) -> None:
    """Write ``frame`` to ``tmp`` in the format of ``target``'s extension."""
    from microagg.data.io import table_format, write_frame

    write_frame(frame, tmp, table_format(target), release=release)


# -- dp ------------------------------------------------------------------------------------

SHOW_CLAMPED_HELP = ("Print on stderr how many values of each column lay outside its declared "
                     "or clipped domain and were clamped. Those counts describe the data, not "
                     "the release: they are for the data owner only (a log that others read "
                     "would leak them), so they are never printed by default.")

def _bounds(value: str | None) -> dict[str, tuple[float, float]]:
    """Parse --bounds NAME=LO:HI,NAME=LO:HI."""
    if not value:
        return {}
    out: dict[str, tuple[float, float]] = {}
    for item in value.split(","):
        name, _, interval = item.partition("=")
        lo, _, hi = interval.partition(":")
        try:
            low, high = float(lo), float(hi)
        except ValueError:
            raise InputError(f"--bounds: '{item.strip()}' should read NAME=LO:HI") from None
        if not name.strip() or not low < high:
            raise InputError(f"--bounds: '{item.strip()}' should read NAME=LO:HI with LO < HI")
        if name.strip() in out:
            raise InputError(f"--bounds names column '{name.strip()}' twice")
        out[name.strip()] = (low, high)
    return out


def _strategy(value: str | None) -> list[float] | None:
    """Parse --strategy 0.75,0.25."""
    if not value:
        return None
    try:
        return [float(part) for part in value.split(",")]
    except ValueError:
        raise InputError(f"--strategy: '{value}' should be comma-separated numbers, e.g. "
                         "0.75,0.25") from None


def _groups(value: str | None) -> list[list[str]] | None:
    """Parse --groups 'A,B;C'."""
    if not value:
        return None
    return [[name.strip() for name in group.split(",") if name.strip()]
            for group in value.split(";") if group.strip()]


@app.command(short_help="ε-differential privacy (insensitive, individual-ranking, "
                        "cross-moment, laplace).")
def dp(
    input: Path = typer.Argument(..., metavar="IN", help="Table to protect (CSV or Parquet)."),
    output: Path = typer.Option(..., "-o", "--output", help="Released table (CSV or Parquet); "
                                "the privacy report goes to OUTPUT.privacy.json."),
    epsilon: float = typer.Option(..., "--epsilon", help="Privacy budget ε (> 0)."),
    k: int | None = typer.Option(None, "--k", help="Cluster size (insensitive, "
                                 "individual-ranking, cross-moment)."),
    method: str = typer.Option("insensitive", "--method",
                               help="insensitive | individual-ranking | cross-moment | "
                                    "laplace"),
    columns: str | None = typer.Option(None, "--columns", help="Columns to protect, "
                                       "comma-separated (default: every non-identifier "
                                       "column). Other columns are dropped."),
    carry: str | None = typer.Option(None, "--carry", help="Columns to copy unchanged, "
                                     "comma-separated. The table is then NOT DP."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    bounds: str | None = typer.Option(None, "--bounds", help="Domains NAME=LO:HI,... "
                                      "(override the schema)."),
    bounds_from_data: bool = typer.Option(False, "--bounds-from-data",
                                          help="Take missing domains from the data (1.5 x "
                                               "max; observed categories). The release is "
                                               "then NOT DP."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the noise, for research "
                                    "only: a known seed removes the noise (default: OS "
                                    "entropy)."),
    reference: str | None = typer.Option(None, "--reference",
                                         help="Insensitive orders: corners (default) | "
                                              "single."),
    calibration: str | None = typer.Option(None, "--calibration",
                                           help="correct (default; one ε for all numeric "
                                                "attributes, 000 §4) | per-attribute (ε/m "
                                                "each; better when widths differ a lot) | "
                                                "paper (000's experiments: (m·ε)-DP, for "
                                                "reproduction only). Insensitive and laplace."),
    linkage: str | None = typer.Option(None, "--linkage",
                                       help="Individual ranking and cross-moment with "
                                            "ir-mdav: unlinked (default; each column or "
                                            "group in its own random order, ε-DP) | linked "
                                            "(the paper's records; each column or group DP "
                                            "on its own, the table NOT DP)."),
    moments: int | None = typer.Option(None, "--moments", help="Cross-moment: 0 (means) | 1 "
                                       "(default; + covariance) | 2 (+ coskewness)."),
    noise: str | None = typer.Option(None, "--noise", help="Cross-moment: joint (default; "
                                     "004 Alg. 1) | separate (Alg. 2, see --strategy)."),
    strategy: str | None = typer.Option(None, "--strategy", help="Cross-moment with --noise "
                                        "separate: shares of ε for mean, covariance[, "
                                        "coskewness], summing to 1 (default 0.5,0.5 or "
                                        "0.5,0.3,0.2)."),
    clustering: str | None = typer.Option(None, "--clustering", help="Cross-moment: "
                                          "insensitive (default; ε-DP of the records) | mdav "
                                          "| ir-mdav (ε-DP of the microaggregated data set "
                                          "only, as in paper 004)."),
    variant: str | None = typer.Option(None, "--variant", help="Cross-moment: pure "
                                       "(default; every covariance) | variances | kendall "
                                       "(variances and Kendall's tau per pair, a Gaussian "
                                       "copula; m = 1) | eigen (eigenvalues and "
                                       "eigenvectors: individual DP only, NOT DP)."),
    coskewness: str | None = typer.Option(None, "--coskewness", help="Cross-moment, m = 2: "
                                          "marginal (default; what the sampler uses) | all "
                                          "(the only choice of --variant eigen)."),
    groups: str | None = typer.Option(None, "--groups", help="Cross-moment with ir-mdav: "
                                      "attribute groups clustered separately, 'A,B;C' "
                                      "(default: one per attribute)."),
    clip: str | None = typer.Option(None, "--clip", help="Clip the numeric domains at "
                                    "differentially private quantiles first: Q (upper "
                                    "bound at quantile Q, e.g. 0.95) or P,Q (both ends). "
                                    "Less noise on heavy-tailed columns, values beyond the "
                                    "bounds clamped. Cross-moment needs insensitive "
                                    "clusters."),
    clip_share: float | None = typer.Option(None, "--clip-share", help="With --clip: the "
                                            "share of ε spent on the bounds (default 0.1)."),
    statistics_out: Path | None = typer.Option(None, "--statistics-out", help="Cross-moment: "
                                               "also write the released cluster statistics "
                                               "(CSV or Parquet)."),
    drop_incomplete: bool = typer.Option(False, "--drop-incomplete",
                                         help="Drop rows with a missing value first."),
    show_clamped: bool = typer.Option(False, "--show-clamped", help=SHOW_CLAMPED_HELP),
    threads: int | None = typer.Option(None, "--threads", help=THREADS_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the privacy report as JSON."),
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP + " It runs "
                               "individual-ranking (unlinked, numeric columns) and "
                               "insensitive with --reference single."),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=WORKERS_HELP),
) -> None:
    """ε-differentially private release (insensitive: 000 Alg. 3; individual-ranking: 001
    Alg. 1; cross-moment: 004 Alg. 1-3; laplace: noise on every record)."""
    import warnings

    from microagg.core.threads import check_threads
    from microagg.data.io import json_text, read_table
    from microagg.errors import PrivacyLeakWarning
    from microagg.release.clipping import Clipping
    from microagg.release.dp import dp_release

    if seed is not None and seed < 0:
        raise InputError(f"--seed must be a non-negative integer, got {seed}")
    if _engine(engine, scheduler, workers, carry=carry, bounds_from_data=bounds_from_data,
               moments=moments, noise=noise, strategy=strategy, clustering=clustering,
               variant=variant, coskewness=coskewness, groups=groups,
               statistics_out=statistics_out, drop_incomplete=drop_incomplete,
               threads=threads, clip=clip, clip_share=clip_share):
        if k is None:
            raise InputError(f"--method {method} needs --k")
        _dp_at_scale(input, output, method=method, epsilon=epsilon, k=k,
                     columns=_names(columns, "--columns"),
                     schema=_schema(schema), schema_path=schema,
                     bounds=_bounds(bounds), reference=reference, calibration=calibration,
                     linkage=linkage, seed=seed, scheduler=scheduler, workers=workers,
                     json_out=json_out, show_clamped=show_clamped)
        return
    if statistics_out is not None and method.strip().lower() != "cross-moment":
        raise InputError("--statistics-out applies to --method cross-moment only")
    parsed = _bounds(bounds)
    threads = check_threads(threads)
    if clip_share is not None and clip is None:
        raise InputError("--clip-share applies with --clip only")
    clipping = Clipping.parse(clip, clip_share) if clip is not None else None
    schema_obj = _schema(schema)
    report_path = output.with_name(output.name + ".privacy.json")
    with _outputs([output, report_path, statistics_out],
                  _sources(input, schema, schema=schema_obj)) as files:
        frame = read_table(input)
        with _compile_notice(), _progress(len(frame), f"{method} k={k}") as progress, \
                warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)  # the report's lines say it
            release = dp_release(
                frame, method=method, epsilon=epsilon, k=k, schema=schema_obj,
                columns=_names(columns, "--columns"), carry=_names(carry, "--carry") or (),
                bounds=parsed, bounds_from_data=bounds_from_data, reference=reference,
                calibration=calibration, linkage=linkage, rng=seed,
                drop_incomplete=drop_incomplete, threads=threads, progress=progress,
                moments=moments, noise=noise, strategy=_strategy(strategy),
                clustering=clustering, variant=variant, coskewness=coskewness,
                groups=_groups(groups), clip=clipping)
        report = release.report
        _write_as(release.frame, files[output], output)
        files[report_path].write_text(json_text(report.to_dict()), encoding="utf-8")
        if statistics_out is not None:
            if release.statistics is None:
                raise InputError("this release publishes no statistics table; leave out "
                                 "--statistics-out")
            _write_as(release.statistics, files[statistics_out], statistics_out)
    _print_privacy(report, release.notices if show_clamped else (), output, report_path,
                   json_out)


def _print_privacy(report: Any, notices: tuple[str, ...], output: Path, report_path: Path,
                   json_out: bool) -> None:
    for notice in notices:
        _warn(notice + " (for the data owner only: not published)")
    if not report.differentially_private:
        _warn(report.guarantee)
    for weakness in report.weaker_than_plain_dp:
        _warn(f"weaker than plain epsilon-DP: {weakness}")
    for warning in report.warnings:
        _warn(warning)
    if json_out:
        _print_json(report.to_dict())
        return
    out.print(f"{report.method}: {report.records:,} records, columns "
              f"{', '.join(report.columns)} -> {output}")
    if report.dropped_columns:
        out.print(f"  dropped (not protected): {', '.join(report.dropped_columns)}")
    out.print(f"  {report.guarantee}")
    for part in report.epsilon_split:
        out.print(f"  ε for {part['part']}: {part['epsilon']:.6g}")
    for name, domain in report.domains.items():
        if "declared" in domain:
            low, high = domain["declared"]
            out.print(f"  domain of {name} clipped to [{domain['low']:.6g}, "
                      f"{domain['high']:.6g}] (declared [{low:.6g}, {high:.6g}])")
    for name, level in report.noise.items():
        if "fraction_of_width" in level:
            least = "at least " if "note" in level else ""
            out.print(f"  noise on {name}: sd {least}{level['standard_deviation']:.4g} "
                      f"({level['fraction_of_width']:.1%} of the domain width)")
    out.print(f"  privacy report: {report_path}")



def _dp_at_scale(input: Path, output: Path, *, method: str, epsilon: float, k: int,
                 columns: list[str] | None, schema: Any, schema_path: Path | None,
                 bounds: dict, reference: str | None,
                 calibration: str | None, linkage: str | None, seed: int | None,
                 scheduler: str | None, workers: int | None, json_out: bool,
                 show_clamped: bool) -> None:
    import warnings

    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import check_dataset_output, open_dataset
    from microagg.at_scale.dp import dp_release_at_scale
    from microagg.data.io import json_text
    from microagg.errors import PrivacyLeakWarning

    check_dataset_output(output, input)
    report_path = output.with_name(output.name + ".privacy.json")
    with _outputs([report_path], _sources(input, schema_path, schema=schema)) as files:
        dataset = open_dataset(input)
        with dask_client(scheduler, workers) as client, \
                _progress(dataset.n, f"{method} k={k}") as progress, warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)  # the report's lines say it
            release = dp_release_at_scale(
                client, dataset, output, method=method, epsilon=epsilon, k=k, columns=columns,
                schema=schema, bounds=bounds, reference=reference, calibration=calibration,
                linkage=linkage, rng=seed, progress=progress)
        files[report_path].write_text(json_text(release.report.to_dict()),
                                      encoding="utf-8")
    _print_privacy(release.report, release.notices if show_clamped else (), output,
                   report_path, json_out)


# -- mask ----------------------------------------------------------------------------------

@app.command(short_help="Mask numeric columns: correlated noise, multiplicative noise, rank "
                        "swapping (paper 003).")
def mask(
    input: Path = typer.Argument(..., metavar="IN", help="Table to mask (CSV or Parquet)."),
    output: Path = typer.Option(..., "-o", "--output", help="Masked table (CSV or Parquet)."),
    method: str = typer.Option(..., "--method", help="correlated-noise (P = gamma of "
                               "N(0, gamma*Sigma)) | multiplicative-noise (P = s of "
                               "1 +- N(0, s)) | rank-swap (P = window as a FRACTION of the "
                               "records, 0.05 = 5 %)."),
    param: float = typer.Option(..., "--param", help="The method's parameter P."),
    columns: str | None = typer.Option(None, "--columns", help="Columns to mask, "
                                       "comma-separated (default: the schema's "
                                       "quasi-identifiers, else every non-identifier column)."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed (default: OS entropy)."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Mask numeric columns with a method that has no ex-ante guarantee (measure its risk)."""
    from microagg.data.io import read_table
    from microagg.release import mask as run

    schema_obj = _schema(schema)
    with _outputs([output], _sources(input, schema, schema=schema_obj)) as files:
        release = run(read_table(input), method=method, param=param,
                      columns=_names(columns, "--columns"), schema=schema_obj, rng=seed)
        _write_as(release.frame, files[output], output)
    report = release.report
    if json_out:
        _print_json(report.to_dict())
        return
    out.print(f"{report.method} {report.parameter}={report.value:g}: {report.records:,} "
              f"records, columns {', '.join(report.columns)} -> {output}")
    if report.released_unchanged:
        out.print(f"  written unchanged: {', '.join(report.released_unchanged)}")
    out.print(f"  guarantee: {report.guarantee}")


# -- compare -------------------------------------------------------------------------------

@contextlib.contextmanager
def _steps(description: str) -> Iterator[Callable[[str], None] | None]:
    """A spinner with the current evaluation on stderr for a terminal; a no-op otherwise."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"),
                  TextColumn("{task.completed} evaluations"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=None)
        yield lambda text: bar.update(task, advance=1, description=text)


@app.command(short_help="Compare methods at equal risk (or equal utility) and rank them "
                        "(paper 003).")
def compare(
    input: Path = typer.Argument(..., metavar="IN", help="Original table (CSV or Parquet)."),
    target_risk: str | None = typer.Option(None, "--target-risk", help="Risk to reach (003 "
                                           "eq. 2, larger = safer): a number, or METHOD=VALUE "
                                           "such as mdav=5 (the risk of MDAV with k = 5)."),
    target_utility: str | None = typer.Option(None, "--target-utility", help="Dual: the EMD "
                                              "to reach, a number or METHOD=VALUE; methods "
                                              "are then ranked by risk."),
    methods: str | None = typer.Option(None, "--methods", help="Comma-separated: mdav, "
                                       "individual-ranking, correlated-noise, "
                                       "multiplicative-noise, rank-swap, dp-laplace, "
                                       "dp-individual-ranking (default: the first, and the "
                                       "three masking methods: 003's four)."),
    columns: str | None = typer.Option(None, "--columns", help="Columns compared (default: "
                                       "the schema's quasi-identifiers, else every numeric "
                                       "column)."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML)."),
    seeds: int = typer.Option(10, "--seeds", help="Runs of a randomized method per value."),
    tolerance: float = typer.Option(0.0025, "--tolerance", help="Relative tolerance of a "
                                    "match: the 95 % interval must lie in target*(1 +- tol)."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random draw."),
    risk_scale: str = typer.Option("ranks", "--risk-scale", help="ranks | unit."),
    risk_aggregate: str = typer.Option("mean-of-logs", "--risk-aggregate",
                                       help="mean-of-logs | log-of-mean | printed."),
    report: Path | None = typer.Option(None, "--report", help="Write an HTML report."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Calibrate each method to the same risk (or utility), then rank by utility (or risk)."""
    from microagg.data.io import read_table
    from microagg.evaluation.compare import compare as run
    from microagg.evaluation.comparison import RAW_DATA_NOTICE
    from microagg.options import MatchStatus

    if report is not None and report.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--report must name an .html file, got '{report}'")
    schema_obj = _schema(schema)
    with _outputs([report], _sources(input, schema, schema=schema_obj)) as files:
        frame = read_table(input)
        with _compile_notice(), _steps("calibrating") as progress:
            result = run(frame, target_risk=target_risk, target_utility=target_utility,
                         methods=_names(methods, "--methods"),
                         columns=_names(columns, "--columns"), schema=schema_obj, seeds=seeds,
                         tolerance=tolerance, seed=seed, scale=risk_scale,
                         aggregate=risk_aggregate, progress=progress, source=input.name)
        if report is not None:
            from microagg.evaluation.html import comparison_html

            files[report].write_text(comparison_html(result), encoding="utf-8")
    if json_out:
        _print_json(result.to_dict())
        return
    held = result.target.value
    out.print(f"note: {RAW_DATA_NOTICE}")
    out.print(f"target {held} {result.target_value:.6g} ({result.target_source}), "
              f"tolerance ± {result.tolerance:.3g}")
    for m in result.methods:
        status = {MatchStatus.MATCHED: "matched",
                  MatchStatus.EXCEEDS: f"ranked at its closest value: {m.reason}"}.get(
            m.status, f"left out: {m.reason}")
        setting = f"{m.parameter} = {m.value:.4g}"
        out.print(f"  {m.method.value:22s} {setting:20s} risk {m.risk:<8.5g} "
                  f"EMD {m.utility.emd:<8.4g} ± {m.utility.emd_bound:<8.2g} {status}")
    out.print(f"ranking: {', '.join(m.value for m in result.ranking) or '(none ranked)'}")
    out.print(result.recommendation())
    if report is not None:
        out.print(f"report: {report}")


# -- demo ----------------------------------------------------------------------------------

@app.command(short_help="End-to-end run on embedded synthetic data.")
def demo(
    n: int = typer.Option(2000, "--n", help="Records of the synthetic data."),
    k: int = typer.Option(5, "--k", help="Smallest cluster size."),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic data."),
) -> None:
    """End-to-end run on embedded synthetic data: MDAV -> check -> evaluate."""
    from microagg.core.verifiers import k_anonymity
    from microagg.data.datasets import synthetic
    from microagg.evaluation.evaluate import evaluate as run_evaluation
    from microagg.release import microaggregate as run

    data = synthetic(n, 6, seed)
    quasi = list(data.schema.quasi_identifiers)
    out.print(f"1. data: {data.description}; quasi-identifiers: {', '.join(quasi)}")
    before = k_anonymity(data.frame, quasi)
    out.print(f"   before: smallest equivalence class {before.smallest_class} "
              f"({before.classes:,} classes) - every record is unique")
    with _compile_notice(), _progress(n, f"mdav k={k}") as progress:
        release = run(data.frame, k=k, schema=data.schema, progress=progress)
    clusters = release.report.clusters
    out.print(f"2. MDAV, k={k}, z-scores: {clusters['count']:,} clusters of "
              f"{clusters['smallest']} to {clusters['largest']} records")
    after = k_anonymity(release.frame, quasi)
    out.print(f"3. check: smallest equivalence class {after.smallest_class} -> "
              f"{k}-anonymity {'holds' if after.holds(k) else 'VIOLATED'}")
    with _compile_notice():
        result = run_evaluation(data.frame, release.frame, data.schema)
    out.print("4. evaluate (original vs released):")
    out.print(f"   information loss SSE/SST   {result['sse_percent']:.2f} %")
    out.print(f"   record linkage             {result['record_linkage_percent']:.2f} % of "
              f"records re-identified (a {k}-anonymous release allows at most "
              f"{100 / k:.0f} %)")
    out.print(f"   relative error             {result['relative_error']:.4f}")
    out.print(f"   JSD of the distributions   {result['jsd']:.4f}")
    out.print(f"   variance variation (mean)  {result['variance_variation']:.4f}")
    if not after.holds(k):
        raise typer.Exit(code=1)


# -- entry point ---------------------------------------------------------------------------

INTERRUPTED = 130  # 128 + SIGINT, the shell's convention
INTERRUPTED_MESSAGE = "interrupted; no output was written (outputs are renamed into place last)"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code.

    Every error becomes one line on stderr and code 2: usage errors (an unknown option, a
    value that does not parse), every :class:`MicroaggError` a command raises, and what the
    file system answers (a full disk). Ctrl-C is one line and code 130. ``microagg`` alone
    prints the help.
    """
    import logging
    import warnings

    no_args, usage = _usage_errors()
    # The Dask engine runs an event loop in this process; when a command stops it, the loop
    # logs the tasks it abandons, even after the command has said what happened in one line.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            code = app(args=argv, prog_name="microagg", standalone_mode=False)
    except no_args as exc:  # a command group alone: its help
        sys.stdout.write(exc.format_message().rstrip() + "\n")
        return 0
    except usage as exc:
        command = exc.ctx.command_path if exc.ctx is not None else "microagg"
        _error(f"{exc.format_message()} (see {command} --help)")
        return 2
    except (typer.Abort, KeyboardInterrupt):
        _error(INTERRUPTED_MESSAGE)
        return INTERRUPTED
    except MicroaggError as exc:
        _error(str(exc))
        return 2
    except OSError as exc:  # a file system's answer no check foresaw (full disk, permissions)
        where = f"{exc.filename}: " if exc.filename else ""
        _error(f"{where}{exc.strerror or exc}; no output was written")
        return 2
    except MemoryError:
        _error("not enough memory for this input; no output was written")
        return 2
    except Exception as exc:
        if _interrupted(exc):  # Ctrl-C inside a compiled kernel surfaces as a SystemError
            _error(INTERRUPTED_MESSAGE)
            return INTERRUPTED
        if os.environ.get("MICROAGG_DEBUG"):
            raise
        _error(f"unexpected {type(exc).__name__}: {exc} - this is a bug in microagg, not in "
               "your input: please report it with the command line (MICROAGG_DEBUG=1 shows "
               "the traceback); no output was written")
        return 2
    code = code if isinstance(code, int) else 0
    if code == INTERRUPTED:  # Typer's own answer to Ctrl-C
        _error(INTERRUPTED_MESSAGE)
    return code


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` was caused, however indirectly, by Ctrl-C."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _usage_errors() -> tuple[type[Exception], type[Exception]]:
    """Click's "no arguments: show the help" and usage errors, wherever Typer keeps them
    (recent Typer vendors Click as ``typer._click``)."""
    try:
        from typer._click.exceptions import NoArgsIsHelpError, UsageError
    except ImportError:  # Typer on Click itself
        from click.exceptions import NoArgsIsHelpError, UsageError  # type: ignore[no-redef]
    return NoArgsIsHelpError, UsageError


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Any = None, line: str | None = None) -> None:
    """A Python warning on one line of stderr, like the command's own warnings."""
    _warn(str(message))


def _error(message: str) -> None:
    text = " ".join(str(message).split())
    sys.stderr.write(f"microagg: error: {text}\n")


def entry() -> None:
    """The ``microagg`` program: :func:`main`, then exit with its code. After Ctrl-C the
    command has said so in one line; what the interpreter's exit handlers print while they
    stop an interrupted Dask cluster is left unsaid."""
    code = main()
    if code == INTERRUPTED:
        sys.stderr.flush()
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
    raise SystemExit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
