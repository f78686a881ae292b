"""All-to-all data exchange between the tasks of a Dask graph (the shuffle step of a sample
sort or of a regrouping), on numpy arrays rather than DataFrames, through files.

Every source task writes the piece of each destination to a file of its own in a spill folder
and returns nothing larger than a number; every destination task reads its piece of each
source. No task holds more than its own source or destination, and nothing is kept in flight
in the workers' memory, so the memory of the cluster does not grow with the data. The spill
folder must be readable by every worker (:func:`~microagg.at_scale.dataset.spill_folder`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["exchange", "gather_pieces", "spill_pieces", "split_by"]

Arrays = tuple[np.ndarray, ...]


def split_by(destination: np.ndarray, count: int, *arrays: np.ndarray) -> tuple:
    """The rows of ``arrays`` grouped by ``destination`` (0..count-1): a tuple of ``count``
    tuples of arrays, each keeping the input order of its rows."""
    order = np.argsort(destination, kind="stable")
    bounds = np.searchsorted(destination[order], np.arange(count + 1))
    return tuple(tuple(a[order[bounds[d]:bounds[d + 1]]] for a in arrays)
                 for d in range(count))


def _path(folder: str, tag: str, source: int, destination: int) -> Path:
    return Path(folder) / f"{tag}-{source:05d}-{destination:05d}.npy"


def spill_pieces(folder: str, tag: str, source: int, pieces: Sequence[Arrays]) -> int:
    """Write piece d of ``source`` (a tuple of arrays) for destination d = 0, 1, ...;
    returns ``source``."""
    for d, arrays in enumerate(pieces):
        with _path(folder, tag, source, d).open("wb") as f:
            np.save(f, np.array(len(arrays)))
            for a in arrays:
                np.save(f, a, allow_pickle=False)
    return source


def gather_pieces(folder: str, tag: str, sources: int, destination: int) -> list[Arrays]:
    """The pieces of ``destination`` from sources 0..sources-1, in source order."""
    out = []
    for s in range(sources):
        with _path(folder, tag, s, destination).open("rb") as f:
            count = int(np.load(f))
            out.append(tuple(np.load(f, allow_pickle=False) for _ in range(count)))
    return out


def _split_source(source: Any, index: int, split: Callable[[Any], Sequence[Arrays]],
                  folder: str, tag: str) -> int:
    return spill_pieces(folder, tag, index, split(source))


def _combine(written: list[int], destination: int,
             combine: Callable[[list[Arrays], int], Any], folder: str, tag: str) -> Any:
    return combine(gather_pieces(folder, tag, len(written), destination), destination)


def exchange(sources: Sequence[Any], split: Callable[[Any], Sequence[Arrays]], count: int,
             combine: Callable[[list[Arrays], int], Any], spill: str | Path, tag: str
             ) -> list[Any]:
    """Delayed results ``combine([split(s)[d] for s in sources], d)`` for d = 0..count-1: every
    source is split once into ``count`` pieces, written under ``tag`` in the folder
    ``spill``, and every destination reads its piece of each source."""
    import dask

    written = [dask.delayed(_split_source)(s, i, split, str(spill), tag)
               for i, s in enumerate(sources)]
    return [dask.delayed(_combine)(written, d, combine, str(spill), tag)
            for d in range(count)]
