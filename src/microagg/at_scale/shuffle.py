"""Write group values, each repeated by its group size, in a uniformly random row order,
without any process holding all the rows and without an exchange between workers.

A DP release of grouped records is a multiset: every group's noisy row, repeated by the group
size (k, the last k..2k-1, public given n). Its rows must go out in a uniformly random order
(DESIGN.md, "What is written is what is protected"). On one machine that is one permutation.
Here the permutation is cut into the consecutive blocks of the output partitions (n_0 rows,
then n_1, ...), and drawn in two steps with exactly the same distribution:

1. in this process, for p = 0, 1, ...: the number of rows of every group that block p holds,
   drawn from the multivariate hypergeometric law (block p takes its n_p rows without
   replacement from what the groups still hold) -- the law of those counts under a uniform
   permutation. Each block's counts go to a file of the spill folder, sparse (the groups with
   a row in the block), so they never outnumber its rows and this process holds one block's
   at a time;
2. the task of output partition p reads its counts, takes the values of its groups from the
   group values (written once to the spill folder, read memory-mapped), repeats them by their
   counts and shuffles them uniformly: given the counts, every order of the block is equally
   likely.

Column sets (the columns of an unlinked release, each in its own order) each get their own
counts and shuffles. A task holds its partition alone; the calling process holds the group
values (n/k rows, which the mechanism needs there anyway). The generators are spawned from one
seed sequence drawn from the release's generator, so a seeded release is reproducible.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["block_counts", "shuffled_partitions"]


def block_counts(sizes: np.ndarray, out_rows: Sequence[int], rng: np.random.Generator
                 ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """For every output block in turn, the (groups, counts) of the rows it holds in a
    uniformly random permutation of the groups repeated by ``sizes``, cut into blocks of
    ``out_rows`` rows."""
    remaining = np.asarray(sizes, dtype=np.int64).copy()
    for rows in out_rows:
        counts = (rng.multivariate_hypergeometric(remaining, int(rows)) if rows
                  else np.zeros_like(remaining))
        remaining -= counts
        groups = np.flatnonzero(counts)
        yield groups, counts[groups]


def _block(folder: str, block: int, names: list[list[str]], order: list[str],
           seeds: list[np.random.SeedSequence]) -> pd.DataFrame:
    """One output partition: every column set's group values repeated by their counts, in a
    uniformly random order of its own."""
    columns: dict[str, np.ndarray] = {}
    for s, (set_names, seed) in enumerate(zip(names, seeds, strict=True)):
        values = np.load(Path(folder) / f"values-{s}.npy", mmap_mode="r")
        with np.load(Path(folder) / f"counts-{s}-{block}.npz") as f:
            rows = np.repeat(values[f["groups"]], f["counts"], axis=0)
        rows = rows[np.random.default_rng(seed).permutation(rows.shape[0])]
        for j, name in enumerate(set_names):
            columns[name] = rows[:, j]
    return pd.DataFrame({name: columns[name] for name in order})


def shuffled_partitions(sets: Sequence[tuple[list[str], np.ndarray]], sizes: np.ndarray,
                        out_rows: Sequence[int], rng: np.random.Generator,
                        order: Sequence[str], spill: str | Path) -> list[Any]:
    """Delayed DataFrames, one per output partition of ``out_rows`` rows: for every column set
    (names, values of every group), the groups' values repeated by ``sizes`` in a uniformly
    random order of its own (module docstring); columns in ``order``. The values and the
    counts go to files in the folder ``spill``, which must stay until the frames are
    computed."""
    import dask

    folder = Path(spill)
    index = np.min_scalar_type(max(int(sizes.size) - 1, 0))
    width = np.min_scalar_type(int(np.max(sizes)))
    for s, (_, values) in enumerate(sets):
        np.save(folder / f"values-{s}.npy", values)
        for p, (groups, counts) in enumerate(block_counts(sizes, out_rows, rng)):
            np.savez(folder / f"counts-{s}-{p}.npz", groups=groups.astype(index),
                     counts=counts.astype(width))
    root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    seeds = root.spawn(len(out_rows))
    names = [list(n) for n, _ in sets]
    return [dask.delayed(_block)(str(folder), p, names, list(order),
                                 seeds[p].spawn(len(sets)))
            for p in range(len(out_rows))]
