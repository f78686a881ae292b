"""Compare an original table with its masked release: utility and disclosure risk in one call.

Numeric and categorical attributes are compared together, as in papers 000 §5.2 and 001 §4.2:
a categorical value's error is the semantic (or rank) distance δ between the original category
and the released concept, which may be an inner concept of the taxonomy. SSE adds δ² for
categorical values; the relative error averages |x − x'| / max(|x|, s_j) over numeric values
and δ over categorical ones; record linkage uses the distance of 000 eq. 8; the JSD of a
categorical attribute has one bin per concept. SSE/SST and the variations of means and
variances concern numeric attributes only.

A release whose rows are not those of the original in the same order (a DP release writes them
in a random order) is evaluated with ``aligned=False``: the record-level measures (SSE, SSE/SST,
relative error, record linkage, rank risk) compare row i with row i and are left out (None),
the distributional ones (JSD, variations of means and variances, EMD) are computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.core.distance import Categorical
from microagg.data.schema import Role, Schema
from microagg.data.table import Table, category_labels, encode
from microagg.data.taxonomy import CategoryMetric
from microagg.errors import InputError, ParameterError
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

__all__ = ["EVALUATE_EMD_POINTS", "RECORD_LEVEL", "CategoricalDetail", "Evaluation",
           "NumericDetail", "TaxonomyRange", "attribute_domains", "evaluate",
           "evaluation_columns"]

EVALUATE_EMD_POINTS = 2000
"""``evaluate`` computes the EMD exactly up to this many records and with MDAV clusters of
⌈n / 2000⌉ records above (with ``emd_bound``): a 32 MB problem, a fraction of a second.
:func:`microagg.evaluation.compare` uses the exact EMD up to 5,000 records."""

RECORD_LEVEL = ("sse", "sse_percent", "record_linkage_percent", "relative_error", "rank_risk")
"""The measures that compare row i of the original with row i of the release."""

NOT_ALIGNED = ("the rows of the release are not those of the original in the same order: it "
               "compares row i with row i")


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
         else np.empty((len(masked), 0)))
    lows, highs, sources = attribute_domains(selected.select(numeric), x)
    metrics = tuple(table.metric(c) for c in categorical)
    cx = Categorical(np.column_stack([table.code_column(c) for c in categorical])
                     if categorical else np.empty((table.n_rows, 0), dtype=np.int64), metrics)
    cy = (np.column_stack([released_concepts(masked[c], m) for c, m in
                           zip(categorical, metrics, strict=True)])
          if categorical else np.empty((len(masked), 0), dtype=np.int64))
    return _Compared(table.n_rows, numeric, categorical, x, y, lows, highs, sources, metrics,
                     cx, cy)


@dataclass(frozen=True, eq=False)
class NumericDetail(Entry):
    """The measures of one numeric column (``None``: undefined, e.g. a constant column's
    variance variation, or the SSE of rows not aligned)."""

    keep_none: ClassVar[bool] = True
    sse: float | None
    jsd: float
    variance_variation: float | None
    mean_variation: float | None


@dataclass(frozen=True, eq=False)
class CategoricalDetail(Entry):
    """The measures of one categorical column (the record-level ones ``None`` when the rows
    are not aligned)."""

    keep_none: ClassVar[bool] = True
    sse: float | None  # of the semantic distances δ
    jsd: float  # over the concepts
    mean_semantic_distance: float | None


@dataclass(frozen=True, eq=False)
class TaxonomyRange(Entry):
    """A categorical column's taxonomy: its concepts and its bottom and top labels."""

    concepts: int
    boundaries: list[str]


@dataclass(frozen=True, eq=False)
class Evaluation(Entry):
    """What :func:`evaluate` measured; read as attributes or as the mapping of the JSON keys
    (``result["sse_percent"]``); ``None`` is a measure that does not apply (no numeric
    column, rows not aligned, a measure skipped) and is written as null. ``aligned`` says
    whether the record-level measures were asked for; ``skipped`` names each measure left out
    and why."""

    keep_none: ClassVar[bool] = True
    rows: int
    columns: list[str]
    sse: float | None
    sse_percent: float | None
    record_linkage_percent: float | None
    relative_error: float | None
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
    aligned: bool = True
    skipped: dict[str, str] = field(default_factory=dict)


def _numeric_details(c: _Compared, aligned: bool
                     ) -> dict[str, NumericDetail | CategoricalDetail]:
    """SSE (rows aligned only), JSD and the variations of variance and mean of each numeric
    column."""
    per_jsd = jsd(c.x, c.y, c.lows, c.highs)
    per_variance = variance_variation(c.x, c.y)
    per_mean = mean_variation(c.x, c.y)
    return {name: NumericDetail(sse=float(np.sum((c.x[:, j] - c.y[:, j]) ** 2)) if aligned
                                else None,
                                jsd=float(per_jsd[j]),
                                variance_variation=_optional(per_variance[j]),
                                mean_variation=_optional(per_mean[j]))
            for j, name in enumerate(c.numeric)}


def _categorical_details(c: _Compared, deltas: list[np.ndarray] | None
                         ) -> dict[str, NumericDetail | CategoricalDetail]:
    """SSE (of δ), JSD over the concepts and mean semantic distance of each categorical
    column, from its distances ``deltas`` between original categories and released concepts
    (``None``: rows not aligned, JSD only)."""
    details: dict[str, NumericDetail | CategoricalDetail] = {}
    for j, (name, metric) in enumerate(zip(c.categorical, c.metrics, strict=True)):
        delta, bins = None if deltas is None else deltas[j], metric.n_concepts
        details[name] = CategoricalDetail(
            sse=None if delta is None else float(np.sum(delta**2)),
            jsd=js_divergence(np.bincount(c.cx.codes[:, j], minlength=bins) / c.n,
                              np.bincount(c.cy[:, j], minlength=bins) / len(c.cy)),
            mean_semantic_distance=None if delta is None else float(delta.mean()))
    return details


def _numeric_summary(c: _Compared, skipped: dict[str, str]) -> dict[str, Any]:
    """The measures defined on numeric columns only (None each without any, or skipped)."""
    summary: dict[str, Any] = dict.fromkeys(("sse_percent", "variance_variation",
                                             "mean_variation", "rank_risk", "emd", "emd_exact",
                                             "emd_bound"))
    if not c.numeric:
        return summary
    summary["variance_variation"] = _finite_mean(variance_variation(c.x, c.y))
    summary["mean_variation"] = _finite_mean(mean_variation(c.x, c.y))
    if "sse_percent" not in skipped:
        summary["sse_percent"] = sse_percent(c.x, c.y)
        summary["rank_risk"] = rank_risk(c.x, c.y)
    if "emd" not in skipped:
        distance = emd(c.x, c.y, c.lows, c.highs, max_points=EVALUATE_EMD_POINTS)
        summary.update(emd=distance.value, emd_exact=distance.exact, emd_bound=distance.bound)
    return summary


def _skipped(n: int, aligned: bool, costly_max_rows: int | None) -> dict[str, str]:
    """The measures left out, and why: the record-level ones when the rows are not aligned;
    record linkage and the EMD above ``costly_max_rows`` rows."""
    if costly_max_rows is not None and costly_max_rows < 0:
        raise ParameterError("costly_max_rows", f"must be 0 or more, got {costly_max_rows}")
    skipped = dict.fromkeys(RECORD_LEVEL, NOT_ALIGNED) if not aligned else {}
    if costly_max_rows is not None and n > costly_max_rows:
        reason = (f"skipped above {costly_max_rows:,} rows ({n:,} here): its cost grows with "
                  "the square of the rows (microagg evaluate computes it)")
        skipped.setdefault("record_linkage_percent", reason)
        skipped["emd"] = reason
    return skipped


def evaluate(original: pd.DataFrame, masked: pd.DataFrame, schema: Schema | None = None,
             columns: Sequence[str] | None = None, *, aligned: bool = True,
             costly_max_rows: int | None = None) -> Evaluation:
    """Utility and risk of ``masked`` as a release of ``original`` (same rows, same order,
    unless ``aligned`` is False).

    Keys: ``sse``, ``sse_percent``, ``record_linkage_percent``, ``relative_error``, ``jsd``,
    ``variance_variation``, ``mean_variation`` (means over attributes), ``rank_risk`` (003
    eq. 2, larger = safer) and ``emd`` (003 eq. 1, with ``emd_exact`` and ``emd_bound``, see
    :data:`EVALUATE_EMD_POINTS`) over the numeric
    attributes, and ``per_attribute`` and ``domains`` details. Distances for record linkage
    and the RE sanity bound use the declared domain width of each numeric attribute, or its
    range in the original when undeclared; categorical attributes use their taxonomy (a flat
    one when none is declared).

    ``aligned=False`` says that the rows of ``masked`` are not those of ``original`` in the
    same order (a DP release): the record-level measures (:data:`RECORD_LEVEL`) are then None
    and named in ``skipped``, and the two may have different numbers of rows.
    ``costly_max_rows`` skips record linkage and the EMD above that many rows (their cost
    grows with the square of the rows); ``None`` computes them at any size.

    Examples
    --------
    >>> import pandas as pd
    >>> original = pd.DataFrame({"age": [20.0, 30.0, 40.0, 50.0]})
    >>> shuffled = pd.DataFrame({"age": [50.0, 20.0, 40.0, 30.0]})
    >>> evaluate(original, shuffled)["sse"]  # row i against row i
    1400.0
    >>> result = evaluate(original, shuffled, aligned=False)
    >>> result.sse is None, result.jsd, result.mean_variation
    (True, 0.0, 0.0)
    """
    if aligned and len(original) != len(masked):
        raise InputError(
            f"the original has {len(original)} rows and the masked data {len(masked)}; "
            "a release must keep every row in order"
        )
    chosen = evaluation_columns(original, masked, schema, columns)
    base = (schema.complete(original) if schema is not None else Schema.infer(original))
    c = _compared(original, masked, base.select(chosen), chosen)
    skipped = _skipped(c.n, aligned, costly_max_rows)
    deltas = ([metric.distances[c.cx.codes[:, j], c.cy[:, j]]
               for j, metric in enumerate(c.metrics)] if aligned else None)
    per_attribute = {**_numeric_details(c, aligned), **_categorical_details(c, deltas)}
    numeric = _numeric_summary(c, skipped)
    record = _record_level(c, deltas, skipped) if deltas is not None else dict.fromkeys(
        ("sse", "relative_error", "record_linkage_percent"))
    return Evaluation(
        rows=int(c.n),
        columns=chosen,
        sse=record["sse"],
        sse_percent=numeric["sse_percent"],
        record_linkage_percent=record["record_linkage_percent"],
        relative_error=record["relative_error"],
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
        aligned=aligned,
        skipped=skipped,
    )


def _record_level(c: _Compared, deltas: list[np.ndarray], skipped: dict[str, str]
                  ) -> dict[str, float | None]:
    """SSE (δ² for categories), relative error and record linkage (unless skipped) of rows
    aligned with the original's."""
    widths = c.highs - c.lows
    total = (sse(c.x, c.y) if c.numeric else 0.0) + sum(float(np.sum(d**2)) for d in deltas)
    errors = [relative_errors(c.x, c.y, widths)] if c.numeric else []
    linkage = None if "record_linkage_percent" in skipped else record_linkage(
        c.x, c.y, widths, categories=(c.cx.codes, c.cy, c.cx.squared())
        if c.categorical else None)
    return {"sse": float(total),
            "relative_error": float(np.concatenate([*errors, *deltas]).mean()),
            "record_linkage_percent": linkage}
