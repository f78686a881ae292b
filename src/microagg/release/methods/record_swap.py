"""Targeted record swapping of households within a geographic hierarchy (ONS's and
Eurostat's TRS for the census; sdcMicro's ``recordSwap``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.data.schema import Schema, category_text
from microagg.data.table import missing_mask
from microagg.errors import InputError, ParameterError
from microagg.release.families.keys import KeyData, KeyMethod, KeyStep, column_names
from microagg.release.inputs import require_known
from microagg.release.methods.base import release_method
from microagg.release.params import Interval, Optional, Predicate, param
from microagg.release.reports.swap_report import SwapLevel, SwapReport

__all__ = ["RecordSwap", "finer_summary", "household_figures",
           "refuse_finer", "refuse_misordered", "risk_column_values", "swap_fields",
           "text_codes"]

_IDS_LISTED = 1_000


def _names(name: str, value: Any) -> tuple[str, ...]:
    return column_names(name, value)


def _profiles(name: str, value: Any) -> tuple[tuple[str, ...], ...]:
    """Similarity profiles: ``"hsize;hsize,htype"`` (profiles separated by ';'), a list of
    names (one profile) or a list of lists of names."""
    if isinstance(value, str):
        parts: list[Any] = [p for p in value.split(";") if p.strip()]
    elif isinstance(value, Sequence) and value and all(isinstance(v, str) for v in value):
        parts = [list(value)]
    elif isinstance(value, Sequence):
        parts = list(value)
    else:
        raise ParameterError(name, f"must be column names, got {value!r}")
    if not parts:
        raise ParameterError(name, "needs at least one profile (column names)")
    return tuple(column_names(name, p) for p in parts)


@release_method
class RecordSwap(KeyMethod):
    """Targeted record swapping (TRS): the geography of whole households is exchanged
    between pairs of households of the same similarity profile in different areas. The
    households at risk are swapped for certain, across the coarsest level of the hierarchy
    at which they are at risk; others are drawn at random, in each area of the finest level
    in proportion to its households, until the share ``swap_rate`` of the households is
    swapped. Every record keeps its place in the file and every value but the geography
    (the ``hierarchy`` columns and the ``carry_along`` ones); the number of households in
    every area at every level is kept exactly (:mod:`microagg.core.swapping` holds the
    pairing and the choices where sdcMicro's documentation and code differ).

    The household column has the role ``household`` (``roles={"hid": "household"}``; on the
    command line ``--household``). Risk: in the k-anonymity rule, a household is at risk
    at a level when one of its members is one of fewer than ``k`` persons with its
    ``risk_variables`` in its area of that level; with ``risk_columns`` (one per level,
    each household taking its members' largest), when its risk exceeds ``risk_threshold``
    (1 / ``k`` when 0). The hierarchy, the profiles and the carried columns must be the same
    for every member of a household; a geographic column finer than the hierarchy that is
    not carried along would contradict the swapped levels and is refused.

    Record swapping gives no ex-ante guarantee: the report gives the risk before and after
    at each level and which households at risk found no donor.

    References
    ----------
    Office for National Statistics (2019), *Protecting personal data in Census 2021
    results* (targeted record swapping); Eurostat (2019), *Harmonised protection of census
    data in the ESS* (SDC recommendations for the 2021 census round, targeted record
    swapping); de Wolf, P.-P. et al. (2021), *TRS: targeted record swapping*, and
    Gussenbauer, J., sdcMicro's ``recordSwap`` (R package sdcMicro ≥ 5.7.1).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({
    ...     "hid": [1, 1, 2, 3, 3, 4, 5, 6],
    ...     "region": ["a", "a", "a", "a", "a", "b", "b", "b"],
    ...     "hsize": [2, 2, 1, 2, 2, 1, 1, 1],
    ...     "age": [30, 31, 70, 30, 31, 40, 40, 40]})
    >>> swap = RecordSwap(hierarchy=["region"], risk_variables=["age"], similar="hsize",
    ...                   swap_rate=0.0, k=2)
    >>> release = swap.release(frame, roles={"hid": "household"}, rng=1)
    >>> release.frame.loc[2, "region"], release.report.levels[0].household_counts_kept
    ('b', True)
    """

    name: ClassVar[str] = "targeted-record-swapping"
    summary: ClassVar[str] = ("targeted record swapping: the geography of households at "
                              "risk (and a share at random) exchanged with similar ones")
    command: ClassVar[str] = "swap"
    report_type: ClassVar[type[SwapReport]] = SwapReport
    randomized: ClassVar[bool] = True
    reads_weights: ClassVar[bool] = False

    hierarchy: tuple[str, ...] = param(
        Predicate(_names, "column names"),
        help="The geographic columns from the coarsest level to the finest "
             "(e.g. nuts1,nuts2,nuts3).")
    similar: tuple[tuple[str, ...], ...] = param(
        Predicate(_profiles, "column names; profiles separated by ';'"),
        help="The similarity profiles a donor must share, tried in order: household "
             "columns separated by ',', profiles by ';' (e.g. 'hsize,htype;hsize'), or "
             "one profile per --similar.", repeat=";")
    risk_variables: tuple[str, ...] | None = param(
        Optional(Predicate(_names, "column names")), default=None,
        help="The person columns whose counts in each area give the risk (k-anonymity "
             "rule).")
    swap_rate: float = param(Interval(float, 0.0, 1.0), default=0.05,
                             help="The share of households to swap (at-risk ones "
                                  "included; each swap moves two households).")
    k: int = param(Interval(int, 0), default=3,
                   help="A household is at risk where a member is one of fewer than k "
                        "persons with its risk variables in its area (0: none).")
    risk_columns: tuple[str, ...] | None = param(
        Optional(Predicate(_names, "column names")), default=None,
        help="Columns of risk, one per level of the hierarchy, in its order (instead of "
             "the k-anonymity rule).")
    risk_threshold: float = param(Interval(float, 0.0), default=0.0,
                                  help="With risk columns: a household whose risk exceeds "
                                       "it is at risk (0: 1 / k).")
    carry_along: tuple[str, ...] | None = param(
        Optional(Predicate(_names, "column names")), default=None,
        help="Household columns that move with the geography (finer geography, "
             "dwelling variables).")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.risk_variables is None and self.risk_columns is None:
            raise ParameterError("risk_variables", "or `risk_columns` is needed: the risk "
                                 "of each household at each level")
        if self.risk_columns is not None and len(self.risk_columns) != len(self.hierarchy):
            raise ParameterError("risk_columns", f"must name one column per level of the "
                                 f"hierarchy ({len(self.hierarchy)}), got "
                                 f"{len(self.risk_columns)}")
        if len(set(self.hierarchy)) != len(self.hierarchy):
            raise ParameterError("hierarchy", "names a column twice")

    def at_scale_refusal(self) -> str | None:
        """Households swapped on a cluster (:mod:`microagg.at_scale.swap`): always."""
        return None

    def reads_other_records(self) -> str | None:
        return "a household's geography is another household's, chosen by the counts of all"

    def named_columns(self) -> tuple[str, ...]:
        return (*self.hierarchy, *(self.carry_along or ()))

    def default_keys(self, schema: Schema, declared: bool) -> list[str]:
        return list(dict.fromkeys([*self.hierarchy, *(self.risk_variables or ())]))

    def protect(self, data: KeyData, rng: np.random.Generator) -> KeyStep:
        from microagg.core.swapping import area_codes, household_risk, pair_households

        frame, hid = data.frame, self._household(data)
        carry = [c for c in (self.carry_along or ()) if c not in self.hierarchy]
        profile_columns = list(dict.fromkeys(c for p in self.similar for c in p))
        _check_columns(data.schema, self, hid, carry, profile_columns)
        household, first = _households(frame[hid])
        _household_level(frame, household, first, hid, {
            **dict.fromkeys(carry, "carry_along"), **dict.fromkeys(profile_columns, "similar"),
            **dict.fromkeys(self.hierarchy, "hierarchy")})
        geography = np.stack([_codes(frame[c]) for c in self.hierarchy])
        areas = area_codes(geography[:, first])
        refuse_misordered([frame[c].iloc[first] for c in self.hierarchy], geography[:, first],
                          areas)
        refuse_finer([finer_summary(frame, hid, self.hierarchy, self.finer_skip(carry))],
                     list(frame.columns), first.size, int(areas[-1].max(initial=-1)) + 1,
                     self)
        threshold, risk = self._risk(frame, areas[:, household], household, first.size)
        profiles = np.stack([_combined([_codes(frame[c])[first] for c in p])
                             for p in self.similar])
        pairing = pair_households(areas, risk, threshold, profiles, self.swap_rate, rng)
        moved = np.where(pairing.partner >= 0, pairing.partner, np.arange(first.size))
        rows = first[moved][household]  # the row whose geography each record takes
        columns = {c: _take(frame[c], rows) for c in [*self.hierarchy, *carry]}
        after_areas = areas[:, moved]
        risk_after = (None if self.risk_variables is None else household_risk(
            after_areas[:, household], _combined([_codes(frame[c])
                                                  for c in self.risk_variables]),
            household, first.size))
        levels = [_level(name, level, areas, after_areas, household, risk, risk_after,
                         threshold, pairing, self._cells(frame))
                  for level, name in enumerate(self.hierarchy)]
        sizes = np.bincount(household, minlength=first.size)
        fields = swap_fields(self, hid, carry, threshold, pairing, sizes, levels,
                             frame[hid].iloc[first].tolist())
        notes = [f"households are swapped whole: the {', '.join(self.hierarchy)}"
                 + (f" and {', '.join(carry)}" if carry else "") + " of a household are "
                 "another's; every other value is as it was, each record in its place"]
        if fields["without_donor"]:
            notes.append(f"{fields['without_donor']:,} household(s) at risk found no donor "
                         "of their profile in another area and keep their geography")
        return KeyStep(columns, fields, notes)

    def finer_skip(self, carry: Sequence[str]) -> set[str]:
        """The columns not looked at as a finer geography: those read as geography or
        risk (``carry``: the carried columns)."""
        return {*self.hierarchy, *carry, *(self.risk_columns or ())}

    def _household(self, data: KeyData) -> str:
        households = data.design.households
        if len(households) != 1:
            raise InputError("targeted record swapping needs one household column: give "
                             "it the role household (`roles`)")
        if data.design.strata is not None:
            raise InputError("targeted record swapping runs over the whole table: its "
                             "hierarchy takes the place of strata (declare none)")
        return households[0]

    def _risk(self, frame: pd.DataFrame, person_areas: np.ndarray, household: np.ndarray,
              households: int) -> tuple[float, np.ndarray]:
        """The threshold and the risk of each household at each level."""
        from microagg.core.swapping import household_risk

        if self.risk_columns is None:
            assert self.risk_variables is not None
            keys = _combined([_codes(frame[c]) for c in self.risk_variables])
            return self.threshold(), household_risk(person_areas, keys, household, households)
        risk = np.zeros((len(self.risk_columns), households))
        for level, name in enumerate(self.risk_columns):
            np.maximum.at(risk[level], household, risk_column_values(frame[name]))
        return self.threshold(), risk

    def threshold(self) -> float:
        """A household whose risk at a level exceeds this is at risk there."""
        if self.risk_columns is not None and self.risk_threshold:
            return self.risk_threshold
        return 1.0 / self.k if self.k else np.inf

    def rule(self, threshold: float) -> str:
        """How the risk is measured, in words."""
        if self.risk_columns is None:
            return (f"k-anonymity: a member one of fewer than {self.k} persons with its "
                    f"{', '.join(self.risk_variables or ())} in its area" if self.k
                    else "none at risk (k = 0): households drawn at random only")
        return (f"risk columns {', '.join(self.risk_columns)} over {threshold:g}"
                if np.isfinite(threshold) else "none at risk: households drawn at random only")

    def _cells(self, frame: pd.DataFrame) -> np.ndarray:
        """Each person's combination of the risk variables (one cell when there are none)."""
        if self.risk_variables is None:
            return np.zeros(len(frame), dtype=np.int64)
        return _combined([_codes(frame[c]) for c in self.risk_variables])


def _check_columns(schema: Schema, method: RecordSwap, hid: str, carry: list[str],
                   profile_columns: list[str]) -> None:
    named = {"`hierarchy`": list(method.hierarchy), "`similar`": profile_columns,
             "`risk_variables`": list(method.risk_variables or ()),
             "`risk_columns`": list(method.risk_columns or ()), "`carry_along`": carry}
    for what, columns in named.items():
        require_known(schema, columns, what)
        if hid in columns:
            raise InputError(f"{what} names the household column '{hid}'")
    if set(method.hierarchy) & set(profile_columns):
        raise InputError("`similar` names a column of the hierarchy: a donor comes from "
                         "another area")


def _households(ids: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each record's household number (in the order of the identifiers) and each
    household's first record."""
    if missing_mask(ids).any():
        raise InputError(f"household column '{ids.name}' has missing values: every record "
                         "belongs to a household")
    household = text_codes(ids)
    first = np.full(int(household.max(initial=-1)) + 1, len(ids), dtype=np.int64)
    np.minimum.at(first, household, np.arange(len(ids), dtype=np.int64))
    return household, first


def risk_column_values(values: pd.Series) -> np.ndarray:
    """The numbers of a risk column (``risk_columns``), refused unless every row holds a
    finite number of at least 0.

    Parameters
    ----------
    values : pandas.Series
        The column, as read (numbers, or text that reads as numbers).

    Returns
    -------
    numpy.ndarray
        Its values as floats.

    Examples
    --------
    >>> risk_column_values(pd.Series([0.5, "0.25"], name="risk")).tolist()
    [0.5, 0.25]
    >>> risk_column_values(pd.Series([0.5, -1.0], name="risk"))
    Traceback (most recent call last):
    ...
    microagg.errors.InputError: risk column 'risk' must hold numbers of at least 0 in every row
    """
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(numbers).all() or (numbers < 0).any():
        raise InputError(f"risk column '{values.name}' must hold numbers of at least 0 in "
                         "every row")
    return numbers


def text_codes(values: pd.Series) -> np.ndarray:
    """The values numbered in the order of the text they hold, so that the numbering (and
    with it the swap) is the same whether a column was read as numbers or as text (``10``
    before ``9`` either way).

    Examples
    --------
    >>> text_codes(pd.Series([9, 10, 9])).tolist()
    [1, 0, 1]
    """
    return pd.factorize(values.astype(str), sort=True)[0].astype(np.int64)


def _codes(series: pd.Series) -> np.ndarray:
    """The column's values numbered in the order of their text (:func:`text_codes`); a
    missing value is refused."""
    if missing_mask(series).any():
        raise InputError(f"column '{series.name}' has missing values: targeted record "
                         "swapping needs every value of the columns it reads")
    return text_codes(series)


def _combined(codes: list[np.ndarray]) -> np.ndarray:
    """One code per combination of several columns' codes."""
    out = np.zeros(codes[0].size, dtype=np.int64)
    for column in codes:
        out = pd.factorize(out * (int(column.max(initial=0)) + 1) + column)[0]
    return out.astype(np.int64)


def _household_level(frame: pd.DataFrame, household: np.ndarray, first: np.ndarray,
                     hid: str, columns: dict[str, str]) -> None:
    """Refuse a column whose value differs between members of a household, naming the
    parameter that reads it (``columns``: each column's parameter)."""
    for name, parameter in columns.items():
        codes = _codes(frame[name])
        differs = np.flatnonzero(codes != codes[first][household])
        if differs.size:
            row = int(differs[0])
            raise InputError(f"`{parameter}`: column '{name}' differs within household "
                             f"{category_text(frame[hid].iloc[row])} (row {row + 1}): the "
                             "geography, the profiles and the carried columns are values "
                             "of the household")


def refuse_misordered(columns: Sequence[pd.Series], codes: np.ndarray,
                      areas: np.ndarray) -> None:
    """Refuse a hierarchy out of order: a level that divides no area of the levels before it
    while one of its codes spans several of them (a coarser level after a finer one, as when
    the levels are given from the finest). ``columns``: the hierarchy's columns in the order
    given, one value per household; ``codes`` their :func:`text_codes` and ``areas`` the
    :func:`~microagg.core.swapping.area_codes` of those. A code found under several areas
    of the level before is not refused: it names one area within each (codes numbered
    within their parent area, as sdcMicro reads them), and a level that only renames its
    parent's areas is accepted.

    Examples
    --------
    >>> from microagg.core.swapping import area_codes
    >>> def check(*columns):
    ...     codes = np.stack([text_codes(c) for c in columns])
    ...     refuse_misordered(columns, codes, area_codes(codes))
    >>> fine, coarse = pd.Series([11, 12, 21], name="nuts2"), pd.Series([1, 1, 2], name="nuts1")
    >>> check(coarse, fine)
    >>> check(fine, coarse)
    Traceback (most recent call last):
    ...
    microagg.errors.InputError: `hierarchy`: column 'nuts1' comes after 'nuts2' but is \
coarser (its code 1 spans 2 areas of nuts2 and divides none): give the levels from the \
coarsest to the finest
    """
    for level in range(1, codes.shape[0]):
        above = int(areas[level - 1].max(initial=-1)) + 1
        if int(areas[level].max(initial=-1)) + 1 > above:
            continue  # it divides some area before it
        spans = np.bincount(np.unique(codes[level] * above + areas[level - 1]) // above)
        if (spans > 1).any():
            code = int(np.argmax(spans > 1))
            value = columns[level].iloc[int(np.argmax(codes[level] == code))]
            name, parent = columns[level].name, columns[level - 1].name
            raise InputError(f"`hierarchy`: column '{name}' comes after '{parent}' but is "
                             f"coarser (its code {category_text(value)} spans "
                             f"{int(spans[code])} areas of {parent} and divides none): give "
                             "the levels from the coarsest to the finest")


FinerSummary = dict[str, tuple[pd.DataFrame, pd.DataFrame] | None]
"""Per column, what :func:`refuse_finer` needs of a part of the table: None when the part
already shows it is no finer geography, else its households with their value and its values
with their area of the finest level (raw values, so that parts can be put together)."""


def finer_summary(frame: pd.DataFrame, hid: str, hierarchy: Sequence[str],
                  skip: Collection[str]) -> FinerSummary:
    """What the rows of ``frame`` say of each column not in ``skip`` as a geography finer
    than ``hierarchy`` (:data:`FinerSummary`): a column of decimals, with missing values,
    whose value differs within a household or lies in two areas of the finest level is none.
    """
    household = pd.factorize(frame[hid])[0]
    first = np.full(int(household.max(initial=-1)) + 1, len(frame), dtype=np.int64)
    np.minimum.at(first, household, np.arange(len(frame), dtype=np.int64))
    finest = _combined([pd.factorize(frame[c])[0] for c in hierarchy])
    n_finest = int(finest.max(initial=-1)) + 1
    out: FinerSummary = {}
    for name in frame.columns:
        series = frame[name]
        if name in skip or name == hid:
            continue
        if pd.api.types.is_float_dtype(series) or missing_mask(series).any():
            out[name] = None
            continue
        codes, uniques = pd.factorize(series)
        if (codes != codes[first][household]).any():
            out[name] = None  # a person's value: not geography
            continue
        pairs = np.unique(codes.astype(np.int64) * n_finest + finest)
        if pairs.size != len(uniques):
            out[name] = None  # a value in two areas of the finest level
            continue
        at = np.full(len(uniques), len(frame), dtype=np.int64)
        np.minimum.at(at, codes, np.arange(len(frame), dtype=np.int64))
        out[name] = (frame[[hid, name]].iloc[first].reset_index(drop=True),
                     frame[[name, *hierarchy]].iloc[at].reset_index(drop=True))
    return out


def refuse_finer(parts: Sequence[FinerSummary], columns: Sequence[str], households: int,
                 areas: int, method: RecordSwap) -> None:
    """Refuse a column (the first in ``columns`` order) whose values are household values,
    each in one area of the finest level, dividing it further: more values than the finest
    level's ``areas``, fewer than the ``households`` (a finer geography left uncarried).
    ``parts``: the :func:`finer_summary` of every part of the table."""
    for name in columns:
        found = [part.get(name) for part in parts]
        if not found or any(f is None for f in found):
            continue
        kept = [f for f in found if f is not None]
        homes = pd.concat([f[0] for f in kept], ignore_index=True).drop_duplicates()
        if homes.iloc[:, 0].duplicated().any():
            continue  # differs within a household that spans parts
        values = pd.concat([f[1] for f in kept], ignore_index=True).drop_duplicates()
        if values.iloc[:, 0].duplicated().any() or not areas < len(values) < households:
            continue
        finest = method.hierarchy[-1]
        raise InputError(f"column '{name}' is a geography finer than the hierarchy "
                         f"({finest}): swapped households would keep it and contradict "
                         f"their new {finest}; carry it along (`carry_along`) or drop it")


def _take(series: pd.Series, rows: np.ndarray) -> pd.Series:
    """The column with each record's value taken from row ``rows``, dtype and index kept."""
    return pd.Series(series.to_numpy()[rows] if not isinstance(
        series.dtype, pd.CategoricalDtype) else series.array.take(rows),
        index=series.index, name=series.name, dtype=series.dtype)


def household_figures(level: int, areas: np.ndarray, after: np.ndarray, risk: np.ndarray,
                      threshold: float, pairing: Any, sizes: np.ndarray) -> dict[str, Any]:
    """The figures of one level read off the households alone (:class:`SwapLevel`):
    ``areas`` and ``after`` their areas before and after, ``sizes`` their persons."""
    here = pairing.level == level
    at_risk = risk[level] > threshold
    n_areas = int(areas[level].max(initial=-1)) + 1
    persons_before = np.bincount(areas[level], weights=sizes, minlength=n_areas)
    persons_after = np.bincount(after[level], weights=sizes, minlength=n_areas)
    finest = level == areas.shape[0] - 1
    drawn_here = pairing.at_risk >= level if finest else pairing.at_risk == level
    return {
        "areas": n_areas, "at_risk": int(at_risk.sum()),
        "first_at_risk": int((pairing.at_risk == level).sum()),
        "swapped_at_risk": int((here & (pairing.role == 1)).sum()),
        "swapped_at_random": int((here & (pairing.role == 2)).sum()),
        "donors": int((here & (pairing.role == 3)).sum()),
        "persons_swapped": int(sizes[here].sum()),
        "no_donor": int((pairing.no_donor & drawn_here).sum()),
        "in_place_after": int((at_risk & (after[level] == areas[level])).sum()),
        "household_counts_kept": bool(np.array_equal(
            np.bincount(areas[level], minlength=n_areas),
            np.bincount(after[level], minlength=n_areas))),
        "areas_persons_changed": int((persons_before != persons_after).sum())}


def swap_fields(method: RecordSwap, hid: str, carry: list[str], threshold: float,
                pairing: Any, sizes: np.ndarray, levels: list[SwapLevel],
                ids: Sequence[Any]) -> dict[str, Any]:
    """The method's own fields of its report (:class:`SwapReport`); ``ids`` the household
    identifiers, in household order."""
    swapped = pairing.partner >= 0
    stayed = np.flatnonzero((pairing.at_risk < len(method.hierarchy)) & ~swapped)
    return {
        "household": hid, "hierarchy": list(method.hierarchy),
        "risk_rule": method.rule(threshold), "similar": [list(p) for p in method.similar],
        "carry_along": carry, "households": int(swapped.size),
        "swaps_due": pairing.swaps, "households_swapped": int(swapped.sum()),
        "persons_swapped": int(sizes[swapped].sum()),
        "realised_rate": float(swapped.mean()) if swapped.size else 0.0,
        "levels": levels, "without_donor": int(stayed.size),
        "without_donor_ids": [category_text(ids[i]) for i in stayed[:_IDS_LISTED]]}


def _level(name: str, level: int, areas: np.ndarray, after: np.ndarray,
           household: np.ndarray, risk: np.ndarray, risk_after: np.ndarray | None,
           threshold: float, pairing: Any, cells: np.ndarray) -> SwapLevel:
    """The figures of one level (:class:`SwapLevel`), persons' included."""
    sizes = np.bincount(household, minlength=areas.shape[1])
    span = int(cells.max(initial=0)) + 1
    both = np.concatenate([areas[level][household] * span + cells,
                           after[level][household] * span + cells])
    cell, _ = pd.factorize(both)
    width = int(cell.max(initial=-1)) + 1
    moved = np.abs(np.bincount(cell[:cells.size], minlength=width)
                   - np.bincount(cell[cells.size:], minlength=width)).sum() // 2
    return SwapLevel(
        level=name, **household_figures(level, areas, after, risk, threshold, pairing, sizes),
        at_risk_after=None if risk_after is None else int((risk_after[level] > threshold
                                                           ).sum()),
        persons_moved=int(moved))
