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
from dataclasses import replace
from typing import Any

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

__all__ = ["EVALUATE_EMD_POINTS", "attribute_domains", "evaluate", "evaluation_columns"]

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
    index = pd.Index(list(metric.labels)).get_indexer(labels)
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


def evaluate(original: pd.DataFrame, masked: pd.DataFrame, schema: Schema | None = None,
             columns: Sequence[str] | None = None) -> dict[str, Any]:
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
    selected = base.select(chosen)
    table: Table = encode(original[chosen], selected)
    numeric = [c for c in chosen if selected[c].is_numeric]
    categorical = [c for c in chosen if selected[c].is_categorical]

    x = table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0))
    undeclared = Schema(tuple(replace(a, domain=None) for a in selected.select(numeric)))
    y = (encode(masked[numeric], undeclared).numeric if numeric
         else np.empty((table.n_rows, 0)))
    lows, highs, sources = attribute_domains(selected.select(numeric), x)
    widths = highs - lows
    metrics = tuple(table.metric(c) for c in categorical)
    cx = Categorical(np.column_stack([table.code_column(c) for c in categorical])
                     if categorical else np.empty((table.n_rows, 0), dtype=np.int64), metrics)
    cy = (np.column_stack([released_concepts(masked[c], m) for c, m in
                           zip(categorical, metrics, strict=True)])
          if categorical else np.empty((table.n_rows, 0), dtype=np.int64))

    per_attribute: dict[str, dict[str, float | None]] = {}
    errors: list[np.ndarray] = []
    total_sse = sse(x, y) if numeric else 0.0
    if numeric:
        per_jsd = jsd(x, y, lows, highs)
        per_variance = variance_variation(x, y)
        per_mean = mean_variation(x, y)
        errors.append(relative_errors(x, y, widths))
        for j, name in enumerate(numeric):
            per_attribute[name] = {
                "sse": float(np.sum((x[:, j] - y[:, j]) ** 2)),
                "jsd": float(per_jsd[j]),
                "variance_variation": _optional(per_variance[j]),
                "mean_variation": _optional(per_mean[j]),
            }
    for j, (name, metric) in enumerate(zip(categorical, metrics, strict=True)):
        delta = metric.distances[cx.codes[:, j], cy[:, j]]
        total_sse += float(np.sum(delta**2))
        errors.append(delta)
        bins = metric.n_concepts
        per_attribute[name] = {
            "sse": float(np.sum(delta**2)),
            "jsd": js_divergence(np.bincount(cx.codes[:, j], minlength=bins) / table.n_rows,
                                 np.bincount(cy[:, j], minlength=bins) / table.n_rows),
            "mean_semantic_distance": float(delta.mean()),
        }
    distance = emd(x, y, lows, highs, max_points=EVALUATE_EMD_POINTS) if numeric else None
    linkage = record_linkage(x, y, widths,
                             categories=(cx.codes, cy, cx.squared()) if categorical else None)
    return {
        "rows": int(table.n_rows),
        "columns": chosen,
        "sse": float(total_sse),
        "sse_percent": sse_percent(x, y) if numeric else None,
        "record_linkage_percent": linkage,
        "relative_error": float(np.concatenate(errors).mean()),
        "jsd": float(np.mean([per_attribute[c]["jsd"] for c in chosen])),
        "variance_variation": _finite_mean(variance_variation(x, y)) if numeric else None,
        "mean_variation": _finite_mean(mean_variation(x, y)) if numeric else None,
        "rank_risk": rank_risk(x, y) if numeric else None,
        "emd": distance.value if distance is not None else None,
        "emd_exact": distance.exact if distance is not None else None,
        "emd_bound": distance.bound if distance is not None else None,
        "per_attribute": {c: per_attribute[c] for c in chosen},
        "domains": {
            name: {"low": float(lows[j]), "high": float(highs[j]), "source": sources[j]}
            for j, name in enumerate(numeric)
        },
        "taxonomies": {metric.name: {"concepts": metric.n_concepts,
                                     "boundaries": [metric.labels[metric.bottom],
                                                    metric.labels[metric.top]]}
                       for metric in metrics},
    }
