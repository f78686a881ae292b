"""Write group values, each repeated by its group size, in a uniformly random row order,
without any process holding all the rows.

A DP release of grouped records is a multiset: every group's noisy row, repeated by the group
size (k, the last k..2k-1, public given n). Its rows must go out in a uniformly random order
(DESIGN.md, "What is written is what is protected"). On one machine that is one permutation;
here it is two rounds of local shuffles, which give exactly the same distribution:

1. the groups are cut into chunks of consecutive groups; the table ``M[c, p]`` of how many rows
   chunk c sends to output partition p is drawn in this process, partition after partition,
   from the multivariate hypergeometric law (output partition p takes its n_p rows without
   replacement from what the chunks still hold) -- the law of that table under a uniform
   permutation;
2. chunk c expands its rows, shuffles them uniformly and sends its first M[c, 0] rows to output
   partition 0, the next M[c, 1] to partition 1, and so on: given M, the set a partition gets
   from a chunk is a uniform subset of that size;
3. every output partition shuffles the rows it received uniformly.

Given M every arrangement of the rows is equally likely, so the written order is a uniform
permutation. Column sets (the columns of an unlinked release, each in its own order) each get
their own table and shuffles. The generators are spawned from one seed sequence drawn from
the release's generator, so a seeded release is reproducible.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["shuffled_partitions"]


def _chunk_bounds(sizes: np.ndarray, chunks: int) -> np.ndarray:
    """Group indices cutting the groups into ``chunks`` runs of about equal rows."""
    ends = np.cumsum(sizes)
    targets = np.linspace(0, ends[-1], chunks + 1)[1:-1]
    cuts = np.searchsorted(ends, targets, side="left") + 1
    return np.unique(np.concatenate([[0], cuts, [sizes.size]]))


def _transfer_table(chunk_rows: np.ndarray, out_rows: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
    remaining = chunk_rows.astype(np.int64).copy()
    table = np.zeros((chunk_rows.size, out_rows.size), dtype=np.int64)
    for p, rows in enumerate(out_rows):
        if rows:
            table[:, p] = rng.multivariate_hypergeometric(remaining, int(rows))
            remaining -= table[:, p]
    return table


def _expand_chunk(values: list[np.ndarray], sizes: np.ndarray, tables: list[np.ndarray],
                  seeds: list[np.random.SeedSequence]) -> tuple[list[np.ndarray], ...]:
    """The chunk's rows of every column set, shuffled and cut by the set's row of the table:
    item p holds, per set, the rows for output partition p."""
    pieces = []
    for v, table, seed in zip(values, tables, seeds, strict=True):
        rows = np.repeat(v, sizes, axis=0)
        rows = rows[np.random.default_rng(seed).permutation(rows.shape[0])]
        pieces.append(np.split(rows, np.cumsum(table)[:-1]))
    return tuple(list(per_set) for per_set in zip(*pieces, strict=True))


def _gather(received: list[list[np.ndarray]], names: list[list[str]], order: list[str],
            seeds: list[np.random.SeedSequence]) -> pd.DataFrame:
    columns: dict[str, np.ndarray] = {}
    for s, (set_names, seed) in enumerate(zip(names, seeds, strict=True)):
        rows = np.concatenate([piece[s] for piece in received])
        rows = rows[np.random.default_rng(seed).permutation(rows.shape[0])]
        for j, name in enumerate(set_names):
            columns[name] = rows[:, j]
    return pd.DataFrame({name: columns[name] for name in order})


def shuffled_partitions(sets: Sequence[tuple[list[str], np.ndarray]], sizes: np.ndarray,
                        out_rows: Sequence[int], rng: np.random.Generator,
                        order: Sequence[str]) -> list[Any]:
    """Delayed DataFrames, one per output partition of ``out_rows`` rows: for every column set
    (names, values of every group), the groups' values repeated by ``sizes`` in a uniformly
    random order of its own (module docstring); columns in ``order``."""
    import dask

    out_rows = np.asarray(out_rows, dtype=np.int64)
    bounds = _chunk_bounds(sizes, out_rows.size)
    chunk_rows = np.add.reduceat(sizes, bounds[:-1])
    tables = [_transfer_table(chunk_rows, out_rows, rng) for _ in sets]
    root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    chunk_seeds, out_seeds = root.spawn(2)
    chunk_seed = chunk_seeds.spawn(bounds.size - 1)
    out_seed = out_seeds.spawn(out_rows.size)
    chunks = [dask.delayed(_expand_chunk)(
        [values[a:b] for _, values in sets], sizes[a:b], [t[c] for t in tables],
        chunk_seed[c].spawn(len(sets)))
        for c, (a, b) in enumerate(itertools.pairwise(bounds))]
    names = [list(n) for n, _ in sets]
    return [dask.delayed(_gather)([chunk[p] for chunk in chunks], names, list(order),
                                  out_seed[p].spawn(len(sets)))
            for p in range(out_rows.size)]
