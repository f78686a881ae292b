"""Check a released table against k-anonymity, l-diversity and t-closeness (``microagg
check``).

:func:`check_table` decides what is checked: the quasi-identifiers (``quasi``, else the
schema's, else every column but the confidential and sensitive ones), the ground distance of each
confidential attribute's EMD (the ordered one for numeric and ordinal attributes, ``distance``
for nominal ones), and refuses options that do not go together. It returns a
:class:`TableCheck`, whose :meth:`~TableCheck.to_dict` is the command's JSON output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from microagg.core.verifiers import KAnonymity, TCloseness, k_anonymity, table_t_closeness
from microagg.data.schema import Kind, Schema
from microagg.data.table import Table, decode, encode, missing_counts
from microagg.errors import InputError
from microagg.options import GroundDistance, LDiversityKind, MissingValues, parse
from microagg.partition._validate import check_k
from microagg.risk.ldiversity import LDiversity

__all__ = ["KCheck", "LCheck", "TCheck", "TableCheck", "check_request", "check_table"]


@dataclass(frozen=True)
class KCheck:
    """The k-anonymity of a table: the ``k`` asked for and its equivalence classes."""

    k: int
    report: KAnonymity

    @property
    def holds(self) -> bool:
        return self.report.holds(self.k)

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "holds": self.holds, "smallest_class": self.report.smallest_class,
                "largest_class": self.report.largest_class, "classes": self.report.classes,
                "all_missing": self.report.all_missing}


@dataclass(frozen=True)
class LCheck:
    """The l-diversity of a sensitive attribute: the ``l`` and measure ``kind`` asked for and
    the value of every record's class."""

    l: float  # noqa: E741 (the l of l-diversity)
    kind: LDiversityKind
    report: LDiversity

    @property
    def smallest(self) -> float:
        return self.report.smallest(self.kind)

    @property
    def holds(self) -> bool:
        return self.smallest >= self.l - 1e-9  # entropy l is computed with rounding error

    @property
    def violations(self) -> int:
        """The records whose class is less than l-diverse."""
        below = self.report.values(self.kind) < self.l - 1e-9
        records = self.report.records
        return int(below.sum() if records is None else records[below].sum())

    def to_dict(self) -> dict[str, Any]:
        return {"attribute": self.report.attribute, "l": self.l, "kind": self.kind.value,
                "c": self.report.c, "holds": self.holds, "smallest": self.smallest,
                "violations": self.violations}


@dataclass(frozen=True)
class TCheck:
    """The t-closeness of one confidential attribute: the ``t`` asked for and the EMD of
    each equivalence class."""

    t: float
    report: TCloseness

    @property
    def holds(self) -> bool:
        return self.report.holds(self.t)

    def to_dict(self) -> dict[str, Any]:
        return {"attribute": self.report.attribute, "t": self.t, "holds": self.holds,
                "largest_emd": self.report.t, "distance": self.report.distance.value}


@dataclass(frozen=True)
class TableCheck:
    """What :func:`check_table` found: ``k_anonymity`` is None when no k was asked for,
    ``l_diversity`` when no l was, ``t_closeness`` (one per confidential attribute) when no
    t was."""

    records: int
    quasi_identifiers: list[str]
    k_anonymity: KCheck | None
    t_closeness: list[TCheck] | None
    l_diversity: LCheck | None = None
    missing: MissingValues = MissingValues.MATCHES_ANY
    missing_values: dict[str, int] = field(default_factory=dict)  # per quasi-identifier

    @property
    def holds(self) -> bool:
        """Whether every model checked holds."""
        k_holds = self.k_anonymity is None or self.k_anonymity.holds
        l_holds = self.l_diversity is None or self.l_diversity.holds
        return k_holds and l_holds and all(c.holds for c in self.t_closeness or [])

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"records": self.records,
                                  "quasi_identifiers": self.quasi_identifiers,
                                  "missing_values": self.missing_values,
                                  "missing_semantics": self.missing.value}
        if self.k_anonymity is not None:
            result["k_anonymity"] = self.k_anonymity.to_dict()
        if self.l_diversity is not None:
            result["l_diversity"] = self.l_diversity.to_dict()
        if self.t_closeness is not None:
            result["t_closeness"] = [c.to_dict() for c in self.t_closeness]
        result["holds"] = self.holds
        return result


def check_request(*, k: int | None, t: float | None, confidential: Sequence[str],
                  distance: GroundDistance | str | None, l: float | None = None,  # noqa: E741
                  sensitive: str | None = None, l_kind: LDiversityKind | str | None = None,
                  l_c: float | None = None) -> None:
    """Refuse a check that asks for nothing, or options that do not go together (before
    the table is read)."""
    if k is None and t is None and l is None:
        raise InputError("nothing to check: give `k`, `l` and/or `t`")
    if l is None and (sensitive is not None or l_kind is not None or l_c is not None):
        raise InputError("`sensitive`, `l_kind` and `l_c` apply with `l` (l-diversity)")
    if l is not None:
        if sensitive is None:
            raise InputError("`l` needs `sensitive`: the attribute whose diversity is checked")
        if not l >= 1:
            raise InputError(f"`l` must be at least 1, got {l}")
        if l_kind is not None:
            parse(LDiversityKind, l_kind, "`l_kind`")
        if l_c is not None and not l_c > 0:
            raise InputError(f"`l_c` must be positive, got {l_c}")
    if distance is not None and t is None:
        raise InputError("`distance` applies with `t` (the EMD of t-closeness)")
    if t is not None:
        if not confidential:
            raise InputError("`t` needs `confidential`")
        if not 0 <= t <= 1:
            raise InputError(f"`t` must lie in [0, 1], got {t}")


def _quasi(table: Table, quasi: Sequence[str] | None, confidential: Sequence[str],
           declared: bool) -> list[str]:
    """``quasi``, else the quasi-identifiers of a ``declared`` schema, else every column but
    the ``confidential`` ones."""
    if quasi is not None:
        return list(quasi)
    chosen = table.schema.quasi_identifiers if declared else ()
    return list(chosen) or [c for c in table.schema.names if c not in confidential]


def _require_columns(available: Sequence[str], names: Sequence[str], option: str = "") -> None:
    for name in names:
        if name not in available:
            raise InputError(f"{option + ': ' if option else ''}unknown column '{name}' (the "
                             f"data has: {', '.join(available)})")


def _nominal_distance(table: Table, confidential: Sequence[str],
                      distance: GroundDistance | str | None) -> GroundDistance | None:
    """The ground distance of the nominal confidential attributes (None: their default)."""
    nominal = parse(GroundDistance, distance, "`distance`") if distance else None
    if nominal is GroundDistance.ORDERED:
        raise InputError("`distance` is for nominal attributes: equal or hierarchical")
    if nominal is not None and not any(table.schema[c].kind is Kind.NOMINAL
                                       for c in confidential):
        raise InputError(f"`distance` chooses the EMD of nominal attributes; "
                         f"{', '.join(confidential)} use the ordered distance")
    return nominal


def _t_closeness(table: Table, quasi: Sequence[str], confidential: Sequence[str], t: float,
                 distance: GroundDistance | str | None, missing: MissingValues
                 ) -> list[TCheck]:
    """The t-closeness of each confidential attribute, nominal ones with ``distance``."""
    nominal = _nominal_distance(table, confidential, distance)
    checks = []
    for name in confidential:
        chosen = nominal if table.schema[name].kind is Kind.NOMINAL else None
        checks.append(TCheck(t, table_t_closeness(table, quasi, name, chosen, missing)))
    return checks


def check_table(frame: pd.DataFrame, *, schema: Schema | None = None, k: int | None = None,
                quasi: Sequence[str] | None = None, t: float | None = None,
                confidential: Sequence[str] = (),
                distance: GroundDistance | str | None = None,
                drop_incomplete: bool = False, l: float | None = None,  # noqa: E741
                sensitive: str | None = None, l_kind: LDiversityKind | str | None = None,
                l_c: float | None = None,
                missing: MissingValues | str = MissingValues.MATCHES_ANY) -> TableCheck:
    """Check the released table ``frame`` for k-anonymity (``k``), l-diversity of the
    ``sensitive`` attribute (``l``) and/or t-closeness of the ``confidential`` attributes
    (``t``) over the quasi-identifiers ``quasi``.

    Parameters
    ----------
    frame
        The table, as released (inner concepts of a taxonomy are read as such).
    schema
        Its schema; its quasi-identifiers are the default of ``quasi``.
    k, t
        The smallest equivalence class, and the largest EMD of a class, required.
    quasi
        The quasi-identifiers (default: the schema's, else every column but the
        confidential ones).
    confidential
        The confidential attributes, needed with ``t``.
    distance
        The EMD ground distance of nominal confidential attributes: ``equal`` (default) or
        ``hierarchical`` (on the schema's taxonomy).
    drop_incomplete
        Drop the rows with a missing value first.
    l
        The smallest l-diversity of ``sensitive`` required of every record's class.
    sensitive
        The sensitive attribute, needed with ``l`` (not a quasi-identifier).
    l_kind
        Which l-diversity: ``distinct`` (default), ``entropy`` or ``recursive``
        (:mod:`microagg.risk.ldiversity`).
    l_c
        The c of recursive (c, l)-diversity (default 2).
    missing
        What a missing quasi-identifier value matches: any value (``matches-any``,
        sdcMicro's ``alpha = 1``, the default; the class of a record is then the set of
        records that agree with it on every quasi-identifier both have, and a record whose
        quasi-identifiers are all missing is counted apart, as sdcMicro's ``freqCalc`` counts
        it: its class is the table, and it is in the class of no record that has every
        quasi-identifier) or only another missing value (``category``). A missing
        confidential value is a category of its own for a nominal attribute and refused for
        an ordered one (:mod:`microagg.core.verifiers`).

    Returns
    -------
    TableCheck
        What holds, with the class statistics and EMDs.
    """
    check_request(k=k, t=t, confidential=confidential, distance=distance, l=l,
                  sensitive=sensitive, l_kind=l_kind, l_c=l_c)
    missing = parse(MissingValues, missing, "missing")
    table = encode(frame, schema, drop_incomplete=drop_incomplete, released=True,
                   missing=True)
    released = decode(table)
    others = [*confidential, *([sensitive] if sensitive is not None else [])]
    quasi = _quasi(table, quasi, others, declared=schema is not None)
    _require_columns(table.schema.names, quasi, "`quasi`")
    _require_columns(table.schema.names, confidential, "`confidential`")
    _require_columns(table.schema.names, [sensitive] if sensitive is not None else [],
                     "`sensitive`")
    k_check = None
    if k is not None:
        check_k(k, table.n_rows)
        k_check = KCheck(k, k_anonymity(released, quasi, missing))
    l_check = None
    if l is not None and sensitive is not None:
        l_check = _l_diversity(released, quasi, sensitive, l, l_kind, l_c, missing)
    t_checks = (_t_closeness(table, quasi, confidential, t, distance, missing)
                if t is not None else None)
    return TableCheck(table.n_rows, quasi, k_check, t_checks, l_check, missing,
                      missing_counts(table, quasi))


def _l_diversity(released: pd.DataFrame, quasi: Sequence[str], sensitive: str,
                 l: float, kind: LDiversityKind | str | None,  # noqa: E741
                 c: float | None, missing: MissingValues) -> LCheck:
    """The l-diversity of ``sensitive`` in every record's class over ``quasi``."""
    from microagg.core.frequencies import key_codes
    from microagg.risk.ldiversity import l_diversity

    if sensitive in quasi:
        raise InputError(f"column '{sensitive}' cannot be both quasi-identifier and sensitive")
    chosen = parse(LDiversityKind, kind or LDiversityKind.DISTINCT, "`l_kind`")
    report = l_diversity(key_codes(released, quasi), key_codes(released, [sensitive])[:, 0],
                         missing, c=2.0 if c is None else c, attribute=sensitive)
    return LCheck(l, chosen, report)
