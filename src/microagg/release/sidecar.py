"""The report written beside every release: ``OUT.report.json`` for a k-anonymous, t-close
or masked release, ``OUT.privacy.json`` for a DP one.

A :class:`ReleaseRecord` says, in one format (:data:`REPORT_FORMAT`), what was released and
how: the method and its parameters, the input (file name, size, SHA-256), the version of
microagg and the date, the columns by role, the guarantee in a sentence with its scope, the
disclosure risk before and after, the utility kept, and the method's own report
(``report.to_dict()``). The risk and utility figures come from
:func:`~microagg.evaluation.evaluate.evaluate` and are chosen to cost a few seconds on 10⁵
rows (:data:`MEASURES`): record linkage and the EMD, whose cost grows with the square of the
rows, are computed up to :data:`COSTLY_MAX_ROWS` rows and said to be skipped above.

Those figures, and the input's size and hash, are computed from the raw data: the record is
the data owner's. A DP release gets no such figure (:func:`privacy_record`): anything computed
from the raw data is not differentially private, and a file written beside a DP table is meant
to be published with it. Its privacy report keeps every key it had and gains the provenance
that is not a function of the records: format, version, date, the input's name, the method's
parameters and ``rows_aligned: false``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.frequencies import value_ids
from microagg.data.schema import Schema
from microagg.errors import InputError
from microagg.release.base import Release
from microagg.release.disclosure import PRIVACY_FORMAT, REPORT_FORMAT, Audience, public, view
from microagg.release.key_reports import KeyReport, record_parts
from microagg.release.methods.base import ReleaseMethod
from microagg.release.report import (
    Entry,
    KAnonymityReport,
    MaskingReport,
    PrivacyReport,
    TClosenessReport,
    plain,
)

__all__ = ["COSTLY_MAX_ROWS", "MEASURES", "PRIVACY_FORMAT", "REPORT_FORMAT", "ColumnRoles",
           "Guarantee", "InputFile", "PrivacyRecord", "ReleaseRecord", "Risk", "Utility",
           "privacy_record", "release_record", "rows_aligned", "sidecar_path"]


COSTLY_MAX_ROWS = 20_000
"""Record linkage and the rank risk are computed up to this many rows (record linkage compares
every distinct released record with every distinct original one, so a masking that keeps
every record distinct costs n²; the rank risk took 2.8 s on 10⁵ rows, more than MDAV). The
EMD is left to ``microagg evaluate``. Every other measure takes about 0.5 s on 10⁵ rows."""

MEASURES = ("risk: the share of records unique over the masked columns and the smallest "
            "class of equal values (before and after); after: record linkage (000 §5.2) and the "
            f"rank risk (003 eq. 2), up to {COSTLY_MAX_ROWS:,} rows. Utility: SSE/SST %, "
            "relative error, JSD, mean and variance variation (linear or n log n in the rows: "
            "a few seconds on 10⁵ rows); the EMD (003 eq. 1) is left to microagg evaluate")

EMD_SKIPPED = ("left to microagg evaluate: the EMD solves a transport problem (a second or more "
               "on 10⁴ rows, after loading the optimal-transport library), which would cost "
               "more than the release itself on small tables")

WITHHELD = ("the input's size and hash are left out of a DP report: they are functions of the "
            "records (a hash confirms a guess of the whole data set), so they are not "
            "differentially private")

NO_FIGURES = ("no risk or utility figure is published with a DP release: any such figure is "
              "computed from the raw data and is not differentially private (the data owner "
              "can measure them privately with microagg evaluate)")

SUFFIXES = (".privacy.json", ".report.json")


def sidecar_path(output: Path, *, private: bool = False) -> Path:
    """Where the report of the release written to ``output`` goes: ``OUT.report.json``, or
    ``OUT.privacy.json`` for a DP release (``private``)."""
    return output.with_name(output.name + SUFFIXES[0 if private else 1])


@dataclass(frozen=True, eq=False)
class InputFile(Entry):
    """The file a release was made from: its name, and (not for DP) its size and SHA-256."""

    name: str
    bytes: int | None = None
    sha256: str | None = None
    withheld: str | None = None

    @classmethod
    def of(cls, path: Path | None, *, private: bool = False) -> InputFile:
        """The entry of ``path`` (None: a table given in Python)."""
        if path is None:
            return cls("a table given in Python")
        if private:
            return cls(path.name, withheld=WITHHELD)
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return cls(path.name, path.stat().st_size, digest.hexdigest())


@dataclass(frozen=True, eq=False, kw_only=True)
class ColumnRoles(Entry):
    """The columns of a release by what happened to them."""

    keep_none = True
    masked: list[str]  # the quasi-identifiers (masked, microaggregated, protected)
    confidential: list[str]  # written unchanged, their distribution protected (t-closeness)
    released_unchanged: list[str]  # written as they are, not protected
    identifiers_dropped: list[str]


@dataclass(frozen=True, eq=False)
class Guarantee(Entry):
    """The guarantee of a release in a sentence, whether it holds on the table as written,
    and its scope: which columns and which semantics."""

    statement: str
    holds: bool
    columns: list[str]
    semantics: str


@dataclass(frozen=True, eq=False)
class Risk(Entry):
    """Disclosure risk of a table over the masked columns. ``unique_percent`` is the share of
    records whose combination of values occurs once; ``smallest_class`` the fewest records
    sharing one combination. After the release: record linkage (% of correct links) and the
    rank risk (larger = safer), unless skipped."""

    records: int
    unique_percent: float
    smallest_class: int
    classes: int
    record_linkage_percent: float | None = None
    rank_risk: float | None = None


@dataclass(frozen=True, eq=False)
class Utility(Entry):
    """The utility of the release against its input (``None``: does not apply or skipped)."""

    keep_none = True
    sse_percent: float | None
    relative_error: float | None
    jsd: float
    mean_variation: float | None
    variance_variation: float | None
    emd: float | None
    emd_bound: float | None
    per_attribute: dict[str, Any]


@dataclass(frozen=True)
class ReleaseRecord:
    """The report written beside a k-anonymous, t-close or masked release
    (``OUT.report.json``); :func:`release_record` builds it."""

    method: str
    family: str
    parameters: dict[str, Any]
    input: InputFile
    microagg_version: str
    created: str
    records: int
    rows_aligned: bool
    columns: ColumnRoles
    guarantee: Guarantee
    risk: dict[str, Risk]  # "before" and "after" (empty when not measured)
    utility: Utility | None  # None when not measured (the Dask engine)
    measures: str
    skipped: dict[str, str]
    report: dict[str, Any]  # the method's own report, report.to_dict()
    format: str = REPORT_FORMAT

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, ``format`` first; every key declared in
        :mod:`microagg.release.disclosure` (the data owner's view: every figure)."""
        out = {f.name: plain(getattr(self, f.name)) for f in fields(self)}
        return view({"format": out.pop("format"), **out}, Audience.OWNER)


@dataclass(frozen=True)
class PrivacyRecord:
    """The privacy report of a DP release with its provenance (``OUT.privacy.json``): every
    key of :class:`~microagg.release.report.PrivacyReport`, then the provenance keys."""

    report: PrivacyReport
    parameters: dict[str, Any]
    input: InputFile
    microagg_version: str
    created: str
    rows_aligned: bool = False
    risk_and_utility: str = NO_FIGURES
    format: str = PRIVACY_FORMAT

    def to_dict(self) -> dict[str, Any]:
        """The privacy report's JSON, unchanged, and the provenance keys after it: its public
        view (:mod:`microagg.release.disclosure`), which is all of it."""
        extra = {f.name: plain(getattr(self, f.name)) for f in fields(self)
                 if f.name != "report"}
        return public({**self.report.to_dict(), **extra})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _version() -> str:
    from microagg import __version__

    return __version__


def _plain_parameters(method: ReleaseMethod) -> dict[str, Any]:
    return {k: v.value if isinstance(v, StrEnum) else v
            for k, v in method.parameters().items()}


def privacy_record(method: ReleaseMethod, report: PrivacyReport, source: Path | None
                   ) -> PrivacyRecord:
    """The privacy report of a DP release by ``method`` from the file ``source``, with the
    provenance that is not computed from the records.

    Examples
    --------
    >>> import microagg
    >>> data = microagg.datasets.synthetic(200, 2, seed=0)
    >>> method = microagg.DPLaplace(epsilon=1.0)
    >>> release = method.release(data.frame, schema=data.schema, columns=["age"])
    >>> record = privacy_record(method, release.report, None).to_dict()
    >>> record["rows_aligned"], record["format"], "sha256" in record["input"]
    (False, 'microagg-privacy/1', False)
    """
    return PrivacyRecord(report, _plain_parameters(method), InputFile.of(source, private=True),
                         _version(), _now())


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
                         "bounded.", False, report.columns, "none (masking, 003 §5)")
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
            "k-anonymous t-closeness (002): identity and attribute disclosure over the "
            "quasi-identifiers; no protection against knowledge outside these columns")
    holds = bool(report.k_anonymity.holds)
    unchanged = (f" The table as written, with {', '.join(report.released_unchanged)}, has a "
                 f"smallest class of {report.k_anonymity_as_written.smallest_class}."
                 if report.released_unchanged else "")
    return Guarantee(
        f"Every combination of the masked columns ({', '.join(report.columns)}) is shared by "
        f"at least {report.k} records{'' if holds else ' (does NOT hold)'}.{unchanged}",
        holds, report.columns,
        "k-anonymity (000): identity disclosure over the masked columns; the values of other "
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
        roles, guarantee, risk, gained, measures = record_parts(report, original,
                                                                release.frame)
        return ReleaseRecord(
            method=report.method, family=str(method.family),
            parameters=_plain_parameters(method), input=InputFile.of(source),
            microagg_version=_version(), created=_now(), records=len(release.frame),
            rows_aligned=True, columns=roles, guarantee=guarantee,
            risk=risk if measure else {}, utility=gained if measure else None,
            measures=measures, skipped={}, report=report.to_dict())
    roles = _roles(report)
    if not measure:
        return ReleaseRecord(
            method=report.method, family=str(method.family),
            parameters=_plain_parameters(method), input=InputFile.of(source),
            microagg_version=_version(), created=_now(), records=len(release.frame),
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
        method=report.method, family=str(method.family), parameters=_plain_parameters(method),
        input=InputFile.of(source), microagg_version=_version(), created=_now(),
        records=len(release.frame), rows_aligned=True, columns=roles,
        guarantee=_guarantee(report), risk=risk, utility=utility, measures=MEASURES,
        skipped=skipped, report=report.to_dict())


AT_SCALE_SKIPPED = ("risk and utility are not measured by the Dask engine (they would need the "
                    "whole data set in one place): measure them on a sample with microagg "
                    "evaluate; the SSE/SST over the masked columns is in the method's report")


def block_record(method: ReleaseMethod, report: Any, source: Path) -> ReleaseRecord:
    """The report of a block-MDAV release on the Dask engine (``report``: its
    :class:`~microagg.at_scale.anonymize.BlockReport`) from the data set ``source``: the
    provenance (the input named, not hashed: a data set of many files), the columns, the
    guarantee as the engine verified it on the written data set; risk and utility skipped."""
    holds = bool(report.k_anonymity["holds"])
    guarantee = Guarantee(
        f"Every combination of the masked columns ({', '.join(report.columns)}) is shared by "
        f"at least {report.k} records{'' if holds else ' (does NOT hold)'}.", holds,
        list(report.columns),
        "k-anonymity (000), clusters inside blocks of the data set: identity disclosure over "
        "the masked columns")
    roles = ColumnRoles(masked=list(report.columns), confidential=[],
                        released_unchanged=list(report.released_unchanged),
                        identifiers_dropped=list(report.identifiers_dropped))
    return ReleaseRecord(
        method=report.method, family=str(method.family), parameters=_plain_parameters(method),
        input=InputFile(source.name), microagg_version=_version(), created=_now(),
        records=int(report.records), rows_aligned=True, columns=roles, guarantee=guarantee,
        risk={}, utility=None, measures=MEASURES, skipped={"risk_and_utility": AT_SCALE_SKIPPED},
        report=report.to_dict())


def rows_aligned(masked: Path) -> tuple[bool, Path | None]:
    """Whether the rows of the table ``masked`` are those of its input in the same order, by
    its report (``masked.privacy.json`` or ``masked.report.json``): ``rows_aligned`` when the
    report has it, else not aligned for a privacy report (DP releases write their rows in a
    random order, ``row_order``). Without a report: aligned. Returns the answer and the report
    it came from."""
    for suffix in SUFFIXES:
        path = masked.with_name(masked.name + suffix)
        if not path.is_file():
            continue
        try:
            content = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read the report {path}: {exc}") from None
        if not isinstance(content, Mapping):
            raise InputError(f"the report {path} is not a JSON object")
        if "rows_aligned" in content:
            return bool(content["rows_aligned"]), path
        if "row_order" in content:
            return False, path
    return True, None

