"""Targeted record swapping on a Dask cluster (``microagg swap --engine dask``).

Three passes over the partitions, with one step on the client between the second and the
third, and a fourth for the report:

1. every partition counts its persons per combination of the hierarchy and the risk
   variables (a group-by; the partial tables are added up), lists its households with
   their geography, profiles and carried values (one row each; a household may span
   partitions, and a column that differs within it is refused) and says of every other
   column whether it could be a geography finer than the hierarchy
   (:func:`~microagg.release.methods.record_swap.finer_summary`); the client refuses, as
   one machine does, a hierarchy out of order and a finer geography left uncarried;
2. every partition reads, for each person, the count of its combination at every level (or
   its risk columns) and gives each household its members' smallest count (largest risk)
   and its number of persons;
3. the client pairs the households (:func:`~microagg.core.swapping.pair_households`, the same
   compiled loop as on one machine: the pairing is sequential by definition, each swap
   changing the donors left, and the households' arrays fit one process at 10⁷ persons);
   every partition then writes its records, those of a swapped household with its partner's
   geography and carried values, all other values and the row order as they were, and
   counts the records it writes per combination of the hierarchy and the risk variables
   (in the same graph);
4. with risk variables, every partition reads its persons again, swapped, and names at
   each level the households with a person at risk in the tables of the written data; their
   union is the households at risk after swapping, counted as on one machine.

The households at risk, the quotas, the pairing and every figure of the report are those of
the release on one machine for the same seed (tests/test_scale_swap.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, read_piece, write_dataset
from microagg.at_scale.storage import Location
from microagg.core.rng import make_rng
from microagg.data.schema import category_text
from microagg.errors import InputError
from microagg.release.methods.record_swap import (
    FinerSummary,
    RecordSwap,
    finer_summary,
    household_figures,
    refuse_finer,
    refuse_misordered,
    risk_column_values,
    swap_fields,
    text_codes,
)
from microagg.release.reports.swap_report import SwapLevel

__all__ = ["ScaleSwap", "swap_at_scale"]

_PERSONS = "__microagg_persons"


@dataclass(frozen=True)
class ScaleSwap:
    """What the Dask engine's swap did: the method, its records and partitions and the
    fields of its report (those of :class:`~microagg.release.reports.swap_report.SwapReport`)."""

    method: str
    records: int
    partitions: int
    fields: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        fields = {k: [v.to_dict() for v in value] if k == "levels" else value
                  for k, value in self.fields.items()}
        return {"method": self.method, "records": self.records, **fields}


def _columns(method: RecordSwap, household: str) -> tuple[list[str], list[str], list[str]]:
    carry = [c for c in (method.carry_along or ()) if c not in method.hierarchy]
    profile = list(dict.fromkeys(c for p in method.similar for c in p))
    return carry, profile, list(dict.fromkeys([*method.hierarchy, *profile, *carry]))


def _counts(frame: pd.DataFrame, method: RecordSwap) -> pd.Series | None:
    """The persons per combination of the hierarchy and the risk variables."""
    risk = list(method.risk_variables or ())
    return frame.groupby([*method.hierarchy, *risk], sort=False).size() if risk else None


def _first_pass(piece: Piece, household: str, method: RecordSwap
                ) -> tuple[pd.Series | None, pd.DataFrame, FinerSummary]:
    """The persons per combination of hierarchy and risk variables, the households and what
    the partition says of every other column as a finer geography."""
    carry, _, house = _columns(method, household)
    risk = list(method.risk_variables or ())
    frame = read_piece(piece)
    read = frame[[household, *dict.fromkeys([*house, *risk])]]
    if read.isna().to_numpy().any():
        column = read.columns[read.isna().any().to_numpy()][0]
        raise InputError(f"column '{column}' has missing values in {piece.path}: targeted "
                         "record swapping needs every value of the columns it reads")
    finer = finer_summary(frame, household, method.hierarchy, method.finer_skip(carry))
    return _counts(read, method), read[[household, *house]].drop_duplicates(), finer


def _person_values(frame: pd.DataFrame, method: RecordSwap,
                   tables: list[pd.Series] | None) -> np.ndarray:
    """Each person's count of its combination at every level (``tables``), or its risk
    columns: one row per level."""
    risk = list(method.risk_variables or ())
    out = np.empty((len(method.hierarchy), len(frame)))
    for level in range(len(method.hierarchy)):
        if tables is not None:
            keys = pd.MultiIndex.from_frame(frame[[*method.hierarchy[:level + 1], *risk]])
            out[level] = tables[level].reindex(keys).to_numpy(dtype=float)
        else:
            out[level] = risk_column_values(frame[(method.risk_columns or ())[level]])
    return out


def _read(piece: Piece, household: str, method: RecordSwap,
          moved: pd.DataFrame | None = None) -> pd.DataFrame:
    """The columns the risk reads, swapped by ``moved`` if given."""
    return _swapped(piece, household, moved, [household, *dict.fromkeys(
        [*method.hierarchy, *(method.risk_variables or ()), *(method.risk_columns or ())])])


def _second_pass(piece: Piece, household: str, method: RecordSwap,
                 tables: list[pd.Series] | None) -> pd.DataFrame:
    """Each household's smallest count (or largest risk column) per level and its persons."""
    frame = _read(piece, household, method)
    values = _person_values(frame, method, tables)
    out = pd.DataFrame({household: frame[household].to_numpy(),
                        **{f"l{i}": row for i, row in enumerate(values)}, _PERSONS: 1})
    how = "min" if tables is not None else "max"
    return out.groupby(household, sort=False).agg(
        {**{f"l{i}": how for i in range(len(method.hierarchy))}, _PERSONS: "sum"})


def _at_risk_after(piece: Piece, household: str, method: RecordSwap,
                   tables: list[pd.Series], moved: pd.DataFrame, threshold: float
                   ) -> list[np.ndarray]:
    """The households with a person at risk at each level on the swapped partition (a
    person's risk 1 / its count in ``tables``, the written data's)."""
    frame = _read(piece, household, method, moved)
    ids = frame[household].to_numpy()
    return [pd.unique(ids[1.0 / row > threshold])
            for row in _person_values(frame, method, tables)]


def _swapped(piece: Piece, household: str, moved: pd.DataFrame | None,
             columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The partition (its ``columns``, or all) with the swapped households' geography and
    carried values (``moved``: their new values, indexed by household)."""
    frame = read_piece(piece, columns)
    if moved is None:
        return frame
    rows = frame[household].isin(moved.index).to_numpy()
    if rows.any():
        new = moved.loc[frame.loc[rows, household]]
        for column in moved.columns.intersection(frame.columns):
            values = frame[column].to_numpy(copy=True)
            values[rows] = new[column].to_numpy()
            frame[column] = pd.Series(values, index=frame.index).astype(frame[column].dtype)
    return frame


def _households(partials: Sequence[pd.DataFrame], household: str) -> pd.DataFrame:
    table = pd.concat(partials, ignore_index=True).drop_duplicates()
    repeated = table[household].duplicated()
    if repeated.any():
        hid = table.loc[repeated, household].iloc[0]
        rows = table[table[household] == hid].iloc[:2]
        column = next(c for c in rows.columns if rows[c].iloc[0] != rows[c].iloc[1])
        raise InputError(f"column '{column}' differs within household {category_text(hid)}: "
                         "the geography, the profiles and the carried columns are values of "
                         "the household")
    order = np.argsort(text_codes(table[household]), kind="stable")  # as the local engine
    return table.iloc[order].reset_index(drop=True)


def _level_tables(partials: Sequence[pd.Series | None], method: RecordSwap
                  ) -> list[pd.Series] | None:
    """The persons per combination at each level (summed over the partitions)."""
    if method.risk_variables is None:
        return None
    risk = list(method.risk_variables)
    total = pd.concat([p for p in partials if p is not None]).groupby(
        level=list(range(len(method.hierarchy) + len(risk)))).sum()
    frame = total.rename("n").reset_index()
    return [frame.groupby([*method.hierarchy[:level + 1], *risk])["n"].sum()
            for level in range(len(method.hierarchy))]


def _per_household(client: Any, pieces: Sequence[Piece], household: str,
                   method: RecordSwap, tables: list[pd.Series] | None, order: pd.Series
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The risk of each household (in ``order``) at each level and its persons."""
    import dask

    shared = client.scatter(tables, broadcast=True) if tables is not None else None
    parts = client.compute([dask.delayed(_second_pass)(p, household, method, shared)
                            for p in pieces], sync=True)
    levels = len(method.hierarchy)
    how = "min" if tables is not None else "max"
    per = pd.concat(parts).groupby(level=0).agg(
        {**{f"l{i}": how for i in range(levels)}, _PERSONS: "sum"}).reindex(order)
    values = per[[f"l{i}" for i in range(levels)]].to_numpy(dtype=float).T
    return (1.0 / values if tables is not None else values,
            per[_PERSONS].to_numpy(dtype=np.int64))


def _counted_at_risk(client: Any, pieces: Sequence[Piece], household: str,
                     method: RecordSwap, tables: list[pd.Series], moved: pd.DataFrame,
                     threshold: float) -> list[int]:
    """The households at risk at each level on the swapped data: a household is at risk
    when one of its persons is, in whichever partition."""
    import dask

    shared, change = client.scatter([tables, moved], broadcast=True)
    parts = client.compute([dask.delayed(_at_risk_after)(p, household, method, shared,
                                                         change, threshold)
                            for p in pieces], sync=True)
    return [int(pd.unique(np.concatenate([part[level] for part in parts])).size)
            for level in range(len(method.hierarchy))]


def _persons_moved(level: int, before: list[pd.Series] | None,
                   after: list[pd.Series] | None, areas: np.ndarray, moved_to: np.ndarray,
                   sizes: np.ndarray) -> int:
    """Half the summed change of the persons per area of ``level`` and combination of the
    risk variables (``before`` and ``after``: the tables of the partitions; without risk
    variables, the persons per area from the households' ``areas``, ``moved_to`` and
    ``sizes``)."""
    if before is None or after is None:
        width = int(areas[level].max(initial=-1)) + 1
        change = (np.bincount(areas[level], weights=sizes, minlength=width)
                  - np.bincount(moved_to[level], weights=sizes, minlength=width))
        return int(np.abs(change).sum()) // 2
    return int(before[level].sub(after[level], fill_value=0).abs().sum()) // 2


def swap_at_scale(client: Any, dataset: Dataset, output: str | Path | Location, *,
                  method: RecordSwap, household: str, rng: int | None = None,
                  progress: Callable[[int], None] | None = None) -> ScaleSwap:
    """Swap the households of ``dataset`` by ``method`` on ``client`` and write the Parquet
    data set ``output`` (module docstring); ``household`` names the household column."""
    import dask

    from microagg.core.swapping import area_codes, pair_households

    carry, _, house = _columns(method, household)
    dataset.require([household, *house, *(method.risk_variables or ()),
                     *(method.risk_columns or ())])
    pieces = dataset.pieces
    first = client.compute([dask.delayed(_first_pass)(p, household, method) for p in pieces],
                           sync=True)
    houses = _households([h for _, h, _ in first], household)
    codes = np.stack([text_codes(houses[c]) for c in method.hierarchy])
    areas = area_codes(codes)
    refuse_misordered([houses[c] for c in method.hierarchy], codes, areas)
    refuse_finer([f for _, _, f in first], dataset.columns, len(houses),
                 int(areas[-1].max(initial=-1)) + 1, method)
    tables = _level_tables([c for c, _, _ in first], method)
    risk, sizes = _per_household(client, pieces, household, method, tables, houses[household])
    profiles = np.stack([pd.factorize(pd.MultiIndex.from_frame(houses[list(p)]))[0]
                         for p in method.similar])
    threshold = method.threshold()
    pairing = pair_households(areas, risk, threshold, profiles, method.swap_rate,
                              make_rng(rng))
    swapped = np.flatnonzero(pairing.partner >= 0)
    moved = houses[[*method.hierarchy, *carry]].iloc[pairing.partner[swapped]]
    moved.index = pd.Index(houses[household].iloc[swapped].to_numpy())
    after = areas[:, np.where(pairing.partner >= 0, pairing.partner, np.arange(sizes.size))]
    shared_moved = client.scatter(moved, broadcast=True)
    frames = [dask.delayed(_swapped)(p, household, shared_moved) for p in pieces]
    counted = [dask.delayed(_counts)(frame, method) for frame in frames]
    _, recounted = write_dataset(client, frames, output, source=dataset.source,
                                 progress=progress, extra=counted)
    tables_after = _level_tables(recounted, method)
    at_risk_after = (None if tables_after is None else _counted_at_risk(
        client, pieces, household, method, tables_after, moved, threshold))
    per_level = [SwapLevel(level=name, **household_figures(level, areas, after, risk,
                                                           threshold, pairing, sizes),
                           at_risk_after=None if at_risk_after is None
                           else at_risk_after[level],
                           persons_moved=_persons_moved(level, tables, tables_after, areas,
                                                        after, sizes))
                 for level, name in enumerate(method.hierarchy)]
    fields = swap_fields(method, household, carry, threshold, pairing, sizes, per_level,
                         houses[household].tolist())
    return ScaleSwap(method=method.name, records=dataset.n, partitions=len(pieces),
                     fields={**fields, "seeded": rng is not None})
