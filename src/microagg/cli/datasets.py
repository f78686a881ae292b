"""``microagg datasets``: the reference data sets (list, export)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import DATASET_NAMES, datasets_app, out
from microagg.cli.common import (
    WRITES,
    print_json,
    write_as,
)
from microagg.errors import InputError

CENSUS = "census-synthetic"
_OWN_OPTIONS = {"synthetic": ("--n", "--d", "--seed"),
                CENSUS: ("--persons", "--households", "--seed", "--storage-option")}


@datasets_app.command("list")
def datasets_list(
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """List the data sets and where their files are (docs/datasets.md: where to get them)."""
    from microagg.data.datasets import DOCS, ENV_VAR, describe, search_path_text

    rows = describe()
    if json_out:
        print_json(rows)
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
    output: Path = typer.Option(..., "-o", "--output", help=f"Output file ({WRITES})."),
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
                                    "and of census-synthetic (default 0)."),
    persons: int | None = typer.Option(None, "--persons", help="Persons of census-synthetic "
                                       "(default 1000000)."),
    households: int | None = typer.Option(None, "--households", help="Households of "
                                          "census-synthetic (default persons / 2.5)."),
    storage_option: list[str] | None = typer.Option(
        None, "--storage-option", help="census-synthetic to an fsspec URL (s3://bucket/prefix "
        "...): a storage option KEY=VALUE of its file system; repeatable."),
) -> None:
    """Write a data set (and optionally its schema and taxonomies) to files, all or none.
    census-synthetic is written to a local .csv or .parquet file, or, to any other path (a
    folder) or a URL, as a Parquet data set of parts of 10^6 persons (--engine dask reads
    it)."""
    from microagg.data.datasets import load
    from microagg.data.io import check_output, table_format, write_all

    chosen = name.strip().lower()
    _refuse_foreign_options(chosen, {"--n": n, "--d": d, "--seed": seed, "--persons": persons,
                                     "--households": households,
                                     "--storage-option": storage_option})
    if drop_incomplete and not chosen.startswith("adult"):
        raise InputError(f"--drop-incomplete applies to the adult data sets only, not '{name}'")
    if chosen == CENSUS:
        _export_census(output, schema_out, persons=1_000_000 if persons is None else persons,
                       households=households, seed=0 if seed is None else seed,
                       storage=storage_option or [])
        return
    n, d, seed = 1000 if n is None else n, 6 if d is None else d, 0 if seed is None else seed

    table_format(output)
    check_output(output)
    if schema_out is not None:
        check_output(schema_out)
    dataset = load(name, drop_incomplete=drop_incomplete, n=n, d=d, seed=seed)
    outputs = [(output, lambda path: write_as(dataset.frame, path, output, release=False))]
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
    def write_schema(path: Path) -> None:
        path.write_text(text, encoding="utf-8")

    def copier(source: Path) -> Callable[[Path], None]:
        def copy_to(path: Path) -> None:
            shutil.copyfile(source, path)
        return copy_to

    writers: list[tuple[Path, Callable[[Path], None]]] = [(schema_out, write_schema)]
    writers += [(copy, copier(source)) for source, copy in copies]
    return writers, copies


def _refuse_foreign_options(name: str, given: dict[str, Any]) -> None:
    """Refuse, in one line, an option of a generated data set given for another data set."""
    own = _OWN_OPTIONS.get(name, ())
    for option, value in given.items():
        if value is not None and value != [] and option not in own:
            makers = [n for n, options in _OWN_OPTIONS.items() if option in options]
            which = (f"the {makers[0]} data set" if len(makers) == 1
                     else f"the {' and '.join(makers)} data sets")
            raise InputError(f"{option} applies to {which} only, not '{name}'")


def _export_census(output: Path, schema_out: Path | None, *, persons: int,
                   households: int | None, seed: int, storage: list[str]) -> None:
    """``datasets export census-synthetic``: one CSV or Parquet file written chunk by chunk,
    or a Parquet data set (a folder or URL) written part by part by this process."""
    from microagg.at_scale.storage import locate, parse_storage_options
    from microagg.data.synthetic_census import COLUMNS, census_plan

    if schema_out is not None:
        raise InputError("--schema-out applies to the reference and synthetic data sets, "
                         f"not '{CENSUS}' (its columns: docs/datasets.md)")
    where = locate(output, parse_storage_options(storage))
    plan = census_plan(persons, households, seed)
    if isinstance(where, Path) and where.suffix and not where.is_dir():
        _census_file(plan, where)
        shown: Any = where
    else:
        _census_dataset(plan, where)
        shown = where.url if not isinstance(where, Path) else where
    out.print(f"wrote {CENSUS}: {plan.persons:,} persons in {plan.households:,} households x "
              f"{len(COLUMNS)} columns to {shown}", markup=False)


def _census_file(plan: Any, target: Path) -> None:
    """The census as one CSV or Parquet file, a chunk of 10^6 persons at a time."""
    from microagg.data.io import check_output, output_format, write_all

    fmt = output_format(target)
    if fmt not in ("csv", "parquet"):
        raise InputError(f"{CENSUS} is written as .csv or .parquet, or as a Parquet data set "
                         f"(a folder or a URL), not as .{fmt} ({target})")
    check_output(target)

    def write(path: Path) -> None:
        from microagg.data.synthetic_census import census_chunk, chunk_bounds

        chunks = (census_chunk(plan, first, stop) for first, stop in chunk_bounds(plan))
        if fmt == "csv":
            with open(path, "w", encoding="utf-8", newline="") as handle:
                for at, chunk in enumerate(chunks):
                    chunk.to_csv(handle, header=at == 0, index=False)
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        writer = None
        try:
            for chunk in chunks:
                table = pa.Table.from_pandas(chunk, preserve_index=False)
                writer = writer or pq.ParquetWriter(path, table.schema)
                writer.write_table(table)
        finally:
            if writer is not None:
                writer.close()

    write_all([(target, write)])


def _census_dataset(plan: Any, target: Any) -> None:
    """The census as a Parquet data set of parts of 10^6 persons (whole households)."""
    from microagg.at_scale.cluster import require_dask

    require_dask()
    import dask

    from microagg.at_scale.dataset import write_parts_here
    from microagg.data.synthetic_census import census_chunk, chunk_bounds

    parts = [dask.delayed(census_chunk, pure=False)(plan, first, stop)
             for first, stop in chunk_bounds(plan)]
    write_parts_here(parts, target)
