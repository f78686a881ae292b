"""The methods for categorical keys (global recoding, local suppression, PRAM): the family's
pipeline around each method's own step.

A statistical office protects a file on its *key variables* (sex, region, occupation, age
group …): it recodes them, suppresses the values that still single a record out, perturbs a
variable or two, and measures the frequencies of the keys again (Hundepool et al. 2012, ch.
3; sdcMicro's ``globalRecode``, ``localSuppression`` and ``pram``). Each method is one
object of this family and has its own command (``microagg recode | suppress | pram``). The
pipeline (:meth:`KeyMethod.release`) holds what they share:

* the keys: ``keys`` if named, else the schema's quasi-identifiers when the schema was
  declared (a method may choose others: recoding measures the columns it recodes); a key
  may not be an identifier, a weight, a stratum or a household column;
* the survey design of the schema (release/design.py): each stratum is protected on its own
  by the methods that say so, the weight and the household column are written unchanged;
* the written table: the input's rows in the input's order, identifiers dropped, the
  changed columns replaced and every other column as it was (the report lists them);
* the report: the sample frequencies of the keys before and after, a missing value matching
  any value (:mod:`microagg.release.reports.key_reports`).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.core.frequencies import all_missing_note
from microagg.core.rng import make_rng
from microagg.data.schema import Role, Schema
from microagg.data.table import encode, require_rows_and_columns
from microagg.errors import InputError, ParameterError
from microagg.release.base import Release
from microagg.release.design import Design
from microagg.release.inputs import require_known, resolve_schema
from microagg.release.methods.base import Family, ReleaseMethod
from microagg.release.reports.key_reports import RISK_KS, KeyReport, KeyRisk, key_risk

__all__ = ["KeyData", "KeyMethod", "KeyStep", "column_names", "with_missing"]


@dataclass(frozen=True, eq=False)
class KeyData:
    """What a method's step works on: the input, its schema (roles applied), the keys, and
    the survey design (stratum of every row, weights)."""

    frame: pd.DataFrame
    schema: Schema
    keys: list[str]
    design: Design
    stratum_names: list[str]  # "col=value, ..." of each stratum, in stratum order

    def strata(self) -> list[tuple[np.ndarray, str | None]]:
        """The rows of each stratum with its name; the whole table when there is none."""
        if self.design.strata is None:
            return [(np.arange(len(self.frame)), None)]
        return [(np.flatnonzero(self.design.strata == s), name)
                for s, name in enumerate(self.stratum_names)]


@dataclass(frozen=True, eq=False)
class KeyStep:
    """A method's step: the new values of the columns it changed, its own report fields
    and its notes."""

    columns: dict[str, pd.Series]
    fields: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class KeyMethod(ReleaseMethod):
    """A method for categorical keys: the family's pipeline (:meth:`release`) around the
    method's own step (:meth:`protect`); ``command`` is its command."""

    family: ClassVar[Family] = Family.KEYS
    command: ClassVar[str]
    report_type: ClassVar[type[KeyReport]]
    randomized: ClassVar[bool] = False  # takes `rng`; its report says whether it was seeded
    # reads the sampling weights (checked, one rule for every command that reads them)
    reads_weights: ClassVar[bool] = True

    def protect(self, data: KeyData, rng: np.random.Generator) -> KeyStep:
        """The method's step on ``data``."""
        raise NotImplementedError

    def default_keys(self, schema: Schema, declared: bool) -> list[str]:
        """The keys when none are named: the quasi-identifiers of a declared schema."""
        return list(schema.quasi_identifiers) if declared else []

    def smallest_stratum(self) -> int:
        """The fewest records a stratum may hold."""
        return 1

    def risk_ks(self) -> tuple[int, ...]:
        """The k for which the report counts the records below k."""
        return RISK_KS

    def verify(self, written: pd.DataFrame, data: KeyData, after: KeyRisk
               ) -> dict[str, Any]:
        """Report fields measured on the table as written, whose frequencies of the keys
        are ``after`` (none by default)."""
        return {}

    def release(self, frame: pd.DataFrame, *, keys: Sequence[str] | None = None,
                schema: Schema | None = None, roles: Mapping[str, Role | str] | None = None,
                rng: np.random.Generator | int | None = None) -> Release[KeyReport]:
        """Protect the ``keys`` of ``frame`` (default: the declared schema's
        quasi-identifiers) by the method's step; ``roles`` (column -> role) apply over the
        schema; an integer ``rng`` is a seed (the report says so), without one OS entropy
        (randomized methods only). The rows keep their order; identifiers are dropped."""
        if rng is not None and not self.randomized:
            raise ParameterError("rng", f"applies to randomized methods, not {self.name}, "
                                 "which is deterministic")
        require_rows_and_columns(frame)
        # once the columns are named, an undeclared column is read leniently: text among
        # the numbers of a column no step reads stops nothing
        schema, declared = resolve_schema(frame, schema, roles,
                                          strict=not (keys or self.named_columns()))
        chosen = (list(dict.fromkeys(keys)) if keys
                  else self.default_keys(schema, declared))
        if not chosen:
            raise InputError("name the key variables with `keys` (or declare "
                             "quasi-identifiers in a schema)")
        require_known(schema, chosen, "`keys`")
        data = KeyData(frame, schema, chosen, *_design(frame, schema, self.smallest_stratum(),
                                                      weights=self.reads_weights))
        step = self.protect(data, make_rng(rng))
        identifiers = [a.name for a in schema if a.role is Role.IDENTIFIER]
        written = frame.drop(columns=identifiers).copy()
        for name, values in step.columns.items():
            written[name] = values
        strata = data.design.strata
        after = key_risk(written, chosen, self.risk_ks(), strata)
        report = self.report_type(
            method=self.name, keys=chosen, changed=list(step.columns), records=len(frame),
            identifiers_dropped=identifiers,
            released_unchanged=[str(c) for c in written.columns if c not in step.columns],
            before=key_risk(frame, chosen, self.risk_ks(), strata),
            after=after,
            parameters=plain_parameters(self), weight=data.design.weight,
            strata=list(data.design.strata_columns), n_strata=data.design.n_strata,
            notes=[*step.notes, *_design_notes(data.design),
                   *([all_missing_note(after.all_missing)] if after.all_missing else [])],
            **{**step.fields, **self.verify(written, data, after), **self._seeded(rng)})
        return Release(written, np.arange(len(frame), dtype=np.int64), report)

    def _seeded(self, rng: Any) -> dict[str, Any]:
        """A randomized method's report says whether its draws were seeded."""
        return {"seeded": isinstance(rng, int | np.integer)} if self.randomized else {}


def plain_parameters(method: ReleaseMethod) -> dict[str, Any]:
    """A method's parameters as JSON holds them (an option's value, not the enum member)."""
    return {k: v.value if isinstance(v, StrEnum) else v for k, v in method.parameters().items()}


def _design(frame: pd.DataFrame, schema: Schema, least: int, *, weights: bool = True
            ) -> tuple[Design, list[str]]:
    """The survey design of the schema (its checks: one positive weight per row, every
    stratum of at least ``least`` records) and the name of each stratum; without
    ``weights`` the weight column is named but not read."""
    roles = (Role.WEIGHT, Role.STRATUM) if weights else (Role.STRATUM,)
    columns = [a.name for a in schema if a.role in roles]
    households = schema.names_with_role(Role.HOUSEHOLD)
    declared = next(iter(schema.names_with_role(Role.WEIGHT)), None)
    if not columns:
        return Design(declared, None, (), None, households), []
    part = frame[columns]
    design = Design.of(part, encode(part, schema.select(columns), missing=True), least)
    design = Design(design.weight or declared, design.weights, design.strata_columns,
                    design.strata, households)
    names = []
    if design.strata is not None:
        for s in range(design.n_strata):
            first = int(np.flatnonzero(design.strata == s)[0])
            names.append(", ".join(f"{c}={frame[c].iloc[first]}"
                                   for c in design.strata_columns))
    return design, names


def _design_notes(design: Design) -> list[str]:
    notes = []
    if design.weight is not None:
        notes.append(f"the weight '{design.weight}' is written unchanged")
    if design.households:
        notes.append(f"the household column {', '.join(design.households)} is written "
                     "unchanged")
    return notes


def with_missing(series: pd.Series, missing: np.ndarray) -> pd.Series:
    """``series`` with the values at ``missing`` made missing; integer and boolean columns
    become their nullable types, so the other values are written as they were."""
    if not missing.any():
        return series
    dtype = series.dtype
    if not isinstance(dtype, pd.CategoricalDtype):
        if pd.api.types.is_bool_dtype(dtype):
            series = series.astype("boolean")
        elif pd.api.types.is_integer_dtype(dtype) and isinstance(dtype, np.dtype):
            nullable: Any = f"{'U' if dtype.kind == 'u' else ''}Int{dtype.itemsize * 8}"
            series = series.astype(nullable)
    return series.mask(pd.Series(missing, index=series.index))


def column_names(name: str, value: Any) -> tuple[str, ...]:
    """Column names given as a sequence, or as text separated by commas (a name holding a
    comma in double quotes, as in a CSV header)."""
    if isinstance(value, str):
        try:
            parts = next(csv.reader([value], skipinitialspace=True), [])
        except csv.Error as exc:
            raise ParameterError(name, f"cannot be read as comma-separated names: {exc}"
                                 ) from None
    elif isinstance(value, Sequence):
        parts = [str(v) for v in value]
    else:
        raise ParameterError(name, f"must be column names, got {value!r}")
    names = tuple(p.strip() for p in parts if str(p).strip())
    if not names:
        raise ParameterError(name, "needs at least one column name")
    if len(set(names)) != len(names):
        raise ParameterError(name, "names a column twice")
    return names
