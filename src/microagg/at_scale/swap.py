"""Targeted record swapping on a Dask cluster (``microagg swap --engine dask``).

Three passes over the partitions, with one step on the client between the second and the
third:

1. every partition counts its persons per combination of the hierarchy and the risk
   variables (a group-by; the partial tables are added up) and lists its households with
   their geography, profiles and carried values (one row each; a household may span
   partitions, and a column that differs within it is refused);
2. every partition reads, for each person, the count of its combination at every level (or
   its risk columns) and gives each household its members' smallest count (largest risk)
   and its number of persons;
3. the client pairs the households (:func:`~microagg.core.swapping.pair_households`, the same
   compiled loop as on one machine: the pairing is sequential by definition, each swap
   changing the donors left, and the households' arrays fit one process at 10⁷ persons);
   every partition then writes its records, those of a swapped household with its partner's
   geography and carried values, all other values and the row order as they were.

The households at risk, the quotas and the pairing are those of the release on one machine
for the same seed (tests/test_scale_swap.py). Not checked here: a finer geography left
uncarried (the release on one machine refuses it; here every column would be scanned), and
the persons' cross-tabulation before and after (``persons_moved`` is None).
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
    RecordSwap,
    household_figures,
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


def _first_pass(piece: Piece, household: str, method: RecordSwap
                ) -> tuple[pd.Series | None, pd.DataFrame]:
    """The persons per combination of hierarchy and risk variables, and the households."""
    _, _, house = _columns(method, household)
    risk = list(method.risk_variables or ())
    frame = read_piece(piece, [household, *dict.fromkeys([*house, *risk])])
    if frame.isna().to_numpy().any():
        column = frame.columns[frame.isna().any().to_numpy()][0]
        raise InputError(f"column '{column}' has missing values in {piece.path}: targeted "
                         "record swapping needs every value of the columns it reads")
    counts = (frame.groupby([*method.hierarchy, *risk], sort=False).size() if risk
              else None)
    return counts, frame[[household, *house]].drop_duplicates()


def _second_pass(piece: Piece, household: str, method: RecordSwap,
                 tables: list[pd.Series] | None) -> pd.DataFrame:
    """Each household's smallest count (or largest risk column) per level and its persons."""
    risk = list(method.risk_variables or ())
    names = list(method.risk_columns or ())
    frame = read_piece(piece, [household, *dict.fromkeys([*method.hierarchy, *risk, *names])])
    out = pd.DataFrame({household: frame[household].to_numpy()})
    for level in range(len(method.hierarchy)):
        if tables is not None:
            keys = pd.MultiIndex.from_frame(frame[[*method.hierarchy[:level + 1], *risk]])
            out[f"l{level}"] = tables[level].reindex(keys).to_numpy(dtype=float)
        else:
            out[f"l{level}"] = pd.to_numeric(frame[names[level]], errors="coerce")
    out[_PERSONS] = 1
    how = "min" if tables is not None else "max"
    return out.groupby(household, sort=False).agg(
        {**{f"l{i}": how for i in range(len(method.hierarchy))}, _PERSONS: "sum"})


def _write(piece: Piece, household: str, moved: pd.DataFrame) -> pd.DataFrame:
    """The partition with the swapped households' geography and carried values."""
    frame = read_piece(piece)
    rows = frame[household].isin(moved.index).to_numpy()
    if rows.any():
        new = moved.loc[frame.loc[rows, household]]
        for column in moved.columns:
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
    houses = _households([h for _, h in first], household)
    tables = _level_tables([c for c, _ in first], method)
    shared = client.scatter(tables, broadcast=True) if tables is not None else None
    second = client.compute([dask.delayed(_second_pass)(p, household, method, shared)
                             for p in pieces], sync=True)
    levels = len(method.hierarchy)
    how = "min" if tables is not None else "max"
    per = pd.concat(second).groupby(level=0).agg(
        {**{f"l{i}": how for i in range(levels)}, _PERSONS: "sum"}).reindex(houses[household])
    values = per[[f"l{i}" for i in range(levels)]].to_numpy(dtype=float).T
    risk = 1.0 / values if tables is not None else values
    sizes = per[_PERSONS].to_numpy(dtype=np.int64)
    codes = np.stack([text_codes(houses[c]) for c in method.hierarchy])
    areas = area_codes(codes)
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
    frames = [dask.delayed(_write)(p, household, shared_moved) for p in pieces]
    write_dataset(client, frames, output, source=dataset.source, progress=progress)
    per_level = [SwapLevel(level=name, **household_figures(level, areas, after, risk,
                                                           threshold, pairing, sizes),
                           at_risk_after=None, persons_moved=None)
                 for level, name in enumerate(method.hierarchy)]
    fields = swap_fields(method, household, carry, threshold, pairing, sizes, per_level,
                         houses[household].tolist())
    return ScaleSwap(method=method.name, records=dataset.n, partitions=len(pieces),
                     fields={**fields, "seeded": rng is not None})
