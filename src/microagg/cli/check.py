"""``microagg check``: verify k-anonymity and t-closeness of a table (exit 0 holds, 1
violated)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import app, out
from microagg.cli.common import (
    load,
    names,
    print_json,
)
from microagg.errors import InputError


def require_columns(available: tuple[str, ...], names: tuple[str, ...] | list[str]) -> None:
    for name in names:
        if name not in available:
            raise InputError(f"unknown column '{name}' (the data has: {', '.join(available)})")


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
    confidential_names = names(confidential, "--confidential") or []
    if t is not None:
        if not confidential_names:
            raise InputError("--t needs --confidential")
        if not 0 <= t <= 1:
            raise InputError(f"--t must lie in [0, 1], got {t}")
    frame, schema_obj = load(input, schema)
    table = encode(frame, schema_obj, drop_incomplete=drop_incomplete, released=True)
    frame = decode(table)
    quasi_names = names(quasi, "--quasi")
    if quasi_names is None:
        declared = table.schema.quasi_identifiers if schema_obj is not None else ()
        quasi_names = list(declared) or [c for c in table.schema.names
                                         if c not in confidential_names]
    require_columns(table.schema.names, (*quasi_names, *confidential_names))
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
        print_json(result)
    else:
        for line in lines:
            out.print(line)
    if not holds:
        raise typer.Exit(code=1)
