"""The survey design of a table: its sampling weight, its strata and its households, as the
schema declares them (roles ``weight``, ``stratum``, ``household``; sdcMicro's
``createSdcObj(weightVar=, strataVar=, hhId=)``).

* The weight is never masked. Cluster means are weighted by it (sdcMicro's
  ``microaggregation(weights=)`` intends it; docs/algorithms.md says where it differs), so
  every cluster keeps its weighted total.
* Each stratum is protected on its own: no cluster crosses a stratum, so the strata are
  k-anonymous one by one and the stratum column can be written unchanged. A stratum with
  fewer than k records cannot be; it is refused (merging strata would change what the
  stratum column means, which only the data owner can decide: recode the column).
* A household column is written unchanged, never masked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from microagg.data.schema import Role
from microagg.data.table import Table
from microagg.data.weights import sampling_weights
from microagg.errors import InputError

__all__ = ["Design", "take"]


def take(table: Table, rows: np.ndarray) -> Table:
    """The table of the rows at positions ``rows`` (same schema, categories and precision)."""
    return replace(table, numeric=np.ascontiguousarray(table.numeric[rows]),
                   codes=np.ascontiguousarray(table.codes[rows]), index=table.index[rows],
                   row_positions=table.row_positions[rows], _decimals={})


@dataclass(frozen=True)
class Design:
    """The weight (one value per table row, or ``None``) and the strata of a table."""

    weight: str | None
    weights: np.ndarray | None
    strata_columns: tuple[str, ...]
    strata: np.ndarray | None  # stratum number of each table row
    households: tuple[str, ...]

    @classmethod
    def of(cls, frame: pd.DataFrame, table: Table, k: int) -> Design:
        """The design the table's schema declares, checked: one weight column at most, a
        sampling weight in every row (:mod:`microagg.data.weights`); every stratum holding at
        least ``k`` records."""
        schema = table.schema
        weight_columns = schema.names_with_role(Role.WEIGHT)
        if len(weight_columns) > 1:
            raise InputError(f"the schema declares {len(weight_columns)} weight columns "
                             f"({', '.join(weight_columns)}); a table has one sampling weight")
        weight = weight_columns[0] if weight_columns else None
        weights = None
        if weight is not None:
            weights = sampling_weights(frame[weight].iloc[table.row_positions], weight,
                                       table.row_positions)
        strata_columns = schema.names_with_role(Role.STRATUM)
        strata = _strata(frame, table, strata_columns, k) if strata_columns else None
        return cls(weight, weights, strata_columns, strata,
                   schema.names_with_role(Role.HOUSEHOLD))

    @property
    def n_strata(self) -> int:
        return 0 if self.strata is None else int(self.strata.max()) + 1

    def stratified(self, labels: Callable[[Table], np.ndarray], table: Table) -> np.ndarray:
        """``labels(table)`` computed stratum by stratum, the clusters numbered on: one label
        per row (or per row and column for univariate methods), no cluster across strata."""
        if self.strata is None:
            return labels(table)
        out: np.ndarray | None = None
        offset = 0
        for stratum in range(self.n_strata):
            rows = np.flatnonzero(self.strata == stratum)
            part = labels(take(table, rows))
            if out is None:
                out = np.empty((table.n_rows, *part.shape[1:]), dtype=np.int64)
            out[rows] = part + offset
            offset = int(out[rows].max()) + 1
        assert out is not None
        return out


def _strata(frame: pd.DataFrame, table: Table, columns: tuple[str, ...], k: int) -> np.ndarray:
    kept = frame.iloc[table.row_positions][list(columns)]
    if kept.isna().to_numpy().any():
        column = next(c for c in columns if kept[c].isna().any())
        raise InputError(f"stratum column '{column}' has a missing value; every record "
                         "belongs to one stratum")
    strata = kept.groupby(list(columns), sort=True, dropna=False).ngroup().to_numpy(np.int64)
    sizes = np.bincount(strata)
    small = np.flatnonzero(sizes < k)
    if small.size:
        first = int(np.flatnonzero(strata == small[0])[0])
        values = ", ".join(f"{c}={kept[c].iloc[first]}" for c in columns)
        raise InputError(f"stratum {values} has {int(sizes[small[0]])} record(s), fewer than "
                         f"k = {k} ({small.size} such strata): recode the stratum column to "
                         "merge it with another, or protect without strata")
    return strata
