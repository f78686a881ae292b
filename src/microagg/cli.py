"""The ``microagg`` command line.

Exit codes: 0 success; 1 a ``check`` found the property violated; 2 bad input (a one-line
message on stderr names the file, column, value or option at fault, and no output is written).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table as RichTable

from microagg import __version__
from microagg.errors import InputError, MicroaggError

app = typer.Typer(
    name="microagg",
    help="Publish microdata with a stated privacy guarantee through microaggregation.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
datasets_app = typer.Typer(help="Reference data sets (census, eia, tarragona, adult, synthetic).",
                           no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")

out = Console(highlight=False, soft_wrap=True)


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

def _names(value: str | None, option: str) -> list[str] | None:
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise InputError(f"{option} needs at least one column name")
    return names


def _load(path: Path, schema_path: Path | None):
    from microagg.io import read_table
    from microagg.schema import Schema

    frame = read_table(path)
    schema = Schema.load(schema_path) if schema_path is not None else None
    return frame, schema


def _require_columns(available: tuple[str, ...], names: tuple[str, ...] | list[str]) -> None:
    for name in names:
        if name not in available:
            raise InputError(f"unknown column '{name}' (the data has: {', '.join(available)})")


def _check_k(k: int, n: int) -> None:
    if k < 1:
        raise InputError(f"--k must be at least 1, got {k}")
    if k > n:
        raise InputError(f"--k {k} exceeds the number of records ({n})")


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=_json_default) + "\n")


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.6g}"


# -- datasets ------------------------------------------------------------------------------

@datasets_app.command("list")
def datasets_list(
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """List the data sets and where their files are."""
    from microagg.datasets import describe

    rows = describe()
    if json_out:
        _print_json(rows)
        return
    table = RichTable("name", "rows x columns", "description", "file")
    for row in rows:
        table.add_row(row["name"], row["shape"], row["description"], row["location"])
    out.print(table)


@datasets_app.command("export")
def datasets_export(
    name: str = typer.Argument(..., help="census, eia, tarragona, adult or synthetic."),
    output: Path = typer.Option(..., "-o", "--output", help="Output CSV or Parquet file."),
    schema_out: Path | None = typer.Option(None, "--schema-out",
                                           help="Also write the data set's schema (YAML)."),
    drop_incomplete: bool = typer.Option(False, "--drop-incomplete",
                                         help="Drop rows with a missing value (adult)."),
    n: int = typer.Option(1000, "--n", help="Rows of the synthetic data."),
    d: int = typer.Option(6, "--d", help="Numeric columns of the synthetic data."),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic data."),
) -> None:
    """Write a data set (and optionally its schema) to a file."""
    from microagg.datasets import load
    from microagg.io import table_format, write_table

    table_format(output)
    dataset = load(name, drop_incomplete=drop_incomplete, n=n, d=d, seed=seed)
    write_table(dataset.frame, output)
    if schema_out is not None:
        dataset.schema.save(schema_out)
    rows, cols = dataset.frame.shape
    out.print(f"wrote {name}: {rows:,} rows x {cols} columns to {output}"
              + (f" (schema: {schema_out})" if schema_out else ""))


# -- check -----------------------------------------------------------------------------------

@app.command()
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
    drop_incomplete: bool = typer.Option(False, "--drop-incomplete",
                                         help="Drop rows with a missing value first."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Verify k-anonymity and/or t-closeness of a table (exit 0 holds, 1 violated)."""
    from microagg.models import k_anonymity, t_closeness
    from microagg.schema import Kind
    from microagg.table import decode, encode

    if k is None and t is None:
        raise InputError("nothing to check: give --k and/or --t")
    confidential_names = _names(confidential, "--confidential") or []
    if t is not None:
        if not confidential_names:
            raise InputError("--t needs --confidential")
        if not 0 <= t <= 1:
            raise InputError(f"--t must lie in [0, 1], got {t}")
    frame, schema_obj = _load(input, schema)
    table = encode(frame, schema_obj, drop_incomplete=drop_incomplete)
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
        _check_k(k, table.n_rows)
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
        for name in confidential_names:
            ordered = table.schema[name].kind is not Kind.NOMINAL
            report_t = t_closeness(frame, quasi_names, name, ordered=ordered)
            ok = report_t.holds(t)
            holds &= ok
            result["t_closeness"].append({"attribute": name, "t": t, "holds": ok,
                                          "largest_emd": report_t.t,
                                          "distance": report_t.distance})
            lines.append(f"t-closeness of {name} ({report_t.distance} EMD): largest class EMD "
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

@app.command()
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
) -> None:
    """Measure the utility loss and disclosure risk of a masked table."""
    from microagg.io import read_table
    from microagg.metrics.evaluate import evaluate as run_evaluation

    original_frame, schema_obj = _load(original, schema)
    masked_frame = read_table(masked)
    result = run_evaluation(original_frame, masked_frame, schema_obj,
                            _names(columns, "--columns"))
    if json_out:
        _print_json(result)
        return
    out.print(f"compared {result['rows']:,} rows on {', '.join(result['columns'])}")
    for key, label in (("sse", "SSE (raw scale)"), ("sse_percent", "SSE/SST (%)"),
                       ("record_linkage_percent", "record linkage (%)"),
                       ("relative_error", "relative error"), ("jsd", "JSD (mean)"),
                       ("variance_variation", "variance variation (mean)"),
                       ("mean_variation", "mean variation (mean)")):
        out.print(f"  {label:28s} {_fmt(result[key])}")


# -- entry point ---------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code.

    Typer reports its own usage errors (unknown option, missing argument) with exit code 2;
    every :class:`MicroaggError` raised by a command becomes a one-line message and code 2.
    """
    try:
        app(args=argv, prog_name="microagg")
    except SystemExit as exc:
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 1
    except MicroaggError as exc:
        _error(str(exc))
        return 2
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    return 0


def _error(message: str) -> None:
    text = " ".join(str(message).split())
    sys.stderr.write(f"microagg: error: {text}\n")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
