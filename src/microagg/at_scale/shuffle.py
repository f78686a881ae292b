"""Write group values, each repeated by its group size, in a uniformly random row order,
without any process holding all the rows, and with no file exchanged.

A DP release of grouped records is a multiset: every group's noisy row, repeated by the group
size (k, the last k..2k-1, public given n). Its rows must go out in a uniformly random order
(docs/design.md, "What is written is what is protected"). On one machine that is one permutation;
here it is drawn in three steps with exactly the same distribution:

1. the groups are cut into chunks of consecutive groups (about one output partition's rows
   each); the table ``M[c, p]`` of how many rows chunk c sends to output partition p is drawn
   in this process, partition after partition, from the multivariate hypergeometric law
   (partition p takes its n_p rows without replacement from what the chunks still hold) --
   the law of that table under a uniform permutation;
2. the task of chunk c (which holds the values of its groups, sent to the cluster once)
   shuffles its rows (as group numbers) uniformly and cuts them by its row of M: given M, the
   rows a partition gets from a chunk are a uniform subset of that size. It sends every
   partition the values of the groups it gets and how many rows of each;
3. the task of output partition p receives those from every chunk
   (:func:`~microagg.at_scale.exchange.route`), repeats the values by their counts and
   shuffles them uniformly.

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
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.exchange import route

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


def _split_chunk(values: np.ndarray, sizes: np.ndarray, sends: np.ndarray,
                 seed: np.random.SeedSequence) -> tuple:
    """Shuffle the chunk's rows (as its group numbers) and cut them by ``sends``: for every
    output partition, the values of the groups it gets and how many rows of each."""
    rows = np.repeat(np.arange(sizes.size), sizes)
    rows = rows[np.random.default_rng(seed).permutation(rows.size)]
    width = np.min_scalar_type(int(sizes.max()))
    pieces = []
    for piece in np.split(rows, np.cumsum(sends)[:-1]):
        groups, counts = np.unique(piece, return_counts=True)
        pieces.append((values[groups], counts.astype(width)))
    return tuple(pieces)


def _block(received: list[list[tuple]], names: list[list[str]], order: list[str],
           seeds: list[np.random.SeedSequence], categories: Mapping[str, Sequence[str]]
           ) -> pd.DataFrame:
    """One output partition from its pieces of every chunk (``received``, per column set):
    every column set's group values repeated by their counts, in a uniformly random order of
    its own; the columns of ``categories`` hold concept numbers, written as their labels."""
    columns: dict[str, np.ndarray] = {}
    for pieces, set_names, seed in zip(received, names, seeds, strict=True):
        parts = [np.repeat(values, counts, axis=0) for values, counts in pieces]
        rows = np.concatenate(parts)
        rows = rows[np.random.default_rng(seed).permutation(rows.shape[0])]
        for j, name in enumerate(set_names):
            columns[name] = (np.asarray(categories[name], dtype=object)[
                rows[:, j].astype(np.int64)] if name in categories else rows[:, j])
    return pd.DataFrame({name: columns[name] for name in order})


def shuffled_partitions(client: Any | None, sets: Sequence[tuple[list[str], np.ndarray]],
                        sizes: np.ndarray, out_rows: Sequence[int] | np.ndarray,
                        rng: np.random.Generator, order: Sequence[str],
                        categories: Mapping[str, Sequence[str]] | None = None) -> list[Any]:
    """Delayed DataFrames, one per output partition of ``out_rows`` rows: for every column set
    (names, values of every group), the groups' values repeated by ``sizes`` in a uniformly
    random order of its own (module docstring); columns in ``order``, those of
    ``categories`` (concept numbers in the values) written as their labels. Every chunk's
    group values are sent to the cluster (``client``; None: they go in the task graph) once,
    from this process."""
    import dask

    rows_out = np.asarray(out_rows, dtype=np.int64)
    bounds = _chunk_bounds(sizes, rows_out.size)
    chunk_rows = np.add.reduceat(sizes, bounds[:-1])
    tables = [transfer_table(chunk_rows, rows_out, rng) for _ in sets]
    root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    chunk_seeds, out_seeds = root.spawn(2)
    received: list[list[list[Any]]] = []  # [column set][partition][chunk]
    for (_, values), table, seeds in zip(sets, tables, chunk_seeds.spawn(len(sets)),
                                         strict=True):
        slices = [values[a:b] for a, b in itertools.pairwise(bounds)]
        held = slices if client is None else client.scatter(slices, hash=False)
        chunks = [dask.delayed(_split_chunk)(part, sizes[a:b], table[c], seed)
                  for c, (part, (a, b), seed) in enumerate(zip(
                      held, itertools.pairwise(bounds), seeds.spawn(bounds.size - 1),
                      strict=True))]
        received.append(route(chunks, rows_out.size))
    names = [list(n) for n, _ in sets]
    labels = {name: list(v) for name, v in (categories or {}).items()}
    return [dask.delayed(_block)([pieces[p] for pieces in received], names, list(order),
                                 seed.spawn(len(sets)), labels)
            for p, seed in enumerate(out_seeds.spawn(rows_out.size))]
