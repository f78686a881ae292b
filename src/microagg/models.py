"""Verifiers of privacy models on a released table: k-anonymity and t-closeness.

An *equivalence class* is a set of records sharing the same quasi-identifier values. A table is
k-anonymous when every class has at least k records. It is t-close for a confidential attribute
when the Earth Mover's Distance (EMD) between the attribute's distribution in every class and
in the whole table is at most t (paper 002, Definition 2 and §2.2):

* numeric and ordinal attributes use the *ordered distance*: with v_1 < ... < v_m the distinct
  values of the attribute in the table, d(v_i, v_j) = |i - j| / (m - 1), and
  EMD(P, Q) = 1/(m-1) · Σ_i |Σ_{j<=i} (p_j - q_j)|  (002 §2.2);
* nominal attributes use the *equal distance* (every pair of distinct values at distance 1),
  for which EMD(P, Q) = ½ Σ_i |p_i - q_i|.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microagg.errors import InputError

__all__ = [
    "KAnonymity",
    "TCloseness",
    "emd_by_class",
    "equivalence_classes",
    "k_anonymity",
    "t_closeness",
]

# EMD values are sums of O(n) floating-point terms; a class whose EMD exceeds t by less than
# this is reported as satisfying t (the error of the computation is far below it).
EMD_TOLERANCE = 1e-9


@dataclass(frozen=True)
class KAnonymity:
    """Equivalence-class statistics of a table over its quasi-identifiers."""

    records: int
    classes: int
    smallest_class: int
    largest_class: int

    def holds(self, k: int) -> bool:
        return self.smallest_class >= k


@dataclass(frozen=True)
class TCloseness:
    """The EMD of each equivalence class to the whole table, for one confidential attribute."""

    attribute: str
    distance: str  # "ordered" or "equal"
    emd: np.ndarray  # one value per class, in class-label order

    @property
    def t(self) -> float:
        """The smallest t for which the table is t-close: the largest class EMD."""
        return float(self.emd.max()) if self.emd.size else 0.0

    @property
    def worst_class(self) -> int:
        return int(np.argmax(self.emd))

    def holds(self, t: float) -> bool:
        return self.t <= t + EMD_TOLERANCE


def _require_columns(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    for column in columns:
        if column not in frame.columns:
            raise InputError(
                f"unknown column '{column}' (the data has: {', '.join(map(str, frame.columns))})"
            )


def equivalence_classes(frame: pd.DataFrame, quasi: Sequence[str]) -> np.ndarray:
    """Class label (int64, numbered in order of first appearance) of each row over ``quasi``."""
    quasi = list(quasi)
    if not quasi:
        raise InputError("at least one quasi-identifier is needed")
    _require_columns(frame, quasi)
    labels = frame.groupby(quasi, sort=False, dropna=False).ngroup()
    return labels.to_numpy(dtype=np.int64)


def k_anonymity(frame: pd.DataFrame, quasi: Sequence[str]) -> KAnonymity:
    """Sizes of the equivalence classes of ``frame`` over the quasi-identifiers ``quasi``."""
    if len(frame) == 0:
        raise InputError("the table has no rows")
    sizes = np.bincount(equivalence_classes(frame, quasi))
    return KAnonymity(
        records=len(frame),
        classes=int(sizes.size),
        smallest_class=int(sizes.min()),
        largest_class=int(sizes.max()),
    )


def t_closeness(
    frame: pd.DataFrame, quasi: Sequence[str], confidential: str, *, ordered: bool | None = None
) -> TCloseness:
    """EMD of the confidential attribute in each equivalence class to the whole table.

    ``ordered`` selects the ordered distance (default for numeric columns) or the equal
    distance (default for non-numeric columns, i.e. nominal values).
    """
    _require_columns(frame, [confidential])
    if confidential in quasi:
        raise InputError(
            f"column '{confidential}' cannot be both quasi-identifier and confidential"
        )
    classes = equivalence_classes(frame, quasi)
    column = frame[confidential]
    if ordered is None:
        ordered = pd.api.types.is_numeric_dtype(column)
    _, values = np.unique(column.to_numpy(), return_inverse=True)
    return TCloseness(
        attribute=confidential,
        distance="ordered" if ordered else "equal",
        emd=emd_by_class(classes, values.astype(np.int64), ordered=ordered),
    )


def emd_by_class(classes: np.ndarray, values: np.ndarray, *, ordered: bool) -> np.ndarray:
    """EMD between each class's distribution of ``values`` and the distribution of all values.

    ``classes`` are labels 0..c-1; ``values`` are ranks 0..m-1 of the distinct values (for the
    ordered distance, rank order is value order). Runs in O(n log n) and O(n) memory.
    """
    classes = np.asarray(classes, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    n_classes = int(classes.max()) + 1
    m = int(values.max()) + 1
    if ordered:
        return _ordered_emd(classes, values, n_classes, m)
    return _equal_emd(classes, values, n_classes, m)


def _class_value_pairs(classes: np.ndarray, values: np.ndarray, m: int):
    """Distinct (class, value) pairs sorted by class then value, with their counts."""
    key = np.unique(classes * m + values, return_counts=True)
    pair_key, pair_count = key
    return pair_key // m, pair_key % m, pair_count


def _equal_emd(classes: np.ndarray, values: np.ndarray, n_classes: int, m: int) -> np.ndarray:
    n = classes.size
    q = np.bincount(values, minlength=m) / n
    sizes = np.bincount(classes, minlength=n_classes)
    pair_class, pair_value, pair_count = _class_value_pairs(classes, values, m)
    p = pair_count / sizes[pair_class]
    q_pair = q[pair_value]
    # ½ Σ_v |p_v - q_v| = ½ (1 + Σ_{v in class} (|p_v - q_v| - q_v)), as Σ_v q_v = 1.
    inside = np.bincount(pair_class, weights=np.abs(p - q_pair) - q_pair, minlength=n_classes)
    return 0.5 * (1.0 + inside)


def _ordered_emd(classes: np.ndarray, values: np.ndarray, n_classes: int, m: int) -> np.ndarray:
    if m == 1:
        return np.zeros(n_classes)
    n = classes.size
    cdf = np.cumsum(np.bincount(values, minlength=m))[: m - 1] / n  # Q(i), i = 0..m-2
    prefix = np.concatenate(([0.0], np.cumsum(cdf)))  # prefix[i] = Σ_{j<i} Q(j)
    sizes = np.bincount(classes, minlength=n_classes)
    pair_class, pair_value, pair_count = _class_value_pairs(classes, values, m)
    first = np.r_[True, pair_class[1:] != pair_class[:-1]]
    last = np.r_[first[1:], True]
    running = np.cumsum(pair_count)
    before_class = np.maximum.accumulate(np.where(first, running - pair_count, 0))
    level = (running - before_class) / sizes[pair_class]  # class CDF P on [value_j, next value)
    start = pair_value
    stop = np.where(last, m - 1, np.r_[pair_value[1:], 0])
    # Σ_{i in [start, stop)} |level - Q(i)|, with Q non-decreasing: split where Q reaches level.
    split = np.clip(np.searchsorted(cdf, level, side="left"), start, stop)
    below = level * (split - start) - (prefix[split] - prefix[start])
    above = (prefix[stop] - prefix[split]) - level * (stop - split)
    total = np.bincount(pair_class, weights=below + above, minlength=n_classes)
    # Before a class's first value P = 0, which adds Σ_{i<v0} Q(i).
    total[pair_class[first]] += prefix[pair_value[first]]
    return total / (m - 1)
