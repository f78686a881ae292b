"""The reports of the methods for categorical keys (global recoding, local suppression, PRAM)
(the parts of ``OUT.report.json`` they give are made by
:mod:`microagg.evaluation.release_record`).

Every report holds what the family shares (:class:`KeyReport`: the keys, the columns
changed, the sample frequencies of the keys before and after, the survey design) and the
method's own figures. The frequencies are those of :mod:`microagg.core.frequencies`: f_k of
a record is the number of records that share its key values, a missing value matching any
value (sdcMicro's ``alpha = 1``), a record whose keys are all missing counted apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.frequencies import combinations
from microagg.data.table import missing_mask
from microagg.options import MissingValues
from microagg.release.reports.report import Anonymity, Entry, plain

__all__ = ["RISK_KS", "KeyReport", "KeyRisk", "PramMatrix", "PramReport", "Recoded",
           "RecodingReport", "SuppressionReport", "key_risk"]

RISK_KS = (2, 3, 5)
"""The k for which every report counts the records below k (and the method's own k)."""


@dataclass(frozen=True, eq=False)
class KeyRisk(Entry):
    """The sample frequencies of the keys (within each stratum when there are strata): the
    smallest f_k, the records whose key values no other record shares (f_k = 1), the
    records with f_k < k for a few k (sdcMicro's ``kAnon_violations``, unweighted), the
    number of distinct combinations of key values written (a missing value counted as a
    value), and the records whose keys are all missing, counted apart (their f_k is n; they
    count for no record that has every key: :mod:`microagg.core.frequencies`)."""

    smallest_class: int
    sample_uniques: int
    below_k: dict[str, int]
    classes: int
    all_missing: int = 0


def key_risk(frame: pd.DataFrame, keys: Sequence[str], ks: Sequence[int] = RISK_KS,
             strata: np.ndarray | None = None) -> KeyRisk:
    """:class:`KeyRisk` of ``frame`` over ``keys`` (within each stratum when ``strata``
    numbers them)."""
    f, classes = combinations(frame, keys, MissingValues.MATCHES_ANY)
    if strata is not None:
        for stratum in np.unique(strata):
            rows = np.flatnonzero(strata == stratum)
            f[rows] = combinations(frame.iloc[rows], keys, MissingValues.MATCHES_ANY)[0]
    blank = np.logical_and.reduce([missing_mask(frame[key]) for key in keys])
    return KeyRisk(int(f.min()), int((f == 1).sum()),
                   {str(k): int((f < k).sum()) for k in sorted(set(ks))}, classes,
                   int(np.count_nonzero(blank)))


@dataclass(frozen=True, kw_only=True)
class KeyReport:
    """What a method for categorical keys did; each method's report adds its own figures."""

    method: str
    keys: list[str]  # the key variables the method protects (frequencies over them)
    changed: list[str]  # the columns whose values it changed
    records: int
    identifiers_dropped: list[str]
    released_unchanged: list[str]
    before: KeyRisk
    after: KeyRisk
    parameters: dict[str, Any]
    weight: str | None = None
    strata: list[str] = field(default_factory=list)
    n_strata: int = 0
    missing_semantics: str = MissingValues.MATCHES_ANY.value
    notes: list[str] = field(default_factory=list)

    def guarantee(self) -> tuple[str, bool, str]:
        """The guarantee in a sentence, whether it holds on the table as written, and its
        semantics."""
        over = ", ".join(self.keys)
        return (f"No ex-ante guarantee: {self.method} changes {', '.join(self.changed)}; the "
                f"frequencies of its keys ({over}) are measured, not bounded: after it, "
                f"{self.after.sample_uniques:,} records are unique on {over} and the "
                f"smallest f_k over them is {self.after.smallest_class:,}"
                f"{' (within each stratum)' if self.strata else ''}.", False,
                "none: the risk of the keys is measured, not bounded")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True, kw_only=True)
class SuppressionReport(KeyReport):
    """Local suppression to k-anonymity (:mod:`microagg.core.suppression`): the values
    suppressed per key and k-anonymity as verified on the written table."""

    k: int
    importance: list[str]  # the keys from the most important (suppressed last)
    combinations: list[int] | None  # sizes of the sets of keys made k-anonymous
    suppressions: dict[str, int]  # values suppressed, per key
    total_suppressions: int
    missing_before: dict[str, int]  # values missing in the input, per key
    greedy_suppressions: int  # suppressed by the greedy pass ...
    restored: int  # ... of which the second pass put back
    k_anonymity: Anonymity  # verified on the written table (each stratum, each set)

    def guarantee(self) -> tuple[str, bool, str]:
        holds = bool(self.k_anonymity.holds)
        scope = (f"every set of {' or '.join(map(str, self.combinations))} of the keys"
                 if self.combinations else "the keys")
        strata = " within each stratum" if self.strata else ""
        return (f"Every record shares its values of {scope} ({', '.join(self.keys)}) with at "
                f"least {self.k - 1} other records{strata}, a missing value matching any "
                f"value{'' if holds else ' (does NOT hold)'}.", holds,
                "k-anonymity of the keys, a missing value matching any value (sdcMicro's "
                "alpha = 1): identity disclosure over the keys; other columns and attribute "
                "disclosure are not protected")


@dataclass(frozen=True, eq=False)
class Recoded(Entry):
    """How one column was recoded: to a level of its taxonomy, or to intervals."""

    to: str
    categories_before: int
    categories_after: int
    level: int | None = None
    taxonomy: str | None = None
    breaks: list[float] | None = None
    labels: list[str] | None = None  # the categories written


@dataclass(frozen=True, kw_only=True)
class RecodingReport(KeyReport):
    """Global recoding: each recoded column and what it became."""

    recoded: dict[str, Recoded]


@dataclass(frozen=True, eq=False)
class PramMatrix(Entry):
    """The transition matrix PRAM applied to one column (in one stratum): row i gives the
    probabilities of writing each category for a record of category i."""

    column: str
    categories: list[str]
    marginal: list[float]  # the marginal the matrix leaves unchanged in expectation
    matrix: list[list[float]]
    stratum: str | None = None


@dataclass(frozen=True, kw_only=True)
class PramReport(KeyReport):
    """Invariant PRAM: the transition matrices and how many values changed."""

    retention: float
    alpha: float
    seeded: bool
    marginal: str  # which marginal is kept (counts, or weighted by the weight column)
    matrices: list[PramMatrix]
    changed_values: dict[str, int]
