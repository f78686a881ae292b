"""The tables an attack reads, checked and encoded once: the original records the release was
made from, the release, and the control records it was not made from.

A column is numeric when pandas holds it as numbers, else categorical (Anonymeter's rule).
For the queries of singling out (:func:`AttackTables.raw`) a numeric column keeps its values
(NaN missing) and a categorical one becomes codes shared by the three tables (NaN missing).
For the nearest-neighbour attacks (:func:`AttackTables.encoded`) a numeric column is scaled
by its range over the three tables, so that two values differ by at most 1; a categorical
column is a code, its missing value a code of its own; a numeric column with missing values
gains a categorical coordinate, missing or not, and its missing values sit at its minimum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from microagg.errors import InputError

__all__ = ["AttackTables", "attack_tables"]


@dataclass(frozen=True)
class AttackTables:
    """The three tables over the same columns (:func:`attack_tables`)."""

    original: pd.DataFrame
    release: pd.DataFrame
    control: pd.DataFrame | None
    numeric: frozenset[str]

    @property
    def columns(self) -> list[str]:
        """The columns, in the original's order."""
        return list(self.original.columns)

    def raw(self, columns: list[str]) -> tuple[list[np.ndarray], np.ndarray]:
        """``columns`` of the original, the release and the control (when given) as float
        matrices (numbers, or shared codes), NaN missing, and which columns are numeric."""
        tables = self._tables()
        blocks = [np.empty((len(t), len(columns))) for t in tables]
        for j, name in enumerate(columns):
            if name in self.numeric:
                for block, table in zip(blocks, tables, strict=True):
                    block[:, j] = table[name].to_numpy(dtype=float, na_value=np.nan)
            else:
                codes = _codes([t[name] for t in tables])
                for block, code in zip(blocks, codes, strict=True):
                    block[:, j] = np.where(code < 0, np.nan, code)
        return blocks, np.array([name in self.numeric for name in columns])

    def encoded(self, columns: list[str]) -> tuple[list[np.ndarray], np.ndarray]:
        """``columns`` of the three tables encoded for the distance of
        :mod:`microagg.risk._neighbours` (module docstring), and which coordinates are
        categorical."""
        tables = self._tables()
        parts: list[list[np.ndarray]] = [[] for _ in tables]
        categorical: list[bool] = []
        for name in columns:
            if name in self.numeric:
                values = [t[name].to_numpy(dtype=float, na_value=np.nan) for t in tables]
                joined = np.concatenate(values)
                present = joined[~np.isnan(joined)]
                low = float(present.min()) if present.size else 0.0
                span = float(present.max()) - low if present.size else 0.0
                span = span if span > 0 else 1.0
                any_missing = bool(np.isnan(joined).any())
                for part, v in zip(parts, values, strict=True):
                    part.append(np.where(np.isnan(v), 0.0, (v - low) / span))
                    if any_missing:
                        part.append(np.isnan(v).astype(float))
                categorical += [False, True] if any_missing else [False]
            else:
                codes = _codes([t[name] for t in tables])
                for part, code in zip(parts, codes, strict=True):
                    part.append(code.astype(float))
                categorical.append(True)
        blocks = [np.column_stack(p) if p else np.empty((len(t), 0))
                  for p, t in zip(parts, tables, strict=True)]
        return blocks, np.array(categorical, dtype=bool)

    def _tables(self) -> list[pd.DataFrame]:
        return [self.original, self.release] + ([] if self.control is None else [self.control])


def _codes(series: list[pd.Series]) -> list[np.ndarray]:
    """Codes shared by the ``series`` (their values compared as text), -1 missing."""
    joined = pd.concat([s.astype("string") for s in series], ignore_index=True)
    codes, _ = pd.factorize(joined, use_na_sentinel=True)
    bounds = np.cumsum([0] + [len(s) for s in series])
    return [codes[bounds[i]:bounds[i + 1]].astype(np.int64) for i in range(len(series))]


def attack_tables(original: pd.DataFrame, release: pd.DataFrame,
                  control: pd.DataFrame | None = None,
                  columns: list[str] | None = None) -> AttackTables:
    """The three tables over ``columns`` (default: the original's), checked.

    Raises
    ------
    InputError
        When a table lacks one of the columns, the control has columns the original lacks,
        a column is numeric in one table and not in another, or a table has no rows.
    """
    chosen = list(original.columns) if columns is None else list(columns)
    if not chosen:
        raise InputError("the attacks need at least one column")
    named = {"original": original, "release": release, "control": control}
    for what, table in named.items():
        if table is None:
            continue
        lacking = [c for c in chosen if c not in table.columns]
        if lacking:
            raise InputError(f"the {what} lacks the column(s) {', '.join(map(str, lacking))}")
        if len(table) == 0:
            raise InputError(f"the {what} has no rows")
    if control is not None and columns is None:
        extra = [c for c in control.columns if c not in original.columns]
        if extra:
            raise InputError(f"the control has columns the original lacks: "
                             f"{', '.join(map(str, extra))} (it must be held-out records of "
                             "the same table)")
    numeric = frozenset(c for c in chosen if pd.api.types.is_numeric_dtype(original[c])
                        and not pd.api.types.is_bool_dtype(original[c]))
    for what, table in named.items():
        if table is None:
            continue
        for c in chosen:
            is_number = (pd.api.types.is_numeric_dtype(table[c])
                         and not pd.api.types.is_bool_dtype(table[c]))
            if is_number != (c in numeric) and table[c].notna().any():
                raise InputError(f"column {c} is {'numeric' if c in numeric else 'not numeric'}"
                                 f" in the original but not in the {what}")
    def keep(t: pd.DataFrame | None) -> pd.DataFrame | None:
        return None if t is None else t[chosen].reset_index(drop=True)

    kept_original, kept_release = keep(original), keep(release)
    assert kept_original is not None and kept_release is not None
    return AttackTables(kept_original, kept_release, keep(control), numeric)
