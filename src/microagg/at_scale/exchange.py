"""All-to-all data exchange between the tasks of a Dask graph (the shuffle step of a sample
sort or of a regrouping), on numpy arrays rather than DataFrames, through the cluster's own
communication.

Every source task returns one piece (a tuple of arrays) per destination; a small task per
(source, destination) pair, run where the source's result lives, takes out that piece, and
every destination task receives its piece of each source from the workers that hold them.
No task holds more than its own source or destination, no file is written, and no folder
needs to be shared: the workers may run on machines that share no disk. A piece waits in
the memory of the worker that made it until its destination has run (Dask spills it to
that worker's own disk under memory pressure), so the cluster holds at most one copy of the
data in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["exchange", "route", "split_by"]

Arrays = tuple[np.ndarray, ...]


def split_by(destination: np.ndarray, count: int, *arrays: np.ndarray) -> tuple:
    """The rows of ``arrays`` grouped by ``destination`` (0..count-1): a tuple of ``count``
    tuples of arrays, each keeping the input order of its rows."""
    order = np.argsort(destination, kind="stable")
    bounds = np.searchsorted(destination[order], np.arange(count + 1))
    return tuple(tuple(a[order[bounds[d]:bounds[d + 1]]] for a in arrays)
                 for d in range(count))


def route(sources: Sequence[Any], count: int) -> list[list[Any]]:
    """``pieces[d][s]``: the delayed piece d of the delayed source ``sources[s]`` (a sequence
    of ``count`` pieces), taken out where the source was computed, so that destination d
    receives only its own pieces."""
    return [[source[d] for source in sources] for d in range(count)]


def exchange(sources: Sequence[Any], split: Callable[[Any], Sequence[Arrays]], count: int,
             combine: Callable[[list[Arrays], int], Any]) -> list[Any]:
    """Delayed results ``combine([split(s)[d] for s in sources], d)`` for d = 0..count-1: every
    source is split once into ``count`` pieces and every destination receives its piece of
    each source, in source order (module docstring)."""
    import dask

    split_sources = [dask.delayed(split)(s) for s in sources]
    return [dask.delayed(combine)(pieces, d)
            for d, pieces in enumerate(route(split_sources, count))]
