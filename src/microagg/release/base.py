"""The Release object every release function returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
import pandas as pd

from microagg.release.reports.key_reports import KeyReport
from microagg.release.reports.report import (
    KAnonymityReport,
    MaskingReport,
    PrivacyReport,
    TClosenessReport,
)

R = TypeVar("R", KAnonymityReport, MaskingReport, PrivacyReport, TClosenessReport, KeyReport)


@dataclass(frozen=True, eq=False)
class Release(Generic[R]):
    """A masked table and how it was made.

    ``frame`` is the table as it is written. A k-anonymous release keeps the input's rows (minus
    rows dropped as incomplete, when asked) in the same order, and its columns except
    identifiers. A DP release writes its rows in a uniformly random order with a fresh index
    (the order of the input would show which records were clustered together), and for an
    unlinked release each column in its own order.

    ``report`` is the family's report (``Release[PrivacyReport]`` for a DP release …).
    ``labels`` is the partition, in input row order: one cluster label per row, or one per row
    and attribute for univariate methods. ``source_rows`` maps the written rows back to the
    input (``None``: same order; 1-D: the input position of every row; 2-D: the same per
    column) and ``source_index`` is the input index of the kept rows; they stay in memory, for
    :meth:`aligned`, and are never written. ``notices`` are messages for the data owner only
    (e.g. how many values were clamped), never published. ``statistics`` is a second
    released table, the noisy cluster statistics of a cross-moment release (004), one row per
    coefficient, clusters in random order.
    """

    frame: pd.DataFrame
    labels: np.ndarray
    report: R
    source_rows: np.ndarray | None = None
    source_index: pd.Index | None = None
    notices: tuple[str, ...] = ()
    statistics: pd.DataFrame | None = None  # released noisy statistics (004), if any

    def aligned(self) -> pd.DataFrame:
        """The released values in input row order (for evaluation and reproduction against
        the original table; publishing this alignment would void a DP release)."""
        if self.source_rows is None:
            return self.frame
        index = self.source_index if self.source_index is not None else pd.RangeIndex(
            len(self.frame))
        rows = self.source_rows
        if rows.ndim == 1:
            out = self.frame.iloc[np.argsort(rows, kind="stable")]
            return out.set_axis(index, axis=0)
        columns = {}
        for j, name in enumerate(self.frame.columns):
            order = np.argsort(rows[:, j], kind="stable")
            columns[name] = self.frame[name].iloc[order].to_numpy()
        return pd.DataFrame(columns, index=index).astype(self.frame.dtypes.to_dict())

    def labels_frame(self) -> pd.DataFrame:
        """The partition as a table in input row order: column ``cluster``, or
        ``cluster_<attribute>`` per attribute for univariate methods."""
        index = self.frame.index if self.source_index is None else self.source_index
        if self.labels.ndim == 1:
            return pd.DataFrame({"cluster": self.labels}, index=index)
        report = self.report  # per-attribute labels come from univariate microaggregation
        assert isinstance(report, KAnonymityReport | MaskingReport), type(report).__name__
        columns = report.columns
        return pd.DataFrame({f"cluster_{c}": self.labels[:, j] for j, c in enumerate(columns)},
                            index=index)
