"""The report written beside every release: ``OUT.report.json`` for a k-anonymous, t-close
or masked release, ``OUT.privacy.json`` for a DP one.

A :class:`ReleaseRecord` says, in one format (:data:`REPORT_FORMAT`), what was released and
how: the method and its parameters, the input (file name, size, SHA-256), the version of
microagg and the date, the columns by role, the guarantee in a sentence with its scope, the
disclosure risk before and after, the utility kept, and the method's own report
(``report.to_dict()``). The risk and utility figures are measured by
:func:`~microagg.evaluation.release_record.release_record` (with
:func:`~microagg.evaluation.evaluate.evaluate`) and are chosen to cost a few seconds on 10⁵
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
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from microagg.data.atomic import beside
from microagg.errors import InputError
from microagg.release.methods.base import ReleaseMethod
from microagg.release.reports.disclosure import (
    PRIVACY_FORMAT,
    REPORT_FORMAT,
    Audience,
    public,
    view,
)
from microagg.release.reports.report import (
    Entry,
    PrivacyReport,
    plain,
)
from microagg.version import installed_version

__all__ = ["COSTLY_MAX_ROWS", "EMD_SKIPPED", "MEASURES", "PRIVACY_FORMAT", "REPORT_FORMAT",
           "ColumnRoles", "Guarantee", "InputFile", "PrivacyRecord", "ReleaseRecord", "Risk",
           "Utility", "block_record", "created_now", "plain_parameters",
           "privacy_record", "rows_aligned", "sidecar_path", "swap_record"]


COSTLY_MAX_ROWS = 20_000
"""Record linkage and the rank risk are computed up to this many rows (record linkage compares
every distinct released record with every distinct original one, so a masking that keeps
every record distinct costs n²; the rank risk took 2.8 s on 10⁵ rows, more than MDAV). The
EMD is left to ``microagg evaluate``. Every other measure takes about 0.5 s on 10⁵ rows."""

MEASURES = ("risk: the share of records unique over the masked columns and the smallest "
            "class of equal values (before and after); after: record linkage and the "
            f"rank risk, up to {COSTLY_MAX_ROWS:,} rows. Utility: SSE/SST %, "
            "relative error, JSD, mean and variance variation (linear or n log n in the rows: "
            "a few seconds on 10⁵ rows); the EMD is left to microagg evaluate")

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
    return beside(output, SUFFIXES[0 if private else 1])


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
        :mod:`microagg.release.reports.disclosure` (the data owner's view: every figure)."""
        out = {f.name: plain(getattr(self, f.name)) for f in fields(self)}
        return view({"format": out.pop("format"), **out}, Audience.OWNER)


@dataclass(frozen=True)
class PrivacyRecord:
    """The privacy report of a DP release with its provenance (``OUT.privacy.json``): every
    key of :class:`~microagg.release.reports.report.PrivacyReport`, then the provenance keys."""

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
        view (:mod:`microagg.release.reports.disclosure`), which is all of it."""
        extra = {f.name: plain(getattr(self, f.name)) for f in fields(self)
                 if f.name != "report"}
        return public({**self.report.to_dict(), **extra})


def created_now() -> str:
    """The date and time a record is made, to the second (UTC)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def plain_parameters(method: ReleaseMethod) -> dict[str, Any]:
    """The parameters of ``method`` as a record writes them (enumerations by value)."""
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
    return PrivacyRecord(report, plain_parameters(method), InputFile.of(source, private=True),
                         installed_version(), created_now())


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
        "k-anonymity, clusters inside blocks of the data set: identity disclosure over "
        "the masked columns")
    roles = ColumnRoles(masked=list(report.columns), confidential=[],
                        released_unchanged=list(report.released_unchanged),
                        identifiers_dropped=list(report.identifiers_dropped))
    return ReleaseRecord(
        method=report.method, family=str(method.family), parameters=plain_parameters(method),
        input=InputFile(source.name), microagg_version=installed_version(), created=created_now(),
        records=int(report.records), rows_aligned=True, columns=roles, guarantee=guarantee,
        risk={}, utility=None, measures=MEASURES, skipped={"risk_and_utility": AT_SCALE_SKIPPED},
        report=report.to_dict())


def swap_record(method: ReleaseMethod, result: Any, source: Path) -> ReleaseRecord:
    """The report of targeted record swapping on the Dask engine (``result``: its
    :class:`~microagg.at_scale.swap.ScaleSwap`) from the data set ``source``: the provenance,
    the columns swapped, no ex-ante guarantee; risk and utility skipped (the method's report
    has its figures per level)."""
    fields = result.fields
    changed = [*fields["hierarchy"], *fields["carry_along"]]
    guarantee = Guarantee(
        f"No ex-ante guarantee: {result.method} exchanges the {', '.join(changed)} of "
        "households; the risk before and after is in the method's report.", False, changed,
        "none: the risk is measured per level, not bounded")
    roles = ColumnRoles(masked=changed, confidential=[], released_unchanged=[],
                        identifiers_dropped=[])
    return ReleaseRecord(
        method=result.method, family=str(method.family), parameters=plain_parameters(method),
        input=InputFile(source.name), microagg_version=installed_version(), created=created_now(),
        records=int(result.records), rows_aligned=True, columns=roles, guarantee=guarantee,
        risk={}, utility=None, measures=MEASURES, skipped={"risk_and_utility": AT_SCALE_SKIPPED},
        report=result.to_dict())


def rows_aligned(masked: Path) -> tuple[bool, Path | None]:
    """Whether the rows of the table ``masked`` are those of its input in the same order, by
    its report (``masked.privacy.json`` or ``masked.report.json``): ``rows_aligned`` when the
    report has it, else not aligned for a privacy report (DP releases write their rows in a
    random order, ``row_order``). Without a report: aligned. Returns the answer and the report
    it came from."""
    for suffix in SUFFIXES:
        path = beside(masked, suffix)
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

