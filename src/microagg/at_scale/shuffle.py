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
   permutation. The counts of a block are kept sparse (groups with a row in it), so they
   never outnumber its rows;
2. the task of output partition p repeats the values of its groups by their counts and
   shuffles them uniformly: given the counts, every order of the block is equally likely.

Column sets (the columns of an unlinked release, each in its own order) each get their own
counts and shuffles. Every task holds its partition alone; the calling process holds the
group values (n/k rows, which the mechanism needs there anyway) and one block's counts at a
time while the graph is built. The generators are spawned from one seed sequence drawn from
the release's generator, so a seeded release is reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["block_counts", "shuffled_partitions"]


def block_counts(sizes: np.ndarray, out_rows: Sequence[int], rng: np.random.Generator
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """For every output block, the (groups, counts) of the rows it holds in a uniformly random
    permutation of the groups repeated by ``sizes``, cut into blocks of ``out_rows`` rows."""
    remaining = np.asarray(sizes, dtype=np.int64).copy()
    out = []
    for rows in out_rows:
        counts = (rng.multivariate_hypergeometric(remaining, int(rows)) if rows
                  else np.zeros_like(remaining))
        remaining -= counts
        groups = np.flatnonzero(counts)
        out.append((groups, counts[groups]))
    return out


def _block(values: list[np.ndarray], counts: list[np.ndarray], names: list[list[str]],
           order: list[str], seeds: list[np.random.SeedSequence]) -> pd.DataFrame:
    """One output partition: every column set's group values repeated by their counts, in a
    uniformly random order of its own."""
    columns: dict[str, np.ndarray] = {}
    for v, c, set_names, seed in zip(values, counts, names, seeds, strict=True):
        rows = np.repeat(v, c, axis=0)
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

    counts = [block_counts(sizes, out_rows, rng) for _ in sets]
    root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    seeds = root.spawn(len(out_rows))
    names = [list(n) for n, _ in sets]
    return [dask.delayed(_block)([values[counts[s][p][0]] for s, (_, values) in
                                  enumerate(sets)],
                                 [counts[s][p][1] for s in range(len(sets))], names,
                                 list(order), seeds[p].spawn(len(sets)))
            for p in range(len(out_rows))]
