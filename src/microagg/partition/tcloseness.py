"""k-anonymous t-closeness through microaggregation (paper 002, Algorithms 1-3).

All three take the quasi-identifiers (scaled numbers ``X`` and, for mixed data, the categorical
part of the record distance of 000 eq. 8) and the confidential attributes as
:class:`microagg.core.emd.GroundModel`; each class must have an EMD of at most t to the whole table
for every confidential attribute.

* :func:`merge` (Alg. 1, after any microaggregation): while a class violates t, take the class
  with the greatest EMD and merge it with the class whose quasi-identifier centroid is nearest
  to its own. Only the merged class's EMD is recomputed (a heap keeps the greatest); the
  nearest class comes from a k-d tree over the live centroids (:mod:`._kdtree`; a scan of
  them for mixed data), in which the merged class moves to its new centroid.
* :func:`k_anonymity_first` (Alg. 2): MDAV-like seeds; each cluster starts as the k records
  nearest its seed, then the unclustered records, nearest first, replace the member whose
  swap lowers the EMD most, while the EMD exceeds t. Not always t-close: 002 §6 runs it as
  Alg. 1's microaggregation, and so does :func:`t_close_partition`.
* :func:`t_closeness_first` (Alg. 3): the cluster size of eq. (3) adjusted by eq. (4) (the
  floor of the text, which reproduces Table III; the listing prints a ceiling), k subsets by
  the rank of the first confidential attribute, and each cluster takes the record nearest its
  seed in every subset, plus one of the n mod k extra records of the central subset(s) while
  any is left. (The listing's test ``|S_i| > |S_1|`` means the same when S_1 is not central; for
  k = 2 it is, and the test would leave the extra records alone in a last, too small class.)
  Its bound (Prop. 2) is proved only when k divides n and the values are distinct, so
  :func:`t_close_partition` verifies every class and repairs with Alg. 1's merging. Each
  subset is kept as blocks of nearby records (:mod:`._subsets`), so a nearest-record query
  reads only the blocks that can hold the answer; the second seed of a pair is one
  farthest-record query over all subsets.

Distances are squared Euclidean on the numbers plus the squared normalized categorical
distances; centroids are means and marginality centroids (000 eq. 5). Ties go to the lowest row
(and, between classes, the lowest class number), as in MDAV.

Missing quasi-identifier values (NaN in ``X``, code -1 in ``categorical``) are taken by all
three with the rule of :mod:`microagg.partition.mdav_missing`: the distance of two records (or
centroids) runs over the attributes both have, rescaled by ``p / |O_xy|`` (+∞ when they share
none); centroids take each mean and marginality centroid over the values present, and a
coordinate no record of a class has stays missing. Alg. 3 then scans the remaining records
(O(n²p/k)) instead of searching its subsets' blocks; Alg. 2 and the merging of Alg. 1 scan
already (the merging leaves its k-d tree for a scan of the live centroids). On complete data
the partitions are unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from microagg.core.distance import Categorical
from microagg.core.emd import EMDTables, GroundModel, stack
from microagg.core.threads import ThreadChooser
from microagg.errors import InputError
from microagg.options import TClosenessMethod, parse
from microagg.partition import _kdtree, _kernels, _subsets
from microagg.partition._anchor import anchor_order, reanchor
from microagg.partition._concepts import categories
from microagg.partition._double_double import dd_sums
from microagg.partition._kernels import run_batches
from microagg.partition._tclose_kernels import (
    centroid,
    k_first,
    present_sums,
    t_first_batch,
    t_first_scan,
)
from microagg.partition._tclose_merge import merge_classes
from microagg.partition._validate import has_missing, prepare
from microagg.partition.mdav import Progress

__all__ = ["TClosePartition", "check_t", "cluster_size", "k_anonymity_first", "merge",
           "smallest_t", "t_close_partition", "t_closeness_first"]

Microaggregate = Callable[[int], np.ndarray]


@dataclass(frozen=True)
class TClosePartition:
    """A k-anonymous t-close partition and how it was reached."""

    labels: np.ndarray
    method: TClosenessMethod
    k: int  # requested
    effective_k: int  # the cluster size of eq. (3)-(4) (t-closeness-first), else k
    classes_before_merging: int
    merges: int


def check_t(t: object) -> float:
    """``t`` as a float in (0, 1]."""
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        raise InputError(f"t must be a number in (0, 1], got {t!r}")
    t = float(t)
    if not (0.0 < t <= 1.0) or math.isnan(t):
        raise InputError(f"t must lie in (0, 1], got {t:g}")
    return t


def cluster_size(n: int, k: int, t: float) -> int:
    """The cluster size of t-closeness-first: eq. (3), k' = max{k, ⌈n / (2(n-1)t + 1)⌉},
    then eq. (4), k' + ⌊(n mod k') / ⌊n/k'⌋⌋, so that the n mod k' extra records fit one per
    cluster (002 §7)."""
    size = max(k, math.ceil(n / (2 * (n - 1) * t + 1)))
    size = min(size, n)
    size += (n % size) // (n // size)
    if n % size > n // size:  # not reached for n < 3000 (tests); kept as a guard
        raise AssertionError("eq. (4) left more extra records than clusters")
    return size


def smallest_t(n: int) -> float:
    """The smallest t for which eq. (3) allows two classes or more: below it every method
    ends with one class holding all n records."""
    return (n / (n // 2) - 1.0) / (2.0 * (n - 1))


def _subsets_by_rank(rank_key: np.ndarray, size: int) -> np.ndarray:
    """Subset (0..size-1) of each row: rows in ascending order of ``rank_key`` (ties by row)
    cut into ``size`` subsets of ⌊n/size⌋, the n mod size extra records in the central subset
    (odd size) or split between the two central ones, the lower one taking the odd record
    (002 §7, Figures 3-4)."""
    n = rank_key.size
    base, extra = divmod(n, size)
    counts = np.full(size, base, dtype=np.int64)
    if size % 2:
        counts[size // 2] += extra
    else:
        counts[size // 2 - 1] += extra - extra // 2
        counts[size // 2] += extra // 2
    order = np.argsort(rank_key, kind="stable")
    subset = np.empty(n, dtype=np.int64)
    subset[order] = np.repeat(np.arange(size), counts)
    return subset


def t_closeness_first(X: np.ndarray | None, rank_key: np.ndarray, k: int, t: float, *,
                      categorical: Categorical | None = None,
                      progress: Progress | None = None,
                      threads: int | None = None) -> tuple[np.ndarray, int]:
    """(labels, cluster size) of 002 Alg. 3, subsets by ``rank_key`` (the values, or ranks,
    of the first confidential attribute). ``progress`` gets the number of rows clustered;
    ``threads`` as in :func:`microagg.partition.mdav.mdav` (the subsets of a query are
    shared between the threads). Records with missing values are clustered by a plain scan
    (module docstring; ``threads`` then unused)."""
    X, categorical, k = prepare(X, k, categorical, missing=True)
    t = check_t(t)
    n = X.shape[0]
    size = cluster_size(n, k, t)
    subset = _subsets_by_rank(np.asarray(rank_key), size)
    if has_missing(X, categorical):
        return _t_first_with_missing(X, categorical, subset, size, progress), size
    cats = categories(categorical)
    concepts = np.ascontiguousarray(categorical.codes, dtype=np.int64)
    X = np.ascontiguousarray(X, dtype=np.float64)
    chooser = ThreadChooser(_kernels.PARALLEL_MIN_ROWS, threads)
    sets = _subsets.build(X, concepts, np.arange(n, dtype=np.int64), subset, size)
    works = _subsets.work_buffers(sets, chooser.width)
    extra = sets.live - n // size
    labels = np.full(n, -1, dtype=np.int64)
    hi, lo = dd_sums(X.T, n)
    remaining, next_label = n, 0
    anchor = np.empty(X.shape[1])
    anchor_c = np.empty(concepts.shape[1], dtype=np.int64)
    centroid(hi, lo, n, cats, anchor, anchor_c)
    sweep = anchor_order(anchor, anchor_c, n)
    reanchor(X, concepts, cats.squared, np.arange(n, dtype=np.int64), sweep)

    def step(budget: int, stop_below: int, parallel_min: int) -> tuple[int, int]:
        nonlocal remaining, next_label
        remaining, next_label, formed = t_first_batch(
            X, concepts, cats, sets, extra, labels, hi, lo, remaining, next_label, budget,
            stop_below, parallel_min, sweep, works)
        return int(remaining), int(formed)

    laid_out = n  # records at the last layout of the subsets

    def refit(left: int) -> None:
        nonlocal sets, works, laid_out
        if left > laid_out // 2:
            _subsets.recode(sets)
            return
        sets = _subsets.rebuild(X, concepts, sets)
        works = _subsets.work_buffers(sets, chooser.width)
        laid_out = left

    run_batches(chooser, step, n, 1, refit, progress)
    return labels, size


def _t_first_with_missing(X: np.ndarray, categorical: Categorical, subset: np.ndarray,
                          size: int, progress: Progress | None) -> np.ndarray:
    """Labels of Alg. 3 on records with missing values (a plain scan, in batches of about a
    hundredth of the rows so that ``progress`` moves)."""
    n = X.shape[0]
    X = np.ascontiguousarray(X, dtype=np.float64)
    concepts = np.ascontiguousarray(categorical.codes, dtype=np.int64)
    cats = categories(categorical)
    filled, present, hi, lo = present_sums(X)
    counts = np.bincount(subset, minlength=size)
    extra = (counts - n // size).astype(np.int64)
    labels = np.full(n, -1, dtype=np.int64)
    rest = np.arange(n, dtype=np.int64)
    step = max(2 * size, n // 100)
    m, label = n, 0
    while m > 0:
        m, label = t_first_scan(X, filled, present, concepts, cats, subset, extra, labels, hi,
                                lo, rest, m, label, max(m - step, 0))
        if progress is not None:
            progress(n - int(m))
    return labels


# -- Algorithm 2: k-anonymity-first ----------------------------------------------------------

def k_anonymity_first(X: np.ndarray | None, confidential: Sequence[GroundModel], k: int,
                      t: float, *, categorical: Categorical | None = None) -> np.ndarray:
    """Labels of 002 Alg. 2 (not always t-close; see :func:`t_close_partition`); records
    may have missing values (module docstring)."""
    X, categorical, k = prepare(X, k, categorical, missing=True)
    t = check_t(t)
    tables = _tables(confidential, X.shape[0])
    labels = np.full(X.shape[0], -1, dtype=np.int64)
    k_first(X, categorical.codes, categories(categorical), k, t, tables.arrays,
            _scratch(tables), labels, has_missing(X, categorical))
    return labels


# -- Algorithm 1: merging --------------------------------------------------------------------

def merge(X: np.ndarray | None, labels: np.ndarray, confidential: Sequence[GroundModel],
          t: float, *, categorical: Categorical | None = None) -> tuple[np.ndarray, int]:
    """(labels, merges) of 002 Alg. 1's merging applied to the partition ``labels``; the
    labels are renumbered 0.. in order of first appearance. Records may have missing values
    (module docstring)."""
    X, categorical, _ = prepare(X, 1, categorical, missing=True)
    t = check_t(t)
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (X.shape[0],) or labels.min() < 0:
        raise InputError("one non-negative cluster label is needed per row")
    _, labels = np.unique(labels, return_inverse=True)
    labels = labels.astype(np.int64)
    tables = _tables(confidential, X.shape[0])
    merges = merge_classes(X, categorical.codes, categories(categorical), labels,
                           int(labels.max()) + 1, t, tables.arrays, _scratch(tables),
                           _kdtree.stack_buffers())
    _, first = np.unique(labels, return_index=True)
    renumber = np.empty(labels.max() + 1, dtype=np.int64)
    renumber[labels[np.sort(first)]] = np.arange(first.size)
    return renumber[labels], merges


def _tables(confidential: Sequence[GroundModel], n: int) -> EMDTables:
    tables = stack(confidential)
    if tables.values.shape[1] != n:
        raise InputError(f"confidential values for {tables.values.shape[1]} rows, the "
                         f"quasi-identifiers have {n}")
    return tables


def _scratch(tables: EMDTables) -> np.ndarray:
    return np.zeros(max(tables.weights.shape[1], 1))


# -- the three methods, always t-close -------------------------------------------------------

def t_close_partition(X: np.ndarray | None, confidential: Sequence[GroundModel], k: int,
                      t: float, *, method: TClosenessMethod | str = (
                          TClosenessMethod.T_CLOSENESS_FIRST),
                      categorical: Categorical | None = None,
                      microaggregate: Microaggregate | None = None,
                      progress: Progress | None = None,
                      threads: int | None = None) -> TClosePartition:
    """A partition whose classes have at least k records and an EMD of at most t for every
    confidential attribute. ``merge`` microaggregates with ``microaggregate(k)`` (e.g. MDAV
    on the quasi-identifiers) then merges; ``k-anonymity-first`` and ``t-closeness-first``
    cluster by Alg. 2 and 3 and then merge any class still above t (Alg. 3 ranks by the first
    confidential attribute and is repaired for the others). ``progress`` (rows clustered) and
    ``threads`` go to Alg. 3; ``microaggregate`` takes its own. Quasi-identifiers may be
    missing (NaN, code -1; module docstring)."""
    method = parse(TClosenessMethod, method, "method")
    X, categorical, k = prepare(X, k, categorical, missing=True)
    t = check_t(t)
    n = X.shape[0]
    if n > 1 and t < smallest_t(n):
        raise InputError(f"t = {t:g} is below what {n:,} records allow: eq. (3) would put "
                         f"them all in one class; t >= {smallest_t(n):.6g} gives two classes "
                         "or more")
    confidential = list(confidential)
    effective = k
    if method is TClosenessMethod.T_CLOSENESS_FIRST:
        labels, effective = t_closeness_first(X, confidential[0].values, k, t,
                                              categorical=categorical, progress=progress,
                                              threads=threads)
    elif method is TClosenessMethod.K_ANONYMITY_FIRST:
        labels = k_anonymity_first(X, confidential, k, t, categorical=categorical)
    else:
        if microaggregate is None:
            raise InputError("the merge method needs a microaggregation to start from")
        labels = microaggregate(k)
    before = int(np.unique(labels).size)
    labels, merges = merge(X, labels, confidential, t, categorical=categorical)
    return TClosePartition(labels=labels, method=method, k=k, effective_k=effective,
                           classes_before_merging=before, merges=merges)
