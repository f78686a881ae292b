"""How a step of each method family is applied: one adapter per family.

A recipe step names a family and a method of it (``METHODS``), the method's parameters (its
fields) and the options of the family's ``release`` that a recipe may set. This module is the
one table from a :class:`~microagg.release.methods.base.Family` to its :class:`Adapter`: the
options a step takes (their declarations, :mod:`microagg.release.family_options`, each with
an :class:`OptionKind` that the web app turns into a field),
whether the release takes a seed, and whether it is differentially private (its report is then
a :class:`~microagg.release.reports.sidecar.PrivacyRecord`, with no figure computed from the raw
data). A method registered under an existing family appears in recipes and in the app's forms
with no other change; a new family needs one entry in :data:`ADAPTERS`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.schema import Schema
from microagg.errors import InputError, MicroaggError
from microagg.evaluation.release_record import release_record
from microagg.release.base import Release
from microagg.release.family_options import FamilyOption as Option
from microagg.release.family_options import OptionKind, step_options
from microagg.release.methods import Family, ReleaseMethod
from microagg.release.reports.sidecar import (
    WITHHELD,
    InputFile,
    PrivacyRecord,
    ReleaseRecord,
    privacy_record,
)

__all__ = ["ADAPTERS", "Adapter", "Applied", "Option", "OptionKind", "adapter", "step_seed"]


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
    Family.K_ANONYMITY: Adapter(Family.K_ANONYMITY, step_options(Family.K_ANONYMITY),
                                seeded=False, private=False, counts_records=True),
    Family.T_CLOSENESS: Adapter(Family.T_CLOSENESS, step_options(Family.T_CLOSENESS),
                                seeded=False, private=False, counts_records=True),
    Family.MASKING: Adapter(Family.MASKING, step_options(Family.MASKING), seeded=True,
                            private=False, fixed=(("refuse_unchanged", False),)),
    # seeded when the method is randomized (PRAM); recoding and suppression take no seed
    Family.KEYS: Adapter(Family.KEYS, step_options(Family.KEYS), seeded=True, private=False),
    Family.DIFFERENTIAL_PRIVACY: Adapter(
        Family.DIFFERENTIAL_PRIVACY, step_options(Family.DIFFERENTIAL_PRIVACY), seeded=True,
        private=True, counts_records=True),
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
