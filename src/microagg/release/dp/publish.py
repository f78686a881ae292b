"""How a DP release is written: the rules of docs/design.md ("What is written is what is
protected") in one place, so that every DP release inherits them.

* Rows go out in a uniformly random order drawn from the release's generator, with a fresh
  index: in input order, rows sharing a noisy value would show which records were clustered
  together, a fact of the data. The alignment stays in memory (:meth:`Release.aligned`).
* Where attributes are clustered separately (individual ranking, 001 Alg. 1; any release that
  groups attribute sets apart, e.g. 004 Alg. 3), which values share a record is data-dependent
  and unprotected. ``unlinked`` writes every column in its own random order (each column is
  then a shuffled list of noisy group values, and the table is ε-DP by sequential
  composition); ``linked`` keeps the records and says that only each column is DP.
* Only protected and carried columns are written; carried columns void the guarantee of the
  table, and the report says so.
* Protected columns are written with the types the schema gives them (numbers as float64,
  categories as text), never with types that follow the data.
* The privacy report holds public quantities only; what the owner alone may know (values
  clamped per column) goes to ``Release.notices``. Whatever makes the release weaker than
  plain ε-DP raises a :class:`~microagg.errors.PrivacyLeakWarning`.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from types import FrameType
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.table import declared_dtypes, decode
from microagg.errors import PrivacyLeakWarning
from microagg.options import Calibration, Linkage
from microagg.release.base import Release
from microagg.release.dp.mechanisms import Budget
from microagg.release.dp.step import DPStep
from microagg.release.dp.unit import PrivacyUnit
from microagg.release.inputs import DPInput
from microagg.release.reports.report import (
    Domain,
    EpsilonPart,
    NoiseLevel,
    PrivacyReport,
    Sensitivity,
    guarantee_sentence,
    noise_warnings,
)

__all__ = ["caller_stacklevel", "privacy_report", "publish_dp"]

SEED_WARNING = ("the noise was drawn from a given seed: anyone who learns or guesses the seed "
                "can regenerate the noise and remove it; publish only releases drawn from OS "
                "entropy (no seed)")


def _released_columns(data: DPInput, numeric_values: np.ndarray, concepts: np.ndarray):
    """Protected columns replaced, carried columns kept, in the input's column order."""
    table = data.table
    numeric = table.numeric.copy()
    for j, name in enumerate(data.numeric):
        numeric[:, table.numeric_names.index(name)] = numeric_values[:, j]
    codes = table.codes.copy()
    labels = {}
    for j, name in enumerate(data.categorical):
        codes[:, table.categorical_names.index(name)] = concepts[:, j]
        labels[name] = data.part.metrics[j].labels
    return decode(table, numeric=numeric, codes=codes, categories=labels,
                  dtypes=declared_dtypes(table.schema, data.columns))


def _weaknesses(data: DPInput, *, multiplier: int, linked: bool, seeded: bool,
                microaggregated: str | None, individual: str | None) -> list[str]:
    out = []
    if individual:
        out.append(f"individual differential privacy only: the noise is calibrated to "
                   f"{individual} of this data set")
    if microaggregated:
        out.append(f"differentially private with respect to {microaggregated}, not to the "
                   "original records (data-dependent partition)")
    if data.from_data:
        out.append(f"domains of {', '.join(data.from_data)} taken from the data")
    if multiplier > 1:
        out.append(f"paper calibration: every attribute spends the full epsilon, "
                   f"{multiplier} times over")
    if linked:
        out.append("linked columns: the pairing of separately grouped values is not protected")
    if data.carried:
        out.append(f"carried columns {', '.join(data.carried)} copied unchanged")
    if data.drops_incomplete:
        out.append("rows with a missing value dropped first: the table's length publishes "
                   "how many rows are complete")
    if seeded:
        out.append("noise drawn from a known seed")
    return out


def privacy_report(data: DPInput, *, records: int, method: str, budget: Budget,
                   k: int | None, groups: int | None, sensitivities: list[dict[str, Any]],
                   noise: dict[str, NoiseLevel], seeded: bool,
                   calibration: Calibration | None = None, reference: str | None = None,
                   linkage: Linkage | None = None, linked: bool = False,
                   unlinked: bool = False, warnings_: Sequence[str] = (),
                   parts: list[tuple[str, float]] | None = None,
                   microaggregated: str | None = None, individual: str | None = None,
                   moments: dict[str, Any] | None = None, unit: PrivacyUnit | None = None,
                   unit_epsilon: float | None = None) -> PrivacyReport:
    """The privacy report of a DP release of ``records`` rows (public quantities only), and a
    :class:`PrivacyLeakWarning` when the guarantee is weaker than plain ε-DP. ``linked`` and
    ``unlinked`` say how separately grouped columns were written; ``individual`` names the
    data-dependent quantity a local-sensitivity (individual DP) release is calibrated to.
    ``unit`` is what two neighbouring data sets differ in (one record, or one household of at
    most m records protected at ``unit_epsilon``, every mechanism at ``unit_epsilon`` / m);
    a household column without a bound is said to be protected by group privacy only. A
    ``seeded`` release is said NOT to be differentially private in every top-level field."""
    multiplier = len(data.columns) if calibration is Calibration.PAPER else 1
    private, scope, sentence = guarantee_sentence(
        epsilon=budget.epsilon, multiplier=multiplier, columns=data.columns,
        carried=data.carried, linked=linked, from_data=data.from_data,
        drops_incomplete=data.drops_incomplete, parts=parts, microaggregated=microaggregated,
        individual=individual, seeded=seeded)
    unit = unit if unit is not None else PrivacyUnit()
    # the paper's calibration spends epsilon once per attribute: the guarantee is m times it
    unit_level = (unit_epsilon if unit_epsilon is not None else budget.epsilon) * multiplier
    sentence += unit.statement(unit_level, budget.epsilon if multiplier > 1 else None)
    weaker = _weaknesses(data, multiplier=multiplier, linked=linked, seeded=seeded,
                         microaggregated=microaggregated, individual=individual)
    report_warnings = [*data.warnings, *warnings_]
    if multiplier > 1:
        report_warnings.append(
            f"paper calibration: each of the {multiplier} attributes spends the full epsilon, "
            f"so the release is only {multiplier * budget.epsilon:g}-differentially private; "
            "use it to reproduce the figures of Soria-Comas et al. (2014), never to publish")
    report_warnings += noise_warnings(noise)
    if seeded:
        report_warnings.append(SEED_WARNING)
    if weaker:
        warnings.warn("this release is weaker than plain epsilon-differential privacy: "
                      + "; ".join(weaker) + " (see the privacy report)", PrivacyLeakWarning,
                      stacklevel=caller_stacklevel())
    return PrivacyReport(
        method=method, differentially_private=private, guarantee_scope=scope,
        guarantee=sentence, epsilon=unit_level, record_epsilon=budget.epsilon * multiplier,
        epsilon_split=[EpsilonPart.from_mapping(e) for e in budget.ledger], k=k,
        groups=groups, records=records, columns=data.columns, carried=data.carried,
        dropped_columns=data.dropped_columns,
        linkage=linkage.value if linkage is not None else None,
        calibration=calibration.value if calibration is not None else None,
        reference=reference,
        sensitivities=[Sensitivity.from_mapping(e) for e in sensitivities],
        domains={c: Domain.from_mapping(d) for c, d in data.domains.items()}, noise=noise,
        weaker_than_plain_dp=weaker, warnings=report_warnings, moments=moments,
        row_order=("each column in its own uniformly random order, fresh index" if unlinked
                   else "uniformly random permutation, fresh index"),
        unit=unit.name, unit_epsilon=unit_level)


def publish_dp(data: DPInput, step: DPStep, *, budget: Budget, k: int | None,
               rng: np.random.Generator, seeded: bool,
               clip_entries: Sequence[dict[str, Any]] = (), unit: PrivacyUnit | None = None,
               unit_epsilon: float | None = None) -> Release[PrivacyReport]:
    """The Release of a DP method's ``step``: the written table in random row order (per
    column, or per group of its ``column_groups``, when unlinked), its privacy report, the
    owner's notices, and a :class:`PrivacyLeakWarning` when the guarantee is weaker than plain
    ε-DP. ``clip_entries`` are the sensitivity entries of the clipped domains."""
    # back from the unit domain, low + u (high − low) can miss the bounds by an ulp
    numeric_values = np.clip(step.numeric_values, data.lows, data.highs)
    frame = _released_columns(data, numeric_values, step.concepts)
    n = data.n
    sets = ([list(g) for g in step.column_groups] if step.column_groups
            else [[c] for c in data.columns])
    unlinked = step.linkage is Linkage.UNLINKED and len(sets) > 1
    linked = step.linkage is Linkage.LINKED and len(sets) > 1
    positions = data.table.row_positions
    if unlinked:
        set_of = {c: j for j, names in enumerate(sets) for c in names}
        set_of.update({c: len(sets) + j for j, c in enumerate(data.carried)})
        permutations: dict[int, np.ndarray] = {}
        for c in frame.columns:  # drawn in the written column order
            permutations.setdefault(set_of[c], rng.permutation(n))
        orders = np.column_stack([permutations[set_of[c]] for c in frame.columns])
        frame = pd.concat([frame[c].iloc[orders[:, j]].reset_index(drop=True)
                           for j, c in enumerate(frame.columns)], axis=1)
        source_rows = positions[orders]
    else:
        order = rng.permutation(n)
        frame = frame.iloc[order]
        source_rows = positions[order]
    frame = frame.reset_index(drop=True)
    report = privacy_report(
        data, records=n, method=step.description, budget=budget, k=k, groups=step.groups,
        sensitivities=[*clip_entries, *step.sensitivities], noise=step.noise, seeded=seeded,
        calibration=step.calibration, reference=step.reference, linkage=step.linkage,
        linked=linked, unlinked=unlinked, warnings_=step.warnings, parts=step.parts,
        microaggregated=step.microaggregated, individual=step.individual,
        moments=step.moments, unit=unit, unit_epsilon=unit_epsilon)
    notices = tuple(f"{count:,} value(s) of '{name}' lay outside its declared domain and were "
                    "clamped into it" for name, count in data.clamped.items())
    notices += tuple(f"{count:,} value(s) of '{name}' lay outside its clipped domain and were "
                     "clamped into it" for name, count in data.clipped.items() if count)
    notices += tuple(f"{count:,} missing value(s) of '{name}' were read as the value the "
                     "schema declares (missing:)" for name, count in data.filled.items())
    return Release(frame=frame, labels=step.labels, report=report, source_rows=source_rows,
                   source_index=data.table.index, notices=notices,
                   statistics=step.statistics)


def caller_stacklevel() -> int:
    """The ``stacklevel`` of a warning raised here that points at the first frame outside
    microagg: the line of the caller's code that asked for the release, however many of
    microagg's own functions lie between."""
    level = 1
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("microagg."):
        frame = frame.f_back
        level += 1
    return level
