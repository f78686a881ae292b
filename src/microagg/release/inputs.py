"""Which columns a release masks, and the inputs of a differentially private release.

Both families follow one rule: *what is written is what is protected*.

* k-anonymous releases mask ``columns`` if named, else the schema's quasi-identifiers, else
  (no schema) every non-identifier column; whatever else is written is listed in the report as
  released unchanged.
* DP releases protect ``columns`` if named, else every non-identifier column. Identifiers are
  dropped; a column that is neither protected nor named in ``carry`` is dropped too; carried
  columns are written unchanged and make the release *not* DP (the report says so). Domains
  never come from the data: numeric bounds from the schema or ``bounds``, categories from the
  schema's list or taxonomy, unless ``bounds_from_data`` (the papers' rule; not DP).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.distance import Categorical
from microagg.data.roles import NEVER_MASKED
from microagg.data.schema import Kind, Role, Schema
from microagg.data.table import Table, encode, require_rows_and_columns
from microagg.data.taxonomy import CategoryMetric
from microagg.errors import InputError, PrivacyError
from microagg.release.dp.categorical import category_sensitivity
from microagg.release.dp.cells import DIALECT_KEY, declared_cells

__all__ = ["DPInput", "check_clamp", "data_bounds", "dp_columns", "masked_columns",
           "prepare_dp", "refuse_suspects", "require_known", "resolve_schema"]


MISSING_RULE = ("missing values are read as {value} before the mechanism: a public rule applied "
                "record by record, so neighbouring data sets stay neighbours and epsilon is "
                "unchanged; the release does not say which values were missing")


def resolve_schema(frame: pd.DataFrame, schema: Schema | None,
                   roles: Mapping[str, Role | str] | None = None, *,
                   strict: bool = True) -> tuple[Schema, bool]:
    """The schema a release works under, completed with the frame's undeclared columns (read
    ``strict`` or not: :meth:`~microagg.data.schema.Schema.infer`) and with ``roles`` (column
    name -> role) applied over it, and whether the user declared a schema (whose
    quasi-identifiers then choose the masked columns)."""
    declared = schema is not None
    completed = (Schema.infer(frame, strict=strict) if schema is None
                 else schema).complete(frame, strict=strict)
    if roles:
        for name, role in roles.items():
            require_known(completed, [name], _role_option(role), identifiers=True)
        completed = completed.with_roles(roles)
    return completed, declared


def _role_option(role: Role | str) -> str:
    """The family option that gives columns ``role`` (```weight``` …), as a message names
    it; ```roles``` for a role no option gives."""
    from microagg.release.family_options import FAMILY_OPTIONS

    named = [o.name for o in FAMILY_OPTIONS if o.role is not None and o.role.value == str(
        role.value if isinstance(role, Role) else role).strip().lower()]
    return f"`{named[0]}`" if named else "`roles`"


def refuse_suspects(frame: pd.DataFrame, chosen: Sequence[str],
                    roles: Mapping[str, Role | str] | None, *, values: bool = True) -> None:
    """Refuse to mask by default a column suspected to be an identifier, a sampling weight
    or a household identifier (:mod:`microagg.data.roles`) whose role was not given;
    ``values`` False judges by the names alone (a DP release: the refusal must not depend
    on the records)."""
    from microagg.data.roles import suspect

    for name in chosen:
        if roles and name in roles:
            continue
        found = suspect(name, frame[name], values=values)
        if found is not None:
            role, reason = found
            raise InputError(
                f"column '{name}' would be masked, but it may be {_ROLE_WORDS[role]} "
                f"({reason}): declare its role (`roles`, or a schema: role {role.value}; "
                "`microagg schema IN -o S.yaml` writes the roles read off the data to edit), "
                "or name the columns to mask with `columns`")


_ROLE_WORDS = {Role.IDENTIFIER: "an identifier", Role.WEIGHT: "a sampling weight",
               Role.HOUSEHOLD: "a household identifier", Role.STRATUM: "a stratum"}


def require_known(schema: Schema, names: Sequence[str], option: str, *,
                  identifiers: bool = False) -> None:
    """Refuse a name that is not a column and, unless ``identifiers``, a column a release
    never masks (identifiers are dropped; weights, strata and households are kept as they
    are), and a column named twice (a slip that a list would otherwise hide)."""
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise InputError(f"{option} names column '{twice}' twice")
    for name in names:
        if name not in schema:
            raise InputError(f"{option}: unknown column '{name}'{_comma_hint(schema, name)} "
                             f"(the data has: {_listed(schema.names)})")
        role = schema[name].role
        if identifiers:
            continue
        if role is Role.IDENTIFIER:
            raise InputError(f"{option}: column '{name}' is an identifier; identifiers are "
                             "dropped from every release")
        if role in NEVER_MASKED:
            raise InputError(f"{option}: column '{name}' is the {role.value} column, which is "
                             "never masked")


def _listed(names: Sequence[str]) -> str:
    """Column names joined by commas, a name that holds one between quotes."""
    return ", ".join(f"'{n}'" if "," in n else n for n in names)


def _comma_hint(schema: Schema, name: str) -> str:
    """A hint when ``name`` is a piece of a column name that holds a comma (a list split on
    its commas)."""
    for known in schema.names:
        if "," in known and name in (part.strip() for part in known.split(",")):
            return (f"; did you mean '{known}'? On the command line a name that holds a comma "
                    'is written in double quotes (--columns \'"a, b",c\')')
    return ""


def _numeric_first(schema: Schema, names: Sequence[str]) -> list[str]:
    """Numeric columns first (the order of the label matrix of univariate methods)."""
    return ([c for c in names if schema[c].is_numeric]
            + [c for c in names if schema[c].is_categorical])


def check_clamp(schema: Schema, columns: Sequence[str]) -> None:
    """Refuse ``clamp`` when none of the masked numeric ``columns`` declares a domain to clamp
    into (the option would do nothing)."""
    numeric = [c for c in columns if schema[c].is_numeric]
    if not any(schema[c].bounds is not None for c in numeric):
        raise InputError("`clamp` clamps values into their declared domains, and none of the "
                         "masked numeric columns declares one (in a schema)")


def masked_columns(schema: Schema, columns: Sequence[str] | None, *, declared: bool,
                   frame: pd.DataFrame | None = None,
                   roles: Mapping[str, Role | str] | None = None) -> list[str]:
    """The columns a k-anonymous release masks, numeric first: ``columns``, else the schema's
    quasi-identifiers when the schema was ``declared`` by the user (one that declares none is
    refused rather than read as "mask everything"), else every column whose role may be
    masked (without a schema nothing may be left unmasked by default). In that last case a
    column of ``frame`` suspected to be an identifier or a weight, whose role ``roles`` does
    not give, is refused (:func:`refuse_suspects`)."""
    if columns:
        require_known(schema, columns, "`columns`")
        chosen = list(dict.fromkeys(columns))
    elif declared:
        if not schema.quasi_identifiers:
            raise InputError("the schema declares no quasi-identifier: declare them (role "
                             "quasi) or name the columns to mask with `columns`")
        chosen = list(schema.quasi_identifiers)
    else:
        chosen = [a.name for a in schema if a.role not in NEVER_MASKED]
        if frame is not None:
            refuse_suspects(frame, chosen, roles)
    if not chosen:
        raise InputError("no column to microaggregate: name them with `columns` or declare "
                         "quasi-identifiers in the schema")
    return _numeric_first(schema, chosen)


def dp_columns(schema: Schema, columns: Sequence[str] | None, carry: Sequence[str]
               ) -> tuple[list[str], list[str]]:
    """(protected columns numeric first, carried columns) of a DP release."""
    carry = list(dict.fromkeys(carry))
    require_known(schema, carry, "`carry`")
    if columns:
        require_known(schema, columns, "`columns`")
        protected = list(dict.fromkeys(columns))
    else:
        protected = [a.name for a in schema
                     if a.role not in NEVER_MASKED and a.name not in carry]
    both = [c for c in carry if c in protected]
    if both:
        raise InputError(f"column '{both[0]}' is both protected (`columns`) and carried "
                         "(`carry`)")
    if not protected:
        raise InputError("no column to protect: name them with `columns`")
    return _numeric_first(schema, protected), carry


def data_bounds(values: np.ndarray) -> tuple[float, float]:
    """The papers' rule (000 §5.1, 001 §4.1): [0, 1.5 max] for non-negative values; in
    general [min(0, 1.5 min), max(0, 1.5 max)], widened to width 1 if degenerate."""
    lo = min(0.0, 1.5 * float(values.min()))
    hi = max(0.0, 1.5 * float(values.max()))
    return (lo, hi) if hi > lo else (lo, lo + 1.0)


@dataclass(frozen=True, eq=False)
class DPInput:
    """A table prepared for a DP release: clamped numeric values with their bounds, the
    categorical part, and what the report and the owner must be told."""

    table: Table
    numeric: list[str]
    categorical: list[str]
    carried: list[str]
    X: np.ndarray
    lows: np.ndarray
    highs: np.ndarray
    domains: dict[str, dict[str, Any]]
    part: Categorical
    from_data: list[str]  # columns whose domain was read off the data
    dropped_rows: int  # for the owner only
    dropped_columns: list[str]  # not protected, not carried (identifiers included)
    # rows with a missing value where none is declared may be dropped (drop_incomplete on a
    # column without `missing:`): their number is then published; known from the options
    drops_incomplete: bool = False
    # values clamped into a domain clipped at DP quantiles, per column: for the owner only
    clipped: Mapping[str, int] = field(default_factory=dict)
    # missing values read as the schema's declared value, per column: for the owner only
    filled: Mapping[str, int] = field(default_factory=dict)
    # public warnings about how the input was prepared (e.g. a clipped bound chosen with
    # too little epsilon), for the privacy report
    warnings: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return self.table.n_rows

    @property
    def columns(self) -> list[str]:
        return [*self.numeric, *self.categorical]

    @property
    def widths(self) -> np.ndarray:
        return self.highs - self.lows

    @property
    def clamped(self) -> Mapping[str, int]:
        """Values clamped into the declared domain, per column: for the owner only."""
        return self.table.clamped


def _with_domains(schema: Schema, domains: Mapping[str, tuple[Any, ...]]) -> Schema:
    return Schema(tuple(replace(a, domain=tuple(domains[a.name])) if a.name in domains else a
                        for a in schema))


def _check_bounds(schema: Schema, bounds: Mapping[str, tuple[float, float]],
                  protected: Sequence[str], carried: Sequence[str]) -> None:
    """Refuse ``bounds`` of a column that is unknown, not numeric or not protected."""
    for name in bounds:
        if name not in schema:
            raise InputError(f"`bounds` names unknown column '{name}'")
        if not schema[name].is_numeric:
            raise InputError(f"`bounds`: column '{name}' is {schema[name].kind}; bounds are "
                             "for numeric columns (categories take their list or taxonomy)")
        if name not in protected:
            raise InputError(f"`bounds` names column '{name}', which this release does not "
                             "protect (it is " + ("carried unchanged)" if name in carried
                                                  else "dropped)"))


def _undeclared(schema: Schema, protected: Sequence[str], bounds_from_data: bool
                ) -> list[str]:
    """The protected columns without a declared domain; refused unless ``bounds_from_data``.
    Categories read off the table (a Parquet, SPSS or Stata categorical column's, or a
    schema's ``observed`` list) are not a declared domain: they may list what the data hold."""
    undeclared = [c for c in protected
                  if (schema[c].domain is None or schema[c].observed)
                  and (schema[c].is_numeric or schema[c].taxonomy is None)]
    if undeclared and not bounds_from_data:
        name = undeclared[0]
        how = (f"declare it in the schema or pass `bounds` {name}=LO:HI"
               if schema[name].is_numeric else
               "check the categories observed in the data against the codebook and list "
               "them under `domain` (or give a taxonomy) in the schema: a category seen only "
               "in the data would reveal that someone has it" if schema[name].observed else
               "list its categories (or a taxonomy) in the schema: a category seen only in "
               "the data would reveal that someone has it")
        raise PrivacyError(
            f"column '{name}' has no declared domain; differential privacy needs a domain "
            f"that does not come from the data: {how} (`bounds_from_data` reproduces the "
            "papers but is not DP)")
    return undeclared


def _from_data(sub: pd.DataFrame, schema: Schema, undeclared: Sequence[str],
               drop_incomplete: bool) -> tuple[Schema, dict[str, str]]:
    """``schema`` with the domains of the ``undeclared`` columns read off the data (the
    papers' rule, not DP), and the source of each of those domains."""
    observed = encode(sub[undeclared], Schema.infer(sub[undeclared]),
                      drop_incomplete=drop_incomplete)
    derived: dict[str, tuple[Any, ...]] = {}
    sources: dict[str, str] = {}
    for c in undeclared:
        if schema[c].is_numeric:
            derived[c] = data_bounds(observed.numeric_matrix([c])[:, 0])
            sources[c] = "data (1.5 x max rule; not differentially private)"
        else:
            derived[c] = observed.categories[c]
            sources[c] = "data (observed categories; not differentially private)"
    return _with_domains(schema, derived), sources


def _read_missing(sub: pd.DataFrame, schema: Schema, protected: Sequence[str],
                  drop_incomplete: bool, drops_rows: bool = True,
                  dialect: Mapping[str, Any] | None = None
                  ) -> tuple[pd.DataFrame, dict[str, int]]:
    """``sub`` with each protected column read cell by cell as its declared kind says
    (:mod:`microagg.release.dp.cells`: how a cell is read never follows another cell) and its
    missing cells read as the value its schema declares (``missing:``), and the number
    filled per column (for the owner only).

    The rule maps each record on its own to a record of the declared domain, and it is
    public; so two neighbouring data sets (one record changed) stay neighbours after it and
    the release's ε is unchanged (the mechanism never sees which cells were missing). A
    protected column with a missing value and no declared ``missing`` is refused unless
    ``drop_incomplete``: a missing cell passed through would tell who has one."""
    filled: dict[str, int] = {}
    out = sub.copy()
    for name in protected:
        cells = declared_cells(sub[name], schema[name], dialect)
        mask = cells.isna().to_numpy()
        value = schema[name].missing
        if mask.any() and value is None and not drop_incomplete:
            raise undeclared_missing(name, int(np.flatnonzero(mask)[0]) + 1,
                                     schema[name].is_numeric,
                                     *(() if drops_rows else (NO_DROPPING,)))
        if mask.any() and value is not None:
            cells = cells.copy()
            cells[mask] = float(value) if schema[name].is_numeric else str(value)
            filled[name] = int(mask.sum())
        out[name] = cells
    return out, filled


NO_DROPPING = "as the cluster path drops no rows"


def undeclared_missing(name: str, row: int | str, numeric: bool,
                       remedy: str = "or drop incomplete rows (`drop_incomplete`)"
                       ) -> PrivacyError:
    """The refusal of a missing value in a protected column whose schema declares no value
    for it (``row``: its row number, or where it is)."""
    what = "a value of its domain" if numeric else "one of its declared categories"
    return PrivacyError(
        f"column '{name}' has a missing value in row {row}; a differentially private "
        f"release needs missingness inside the declared domain: declare the value "
        f"missing cells are read as in the schema (missing: {what}), {remedy}")


def _shown(value: Any) -> str:
    """A declared value as the report writes it (a whole number without '.0')."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _numeric_block(table: Table, schema: Schema, numeric: Sequence[str]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The clamped values of the ``numeric`` columns and the bounds of their domains."""
    X = table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0))
    bounds = [schema[c].bounds for c in numeric]
    if any(b is None for b in bounds):  # prepare_dp declares every domain first
        raise AssertionError("a protected numeric column without a domain")
    lows = np.array([b[0] for b in bounds if b is not None])
    highs = np.array([b[1] for b in bounds if b is not None])
    return X, lows, highs


def _categorical_domain(schema: Schema, name: str, metric: CategoryMetric, source: str
                        ) -> dict[str, Any]:
    """How the report states the domain of the categorical column ``name``."""
    taxonomy = schema[name].taxonomy is not None
    return {"categories": metric.n_leaves, "concepts": metric.n_concepts,
            "structure": "taxonomy" if taxonomy
            else ("rank order" if metric.ordinal else "flat taxonomy"),
            "source": source, "diameter": category_sensitivity(metric)}


def _domains(schema: Schema, numeric: Sequence[str], lows: np.ndarray, highs: np.ndarray,
             categorical: Sequence[str], part: Categorical, sources: Mapping[str, str]
             ) -> dict[str, dict[str, Any]]:
    """The domain of every protected column as the report states it: the ``numeric`` ones
    first, then the ``categorical`` ones (with their metrics in ``part``)."""
    domains: dict[str, dict[str, Any]] = {
        c: {"low": float(lows[j]), "high": float(highs[j]), "source": sources[c]}
        for j, c in enumerate(numeric)}
    for c, metric in zip(categorical, part.metrics, strict=True):
        domains[c] = _categorical_domain(schema, c, metric, sources[c])
    return domains


def prepare_dp(frame: pd.DataFrame, *, schema: Schema | None, columns: Sequence[str] | None,
               carry: Sequence[str] = (), bounds: Mapping[str, tuple[float, float]] | None,
               bounds_from_data: bool, drop_incomplete: bool = False,
               roles: Mapping[str, Role | str] | None = None,
               drops_rows: bool = True) -> DPInput:
    """Columns, declared domains (never silently from the data) and clamped values of a DP
    release. Only the protected and carried columns are read. Without a schema or named
    columns, a column that looks like an identifier or a weight is refused until ``roles``
    gives its role; weights, strata and households are not protected, so they are dropped
    unless carried. ``drops_rows`` False: the caller cannot drop incomplete rows (the cluster
    path), and a refused missing value says so instead of offering ``drop_incomplete``."""
    require_rows_and_columns(frame)
    given = set(schema.names) if schema is not None else set()
    # a column the release drops is not read: its values never decide whether it is made
    schema, declared = resolve_schema(frame, schema, roles, strict=False)
    protected, carried = dp_columns(schema, columns, carry)
    # a column given bounds is declared numeric by them (each cell read as a number),
    # unless a schema declared its kind
    declared_numeric = {c for c in bounds or {}
                        if c in schema and (c not in given or schema[c].inferred)}
    schema = Schema(tuple(replace(a, kind=Kind.NUMERIC, domain=None, observed=False)
                          if a.name in declared_numeric and not a.is_numeric else a
                          for a in schema))
    # a carried column is copied: read as leniently as a dropped one, cell by cell below
    read = [c for c in protected if c not in given | declared_numeric]
    if read:  # what the release reads is read as every release reads it
        Schema.infer(frame[read])
    if not (declared or columns):
        refuse_suspects(frame, protected, roles, values=False)
    bounds = dict(bounds or {})
    _check_bounds(schema, bounds, protected, carried)
    schema = _with_domains(schema, bounds)
    kept = [*protected, *carried]
    from microagg.data.formats import as_declared

    sub = as_declared(frame[kept], schema)  # labelled SPSS/Stata columns as declared
    schema = schema.select(kept).with_roles({c: Role.QUASI for c in protected})
    undeclared = _undeclared(schema, protected, bounds_from_data)
    sub, filled = _read_missing(sub, schema, protected, drop_incomplete, drops_rows,
                                frame.attrs.get(DIALECT_KEY))
    for name in carried:  # copied, a number read cell by cell (in the file's dialect)
        if schema[name].is_numeric:
            sub[name] = declared_cells(sub[name], schema[name], frame.attrs.get(DIALECT_KEY))
    sources = {c: ("--bounds" if c in bounds else "schema") for c in protected}
    if undeclared:
        schema, derived = _from_data(sub, schema, undeclared, drop_incomplete)
        sources.update(derived)
    # protected missing values are filled (or refused) above; a carried column is copied,
    # missing values and all
    table = encode(sub, schema, drop_incomplete=drop_incomplete, clamp=True, missing=True)
    numeric = [c for c in protected if schema[c].is_numeric]
    categorical = [c for c in protected if schema[c].is_categorical]
    X, lows, highs = _numeric_block(table, schema, numeric)
    part = Categorical(np.column_stack([table.code_column(c) for c in categorical])
                       if categorical else np.empty((table.n_rows, 0), dtype=np.int64),
                       tuple(table.metric(c) for c in categorical))
    domains = _domains(schema, numeric, lows, highs, categorical, part, sources)
    for c in protected:
        if schema[c].missing is not None:
            domains[c]["missing"] = MISSING_RULE.format(value=_shown(schema[c].missing))
    dropped_columns = [str(c) for c in frame.columns if c not in kept]
    return DPInput(table=table, numeric=numeric, categorical=categorical, carried=carried,
                   X=X, lows=lows, highs=highs, domains=domains, part=part,
                   from_data=undeclared, dropped_rows=len(frame) - table.n_rows,
                   drops_incomplete=drop_incomplete and (bool(carried) or any(
                       schema[c].missing is None for c in protected)),
                   dropped_columns=dropped_columns, filled=filled)
