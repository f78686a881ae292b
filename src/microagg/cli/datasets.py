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
