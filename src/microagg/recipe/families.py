"""How a step of each method family is applied: one adapter per family.

A recipe step names a family and a method of it (``METHODS``), the method's parameters (its
fields) and the options of the family's ``release`` that a recipe may set. This module is the
one table from a :class:`~microagg.release.methods.base.Family` to its :class:`Adapter`: the
options a step takes (each with a :class:`OptionKind` that the web app turns into a field),
whether the release takes a seed, and whether it is differentially private (its report is then
a :class:`~microagg.release.sidecar.PrivacyRecord`, with no figure computed from the raw
data). A method registered under an existing family appears in recipes and in the app's forms
with no other change; a new family needs one entry in :data:`ADAPTERS`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.schema import Schema
from microagg.errors import InputError, MicroaggError, ParameterError
from microagg.evaluation.release_record import release_record
from microagg.release.base import Release
from microagg.release.methods import Family, ReleaseMethod
from microagg.release.sidecar import (
    WITHHELD,
    InputFile,
    PrivacyRecord,
    ReleaseRecord,
    privacy_record,
)

__all__ = ["ADAPTERS", "Adapter", "Applied", "Option", "OptionKind", "adapter", "step_seed"]


class OptionKind(StrEnum):
    """What a family option holds, and so which field the web app shows for it."""

    COLUMNS = "columns"  # a list of column names
    FLAG = "flag"  # true or false
    BOUNDS = "bounds"  # column -> [low, high]
    COUNT = "count"  # a positive integer


@dataclass(frozen=True)
class Option:
    """A keyword of a family's ``release`` that a recipe step may set."""

    name: str
    kind: OptionKind
    help: str

    def check(self, value: Any) -> Any:
        """``value`` in the form ``release`` takes it; a :class:`ParameterError` naming the
        option otherwise."""
        if value is None:
            return None
        if self.kind is OptionKind.COLUMNS:
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list | tuple) or not all(isinstance(c, str) for c in items):
                raise ParameterError(self.name, f"is a list of column names, got {value!r}")
            return [c.strip() for c in items if c.strip()] or None
        if self.kind is OptionKind.FLAG:
            if not isinstance(value, bool):
                raise ParameterError(self.name, f"is true or false, got {value!r}")
            return value
        if self.kind is OptionKind.COUNT:
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not float(value).is_integer() or value < 1:
                raise ParameterError(self.name, f"is a positive integer, got {value!r}")
            return int(value)
        return _bounds(self.name, value)


def _bounds(name: str, value: Any) -> dict[str, tuple[float, float]]:
    if not isinstance(value, Mapping):
        raise ParameterError(name, f"maps each column to [low, high], got {value!r}")
    out = {}
    for column, pair in value.items():
        try:
            low, high = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise ParameterError(name, f"of '{column}' is [low, high], got {pair!r}") from None
        if not low < high:
            raise ParameterError(name, f"of '{column}' needs low < high, got [{low:g}, "
                                 f"{high:g}]")
        out[str(column)] = (low, high)
    return out


COLUMNS = Option("columns", OptionKind.COLUMNS, "The columns the step masks (default: the "
                 "schema's quasi-identifiers).")
DROP_INCOMPLETE = Option("drop_incomplete", OptionKind.FLAG,
                         "Drop the rows with a missing value first.")


@dataclass(frozen=True)
class Applied:
    """A step applied: the release (its table and typed report), its record as written
    beside a release, and the warnings the release raised (what the command line prints)."""

    release: Release[Any]
    record: ReleaseRecord | PrivacyRecord
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class Adapter:
    """How a step of one family is applied to a table (see the module docstring)."""

    family: Family
    options: tuple[Option, ...]
    seeded: bool  # the release takes `rng` (a method may say it does not: `randomized`)
    private: bool  # a differentially private release
    counts_records: bool = False  # the release takes `progress(records done)`
    # fixed keywords of the family's release in a recipe (e.g. a masking that changes
    # nothing is said, not refused: a step must not fail on some data only)
    fixed: tuple[tuple[str, Any], ...] = ()

    def option(self, name: str) -> Option:
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(name)

    def apply(self, method: ReleaseMethod, frame: pd.DataFrame, schema: Schema | None,
              options: Mapping[str, Any], seed: int | None, source: InputFile,
              records: Callable[[int], None] | None = None) -> Applied:
        """Release ``frame`` by ``method`` with the step's ``options``, the schema restricted
        to the frame's columns and, for a seeded family, ``seed``; the record names
        ``source`` as its input. ``records`` is called with the records processed so far, by
        the families that count them (``counts_records``)."""
        kwargs = {name: value for name, value in options.items() if value is not None}
        kwargs.update(self.fixed)
        if self.seeded and getattr(method, "randomized", True):
            kwargs["rng"] = seed
        if records is not None and self.counts_records:
            kwargs["progress"] = records
        present = (schema.select([c for c in schema.names if c in frame.columns])
                   if schema is not None else None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            release = method.release(frame, schema=present, **kwargs)
        said = tuple(dict.fromkeys(str(w.message) for w in caught))
        record: ReleaseRecord | PrivacyRecord
        if self.private:
            record = replace(privacy_record(method, release.report, None),
                             input=InputFile(source.name, withheld=WITHHELD))
        else:
            record = replace(measured_record(release, frame, method, present), input=source)
        return Applied(release, record, said)


ADAPTERS: dict[Family, Adapter] = {
    Family.K_ANONYMITY: Adapter(Family.K_ANONYMITY, (COLUMNS, DROP_INCOMPLETE),
                                seeded=False, private=False, counts_records=True),
    Family.T_CLOSENESS: Adapter(Family.T_CLOSENESS, (
        Option("quasi", OptionKind.COLUMNS, "The quasi-identifiers (default: the schema's)."),
        Option("confidential", OptionKind.COLUMNS,
               "The confidential attributes (default: the schema's)."),
        DROP_INCOMPLETE), seeded=False, private=False, counts_records=True),
    Family.MASKING: Adapter(Family.MASKING, (COLUMNS,), seeded=True, private=False,
                            fixed=(("refuse_unchanged", False),)),
    # seeded when the method is randomized (PRAM); recoding and suppression take no seed
    Family.KEYS: Adapter(Family.KEYS, (
        Option("keys", OptionKind.COLUMNS, "The key variables (default: the schema's "
               "quasi-identifiers)."),), seeded=True, private=False),
    Family.DIFFERENTIAL_PRIVACY: Adapter(Family.DIFFERENTIAL_PRIVACY, (
        Option("columns", OptionKind.COLUMNS, "The columns to protect (default: every "
               "non-identifier column); the others are dropped."),
        Option("carry", OptionKind.COLUMNS, "Columns copied unchanged: the table is then "
               "NOT differentially private."),
        Option("bounds", OptionKind.BOUNDS, "Domains of numeric columns, over the schema's."),
        Option("bounds_from_data", OptionKind.FLAG, "Take undeclared domains from the data: "
               "the release is then NOT differentially private."),
        Option("household_size", OptionKind.COUNT, "Protect one household of at most this "
               "many records (every mechanism at epsilon / size)."),
        DROP_INCOMPLETE), seeded=True, private=True, counts_records=True),
}
"""The adapter of every family (the only table of them)."""


def measured_record(release: Release[Any], frame: pd.DataFrame, method: ReleaseMethod,
                    schema: Schema | None) -> ReleaseRecord:
    """The record of a step that is not DP, with its risk and utility against the step's
    input; a measure that cannot be made on this data is said in ``skipped`` rather than
    stopping the recipe (those figures are the owner's, and whether they could be computed
    must not decide whether a release is made)."""
    try:
        return release_record(release, frame, method=method, schema=schema)
    except MicroaggError as exc:
        record = release_record(release, frame, method=method, schema=schema,
                                measure=False)
        return replace(record, skipped={"risk_and_utility": f"not measured: {exc}"})


def adapter(family: Family | str) -> Adapter:
    """The adapter of ``family`` (a :class:`Family` or its command name)."""
    try:
        return ADAPTERS[Family(family)]
    except (KeyError, ValueError):
        raise InputError(f"unknown family '{family}' (choose one of: "
                         f"{', '.join(f.value for f in ADAPTERS)})") from None


def step_seed(seed: int | None, index: int) -> int | None:
    """The seed of step ``index`` (from 0) of a recipe seeded with ``seed``: independent
    streams per step (numpy's ``SeedSequence`` with the step as spawn key), so undoing a step
    and adding another gives that step the same stream as before."""
    if seed is None:
        return None
    return int(np.random.SeedSequence(seed, spawn_key=(index,)).generate_state(1)[0])
