"""Sums over groups of k consecutive records of a total order, by a distributed sample sort
whose exchange goes between the tasks, so that no worker holds more than a partition or a bucket.

Individual ranking (001) and single-reference insensitive microaggregation (000 §4.2) group
records k by k along a total order (the last group k..2k-1), and release noisy group means.
Their only data-dependent step is the sort, which this module distributes:

1. every partition draws a Bernoulli sample of its primary keys (generator seeded by the
   partition number); the sample's quantiles, computed in the calling process, are the bucket
   splitters. This pass keeps nothing but the samples;
2. every partition, read again, cuts its records (primary key, tie-break keys, row number,
   values to sum) into one piece per bucket and counts them; records with equal primary keys
   share a bucket;
3. every bucket receives its piece of every partition (:mod:`~microagg.at_scale.exchange`:
   through the cluster's own communication, no shared folder), sorts its records by
   (primary key, tie-break keys lexicographically, row number) -- the order of the
   single-machine code -- and, knowing from the counts the global rank of its first record,
   sums the values of every group;
4. the groups cut by a bucket boundary are summed here from their members.

Inside a group the values are added in input row order, one after the other, as
:func:`~microagg.core.aggregate.cluster_means` adds them on one machine: the sums, hence the means
and (with the same seed) the noisy release, are bit-identical to the single-machine ones. The
splitters only balance the work; they never change a group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from microagg.at_scale.exchange import route, split_by

__all__ = ["Sortable", "group_sums"]

SAMPLE_PER_BUCKET = 2000


@dataclass(frozen=True)
class Sortable:
    """Records of one partition, in input order: the primary key, tie-break keys (n × t,
    compared lexicographically), input row numbers and the values to sum per group (n × q;
    ``None``: the primary key itself)."""

    primary: np.ndarray
    ties: np.ndarray
    rows: np.ndarray
    values: np.ndarray | None = None

    @property
    def payload(self) -> np.ndarray:
        return self.primary[:, None] if self.values is None else self.values

    def take(self, index: np.ndarray) -> Sortable:
        return Sortable(self.primary[index], self.ties[index], self.rows[index],
                        None if self.values is None else self.values[index])

    @staticmethod
    def concat(parts: Sequence[Sortable]) -> Sortable:
        values = None if parts[0].values is None else np.concatenate([p.values for p in parts])
        return Sortable(np.concatenate([p.primary for p in parts]),
                        np.concatenate([p.ties for p in parts]),
                        np.concatenate([p.rows for p in parts]), values)


def _sample(sources: list[Sortable], rate: float, seed: tuple[int, ...]) -> list[np.ndarray]:
    keep = np.random.default_rng(seed).random(sources[0].primary.size) < rate
    return [s.primary[keep] for s in sources]


def _splitters(samples: list[list[np.ndarray]], buckets: int) -> list[np.ndarray]:
    out = []
    for per_sort in zip(*samples, strict=True):
        values = np.sort(np.concatenate(per_sort))
        if values.size == 0 or buckets == 1:
            out.append(np.empty(0))
            continue
        cut = values[np.linspace(0, values.size, buckets + 1).astype(np.int64)[1:-1]
                     .clip(0, values.size - 1)]
        out.append(np.unique(cut))
    return out


def _row_type(rows: np.ndarray) -> np.dtype:
    """The narrowest of uint32 and int64 that holds the row numbers (half the bytes to write
    below 2³² rows)."""
    return np.dtype(np.uint32) if rows.size == 0 or rows.max() < 2**32 else np.dtype(np.int64)


def _cut(sources: list[Sortable], splitters: list[np.ndarray], buckets: int
         ) -> tuple[np.ndarray, tuple]:
    """The counts (sorts × buckets) and, for every bucket b, the records of every sort in b
    (one tuple of arrays)."""
    pieces: list[list[np.ndarray]] = [[] for _ in range(buckets)]
    counts = []
    for source, cut in zip(sources, splitters, strict=True):
        bucket = np.searchsorted(cut, source.primary, side="left")
        parts = split_by(bucket, buckets, np.arange(source.primary.size))
        for b, (index,) in enumerate(parts):
            piece = source.take(index)
            pieces[b] += [piece.primary, piece.ties, piece.rows.astype(_row_type(piece.rows))]
            if piece.values is not None:
                pieces[b].append(piece.values)
        counts.append([p[0].size for p in parts])
    return np.array(counts, dtype=np.int64), tuple(tuple(p) for p in pieces)


def _read_bucket(received: list[tuple], sorts: int) -> list[Sortable]:
    """A bucket of every sort, from its pieces of all partitions in input order."""
    pieces: list[list[Sortable]] = [[] for _ in range(sorts)]
    for arrays in received:
        arity = len(arrays) // sorts  # 3, or 4 with values to sum
        for sort in range(sorts):
            primary, ties, rows, *values = arrays[sort * arity:(sort + 1) * arity]
            pieces[sort].append(Sortable(primary, ties, rows.astype(np.int64),
                                         values[0] if values else None))
    return [Sortable.concat(p) for p in pieces]


@dataclass(frozen=True)
class _BucketSums:
    first: int  # group of the first complete sum
    sums: np.ndarray  # complete groups: (groups, q)
    edges: list[tuple[int, np.ndarray, np.ndarray]]  # (group, rows, values) cut by a border


def _sorted_order(s: Sortable) -> np.ndarray:
    """The order of the records: primary key, then the tie-break keys; the records are in
    input order and the sorts are stable, so row number breaks the remaining ties."""
    if s.ties.shape[1] == 0:
        return np.argsort(s.primary, kind="stable")
    return np.lexsort([*(s.ties[:, j] for j in range(s.ties.shape[1] - 1, -1, -1)), s.primary])


def _one_bucket(s: Sortable, start: int, n: int, k: int, groups: int) -> _BucketSums:
    values = s.payload
    if s.rows.size == 0:
        return _BucketSums(0, np.empty((0, values.shape[1])), [])
    order = _sorted_order(s)
    label = np.empty(s.rows.size, dtype=np.int64)  # group of every record, in input order
    label[order] = np.minimum(np.arange(start, start + s.rows.size) // k, groups - 1)
    lo, hi = int(label[order[0]]), int(label[order[-1]])

    def whole(g: int) -> bool:
        first = g * k
        last = n if g == groups - 1 else first + k
        return first >= start and last <= start + s.rows.size

    edges = []
    for g in sorted({lo, hi}):
        if not whole(g):
            members = label == g
            edges.append((g, s.rows[members], values[members]))
    first = lo if whole(lo) else lo + 1
    last = hi if whole(hi) else hi - 1
    if last < first:
        return _BucketSums(first, np.empty((0, values.shape[1])), edges)
    inside = (label >= first) & (label <= last)
    # bincount adds in array order, i.e. input row order inside each group, as on one machine
    sums = np.column_stack([np.bincount(label[inside] - first, weights=values[inside, j],
                                        minlength=last - first + 1)
                            for j in range(values.shape[1])])
    return _BucketSums(first, sums, edges)


def _bucket_sums(received: list[tuple], counts: np.ndarray, bucket: int, k: int,
                 groups: int) -> list[_BucketSums]:
    n = int(counts[0].sum())
    return [_one_bucket(s, int(counts[sort, :bucket].sum()), n, k, groups)
            for sort, s in enumerate(_read_bucket(received, counts.shape[0]))]


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


def _assemble_all(results: list[list[_BucketSums]], groups: int, widths: list[int]
                  ) -> list[np.ndarray]:
    return [_assemble([r[sort] for r in results], groups, width)
            for sort, width in enumerate(widths)]


def group_sums(client: Any, sources: Sequence[Any], again: Callable[[], Sequence[Any]], *,
               n: int, k: int, widths: Sequence[int], buckets: int, seed: int = 0,
               extra: Sequence[Any] = ()) -> tuple[list[np.ndarray], list[Any]]:
    """One (n // k, width) array per sort: the sums of the values of every group of k
    consecutive records (the last k..2k-1) in the total order of the sort, and the results of
    the ``extra`` delayed values, computed with the first pass. ``sources`` are delayed lists
    (one :class:`Sortable` per sort) of the partitions in input order, for the sample;
    ``again()`` builds them afresh for the exchange (module docstring)."""
    import dask

    groups = n // k
    rate = min(1.0, SAMPLE_PER_BUCKET * buckets / max(n, 1))
    samples = [dask.delayed(_sample)(s, rate, (seed, i)) for i, s in enumerate(sources)]
    samples, extras = client.compute([samples, list(extra)], sync=True)
    splitters = _splitters(samples, buckets)
    cuts = [dask.delayed(_cut)(s, splitters, buckets) for s in again()]
    counts = dask.delayed(_total)([c[0] for c in cuts])
    results = [dask.delayed(_bucket_sums)(received, counts, b, k, groups)
               for b, received in enumerate(route([c[1] for c in cuts], buckets))]
    sums = client.compute(dask.delayed(_assemble_all)(results, groups, list(widths)),
                          sync=True)
    return sums, extras


def _total(counts: list[np.ndarray]) -> np.ndarray:
    return np.sum(counts, axis=0)
