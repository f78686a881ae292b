"""Compare an original table with its masked release: utility and disclosure risk in one call.

Numeric and categorical attributes are compared together, as in papers 000 §5.2 and 001 §4.2:
a categorical value's error is the semantic (or rank) distance δ between the original category
and the released concept, which may be an inner concept of the taxonomy. SSE adds δ² for
categorical values; the relative error averages ``|x − x'| / max(|x|, s_j)`` over numeric values
and δ over categorical ones; record linkage uses the distance of 000 eq. 8; the JSD of a
categorical attribute has one bin per concept. SSE/SST and the variations of means and
variances concern numeric attributes only.

Missing values (NaN, empty cells) are kept, and each measure says how it treats them
(:data:`~microagg.evaluation.compared.MISSING_RULES`, in ``missing_rule`` when there are
any; the counts per column in ``missing_values``): SSE, SSE/SST and the relative error
compare the values present in both tables; variances, means and histograms (JSD) use each
table's own values present; record linkage measures distances over the attributes both
records have, rescaled by ``p / |O_xy|`` (as MDAV with missing values); the rank risk and the
EMD, which compare whole records, use the records complete in the numeric columns.

A release whose rows are not those of the original in the same order (a DP release writes them
in a random order) is evaluated with ``aligned=False``: the record-level measures (SSE, SSE/SST,
relative error, record linkage, rank risk) compare row i with row i and are left out (None),
the distributional ones (JSD, variations of means and variances, EMD) are computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.data.schema import Schema
from microagg.errors import InputError, ParameterError
from microagg.evaluation.compared import (
    MISSING_RULES,
    Compared,
    MissingCount,
    attribute_domains,
    compared,
    complete_rows,
    evaluation_columns,
    missing_counts,
    missing_rule,
    present_deltas,
    shares,
)
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
from microagg.release.reports.report import Domain, Entry

__all__ = ["EVALUATE_EMD_POINTS", "MISSING_RULES", "RECORD_LEVEL", "CategoricalDetail",
           "Evaluation", "MissingCount", "NumericDetail", "TaxonomyRange", "attribute_domains",
           "evaluate", "evaluation_columns"]

EVALUATE_EMD_POINTS = 2000
"""``evaluate`` computes the EMD exactly up to this many records and with MDAV clusters of
⌈n / 2000⌉ records above (with ``emd_bound``): a 32 MB problem, a fraction of a second.
:func:`microagg.evaluation.compare` uses the exact EMD up to 5,000 records."""

RECORD_LEVEL = ("sse", "sse_percent", "record_linkage_percent", "relative_error", "rank_risk")
"""The measures that compare row i of the original with row i of the release."""

NOT_ALIGNED = ("the rows of the release are not those of the original in the same order: it "
               "compares row i with row i")



def _finite_mean(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def _optional(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


@dataclass(frozen=True, eq=False)
class NumericDetail(Entry):
    """The measures of one numeric column (``None``: undefined, e.g. a constant column's
    variance variation, or the SSE of rows not aligned)."""

    keep_none: ClassVar[bool] = True
    sse: float | None
    jsd: float | None  # None: no value present on one side
    variance_variation: float | None
    mean_variation: float | None


@dataclass(frozen=True, eq=False)
class CategoricalDetail(Entry):
    """The measures of one categorical column (the record-level ones ``None`` when the rows
    are not aligned)."""

    keep_none: ClassVar[bool] = True
    sse: float | None  # of the semantic distances δ
    jsd: float | None  # over the concepts (None: no value present on one side)
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
    missing_values: dict[str, MissingCount] = field(default_factory=dict)
    missing_rule: dict[str, str] = field(default_factory=dict)


def _numeric_details(c: Compared, aligned: bool
                     ) -> dict[str, NumericDetail | CategoricalDetail]:
    """SSE (rows aligned only), JSD and the variations of variance and mean of each numeric
    column."""
    per_jsd = jsd(c.x, c.y, c.lows, c.highs)
    per_variance = variance_variation(c.x, c.y)
    per_mean = mean_variation(c.x, c.y)
    return {name: NumericDetail(sse=float(np.nansum((c.x[:, j] - c.y[:, j]) ** 2)) if aligned
                                else None,
                                jsd=_optional(per_jsd[j]),
                                variance_variation=_optional(per_variance[j]),
                                mean_variation=_optional(per_mean[j]))
            for j, name in enumerate(c.numeric)}


def _categorical_details(c: Compared, deltas: list[np.ndarray] | None
                         ) -> dict[str, NumericDetail | CategoricalDetail]:
    """SSE (of δ), JSD over the concepts and mean semantic distance of each categorical
    column, from its distances ``deltas`` between original categories and released concepts
    (``None``: rows not aligned, JSD only)."""
    details: dict[str, NumericDetail | CategoricalDetail] = {}
    for j, (name, metric) in enumerate(zip(c.categorical, c.metrics, strict=True)):
        delta, bins = None if deltas is None else deltas[j], metric.n_concepts
        details[name] = CategoricalDetail(
            sse=None if delta is None else float(np.sum(delta**2)),
            jsd=_optional(js_divergence(shares(c.cx.codes[:, j], bins),
                                        shares(c.cy[:, j], bins))),
            mean_semantic_distance=(None if delta is None or not delta.size
                                    else float(delta.mean())))
    return details


def _numeric_summary(c: Compared, skipped: dict[str, str]) -> dict[str, Any]:
    """The measures defined on numeric columns only (None each without any, or skipped)."""
    summary: dict[str, Any] = dict.fromkeys(("sse_percent", "variance_variation",
                                             "mean_variation", "rank_risk", "emd", "emd_exact",
                                             "emd_bound"))
    if not c.numeric:
        return summary
    summary["variance_variation"] = _finite_mean(variance_variation(c.x, c.y))
    summary["mean_variation"] = _finite_mean(mean_variation(c.x, c.y))
    if "sse_percent" not in skipped:
        summary["sse_percent"] = _optional(sse_percent(c.x, c.y))
    if "rank_risk" not in skipped:
        both = complete_rows(c.x) & complete_rows(c.y)
        if both.any():
            summary["rank_risk"] = rank_risk(c.x[both], c.y[both])
        else:
            skipped["rank_risk"] = "no record is complete in the numeric columns in both tables"
    if "emd" not in skipped:
        x, y = c.x[complete_rows(c.x)], c.y[complete_rows(c.y)]
        if x.shape[0] and y.shape[0]:
            distance = emd(x, y, c.lows, c.highs, max_points=EVALUATE_EMD_POINTS)
            summary.update(emd=distance.value, emd_exact=distance.exact,
                           emd_bound=distance.bound)
        else:
            skipped["emd"] = "a table has no record complete in the numeric columns"
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
        skipped.setdefault("rank_risk", reason)
        skipped["emd"] = reason
    return skipped


def evaluate(original: pd.DataFrame, masked: pd.DataFrame, schema: Schema | None = None,
             columns: Sequence[str] | None = None, *, aligned: bool = True,
             costly_max_rows: int | None = None,
             skip: Mapping[str, str] | None = None) -> Evaluation:
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
    ``costly_max_rows`` skips record linkage, the rank risk and the EMD above that many rows
    (record linkage's cost grows with the square of the rows, the others' take longer than
    a release on 10⁵ rows); ``None`` computes them at any size. ``skip`` names
    further measures not to compute (``emd``, ``record_linkage_percent``, ``rank_risk``),
    each with the reason that ``skipped`` then gives.

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
    c = compared(original, masked, base.select(chosen), chosen)
    skipped = {**_skipped(c.n, aligned, costly_max_rows), **(skip or {})}
    deltas = present_deltas(c) if aligned else None
    per_attribute = {**_numeric_details(c, aligned), **_categorical_details(c, deltas)}
    present = [j for name in chosen if (j := per_attribute[name].jsd) is not None]
    if not present:
        raise InputError("no compared column has a value present in both tables")
    missing = missing_counts(c, aligned)
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
        jsd=float(np.mean(present)),
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
        missing_values=missing,
        missing_rule=missing_rule(c, missing),
    )


def _record_level(c: Compared, deltas: list[np.ndarray], skipped: dict[str, str]
                  ) -> dict[str, float | None]:
    """SSE (δ² for categories), relative error and record linkage (unless skipped) of rows
    aligned with the original's."""
    widths = c.highs - c.lows
    total = (sse(c.x, c.y) if c.numeric else 0.0) + sum(float(np.sum(d**2)) for d in deltas)
    errors = np.concatenate([*([relative_errors(c.x, c.y, widths)] if c.numeric else []),
                             *deltas])
    linkage = None if "record_linkage_percent" in skipped else record_linkage(
        c.x, c.y, widths, categories=(c.cx.codes, c.cy, c.cx.squared())
        if c.categorical else None)
    return {"sse": float(total),
            "relative_error": float(errors.mean()) if errors.size else None,
            "record_linkage_percent": linkage}
