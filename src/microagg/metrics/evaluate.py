"""Compare an original table with its masked release: utility and disclosure risk in one call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from microagg.errors import InputError
from microagg.metrics.risk import record_linkage
from microagg.metrics.utility import (
    jsd,
    mean_variation,
    relative_error,
    sse,
    sse_percent,
    variance_variation,
)
from microagg.schema import Schema
from microagg.table import encode

__all__ = ["attribute_domains", "evaluate", "evaluation_columns"]


def evaluation_columns(original: pd.DataFrame, masked: pd.DataFrame, schema: Schema | None,
                       columns: Sequence[str] | None) -> list[str]:
    """The columns to compare: ``columns`` if given, else the schema's numeric
    quasi-identifiers, else every numeric column of the original."""
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
        chosen = [a.name for a in schema if a.role.value == "quasi" and a.is_numeric]
    else:
        chosen = [str(c) for c in original.columns
                  if pd.api.types.is_numeric_dtype(original[c])
                  and not pd.api.types.is_bool_dtype(original[c])]
    chosen = [c for c in chosen if c in masked.columns]
    if not chosen:
        raise InputError("no numeric column to compare; name them with --columns")
    return chosen


def attribute_domains(
    schema: Schema, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Domain bounds per column: declared in the schema, else the range of ``values``.

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


def _numeric_schema(schema: Schema | None, frame: pd.DataFrame, columns: list[str]) -> Schema:
    base = schema.complete(frame) if schema is not None else Schema.infer(frame)
    selected = base.select(columns)
    for attribute in selected:
        if not attribute.is_numeric:
            raise InputError(
                f"column '{attribute.name}' is {attribute.kind}; evaluate compares numeric columns"
            )
    return selected


def _finite_mean(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def evaluate(original: pd.DataFrame, masked: pd.DataFrame, schema: Schema | None = None,
             columns: Sequence[str] | None = None) -> dict[str, Any]:
    """Utility and risk of ``masked`` as a release of ``original`` (same rows, same order).

    Keys: ``sse``, ``sse_percent``, ``record_linkage_percent``, ``relative_error``, ``jsd``,
    ``variance_variation``, ``mean_variation`` (means over attributes), and ``per_attribute``
    and ``domains`` details. Distances for record linkage and the RE sanity bound use the
    declared domain width of each attribute, or its range in the original when undeclared.
    """
    if len(original) != len(masked):
        raise InputError(
            f"the original has {len(original)} rows and the masked data {len(masked)}; "
            "a release must keep every row in order"
        )
    chosen = evaluation_columns(original, masked, schema, columns)
    numeric_schema = _numeric_schema(schema, original, chosen)
    x = encode(original[chosen], numeric_schema).numeric
    undeclared = Schema(tuple(replace(a, domain=None) for a in numeric_schema))
    y = encode(masked[chosen], undeclared).numeric
    lows, highs, sources = attribute_domains(numeric_schema, x)
    widths = highs - lows
    per_jsd = jsd(x, y, lows, highs)
    per_variance = variance_variation(x, y)
    per_mean = mean_variation(x, y)
    per_sse = np.sum((x - y) ** 2, axis=0)
    return {
        "rows": int(x.shape[0]),
        "columns": chosen,
        "sse": sse(x, y),
        "sse_percent": sse_percent(x, y),
        "record_linkage_percent": record_linkage(x, y, widths),
        "relative_error": relative_error(x, y, widths),
        "jsd": float(per_jsd.mean()),
        "variance_variation": _finite_mean(per_variance),
        "mean_variation": _finite_mean(per_mean),
        "per_attribute": {
            name: {
                "sse": float(per_sse[j]),
                "jsd": float(per_jsd[j]),
                "variance_variation": None if np.isnan(per_variance[j]) else float(per_variance[j]),
                "mean_variation": None if np.isnan(per_mean[j]) else float(per_mean[j]),
            }
            for j, name in enumerate(chosen)
        },
        "domains": {
            name: {"low": float(lows[j]), "high": float(highs[j]), "source": sources[j]}
            for j, name in enumerate(chosen)
        },
    }
