"""What an evaluation compares: the columns, their values in both tables with missing values
kept (NaN, concept -1), the domains of the numeric ones, and the missing-value bookkeeping of
:func:`microagg.evaluation.evaluate.evaluate` (how many there are, and how each measure
treats them: :data:`MISSING_RULES`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from microagg.core.distance import Categorical
from microagg.data.schema import Role, Schema
from microagg.data.table import MISSING_CODE, Table, category_labels, encode, missing_mask
from microagg.data.taxonomy import CategoryMetric
from microagg.errors import InputError
from microagg.release.reports.report import Entry

__all__ = ["MISSING_RULES", "Compared", "MissingCount", "attribute_domains", "compared",
           "complete_rows", "evaluation_columns", "missing_counts", "missing_rule",
           "present_deltas", "released_concepts", "shares"]

MISSING_RULES = {
    "sse": "over the values present in both tables",
    "sse_percent": "column by column, over the rows where the column is present in both "
                   "tables (SSE_j and SST_j alike)",
    "relative_error": "over the values present in both tables",
    "record_linkage_percent": "distances over the attributes both records have, rescaled by "
                              "p / |O_xy| (+inf when they share none), as MDAV with missing "
                              "values",
    "jsd": "histograms of each table's values present (a column without any value present "
           "has none)",
    "variance_variation": "each table's values present",
    "mean_variation": "each table's values present",
    "rank_risk": "the records complete in the numeric columns in both tables",
    "emd": "each table's records complete in the numeric columns",
}
"""How each measure treats missing values, as :func:`evaluate` reports it."""


def evaluation_columns(original: pd.DataFrame, masked: pd.DataFrame, schema: Schema | None,
                       columns: Sequence[str] | None) -> list[str]:
    """The columns to compare: ``columns`` if given, else the schema's quasi-identifiers,
    else every numeric column of the original."""
    for frame, what in ((original, "original"), (masked, "masked")):
        for column in columns or ():
            if column not in frame.columns:
                raise InputError(
                    f"unknown column '{column}' in the {what} data "
                    f"(it has: {', '.join(map(str, frame.columns))})"
                )
    if columns:
        return list(columns)
    if schema is not None:
        chosen = [a.name for a in schema if a.role is Role.QUASI]
    else:
        chosen = [str(c) for c in original.columns
                  if pd.api.types.is_numeric_dtype(original[c])
                  and not pd.api.types.is_bool_dtype(original[c])]
    if not chosen:
        raise InputError("no column to compare; name them with `columns`")
    absent = [c for c in chosen if c not in masked.columns]
    if absent:
        kept = [c for c in chosen if c in masked.columns]
        raise InputError(f"the masked table lacks {len(absent)} of the {len(chosen)} columns "
                         f"to compare ({', '.join(absent[:5])}{', ...' if len(absent) > 5 else ''}"
                         "): it is not a release of all of them; name the columns to compare "
                         f"with `columns`{' (it has ' + ', '.join(kept[:5]) + ')' if kept else ''}")
    return chosen


def attribute_domains(schema: Schema, values: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Domain bounds per numeric column: declared in the schema, else the range of ``values``.

    Returns lows, highs and the source of each ("schema" or "data"). A constant column without
    a declared domain gets width 1, so that it contributes nothing rather than dividing by 0.
    The range is that of the values present.
    """
    lows, highs, sources = [], [], []
    for j, attribute in enumerate(schema):
        if attribute.bounds is not None:
            lo, hi = attribute.bounds
            sources.append("schema")
        else:
            present = values[:, j][~np.isnan(values[:, j])]
            lo, hi = ((float(present.min()), float(present.max())) if present.size
                      else (0.0, 1.0))
            if hi <= lo:
                hi = lo + 1.0
            sources.append("data")
        lows.append(lo)
        highs.append(hi)
    return np.asarray(lows), np.asarray(highs), sources


def released_concepts(values: pd.Series, metric: CategoryMetric) -> np.ndarray:
    """Concept numbers of released categorical values (categories or inner concepts), -1
    where a value is missing."""
    labels = category_labels(values).to_numpy()
    index = pd.Index(list(metric.labels)).get_indexer(pd.Index(labels))
    absent = missing_mask(values)
    unknown = (index < 0) & ~absent
    index[absent] = MISSING_CODE
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise InputError(f"column '{metric.name}': released value '{labels[i]}' in row {i + 1} "
                         "is neither a category nor a concept of its taxonomy")
    return index.astype(np.int64)


@dataclass(frozen=True)
class Compared:
    """The compared values of an original and its release: numeric columns ``x`` and ``y``
    with the domain bounds of ``x`` and their sources, categorical codes of the original
    (``cx``) and concept numbers of the release (``cy``)."""

    n: int
    numeric: list[str]
    categorical: list[str]
    x: np.ndarray
    y: np.ndarray
    lows: np.ndarray
    highs: np.ndarray
    sources: list[str]
    metrics: tuple[CategoryMetric, ...]
    cx: Categorical
    cy: np.ndarray


def compared(original: pd.DataFrame, masked: pd.DataFrame, selected: Schema,
              chosen: list[str]) -> Compared:
    """Encode the ``chosen`` columns of both tables (``selected``: their schema), missing
    values kept (NaN, code -1)."""
    table: Table = encode(original[chosen], selected, missing=True)
    numeric = [c for c in chosen if selected[c].is_numeric]
    categorical = [c for c in chosen if selected[c].is_categorical]
    x = table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0))
    undeclared = Schema(tuple(replace(a, domain=None) for a in selected.select(numeric)))
    y = (encode(masked[numeric], undeclared, missing=True).numeric if numeric
         else np.empty((len(masked), 0)))
    lows, highs, sources = attribute_domains(selected.select(numeric), x)
    metrics = tuple(table.metric(c) for c in categorical)
    cx = Categorical(np.column_stack([table.code_column(c) for c in categorical])
                     if categorical else np.empty((table.n_rows, 0), dtype=np.int64), metrics)
    cy = (np.column_stack([released_concepts(masked[c], m) for c, m in
                           zip(categorical, metrics, strict=True)])
          if categorical else np.empty((len(masked), 0), dtype=np.int64))
    return Compared(table.n_rows, numeric, categorical, x, y, lows, highs, sources, metrics,
                     cx, cy)


@dataclass(frozen=True, eq=False)
class MissingCount(Entry):
    """The missing values of one compared column: in the original, in the release, and the
    rows where both have a value (None when the rows are not aligned)."""

    keep_none: ClassVar[bool] = True
    original: int
    masked: int
    both_present: int | None


def shares(codes: np.ndarray, bins: int) -> np.ndarray:
    """The share of each concept among the values present (NaN when none is)."""
    present = codes[codes != MISSING_CODE]
    if not present.size:
        return np.full(bins, np.nan)
    return np.bincount(present, minlength=bins) / present.size


def present_deltas(c: Compared) -> list[np.ndarray]:
    """Per categorical column, the semantic distances δ between original category and
    released concept, over the rows where both are present."""
    out = []
    for j, metric in enumerate(c.metrics):
        both = (c.cx.codes[:, j] != MISSING_CODE) & (c.cy[:, j] != MISSING_CODE)
        out.append(metric.distances[c.cx.codes[both, j], c.cy[both, j]])
    return out


def complete_rows(values: np.ndarray) -> np.ndarray:
    """The rows without a missing value."""
    return ~np.isnan(values).any(axis=1)


def missing_counts(c: Compared, aligned: bool) -> dict[str, MissingCount]:
    """The compared columns with a missing value in either table, and how many."""
    counts = {}
    missing = [(name, np.isnan(c.x[:, j]), np.isnan(c.y[:, j]))
               for j, name in enumerate(c.numeric)]
    missing += [(name, c.cx.codes[:, j] == MISSING_CODE, c.cy[:, j] == MISSING_CODE)
                for j, name in enumerate(c.categorical)]
    for name, before, after in missing:
        if before.any() or after.any():
            counts[name] = MissingCount(int(before.sum()), int(after.sum()),
                                        int((~before & ~after).sum()) if aligned else None)
    return counts


def missing_rule(c: Compared, missing: dict[str, MissingCount]) -> dict[str, str]:
    """How each measure computed treated the missing values (none: empty)."""
    if not missing:
        return {}
    rules = dict(MISSING_RULES)
    if c.numeric:
        rules["rank_risk"] += (f" ({int((complete_rows(c.x) & complete_rows(c.y)).sum()):,} of "
                               f"{c.n:,})" if c.x.shape == c.y.shape else "")
        rules["emd"] += (f" (original {int(complete_rows(c.x).sum()):,} of {c.n:,}, release "
                         f"{int(complete_rows(c.y).sum()):,} of {len(c.y):,})")
    return rules
