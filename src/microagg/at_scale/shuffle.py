"""Write group values, each repeated by its group size, in a uniformly random row order,
without any process holding all the rows, and with nothing but small files exchanged.

A DP release of grouped records is a multiset: every group's noisy row, repeated by the group
size (k, the last k..2k-1, public given n). Its rows must go out in a uniformly random order
(docs/design.md, "What is written is what is protected"). On one machine that is one permutation;
here it is drawn in three steps with exactly the same distribution:

1. the groups are cut into chunks of consecutive groups (about one output partition's rows
   each); the table ``M[c, p]`` of how many rows chunk c sends to output partition p is drawn
   in this process, partition after partition, from the multivariate hypergeometric law
   (partition p takes its n_p rows without replacement from what the chunks still hold) --
   the law of that table under a uniform permutation;
2. the task of chunk c shuffles its rows (as group numbers) uniformly and cuts them by its
   row of M: given M, the rows a partition gets from a chunk are a uniform subset of that
   size. It writes, for every partition, only how many rows of each group it sends;
3. the task of output partition p reads those counts from the chunks' files, takes the values
   of its groups from the group values (written once, read memory-mapped), repeats them by
   their counts and shuffles them uniformly.

Given M every arrangement of the rows is equally likely, so the written order is a uniform
permutation. Column sets (the columns of an unlinked release, each in its own order) each get
their own table and shuffles. A task holds one chunk or one partition; the calling process
holds the group values (n/k rows, which the mechanism needs there anyway) and the small table.
The generators are spawned from one seed sequence drawn from the release's generator, so a
seeded release is reproducible.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.exchange import gather_pieces, spill_pieces

__all__ = ["shuffled_partitions", "transfer_table"]


def _chunk_bounds(sizes: np.ndarray, chunks: int) -> np.ndarray:
    """Group indices cutting the groups into ``chunks`` runs of about equal rows."""
    ends = np.cumsum(sizes)
    targets = np.linspace(0, ends[-1], chunks + 1)[1:-1]
    cuts = np.searchsorted(ends, targets, side="left") + 1
    return np.unique(np.concatenate([[0], cuts, [sizes.size]]))


def transfer_table(chunk_rows: np.ndarray, out_rows: np.ndarray, rng: np.random.Generator
                   ) -> np.ndarray:
    """M[c, p]: the rows chunk c sends to output partition p under a uniform permutation
    (multivariate hypergeometric, partition after partition)."""
    remaining = chunk_rows.astype(np.int64).copy()
    table = np.zeros((chunk_rows.size, out_rows.size), dtype=np.int64)
    for p, rows in enumerate(out_rows):
        if rows:
            table[:, p] = rng.multivariate_hypergeometric(remaining, int(rows))
            remaining -= table[:, p]
    return table


def _split_chunk(folder: str, column_set: int, chunk: int, first: int, sizes: np.ndarray,
                 sends: np.ndarray, seed: np.random.SeedSequence) -> int:
    """Shuffle the chunk's rows (group numbers from ``first``) and cut them by ``sends``;
    write, for every output partition, the groups it gets and how many rows of each."""
    rows = np.repeat(np.arange(first, first + sizes.size), sizes)
    rows = rows[np.random.default_rng(seed).permutation(rows.size)]
    index = np.min_scalar_type(max(first + sizes.size - 1, 0))
    width = np.min_scalar_type(int(sizes.max()))
    pieces = []
    for piece in np.split(rows, np.cumsum(sends)[:-1]):
        groups, counts = np.unique(piece, return_counts=True)
        pieces.append((groups.astype(index), counts.astype(width)))
    return spill_pieces(folder, f"order-{column_set}", chunk, pieces)


def _block(written: list[int], folder: str, block: int, names: list[list[str]],
           order: list[str], seeds: list[np.random.SeedSequence],
           categories: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """One output partition, once every chunk has written its counts (``written``, the
    chunks of every column set): every column set's group values repeated by those counts,
    in a uniformly random order of its own; the columns of ``categories`` hold concept
    numbers, written as their labels."""
    chunks = len(written) // len(names)
    columns: dict[str, np.ndarray] = {}
    for s, (set_names, seed) in enumerate(zip(names, seeds, strict=True)):
        values = np.load(Path(folder) / f"values-{s}.npy", mmap_mode="r")
        parts = [np.repeat(values[groups.astype(np.int64)], counts, axis=0)
                 for groups, counts in gather_pieces(folder, f"order-{s}", chunks, block)]
        rows = np.concatenate(parts)
        rows = rows[np.random.default_rng(seed).permutation(rows.shape[0])]
        for j, name in enumerate(set_names):
            columns[name] = (np.asarray(categories[name], dtype=object)[
                rows[:, j].astype(np.int64)] if name in categories else rows[:, j])
    return pd.DataFrame({name: columns[name] for name in order})


def shuffled_partitions(sets: Sequence[tuple[list[str], np.ndarray]], sizes: np.ndarray,
                        out_rows: Sequence[int] | np.ndarray, rng: np.random.Generator,
                        order: Sequence[str], spill: str | Path,
                        categories: Mapping[str, Sequence[str]] | None = None) -> list[Any]:
    """Delayed DataFrames, one per output partition of ``out_rows`` rows: for every column set
    (names, values of every group), the groups' values repeated by ``sizes`` in a uniformly
    random order of its own (module docstring); columns in ``order``, those of
    ``categories`` (concept numbers in the values) written as their labels. The values and the
    counts go through files in the folder ``spill``, which must stay until the frames are
    computed."""
    import dask

    folder = str(spill)
    rows_out = np.asarray(out_rows, dtype=np.int64)
    bounds = _chunk_bounds(sizes, rows_out.size)
    chunk_rows = np.add.reduceat(sizes, bounds[:-1])
    tables = [transfer_table(chunk_rows, rows_out, rng) for _ in sets]
    root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    chunk_seeds, out_seeds = root.spawn(2)
    written = []
    for s, ((_, values), table, seeds) in enumerate(zip(
            sets, tables, chunk_seeds.spawn(len(sets)), strict=True)):
        np.save(Path(folder) / f"values-{s}.npy", values)
        written += [dask.delayed(_split_chunk)(folder, s, c, int(a), sizes[a:b], table[c],
                                               seed)
                    for c, ((a, b), seed) in enumerate(zip(
                        itertools.pairwise(bounds), seeds.spawn(bounds.size - 1),
                        strict=True))]
    names = [list(n) for n, _ in sets]
    labels = {name: list(v) for name, v in (categories or {}).items()}
    return [dask.delayed(_block)(written, folder, p, names, list(order), seed.spawn(len(sets)),
                                 labels)
            for p, seed in enumerate(out_seeds.spawn(rows_out.size))]
