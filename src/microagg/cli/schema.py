"""``microagg schema``: the roles and kinds read off a table, printed and written as a schema
file for the data owner to read, edit and pass with ``--schema``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from microagg.cli.app import command, out
from microagg.cli.common import outputs, sources
from microagg.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from microagg.data.schema import Kind, Role

__all__ = ["schema"]


@command("schema")
def schema(
    input: Path = typer.Argument(..., metavar="IN", help="Table to describe."),
    output: Path = typer.Option(..., "-o", "--output", help="Schema file to write (YAML)."),
) -> None:
    """Read IN, give each column the role its name says (identifier, weight, household,
    else quasi: see the rules in `microagg.data.roles`) and its kind, print them and write
    them as a schema. A role the values suggest (every value distinct, numbers counting the
    rows) is printed and written as a comment, not as the role: one record can switch it, so
    a release that took it would follow the data. Domains are not read off the data: declare
    them where a method needs one. The categories of a categorical column (Parquet, SPSS,
    Stata) are written under `observed:`: they come from the file, perhaps from the data, so a
    DP release refuses them until you check them and list them under `domain:`."""
    from microagg.data.io import read_table
    from microagg.data.schema import Role, Schema
    from microagg.data.table import missing_mask

    if output.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(f"{output}: a schema is written as YAML; use a .yaml extension")
    with outputs([output], sources(input)) as files:
        frame = read_table(input)
        if len(frame) == 0:  # every column would be guessed nominal, and every release refuses it
            raise InputError(f"{input} holds no records: the kinds of its columns cannot be "
                             "read off it")
        if all(missing_mask(frame[c]).all() for c in frame.columns):
            raise InputError(f"{input} holds no value, every cell is missing: the kinds of its "
                             "columns cannot be read off it")
        inferred = Schema.infer(frame)
        roles = {a.name: _named(a.name, a.kind) for a in inferred}
        suggested = _suggested(frame, roles)
        inferred = Schema.infer(frame, roles=roles)
        files[output].write_text(_comments(suggested) + inferred.dumps(base_dir=output.parent),
                                 encoding="utf-8")
    for attribute in inferred:
        reason = "its name says so" if attribute.role is not Role.QUASI else ""
        if attribute.name in suggested:
            role, why = suggested[attribute.name]
            reason = f"its values suggest {role.value}: {why}; set it if right"
        out.print(f"  {attribute.name}: {attribute.role.value}, {attribute.kind.value}"
                  + (f" ({reason})" if reason else "")
                  + (f"; {len(attribute.domain or ())} categories observed in the data "
                     "(declare them under domain: for a DP release)"
                     if attribute.observed else ""))
    out.print(f"schema of {len(inferred)} columns -> {output}; check every role before "
              "using it")


def _named(name: str, kind: Kind) -> Role:
    """The role a column's name gives it (a weight only when it holds numbers), else
    quasi-identifier."""
    from microagg.data.roles import named_role
    from microagg.data.schema import Kind, Role

    role = named_role(name)
    if role is Role.WEIGHT and kind is not Kind.NUMERIC:
        return Role.QUASI
    return role or Role.QUASI


def _suggested(frame: pd.DataFrame, roles: dict[str, Role]) -> dict[str, tuple[Role, str]]:
    """The roles the values of ``frame`` suggest where its names gave none, with why."""
    from microagg.data.roles import suspect
    from microagg.data.schema import Role

    found = {}
    for name in frame.columns:
        guess = suspect(str(name), frame[name])
        if guess is not None and roles[str(name)] is Role.QUASI and guess[0] is not Role.QUASI:
            found[str(name)] = guess
    return found


def _comments(suggested: dict[str, tuple[Role, str]]) -> str:
    """The schema file's opening comment: the roles the values suggest, to set by hand."""
    if not suggested:
        return ""
    lines = [f"#   {name}: role {role.value} ({why})" for name, (role, why) in suggested.items()]
    return ("# Roles the values suggest, not set (one record can switch them): set each one\n"
            "# that is right under its column.\n" + "\n".join(lines) + "\n")
