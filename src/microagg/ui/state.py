"""What one browser session of the web app holds: its temporary folder and the schema the
user edits.

Everything a session receives or writes (the uploaded table and taxonomies, the release and
its reports for download) lives in one temporary folder, removed when the session ends (and
when the server stops). The uploaded file is moved there, not copied, and read once: the
session holds the table in memory once, and each step's output beside it.
"""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError, SchemaError

if TYPE_CHECKING:
    from microagg.recipe.runner import RecipeRun
    from microagg.recipe.write import RunFiles

__all__ = ["ColumnEdit", "Reading", "Workspace", "begin_run", "build_schema", "default_role",
           "parse_domain", "read_upload", "write_downloads"]

_OPEN: set[str] = set()


def _remove_all() -> None:
    for folder in list(_OPEN):
        shutil.rmtree(folder, ignore_errors=True)


atexit.register(_remove_all)


@dataclass
class Workspace:
    """A session's temporary folder."""

    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="microagg-ui-")))

    def __post_init__(self) -> None:
        _OPEN.add(str(self.folder))

    def adopt(self, upload: str | Path, name: str, *, aside: str | None = None) -> Path:
        """Move the uploaded file ``upload`` into the folder as ``name`` (its base name,
        made safe), replacing an earlier upload of that name; with ``aside``, into that
        subfolder instead (a file that must never replace the table, such as control
        records: each upload in a subfolder of its own keeps every earlier one)."""
        target = self.place(name)
        if aside is not None:
            # a leading dot: no uploaded name is placed there (place() strips it)
            folder = self.folder / ("." + re.sub(r"[^\w\-]+", "_", aside))
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / target.name
        shutil.move(str(upload), target)
        return target

    def place(self, name: str) -> Path:
        """Where :meth:`adopt` keeps a file uploaded as ``name``."""
        return self.folder / (re.sub(r"[^\w.\-]+", "_", Path(name).name).lstrip(".")
                              or "upload")

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        _OPEN.discard(str(self.folder))


@dataclass(frozen=True)
class ColumnEdit:
    """What the user set for one column (``None``: as read off the data)."""

    role: str | None = None
    kind: str | None = None
    domain: str = ""
    missing: str = ""
    taxonomy: str | None = None


@dataclass(frozen=True)
class Reading:
    """How the user says an uploaded CSV file is written, as sdcApp's import asks: its own
    missing-value tokens (``na``, typed ``?, -99``), its ``separator`` (empty: read off
    the header; ``tab`` for a tab), whether its first row is a ``header`` and its
    ``decimal`` mark (``.`` or ``,``)."""

    na: str = ""
    separator: str = ""
    header: bool = True
    decimal: str = "."  # a CSV file's decimal mark and thousands separator (a recipe's)
    thousands: str = ""

    @classmethod
    def of(cls, read: Any) -> Reading:
        """How a recipe's ``read:`` (or a table's, as it was read: ``READ_KEY``) says the
        file is written; :meth:`options` gives it back. Raises
        :class:`~microagg.errors.InputError` for a missing-value token that holds a comma
        (the app's field separates the tokens by commas).

        Examples
        --------
        >>> read = {"na": ["?", "-99"], "separator": "\\t", "header": False}
        >>> Reading.of(read).options() == read
        True
        """
        read = dict(read or {})
        tokens = [str(t) for t in read.get("na") or ()]
        if any("," in t for t in tokens):
            raise InputError(f"the missing-value token '{next(t for t in tokens if ',' in t)}' "
                             "holds a comma, which the app cannot read: run the recipe with "
                             "microagg run")
        separator = str(read.get("separator") or "")
        return cls(na=", ".join(tokens), separator="tab" if separator == "\t" else separator,
                   header=read.get("header") is not False,
                   decimal=str(read.get("decimal") or "."),
                   thousands=str(read.get("thousands") or ""))

    def for_next_file(self, last: Reading | None) -> Reading:
        """How a new file is read: as the fields say when the user changed them since the
        last file was read (``last``), else with the separator, header and decimal mark
        read off the file; the missing-value tokens stay.

        Examples
        --------
        >>> semicolon = Reading(na="-9", separator=";", header=False, decimal=",")
        >>> semicolon.for_next_file(semicolon)
        Reading(na='-9', separator='', header=True, decimal='.', thousands='')
        >>> semicolon.for_next_file(Reading()) == semicolon
        True
        """
        return Reading(na=self.na) if self == last else self

    def tokens(self) -> list[str]:
        """The missing-value tokens typed, in order, once each.

        Examples
        --------
        >>> Reading(na="?, -99 ,?").tokens()
        ['?', '-99']
        """
        return list(dict.fromkeys(t.strip() for t in self.na.split(",") if t.strip()))

    def options(self) -> dict[str, Any]:
        """The options of :func:`~microagg.data.io.read_table` that differ from its
        defaults (a recipe's ``read:``)."""
        separator = self.separator.strip()
        if separator.lower() in ("tab", "\\t"):
            separator = "\t"
        out: dict[str, Any] = {}
        if self.tokens():
            out["na"] = self.tokens()
        if separator:
            out["separator"] = separator
        if not self.header:
            out["header"] = False
        if self.decimal.strip() not in ("", "."):
            out["decimal"] = self.decimal.strip()
        if self.thousands:
            out["thousands"] = self.thousands
        return out


def not_a_number(series: Any) -> str | None:
    """The first value of a text column that is not a number (its kind cannot be numeric),
    or ``None``.

    Examples
    --------
    >>> import pandas as pd
    >>> not_a_number(pd.Series(["12", None, "28107,0"])), not_a_number(pd.Series(["1.5"]))
    ('28107,0', None)
    """
    import pandas as pd

    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        return None
    values = series.dropna()
    wrong = pd.to_numeric(values.astype(str), errors="coerce").isna()
    return str(values[wrong].iloc[0]) if wrong.any() else None


def parse_domain(text: str, kind: Kind) -> tuple[Any, ...] | None:
    """A domain typed as ``0, 120`` (numeric) or ``low, mid, high`` (categories)."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        return None
    return tuple(items)  # Attribute checks and converts them for its kind


def default_role(name: str, kind: Kind = Kind.NUMERIC) -> Role:
    """The role a column starts with: what its name says (a function of the header, never of
    the values: :func:`~microagg.data.roles.named_role`), else quasi-identifier; a column
    named like a weight whose values are not all numbers is not masked (other), since a
    weight is numeric."""
    from microagg.data.roles import named_role

    named = named_role(name)
    if named is Role.WEIGHT and kind is not Kind.NUMERIC:
        return Role.OTHER
    return named or Role.QUASI


def build_schema(inferred: Schema, edits: dict[str, ColumnEdit]) -> Schema:
    """The schema of the table: kinds read off the data, roles by :func:`default_role`, and
    the user's edits over both (what the values suggest is shown beside, for the user to
    apply). A domain read off the data (a categorical column's) stays observed, and gives
    way to a taxonomy. A :class:`~microagg.errors.SchemaError` names the column at fault."""
    attributes = []
    for base in inferred:
        edit = edits.get(base.name, ColumnEdit())
        kind = Kind(edit.kind) if edit.kind else base.kind
        role = Role(edit.role) if edit.role else default_role(base.name, kind)
        kept = kind is base.kind and not edit.taxonomy  # the observed categories still apply
        observed = not edit.domain and base.observed and kept
        domain = parse_domain(edit.domain, kind) if edit.domain else (
            base.domain if kept else None)
        try:
            attributes.append(Attribute(
                name=base.name, role=role, kind=kind, domain=domain,
                taxonomy=Path(edit.taxonomy) if edit.taxonomy else None,
                missing=edit.missing.strip() or None,
                inferred=base.inferred and not edit.kind,  # a kind the user set is declared
                observed=observed))
        except SchemaError as exc:
            raise SchemaError(str(exc)) from None
    return Schema(tuple(attributes))


def write_downloads(run: RecipeRun, source: Path, fmt: str, kind: str) -> RunFiles:
    """The files the download tab offers for ``run`` of the table uploaded as ``source``,
    written beside it in the session's folder as ``SOURCE_protected.FMT`` (``fmt``: csv,
    parquet …) with the HTML report of ``kind``: :attr:`RunFiles.release` go with the release
    (public figures only after a DP step), and after one the owner's report apart."""
    from microagg.recipe.write import owner_report_path, write_run

    output = source.with_name(f"{source.stem}_protected.{fmt}")
    html = output.with_name(output.name + ".html")
    owner = owner_report_path(output) if run.private else None
    return write_run(run, output, html=html, kind=kind, sources=[source], owner=owner)[0]


def begin_run(source: Path | None, frame: Any, schema: Schema | None, seed: int | None,
              missing: str) -> RecipeRun:
    """The run the steps tab starts on the uploaded table ``frame`` (read from ``source``)
    with the schema as edited, the seed the user gave (``None``: fresh randomness, the
    default) and what a missing key matches in the risk measures. A CSV upload is read again
    with its categorical columns as text, as the command line reads them for a DP
    release, so that how a column is read never follows one of its cells. How the upload
    was read (its missing-value tokens, separator, header) is the recipe's ``read:``, so
    that ``microagg run`` reads the file the same way."""
    from microagg.data.io import READ_KEY, declared_text, read_table, table_format
    from microagg.options import MissingValues, parse
    from microagg.recipe.model import Recipe
    from microagg.recipe.runner import RecipeRun

    read = dict(getattr(frame, "attrs", {}).get(READ_KEY) or {})
    text = declared_text(schema)
    if source is not None and text and table_format(source) in ("csv", "xlsx"):
        # the columns declared categorical, read as the text they hold (01 stays 01)
        frame = read_table(source, text=text, **read)
    return RecipeRun.start(Recipe(input=source, schema=schema, seed=seed, read=read,
                                  missing=parse(MissingValues, missing, "`missing`")),
                           frame, source=source)


def read_upload(path: Path, reading: Reading | None = None) -> tuple[Any, Schema, list[str]]:
    """The uploaded table, read as ``reading`` says (a CSV file's missing-value tokens,
    separator and header), its kinds read off the data and what each column's values say
    about how it was read (mostly numbers with some text, numbers in another dialect): the
    command line refuses such a column until its kind is declared; the app reads it as
    categories and says so, so that a column no step reads never stops the work."""
    from microagg.data.io import read_table, table_format
    from microagg.errors import MicroaggError

    options = (reading or Reading()).options()
    if options and table_format(path) != "csv":
        raise InputError(f"{path.name}: missing-value tokens, a separator and a file "
                         "without a header apply to CSV files only: clear them")
    frame = read_table(path, **options)
    notes = []
    for name in frame.columns:
        try:
            Schema.infer(frame[[name]])
        except MicroaggError as exc:
            notes.append(f"{exc} (read as categories until its kind is set)")
        except (TypeError, ValueError, UnicodeError):  # bytes, nested values …
            notes.append(f"column '{name}' holds values that are not text or numbers "
                         "(read as categories)")
    return frame, Schema.infer(frame, strict=False), notes
