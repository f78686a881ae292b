"""Sums over groups of k consecutive records of a total order, by a distributed sample sort.

Individual ranking (001) and single-reference insensitive microaggregation (000 §4.2) group
records k by k along a total order (the last group k..2k-1), and release noisy group means.
Their only data-dependent step is the sort, which this module distributes:

1. every partition draws a Bernoulli sample of its primary keys (generator seeded by the
   partition number); the sample's quantiles are the bucket splitters;
2. every partition sends each record (primary key, tie-break keys, row number, values to sum)
   to the bucket of its primary key; records with equal primary keys share a bucket;
3. every bucket sorts its records by (primary key, tie-break keys lexicographically, row number)
   -- the order of the single-machine code -- and, knowing from the bucket counts the global
   rank of its first record, sums the values of every group;
4. the groups cut by a bucket boundary are summed here from their members.

Inside a group the values are added in input row order, one after the other, as
:func:`~microagg.aggregate.cluster_means` adds them on one machine: the sums, hence the means
and (with the same seed) the noisy release, are bit-identical to the single-machine ones. The
splitters only balance the work; they never change a group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from microagg.scale.exchange import split_by

__all__ = ["Sortable", "group_sums"]

SAMPLE_PER_BUCKET = 2000


@dataclass(frozen=True)
class Sortable:
    """Records of one partition: the primary key, tie-break keys (n × t, compared
    lexicographically), input row numbers and the values to sum per group (n × q)."""

    primary: np.ndarray
    ties: np.ndarray
    rows: np.ndarray
    values: np.ndarray

    def take(self, index: np.ndarray) -> Sortable:
        return Sortable(self.primary[index], self.ties[index], self.rows[index],
                        self.values[index])

    @staticmethod
    def concat(parts: Sequence[Sortable]) -> Sortable:
        return Sortable(*(np.concatenate([getattr(p, f) for p in parts]) for f in
                          ("primary", "ties", "rows", "values")))


def _sample(source: Sortable, rate: float, seed: tuple[int, ...]) -> np.ndarray:
    keep = np.random.default_rng(seed).random(source.primary.size) < rate
    return source.primary[keep]


def _splitters(samples: list[np.ndarray], buckets: int) -> np.ndarray:
    values = np.sort(np.concatenate(samples))
    if values.size == 0 or buckets == 1:
        return np.empty(0)
    cut = values[np.linspace(0, values.size, buckets + 1).astype(np.int64)[1:-1]
                 .clip(0, values.size - 1)]
    return np.unique(cut)


def _split(source: Sortable, splitters: np.ndarray, buckets: int) -> tuple:
    bucket = np.searchsorted(splitters, source.primary, side="left")
    parts = split_by(bucket, buckets, np.arange(source.primary.size))
    return (*(source.take(p[0]) for p in parts),
            np.array([p[0].size for p in parts], dtype=np.int64))


@dataclass(frozen=True)
class _BucketSums:
    first: int  # group of the first complete sum
    sums: np.ndarray  # complete groups: (groups, q)
    edges: list[tuple[int, np.ndarray, np.ndarray]]  # (group, rows, values) cut by a border


def _sorted_order(s: Sortable) -> np.ndarray:
    keys = [s.rows, *(s.ties[:, j] for j in range(s.ties.shape[1] - 1, -1, -1)), s.primary]
    return np.lexsort(keys)


def _bucket_sums(parts: list[Sortable], counts: np.ndarray, bucket: int, k: int,
                 groups: int) -> _BucketSums:
    s = Sortable.concat(parts)
    s = s.take(_sorted_order(s))
    start = int(counts[:bucket].sum())
    n = int(counts.sum())
    ranks = np.arange(start, start + s.rows.size, dtype=np.int64)
    label = np.minimum(ranks // k, groups - 1)
    if label.size == 0:
        return _BucketSums(0, np.empty((0, s.values.shape[1])), [])
    lo, hi = int(label[0]), int(label[-1])

    def whole(g: int) -> bool:
        first = g * k
        last = n if g == groups - 1 else first + k
        return first >= start and last <= start + s.rows.size

    edges = []
    for g in {lo, hi}:
        if not whole(g):
            members = label == g
            edges.append((g, s.rows[members], s.values[members]))
    first = lo if whole(lo) else lo + 1
    last = hi if whole(hi) else hi - 1
    inside = (label >= first) & (label <= last)
    rows, values, label = s.rows[inside], s.values[inside], label[inside] - first
    order = np.lexsort((rows, label))  # input row order inside each group
    label, values = label[order], values[order]
    sums = np.column_stack([np.bincount(label, weights=values[:, j],
                                        minlength=max(last - first + 1, 0))
                            for j in range(values.shape[1])]) if last >= first else np.empty(
        (0, values.shape[1]))
    return _BucketSums(first, sums.reshape(-1, values.shape[1]), edges)


def _assemble(results: list[_BucketSums], groups: int, width: int) -> np.ndarray:
    sums = np.zeros((groups, width))
    for r in results:
        sums[r.first:r.first + r.sums.shape[0]] = r.sums
    cut: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    for r in results:
        for g, rows, values in r.edges:
            cut.setdefault(g, []).append((rows, values))
    for g, parts in cut.items():
        rows = np.concatenate([p[0] for p in parts])
        values = np.concatenate([p[1] for p in parts])[np.argsort(rows, kind="stable")]
        sums[g] = [np.bincount(np.zeros(rows.size, dtype=np.int64), weights=values[:, j])[0]
                   for j in range(width)]
    return sums


def group_sums(sources: Sequence[Any], *, n: int, k: int, width: int, buckets: int,
               seed: int = 0) -> Any:
    """A delayed (n // k, width) array: the sums of the values of every group of k consecutive
    records (the last k..2k-1) in the total order of the ``sources`` (delayed
    :class:`Sortable`), computed in ``buckets`` sorted buckets (module docstring)."""
    import dask

    groups = n // k
    rate = min(1.0, SAMPLE_PER_BUCKET * buckets / max(n, 1))
    samples = [dask.delayed(_sample)(s, rate, (seed, i)) for i, s in enumerate(sources)]
    splitters = dask.delayed(_splitters)(samples, buckets)
    splits = [dask.delayed(_split)(s, splitters, buckets) for s in sources]
    counts = dask.delayed(_total)([sp[buckets] for sp in splits])
    bucket_results = [dask.delayed(_bucket_sums)([sp[b] for sp in splits], counts, b, k, groups)
                      for b in range(buckets)]
    return dask.delayed(_assemble)(bucket_results, groups, width)


def _total(counts: list[np.ndarray]) -> np.ndarray:
    return np.sum(counts, axis=0)
