"""Compare an original table with its masked release: utility and disclosure risk in one call.

Numeric and categorical attributes are compared together, as in papers 000 §5.2 and 001 §4.2:
a categorical value's error is the semantic (or rank) distance δ between the original category
and the released concept, which may be an inner concept of the taxonomy. SSE adds δ² for
categorical values; the relative error averages |x − x'| / max(|x|, s_j) over numeric values
and δ over categorical ones; record linkage uses the distance of 000 eq. 8; the JSD of a
categorical attribute has one bin per concept. SSE/SST and the variations of means and
variances concern numeric attributes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.core.distance import Categorical
from microagg.data.schema import Role, Schema
from microagg.data.table import Table, category_labels, encode
from microagg.data.taxonomy import CategoryMetric
from microagg.errors import InputError
from microagg.evaluation.risk import rank_risk, record_linkage
from microagg.evaluation.utility import (
    emd,
    js_divergence,
    jsd,
    mean_variation,
    relative_errors,
    sse,
    sse_percent,
    variance_variation,
)
from microagg.release.report import Domain, Entry

__all__ = ["EVALUATE_EMD_POINTS", "CategoricalDetail", "Evaluation", "NumericDetail",
           "TaxonomyRange", "attribute_domains", "evaluate", "evaluation_columns"]

EVALUATE_EMD_POINTS = 2000
"""``evaluate`` computes the EMD exactly up to this many records and with MDAV clusters of
⌈n / 2000⌉ records above (with ``emd_bound``): a 32 MB problem, a fraction of a second.
:func:`microagg.evaluation.compare` uses the exact EMD up to 5,000 records."""


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
    """
    lows, highs, sources = [], [], []
    for j, attribute in enumerate(schema):
        if attribute.bounds is not None:
            lo, hi = attribute.bounds
            sources.append("schema")
        else:
            lo, hi = float(values[:, j].min()), float(values[:, j].max())
            if hi <= lo:
                hi = lo + 1.0
            sources.append("data")
        lows.append(lo)
        highs.append(hi)
    return np.asarray(lows), np.asarray(highs), sources


def released_concepts(values: pd.Series, metric: CategoryMetric) -> np.ndarray:
    """Concept numbers of released categorical values (categories or inner concepts)."""
    labels = category_labels(values).to_numpy()
    index = pd.Index(list(metric.labels)).get_indexer(pd.Index(labels))
    if (index < 0).any():
        i = int(np.flatnonzero(index < 0)[0])
        raise InputError(f"column '{metric.name}': released value '{labels[i]}' in row {i + 1} "
                         "is neither a category nor a concept of its taxonomy")
    return index.astype(np.int64)


def _finite_mean(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def _optional(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


@dataclass(frozen=True)
class _Compared:
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


def _compared(original: pd.DataFrame, masked: pd.DataFrame, selected: Schema,
              chosen: list[str]) -> _Compared:
    """Encode the ``chosen`` columns of both tables (``selected``: their schema)."""
    table: Table = encode(original[chosen], selected)
    numeric = [c for c in chosen if selected[c].is_numeric]
    categorical = [c for c in chosen if selected[c].is_categorical]
    x = table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0))
    undeclared = Schema(tuple(replace(a, domain=None) for a in selected.select(numeric)))
    y = (encode(masked[numeric], undeclared).numeric if numeric
         else np.empty((table.n_rows, 0)))
    lows, highs, sources = attribute_domains(selected.select(numeric), x)
    metrics = tuple(table.metric(c) for c in categorical)
    cx = Categorical(np.column_stack([table.code_column(c) for c in categorical])
                     if categorical else np.empty((table.n_rows, 0), dtype=np.int64), metrics)
    cy = (np.column_stack([released_concepts(masked[c], m) for c, m in
                           zip(categorical, metrics, strict=True)])
          if categorical else np.empty((table.n_rows, 0), dtype=np.int64))
    return _Compared(table.n_rows, numeric, categorical, x, y, lows, highs, sources, metrics,
                     cx, cy)


@dataclass(frozen=True, eq=False)
class NumericDetail(Entry):
    """The measures of one numeric column (``None``: undefined, e.g. a constant column's
    variance variation)."""

    keep_none: ClassVar[bool] = True
    sse: float
    jsd: float
    variance_variation: float | None
    mean_variation: float | None


@dataclass(frozen=True, eq=False)
class CategoricalDetail(Entry):
    """The measures of one categorical column."""

    sse: float  # of the semantic distances δ
    jsd: float  # over the concepts
    mean_semantic_distance: float


@dataclass(frozen=True, eq=False)
class TaxonomyRange(Entry):
    """A categorical column's taxonomy: its concepts and its bottom and top labels."""

    concepts: int
    boundaries: list[str]


@dataclass(frozen=True, eq=False)
class Evaluation(Entry):
    """What :func:`evaluate` measured; read as attributes or as the mapping of the JSON keys
    (``result["sse_percent"]``); ``None`` is a measure that does not apply (no numeric
    column) and is written as null."""

    keep_none: ClassVar[bool] = True
    rows: int
    columns: list[str]
    sse: float
    sse_percent: float | None
    record_linkage_percent: float | None
    relative_error: float
    jsd: float
    variance_variation: float | None
    mean_variation: float | None
    rank_risk: float | None
    emd: float | None
    emd_exact: bool | None
    emd_bound: float | None
    per_attribute: dict[str, NumericDetail | CategoricalDetail]
    domains: dict[str, Domain]
    taxonomies: dict[str, TaxonomyRange]


def _numeric_details(c: _Compared) -> dict[str, NumericDetail | CategoricalDetail]:
    """SSE, JSD and the variations of variance and mean of each numeric column."""
    per_jsd = jsd(c.x, c.y, c.lows, c.highs)
    per_variance = variance_variation(c.x, c.y)
    per_mean = mean_variation(c.x, c.y)
    return {name: NumericDetail(sse=float(np.sum((c.x[:, j] - c.y[:, j]) ** 2)),
                                jsd=float(per_jsd[j]),
                                variance_variation=_optional(per_variance[j]),
                                mean_variation=_optional(per_mean[j]))
            for j, name in enumerate(c.numeric)}


def _categorical_details(c: _Compared, deltas: list[np.ndarray]
                         ) -> dict[str, NumericDetail | CategoricalDetail]:
    """SSE (of δ), JSD over the concepts and mean semantic distance of each categorical
    column, from its distances ``deltas`` between original categories and released concepts."""
    details: dict[str, NumericDetail | CategoricalDetail] = {}
    for j, (name, metric) in enumerate(zip(c.categorical, c.metrics, strict=True)):
        delta, bins = deltas[j], metric.n_concepts
        details[name] = CategoricalDetail(
            sse=float(np.sum(delta**2)),
            jsd=js_divergence(np.bincount(c.cx.codes[:, j], minlength=bins) / c.n,
                              np.bincount(c.cy[:, j], minlength=bins) / c.n),
            mean_semantic_distance=float(delta.mean()))
    return details


def _numeric_summary(c: _Compared) -> dict[str, Any]:
    """The measures defined on numeric columns only (None each without any)."""
    if not c.numeric:
        return dict.fromkeys(("sse_percent", "variance_variation", "mean_variation",
                              "rank_risk", "emd", "emd_exact", "emd_bound"))
    distance = emd(c.x, c.y, c.lows, c.highs, max_points=EVALUATE_EMD_POINTS)
    return {"sse_percent": sse_percent(c.x, c.y),
            "variance_variation": _finite_mean(variance_variation(c.x, c.y)),
            "mean_variation": _finite_mean(mean_variation(c.x, c.y)),
            "rank_risk": rank_risk(c.x, c.y),
            "emd": distance.value, "emd_exact": distance.exact, "emd_bound": distance.bound}


def evaluate(original: pd.DataFrame, masked: pd.DataFrame, schema: Schema | None = None,
             columns: Sequence[str] | None = None) -> Evaluation:
    """Utility and risk of ``masked`` as a release of ``original`` (same rows, same order).

    Keys: ``sse``, ``sse_percent``, ``record_linkage_percent``, ``relative_error``, ``jsd``,
    ``variance_variation``, ``mean_variation`` (means over attributes), ``rank_risk`` (003
    eq. 2, larger = safer) and ``emd`` (003 eq. 1, with ``emd_exact`` and ``emd_bound``, see
    :data:`EVALUATE_EMD_POINTS`) over the numeric
    attributes, and ``per_attribute`` and ``domains`` details. Distances for record linkage
    and the RE sanity bound use the declared domain width of each numeric attribute, or its
    range in the original when undeclared; categorical attributes use their taxonomy (a flat
    one when none is declared).
    """
    if len(original) != len(masked):
        raise InputError(
            f"the original has {len(original)} rows and the masked data {len(masked)}; "
            "a release must keep every row in order"
        )
    chosen = evaluation_columns(original, masked, schema, columns)
    base = (schema.complete(original) if schema is not None else Schema.infer(original))
    c = _compared(original, masked, base.select(chosen), chosen)
    widths = c.highs - c.lows
    deltas = [metric.distances[c.cx.codes[:, j], c.cy[:, j]]
              for j, metric in enumerate(c.metrics)]
    per_attribute = {**_numeric_details(c), **_categorical_details(c, deltas)}
    total_sse = sse(c.x, c.y) if c.numeric else 0.0
    for name in c.categorical:
        total_sse += per_attribute[name].sse
    errors = [relative_errors(c.x, c.y, widths)] if c.numeric else []
    numeric = _numeric_summary(c)
    linkage = record_linkage(c.x, c.y, widths, categories=(c.cx.codes, c.cy, c.cx.squared())
                             if c.categorical else None)
    return Evaluation(
        rows=int(c.n),
        columns=chosen,
        sse=float(total_sse),
        sse_percent=numeric["sse_percent"],
        record_linkage_percent=linkage,
        relative_error=float(np.concatenate([*errors, *deltas]).mean()),
        jsd=float(np.mean([per_attribute[name].jsd for name in chosen])),
        variance_variation=numeric["variance_variation"],
        mean_variation=numeric["mean_variation"],
        rank_risk=numeric["rank_risk"],
        emd=numeric["emd"],
        emd_exact=numeric["emd_exact"],
        emd_bound=numeric["emd_bound"],
        per_attribute={name: per_attribute[name] for name in chosen},
        domains={name: Domain(low=float(c.lows[j]), high=float(c.highs[j]),
                              source=c.sources[j])
                 for j, name in enumerate(c.numeric)},
        taxonomies={metric.name: TaxonomyRange(concepts=metric.n_concepts,
                                               boundaries=[metric.labels[metric.bottom],
                                                           metric.labels[metric.top]])
                    for metric in c.metrics},
    )
