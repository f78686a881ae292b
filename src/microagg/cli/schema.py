"""``microagg schema``: the roles and kinds read off a table, printed and written as a schema
file for the data owner to read, edit and pass with ``--schema``."""

from __future__ import annotations

from pathlib import Path

import typer

from microagg.cli.app import command, out
from microagg.cli.common import outputs, sources
from microagg.errors import InputError

__all__ = ["schema"]


@command("schema")
def schema(
    input: Path = typer.Argument(..., metavar="IN", help="Table to describe."),
    output: Path = typer.Option(..., "-o", "--output", help="Schema file to write (YAML)."),
) -> None:
    """Read IN, suggest each column's role (identifier, weight, household, else quasi: see
    the rules in `microagg.data.roles`) and kind, print them and write them as a schema.
    Domains are not read off the data: declare them where a method needs one. The categories
    of a categorical column (Parquet, SPSS, Stata) are written under `observed:`: they come
    from the file, perhaps from the data, so a DP release refuses them until you check them
    and list them under `domain:`."""
    from microagg.data.io import read_table
    from microagg.data.roles import suggested_roles
    from microagg.data.schema import Schema

    if output.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(f"{output}: a schema is written as YAML; use a .yaml extension")
    with outputs([output], sources(input)) as files:
        frame = read_table(input)
        if len(frame) == 0:  # every column would be guessed nominal, and every release refuses it
            raise InputError(f"{input} holds no records: the kinds of its columns cannot be "
                             "read off it")
        roles = suggested_roles(frame)
        inferred = Schema.infer(frame, roles={name: role for name, (role, _) in roles.items()})
        files[output].write_text(inferred.dumps(base_dir=output.parent), encoding="utf-8")
    for attribute in inferred:
        reason = roles[attribute.name][1]
        out.print(f"  {attribute.name}: {attribute.role.value}, {attribute.kind.value}"
                  + (f" ({reason})" if reason else "")
                  + (f"; {len(attribute.domain or ())} categories observed in the data "
                     "(declare them under domain: for a DP release)"
                     if attribute.observed else ""))
    out.print(f"schema of {len(inferred)} columns -> {output}; check every role before "
              "using it")
