"""The report of targeted record swapping (:mod:`microagg.release.methods.record_swap`): what a
data-protection officer needs, level by level (who may see each figure is declared in
:mod:`microagg.release.reports.disclosure`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from microagg.release.reports.key_reports import KeyReport
from microagg.release.reports.report import Entry

__all__ = ["SwapLevel", "SwapReport", "swap_lines"]


@dataclass(frozen=True, eq=False)
class SwapLevel(Entry):
    """One level of the geographic hierarchy.

    ``at_risk``: households at risk at this level (some member one of fewer than k persons
    with its risk variables in its area, or its risk column over the threshold), of which
    ``first_at_risk`` are at risk from this level on (so swapped across it);
    ``swapped_at_risk`` and ``swapped_at_random`` the households drawn here and swapped,
    ``donors`` the households they were swapped with, ``persons_swapped`` the persons of
    all three; ``no_donor`` the households drawn here that found no donor;
    ``in_place_after`` the households at risk here still in their own area of this level
    after swapping, and ``at_risk_after`` the households at risk on the written table (the
    k-anonymity rule only; ``None`` with risk columns); ``household_counts_kept`` whether
    every area of the level holds as many households as before; ``areas_persons_changed``
    the areas whose number of persons changed and ``persons_moved`` half the summed change
    of the cross-tabulation of the area and the risk variables (persons counted in another
    cell than before)."""

    keep_none = True

    level: str
    areas: int
    at_risk: int
    first_at_risk: int
    swapped_at_risk: int
    swapped_at_random: int
    donors: int
    persons_swapped: int
    no_donor: int
    in_place_after: int
    at_risk_after: int | None
    household_counts_kept: bool
    areas_persons_changed: int
    persons_moved: int


@dataclass(frozen=True, kw_only=True)
class SwapReport(KeyReport):
    """Targeted record swapping: the households swapped level by level, those at risk that
    found no donor, the risk before and after and the counts kept."""

    household: str
    hierarchy: list[str]
    risk_rule: str  # how the risk was measured, and the threshold
    similar: list[list[str]]
    carry_along: list[str]
    seeded: bool
    households: int
    swaps_due: int  # the swaps the rate asks for (each moves two households)
    households_swapped: int
    persons_swapped: int
    realised_rate: float  # households swapped / households
    levels: list[SwapLevel]
    without_donor: int  # households at risk that found no donor anywhere and stayed
    without_donor_ids: list[str]  # their household identifiers (the first 1,000)


def _entry(level: Any) -> Mapping[str, Any]:
    if isinstance(level, Mapping):
        return level
    return {f.name: getattr(level, f.name) for f in fields(level)}


def swap_lines(report: Mapping[str, Any]) -> list[str]:
    """The figures of a swap's report in lines: the households and persons swapped, those
    at risk left without a donor, then per level those at risk, swapped for risk and at
    random, still in place, and whether every area kept its number of households.
    ``report`` is a :class:`SwapReport`'s fields, or its dictionary (levels as mappings).

    Examples
    --------
    >>> level = {"level": "nuts1", "at_risk": 2, "swapped_at_risk": 2, "swapped_at_random": 0,
    ...          "in_place_after": 0, "household_counts_kept": True}
    >>> swap_lines({"households_swapped": 4, "realised_rate": 0.04, "persons_swapped": 9,
    ...             "without_donor": 0, "levels": [level]})[0]
    'swapped 4 households (4.00%), 9 persons; 0 at risk without a donor'
    """
    lines = [f"swapped {report['households_swapped']:,} households "
             f"({report['realised_rate']:.2%}), {report['persons_swapped']:,} persons; "
             f"{report['without_donor']:,} at risk without a donor"]
    for level in map(_entry, report["levels"]):
        kept = ("household counts kept" if level["household_counts_kept"]
                else "household counts NOT kept")
        lines.append(f"{level['level']}: {level['at_risk']:,} at risk, "
                     f"{level['swapped_at_risk']:,} swapped for risk, "
                     f"{level['swapped_at_random']:,} at random, "
                     f"{level['in_place_after']:,} at risk still in place; {kept}")
    return lines
