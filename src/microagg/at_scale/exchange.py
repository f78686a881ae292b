"""All-to-all data exchange between the tasks of a Dask graph (the shuffle step of a sample
sort or of a regrouping), on numpy arrays rather than DataFrames."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["exchange", "split_by"]


def split_by(destination: np.ndarray, count: int, *arrays: np.ndarray) -> tuple:
    """The rows of ``arrays`` grouped by ``destination`` (0..count-1): a tuple of ``count``
    tuples of arrays, each keeping the input order of its rows."""
    order = np.argsort(destination, kind="stable")
    bounds = np.searchsorted(destination[order], np.arange(count + 1))
    return tuple(tuple(a[order[bounds[d]:bounds[d + 1]]] for a in arrays)
                 for d in range(count))


def exchange(sources: Sequence[Any], split: Callable[[Any], tuple], count: int,
             combine: Callable[[list[Any]], Any]) -> list[Any]:
    """Delayed results ``combine([split(s)[d] for s in sources])`` for d = 0..count-1: every
    source is split once into ``count`` pieces and every destination gathers its piece of
    each source (P·count small tasks, no DataFrame shuffle)."""
    import dask

    splits = [dask.delayed(split)(s) for s in sources]
    return [dask.delayed(combine)([parts[d] for parts in splits]) for d in range(count)]
