"""The report of a k-anonymous, t-close or masked release as measured on its input
(``OUT.report.json``, a :class:`~microagg.release.reports.sidecar.ReleaseRecord`): the columns by
role, the guarantee in a sentence, the disclosure risk before and after and the utility kept,
from :func:`~microagg.evaluation.evaluate.evaluate` (numeric columns) or the key frequencies
(the methods for categorical keys). The record's format and what is written of it are
declared in :mod:`microagg.release.reports.sidecar`; the figures are made here, beside the measures
they use.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.frequencies import value_ids
from microagg.data.schema import Schema
from microagg.data.table import category_labels, missing_mask
from microagg.errors import InputError
from microagg.evaluation.utility import js_divergence
from microagg.release.base import Release
from microagg.release.methods.base import ReleaseMethod
from microagg.release.reports.key_reports import KeyReport, KeyRisk
from microagg.release.reports.report import (
    KAnonymityReport,
    MaskingReport,
    PrivacyReport,
    TClosenessReport,
    plain,
)
from microagg.release.reports.sidecar import (
    COSTLY_MAX_ROWS,
    EMD_SKIPPED,
    MEASURES,
    ColumnRoles,
    Guarantee,
    InputFile,
    ReleaseRecord,
    Risk,
    Utility,
    created_now,
    plain_parameters,
)
from microagg.version import installed_version

__all__ = ["release_record"]


def _risk(frame: pd.DataFrame, columns: Sequence[str], **after: float | None) -> Risk:
    sizes = np.bincount(value_ids(frame, list(columns)))
    return Risk(records=len(frame), unique_percent=float(100.0 * (sizes == 1).sum() / len(frame)),
                smallest_class=int(sizes.min()), classes=int(sizes.size), **after)


def _roles(report: KAnonymityReport | TClosenessReport | MaskingReport) -> ColumnRoles:
    if isinstance(report, TClosenessReport):
        return ColumnRoles(masked=report.quasi_identifiers, confidential=report.confidential,
                           released_unchanged=[c for c in report.released_unchanged
                                               if c not in report.confidential],
                           identifiers_dropped=report.identifiers_dropped)
    return ColumnRoles(masked=report.columns, confidential=[],
                       released_unchanged=report.released_unchanged,
                       identifiers_dropped=report.identifiers_dropped)


def _guarantee(report: KAnonymityReport | TClosenessReport | MaskingReport) -> Guarantee:
    if isinstance(report, MaskingReport):
        return Guarantee(f"No ex-ante guarantee: {report.method} perturbs "
                         f"{', '.join(report.columns)}; the risk below is measured, not "
                         "bounded.", False, report.columns, "none (a masking)")
    if isinstance(report, TClosenessReport):
        holds = bool(report.k_anonymity.holds and report.t_closeness_holds)
        return Guarantee(
            f"Every combination of the quasi-identifiers ({', '.join(report.quasi_identifiers)}) "
            f"is shared by at least {report.k} records, and in every such class the "
            f"distribution of {', '.join(report.confidential)} lies within EMD t = {report.t:g} "
            f"of its distribution in the whole table{'' if holds else ' (does NOT hold)'}."
            + (" A missing value matches any value: the class of a record is the set of "
               "records that agree with it on every quasi-identifier both have."
               if any(c in report.missing_values for c in report.quasi_identifiers) else ""),
            holds, report.quasi_identifiers + report.confidential,
            "k-anonymous t-closeness: identity and attribute disclosure over the "
            "quasi-identifiers; no protection against knowledge outside these columns")
    holds = bool(report.k_anonymity.holds)
    unchanged = (f" The table as written, with {', '.join(report.released_unchanged)}, has a "
                 f"smallest class of {report.k_anonymity_as_written.smallest_class}."
                 if report.released_unchanged else "")
    return Guarantee(
        f"Every combination of the masked columns ({', '.join(report.columns)}) is shared by "
        f"at least {report.k} records{'' if holds else ' (does NOT hold)'}.{unchanged}",
        holds, report.columns,
        "k-anonymity: identity disclosure over the masked columns; the values of other "
        "columns and attribute disclosure inside a class are not protected")


def release_record(release: Release[Any], original: pd.DataFrame, *, method: ReleaseMethod,
                   source: Path | None = None, schema: Schema | None = None,
                   costly_max_rows: int | None = COSTLY_MAX_ROWS,
                   measure: bool = True) -> ReleaseRecord:
    """The report of ``release``, made by ``method`` from ``original`` (read from the file
    ``source``, hashed here) with ``schema``: provenance, columns by role, guarantee, risk
    before and after, utility (not with ``measure`` False), and the method's own report. A
    DP release has :func:`privacy_record` instead.

    Examples
    --------
    >>> import microagg
    >>> data = microagg.datasets.synthetic(300, 2, seed=0)
    >>> method = microagg.MDAV(k=5)
    >>> release = method.release(data.frame, schema=data.schema)
    >>> record = release_record(release, data.frame, method=method, schema=data.schema)
    >>> record.risk["after"].smallest_class >= 5, record.to_dict()["format"]
    (True, 'microagg-report/1')
    """
    report = release.report
    if isinstance(report, PrivacyReport):
        raise InputError("a DP release publishes no figure computed from the raw data: use "
                         "privacy_record")
    if isinstance(report, KeyReport):  # categorical keys: frequencies, changes per column
        roles, guarantee, risk, gained, measures = _key_parts(report, original,
                                                                release.frame)
        return ReleaseRecord(
            method=report.method, family=str(method.family),
            parameters=plain_parameters(method), input=InputFile.of(source),
            microagg_version=installed_version(), created=created_now(), records=len(release.frame),
            rows_aligned=True, columns=roles, guarantee=guarantee,
            risk=risk if measure else {}, utility=gained if measure else None,
            measures=measures, skipped={}, report=report.to_dict())
    roles = _roles(report)
    if not measure:
        return ReleaseRecord(
            method=report.method, family=str(method.family),
            parameters=plain_parameters(method), input=InputFile.of(source),
            microagg_version=installed_version(), created=created_now(), records=len(release.frame),
            rows_aligned=True, columns=roles, guarantee=_guarantee(report), risk={},
            utility=None, measures=MEASURES, skipped={}, report=report.to_dict())
    before = original.loc[release.frame.index] if len(release.frame) != len(original) \
        else original
    from microagg.evaluation.evaluate import evaluate

    # missing values count as evaluate's rules say (the values present; missing_rule)
    measured = evaluate(before, release.frame, schema, roles.masked,
                        costly_max_rows=costly_max_rows, skip={"emd": EMD_SKIPPED})
    skipped = dict(measured.skipped)
    if measured.missing_values:
        skipped["missing_values"] = (
            "utility and record-level risk use the values present ("
            + ", ".join(f"{c}: {m.original:,} missing in the input, {m.masked:,} in the "
                        f"release" for c, m in measured.missing_values.items())
            + "): SSE, SSE/SST and relative error over the values present in both, means, "
            "variances and JSD over each table's, record linkage with distances over the "
            "attributes both records have, the EMD and the rank risk on complete records")
    utility = Utility(measured.sse_percent, measured.relative_error, measured.jsd,
                      measured.mean_variation, measured.variance_variation, measured.emd,
                      measured.emd_bound, plain(measured.per_attribute))
    risk = {"before": _risk(before, roles.masked),
            "after": _risk(release.frame, roles.masked,
                           record_linkage_percent=measured.record_linkage_percent,
                           rank_risk=measured.rank_risk)}
    return ReleaseRecord(
        method=report.method, family=str(method.family), parameters=plain_parameters(method),
        input=InputFile.of(source), microagg_version=installed_version(), created=created_now(),
        records=len(release.frame), rows_aligned=True, columns=roles,
        guarantee=_guarantee(report), risk=risk, utility=utility, measures=MEASURES,
        skipped=skipped, report=report.to_dict())


def _key_parts(report: KeyReport, original: pd.DataFrame, written: pd.DataFrame
                 ) -> tuple[ColumnRoles, Guarantee, dict[str, Risk], Utility, str]:
    """The columns, guarantee, risk, utility and measures of ``OUT.report.json`` for a
    release of this family (:func:`release_record`): risk over
    the keys with a missing value matching any value; utility per changed column."""
    # every key is protected, whether or not the method changed its cells
    protected = list(dict.fromkeys([*report.keys, *report.changed]))
    roles = ColumnRoles(masked=protected, confidential=[],
                        released_unchanged=[c for c in report.released_unchanged
                                            if c not in protected],
                        identifiers_dropped=report.identifiers_dropped)
    statement, holds, semantics = report.guarantee()
    guarantee = Guarantee(statement, holds, list(report.keys), semantics)
    risk = {"before": _key_risk(report.before, len(original)),
            "after": _key_risk(report.after, len(written))}
    per: dict[str, Any] = {}
    for column in report.changed:
        a, b = _labels(original[column]), _labels(written[column])
        bins = sorted(set(a) | set(b))
        p = pd.Series(a).value_counts().reindex(bins, fill_value=0).to_numpy(float)
        r = pd.Series(b).value_counts().reindex(bins, fill_value=0).to_numpy(float)
        changed = int((a != b).sum())
        per[column] = {"changed": changed, "changed_percent": 100.0 * changed / len(a),
                       "missing_before": int((a == _MISSING).sum()),
                       "missing_after": int((b == _MISSING).sum()),
                       "categories_before": len(set(a) - {_MISSING}),
                       "categories_after": len(set(b) - {_MISSING}),
                       "jsd": js_divergence(p / p.sum(), r / r.sum())}
    mean_jsd = float(np.mean([v["jsd"] for v in per.values()])) if per else 0.0
    utility = Utility(None, None, mean_jsd, None, None, None, None, per)
    measures = ("risk: the sample frequencies f_k of the keys, a missing value matching any "
                "value, within each stratum when there are strata (unique_percent: records "
                "with f_k = 1; smallest_class: the smallest f_k). Utility, per changed "
                "column: the values changed, the missing values and categories before and "
                "after, and the Jensen-Shannon divergence (base 2) "
                "of its marginal, a missing value counted as a category; jsd is their mean")
    return roles, guarantee, risk, utility, measures


_MISSING = "\x00missing"


def _labels(series: pd.Series) -> np.ndarray:
    labels = category_labels(series).to_numpy(dtype=object)
    labels[missing_mask(series)] = _MISSING
    return labels


def _key_risk(frequencies: KeyRisk, records: int) -> Risk:
    return Risk(records=records,
                unique_percent=float(100.0 * frequencies.sample_uniques / records),
                smallest_class=frequencies.smallest_class, classes=frequencies.classes)
