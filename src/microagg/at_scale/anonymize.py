"""k-anonymity at scale: block MDAV on a Dask cluster (see :mod:`microagg.partition.blocks`).

The records never meet in one process. Four passes over the partitions:

1. **Moments and a sample**: per partition, counts, sums and sums of squares of the
   quasi-identifiers (for z-scores, population standard deviation as in
   :func:`~microagg.core.distance.scale`) and a Bernoulli sample of about 64 records per future
   block, drawn from a generator seeded by (seed, partition).
2. **Cut tree** (in this process, on the sample only): recursive median cuts along the widest
   z-scored attribute until a leaf holds about B·(sample/n) sample records, i.e. about B records.
3. **Counts**: every partition routes its records down the tree and counts them per leaf. A leaf
   with fewer than k records is merged into the next one (the previous one for the last), so
   every block has at least k records.
4. **Exchange and MDAV**: the records (row number and quasi-identifiers only) go to the task of
   their group of consecutive blocks (:func:`pack_blocks`: at most max(B, partition rows)
   records per group, so two blocks of about n/2 run in two tasks when the partitions hold
   fewer records than a block, and in one when a partition holds them both); a block larger
   than B is cut again by exact median cuts
   (:func:`~microagg.partition.blocks.median_blocks`); exact MDAV runs in every block, the
   values are replaced by their cluster means and go back to
   their partition, which writes its rows in input order with every other column unchanged
   (identifiers dropped).

Both exchanges (to the groups of blocks, and back) go through the cluster's own
communication (:mod:`~microagg.at_scale.exchange`), not through files: each task holds one
partition or one group of blocks, never the whole data set, and the workers need no shared
folder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.dataset import (
    Dataset,
    Piece,
    check_dataset_output,
    read_matrix,
    read_piece,
    write_dataset,
)
from microagg.at_scale.exchange import exchange, route, split_by
from microagg.at_scale.storage import Location
from microagg.core.aggregate import cluster_means
from microagg.data.schema import Role, Schema
from microagg.errors import InputError
from microagg.partition.blocks import DEFAULT_BLOCK_SIZE, check_block_size, median_blocks
from microagg.partition.mdav import mdav
from microagg.release.inputs import masked_columns, resolve_schema

__all__ = ["BlockReport", "CutTree", "block_microaggregate", "cut_tree", "pack_blocks"]

SAMPLE_PER_BLOCK = 64


def _moments_and_sample(piece: Piece, columns: Sequence[str], rate: float,
                        seed: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = read_matrix(piece, columns)
    keep = np.random.default_rng(seed).random(X.shape[0]) < rate
    return X.sum(axis=0), (X * X).sum(axis=0), X[keep]


@dataclass(frozen=True)
class CutTree:
    """Median cuts of the sample: node i splits on ``axis[i]`` at ``threshold[i]`` (values at
    or below go to ``left[i]``), or is leaf ``leaf[i]`` when ``axis[i]`` is -1. Leaves are
    numbered left to right."""

    axis: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray

    @property
    def leaves(self) -> int:
        return int(self.leaf.max()) + 1

    def route(self, Z: np.ndarray) -> np.ndarray:
        """The leaf of every row of ``Z`` (z-scored values), vectorized level by level."""
        node = np.zeros(Z.shape[0], dtype=np.int64)
        active = np.flatnonzero(self.axis[node] >= 0)
        while active.size:
            at = node[active]
            below = Z[active, self.axis[at]] <= self.threshold[at]
            node[active] = np.where(below, self.left[at], self.right[at])
            active = active[self.axis[node[active]] >= 0]
        return self.leaf[node]


def cut_tree(sample: np.ndarray, leaf_size: int) -> CutTree:
    """Recursive median cuts of ``sample`` along its widest attribute until a node holds at
    most ``leaf_size`` points (or only equal values on every attribute)."""
    axis: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    leaf: list[int] = []
    leaves = 0

    def node(points: np.ndarray) -> int:
        nonlocal leaves
        index = len(axis)
        axis.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        leaf.append(-1)
        spans = points.max(axis=0) - points.min(axis=0) if points.size else np.zeros(1)
        if points.shape[0] <= leaf_size or spans.max() <= 0:
            leaf[index] = leaves
            leaves += 1
            return index
        a = int(np.argmax(spans))
        values = np.sort(points[:, a])
        t = values[(values.size - 1) // 2]
        if t >= values[-1]:  # the median is the maximum: cut below it
            t = values[values < values[-1]][-1]
        below = points[:, a] <= t
        axis[index], threshold[index] = a, float(t)
        left[index] = node(points[below])
        right[index] = node(points[~below])
        return index

    node(np.asarray(sample, dtype=np.float64))
    return CutTree(np.array(axis, dtype=np.int64), np.array(threshold),
                   np.array(left, dtype=np.int64), np.array(right, dtype=np.int64),
                   np.array(leaf, dtype=np.int64))


def merge_small(counts: np.ndarray, k: int) -> np.ndarray:
    """Block number of every leaf: leaves taken left to right, a block closed once it holds at
    least k records; a short remainder joins the last block. Empty leaves join any block."""
    blocks = np.empty(counts.size, dtype=np.int64)
    block, held = 0, 0
    for i, c in enumerate(counts):
        blocks[i] = block
        held += int(c)
        if held >= k:
            block, held = block + 1, 0
    if held and block > 0:  # the remainder, fewer than k, joins the previous block
        blocks[blocks == block] = block - 1
    return blocks


def pack_blocks(rows: np.ndarray, capacity: int) -> np.ndarray:
    """Group number of every block: blocks taken left to right, a group closed when the next
    block would take it above ``capacity`` records, so a group holds at most ``capacity``
    records (or one block, when that block alone holds more).

    Parameters
    ----------
    rows : numpy.ndarray
        The records of each block, in block order.
    capacity : int
        The most records of a group (one task of MDAV).

    Returns
    -------
    numpy.ndarray
        The group of each block, 0, 1, ... in block order.

    Examples
    --------
    >>> pack_blocks(np.array([4, 3, 5, 9, 1]), capacity=8).tolist()
    [0, 0, 1, 2, 3]
    """
    groups = np.empty(rows.size, dtype=np.int64)
    group, held = 0, 0
    for i, r in enumerate(rows):
        if held and held + int(r) > capacity:
            group, held = group + 1, 0
        groups[i] = group
        held += int(r)
    return groups


def _count(piece: Piece, columns: Sequence[str], center: np.ndarray, sd: np.ndarray,
           tree: CutTree) -> np.ndarray:
    leaves = tree.route((read_matrix(piece, columns) - center) / sd)
    return np.bincount(leaves, minlength=tree.leaves)


def _to_groups(source: tuple[Piece, int], columns: Sequence[str], center: np.ndarray,
               sd: np.ndarray, tree: CutTree, block_of_leaf: np.ndarray,
               group_of_block: np.ndarray) -> tuple:
    piece, offset = source
    X = read_matrix(piece, columns)
    blocks = block_of_leaf[tree.route((X - center) / sd)]
    rows = np.arange(offset, offset + X.shape[0], dtype=np.int64)
    groups = group_of_block[blocks]
    return split_by(groups, int(group_of_block.max()) + 1, rows, X, blocks)


@dataclass(frozen=True)
class _GroupResult:
    sse: float
    blocks: list[int]  # records per block after the exact re-cuts
    clusters: np.ndarray  # size histogram: clusters[s] = clusters of s records


def _microaggregate_group(parts: list[tuple], group: int, *, k: int, block_size: int,
                          center: np.ndarray, sd: np.ndarray, offsets: np.ndarray
                          ) -> tuple[_GroupResult, tuple]:
    """MDAV in every block of the group: its statistics, and the masked rows for each
    partition (row numbers, values), which go back to their partitions."""
    rows = np.concatenate([p[0] for p in parts])
    X = np.concatenate([p[1] for p in parts])
    blocks = np.concatenate([p[2] for p in parts])
    order = np.lexsort((rows, blocks))  # by block, then input order: deterministic
    rows, X, blocks = rows[order], X[order], blocks[order]
    masked = np.empty_like(X)
    sizes: list[int] = []
    histogram = np.zeros(2 * k, dtype=np.int64)
    sse = 0.0
    edges = np.flatnonzero(np.diff(blocks)) + 1
    for start, stop in zip([0, *edges], [*edges, blocks.size], strict=True):
        Z = (X[start:stop] - center) / sd
        sub = median_blocks(Z, block_size) if stop - start > block_size else np.zeros(
            stop - start, dtype=np.int64)
        for b in range(int(sub.max()) + 1):
            local = np.flatnonzero(sub == b)
            labels = mdav(Z[local], k, threads=1)
            means = cluster_means(X[start:stop][local], labels)
            masked[start + local] = means[labels]
            sse += float((((X[start + local] - means[labels]) / sd) ** 2).sum())
            histogram += np.bincount(np.bincount(labels), minlength=2 * k)[:2 * k]
            sizes.append(local.size)
    destination = np.searchsorted(offsets, rows, side="right") - 1
    return (_GroupResult(sse, sizes, histogram),
            split_by(destination, offsets.size, rows, masked))


def _write_partition(parts: list[tuple], piece: Piece, offset: int, columns: Sequence[str],
                     dropped: Sequence[str]) -> pd.DataFrame:
    """The partition ``piece`` with its masked rows (``parts``: row numbers and values from
    every group)."""
    frame = read_piece(piece)
    rows = np.concatenate([p[0] for p in parts]) - offset
    masked = np.concatenate([p[1] for p in parts])
    values = np.empty_like(masked)
    values[rows] = masked
    out = frame.drop(columns=list(dropped))
    for j, c in enumerate(columns):
        out[c] = values[:, j]
    return out


@dataclass(frozen=True)
class BlockReport:
    """What block MDAV did on a data set and what the written data set satisfies."""

    method: str
    k: int
    block_size: int
    columns: list[str]
    records: int
    partitions: int
    identifiers_dropped: list[str]
    released_unchanged: list[str]
    blocks: dict[str, int]
    clusters: dict[str, Any]
    k_anonymity: dict[str, Any]
    sse: float  # on z-scores (population standard deviation)
    sst: float
    scaling: str = "zscore"
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _columns(dataset: Dataset, columns: Sequence[str] | None,
             declared: Schema | None = None) -> tuple[list[str], list[str]]:
    """The masked columns (``columns``, else the ``declared`` schema's quasi-identifiers,
    else every column that may be masked) and the identifiers dropped."""
    head = dataset.head()
    schema, given = resolve_schema(head, declared)
    chosen = masked_columns(schema, columns, declared=given)
    categorical = [c for c in chosen if not schema[c].is_numeric]
    if categorical:
        raise InputError(f"column '{categorical[0]}' is categorical; block MDAV on a cluster "
                         "microaggregates numeric quasi-identifiers only (name them with "
                         "`columns`)")
    identifiers = [a.name for a in schema if a.role is Role.IDENTIFIER]
    return chosen, identifiers


def block_microaggregate(client: Any, dataset: Dataset, output: str | Path | Location, *,
                         k: int,
                         columns: Sequence[str] | None = None,
                         block_size: int = DEFAULT_BLOCK_SIZE, seed: int = 0,
                         progress: Callable[[int], None] | None = None,
                         schema: Schema | None = None) -> BlockReport:
    """Block MDAV of ``dataset`` on ``client``, written as the Parquet data set ``output``
    (module docstring). ``seed`` draws the sample that places the cuts (it changes the blocks,
    not the guarantee). ``progress`` is called once per written partition. Without
    ``columns``, the declared ``schema``'s quasi-identifiers are masked (its identifiers
    dropped), else every numeric column that may be masked."""
    import dask

    if k < 1:
        raise InputError(f"`k` must be at least 1, got {k}")
    if dataset.n < k:
        raise InputError(f"k = {k} is larger than the {dataset.n} records")
    block_size = check_block_size(block_size, k)
    chosen, identifiers = _columns(dataset, columns, schema)
    pieces, offsets, n = dataset.pieces, dataset.offsets, dataset.n
    rate = min(1.0, SAMPLE_PER_BLOCK * max(1.0, n / block_size) / n)
    scans = client.compute([dask.delayed(_moments_and_sample)(p, chosen, rate, (seed, i))
                            for i, p in enumerate(pieces)], sync=True)
    s1 = sum(s[0] for s in scans)
    s2 = sum(s[1] for s in scans)
    center = s1 / n
    variance = np.maximum(s2 / n - center ** 2, 0.0)
    sd = np.where(variance > 0, np.sqrt(variance), 1.0)
    sample = (np.concatenate([s[2] for s in scans]) - center) / sd
    leaf_size = max(1, int(block_size * sample.shape[0] / n))
    tree = cut_tree(sample, leaf_size)
    counts = sum(client.compute([dask.delayed(_count)(p, chosen, center, sd, tree)
                                 for p in pieces], sync=True))
    block_of_leaf = merge_small(counts, k)
    block_rows = np.bincount(block_of_leaf, weights=counts).astype(np.int64)
    group_of_block = pack_blocks(block_rows, max(block_size, max(p.rows for p in pieces)))
    check_dataset_output(output, dataset.source)
    results = exchange(
        [(p, int(o)) for p, o in zip(pieces, offsets, strict=True)],
        partial(_to_groups, columns=chosen, center=center, sd=sd, tree=tree,
                block_of_leaf=block_of_leaf, group_of_block=group_of_block),
        int(group_of_block.max()) + 1,
        partial(_microaggregate_group, k=k, block_size=block_size, center=center, sd=sd,
                offsets=offsets))
    back = route([r[1] for r in results], len(pieces))
    frames = [dask.delayed(_write_partition)(parts, p, int(o), chosen, identifiers)
              for parts, p, o in zip(back, pieces, offsets, strict=True)]
    _, stats = write_dataset(client, frames, output, source=dataset.source,
                             progress=progress, extra=[r[0] for r in results])
    histogram = sum(s.clusters for s in stats)
    sizes = [b for s in stats for b in s.blocks]
    sst = float(n * np.count_nonzero(variance > 0))
    unchanged = [c for c in dataset.columns if c not in chosen and c not in identifiers]
    present = np.flatnonzero(histogram)
    notes = ["each cluster's records share its mean on every masked column, so the data set "
             "is k-anonymous over them by construction; microagg check verifies a file"]
    if unchanged:
        notes.append(f"released unchanged: {', '.join(unchanged)}")
    return BlockReport(
        method="block-mdav", k=k, block_size=block_size, columns=chosen, records=n,
        partitions=len(pieces), identifiers_dropped=identifiers, released_unchanged=unchanged,
        blocks={"count": len(sizes), "smallest": min(sizes), "largest": max(sizes),
                "cut_tree_leaves": tree.leaves, "tasks": int(group_of_block.max()) + 1},
        clusters={"count": int(histogram.sum()), "smallest": int(present[0]),
                  "largest": int(present[-1]),
                  "size_histogram": {str(int(s)): int(histogram[s]) for s in present}},
        k_anonymity={"smallest_class_at_least": int(present[0]),
                     "holds": bool(present[0] >= k)},
        sse=float(sum(s.sse for s in stats)), sst=sst, notes=notes)
