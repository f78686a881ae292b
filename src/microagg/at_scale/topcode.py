"""Top and bottom coding of a data set on a Dask cluster (``microagg topcode --engine dask``).

Once its thresholds are known, top and bottom coding reads each record alone. With thresholds
that are values (``at="value"``) the cluster codes every partition as one machine codes the
whole table. With quantiles (``at="quantile"``) the thresholds are first found on the
cluster, as the values one machine takes (numpy's ``inverted_cdf``: the order statistic of
rank :func:`quantile_rank` among the values present), by a selection that never gathers the
column:

1. every partition reads its columns as the masking reads them
   (:meth:`~microagg.release.families.masking.MaskingMethod.masked_values`) and keeps each
   column's values present, sorted, in the worker's memory;
2. for each threshold the client narrows a window of every partition's sorted values around
   the rank it seeks (:func:`order_statistic`): a pivot, the weighted median of the windows'
   medians, is counted in every partition (a binary search), and the windows keep the side
   that holds the rank; once the windows hold few values together they are sent to the
   client, which reads the value at the rank among them.

Then every partition's extent (how far the coding moves each column,
:func:`~microagg.release.families.masking.masking_extent`) is combined on the client, which
refuses, as one machine does, a coding that changes no value, before anything is written;
and every partition is coded at the thresholds and written in input order, identifiers
dropped, the other columns unchanged. The data set written holds, row for row, the values
one machine writes (tests/test_scale_topcode.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, read_piece, write_dataset
from microagg.at_scale.per_record import DatasetReport
from microagg.at_scale.storage import Location
from microagg.data.schema import Role, Schema
from microagg.errors import ParameterError
from microagg.release.families.masking import check_extent, combined_extent, masking_extent
from microagg.release.methods.top_coding import Threshold, TopBottomCoding

__all__ = ["GATHERED", "TopCodingAtScale", "order_statistic", "quantile_rank",
           "topcode_at_scale"]

GATHERED = 1 << 16
"""The most values the windows of a selection hold together before they go to the client."""


@dataclass(frozen=True)
class TopCodingAtScale(DatasetReport):
    """What top and bottom coding did on a data set: its parameters, the thresholds of each
    column (the quantiles found, or the values given), the values coded at each, and the
    fields one machine's report gives (``parameter``, ``value``, ``columns`` …)."""

    method: str
    parameter: str
    value: float
    parameters: dict[str, Any]
    columns: list[str]
    thresholds: dict[str, dict[str, float | None]]
    coded: dict[str, dict[str, int]]
    records: int
    partitions: int
    identifiers_dropped: list[str]
    released_unchanged: list[str]
    engine: str = "dask"
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class _CodedAt(TopBottomCoding):
    """Top and bottom coding at thresholds known for each column (found on the cluster)."""

    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()

    def thresholds(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.low, dtype=np.float64), np.asarray(self.high, dtype=np.float64)


def quantile_rank(n: int, q: float) -> int:
    """The rank (from 0) among ``n`` sorted values of their quantile ``q`` as numpy's
    ``inverted_cdf`` takes it (the same floating-point steps).

    Parameters
    ----------
    n : int
        The values present (at least 1).
    q : float
        The quantile, in [0, 1].

    Returns
    -------
    int
        The rank.

    Examples
    --------
    >>> [quantile_rank(4, q) for q in (0.0, 0.25, 0.3, 1.0)]
    [0, 0, 1, 3]
    """
    index = np.float64(n) * np.float64(q) - 1
    below = np.floor(index)
    return max(int(below if index - below == 0 else below + 1), 0)


def _sorted_columns(piece: Piece, method: TopBottomCoding, names: Sequence[str],
                    schema: Schema | None) -> list[np.ndarray]:
    """Each column's values present in the partition, as the masking reads them, sorted."""
    frame = read_piece(piece).reset_index(drop=True)
    _, _, values = method.masked_values(frame, columns=list(names), schema=schema)
    return [np.sort(column[~np.isnan(column)]) for column in values.T]


def _size(columns: list[np.ndarray], j: int) -> int:
    return int(columns[j].size)


def _window_median(columns: list[np.ndarray], a: int, b: int, j: int) -> float:
    return float(columns[j][(a + b) // 2]) if b > a else np.nan


def _counts(columns: list[np.ndarray], j: int, pivot: float) -> tuple[int, int]:
    """How many values are below ``pivot``, and how many at most ``pivot``."""
    values = columns[j]
    return (int(np.searchsorted(values, pivot, side="left")),
            int(np.searchsorted(values, pivot, side="right")))


def _window(columns: list[np.ndarray], a: int, b: int, j: int) -> np.ndarray:
    return columns[j][a:b]


def order_statistic(client: Any, held: Sequence[Any], j: int, rank: int,
                    gathered: int = GATHERED) -> float:
    """The value of ``rank`` (from 0) among the values of column ``j`` of every partition.

    Parameters
    ----------
    client
        A ``distributed.Client``.
    held : sequence of Future
        Every partition's sorted columns (a list of 1-D arrays each), held on the workers.
    j : int
        The column.
    rank : int
        The rank sought, below the number of values.
    gathered : int
        The most values the windows send to the client.

    Returns
    -------
    float
        The value one machine finds at ``rank`` in the column sorted whole.
    """
    b = np.array(client.gather(client.map(_size, held, j=j, pure=False)), dtype=np.int64)
    a = np.zeros_like(b)
    while (b - a).sum() > gathered:
        sizes = b - a
        medians = np.array(client.gather(client.map(_window_median, held, a, b, j=j,
                                                    pure=False)))
        order = np.argsort(medians[sizes > 0], kind="stable")
        weights = sizes[sizes > 0][order]
        middle = int(np.searchsorted(np.cumsum(weights), weights.sum() / 2))
        pivot = float(medians[sizes > 0][order][middle])
        counts = np.array(client.gather(client.map(_counts, held, j=j, pivot=pivot,
                                                   pure=False)), dtype=np.int64)
        below, at_most = counts[:, 0], counts[:, 1]
        if rank < below.sum():
            b = np.minimum(below, b)
        elif rank < at_most.sum():
            return pivot
        else:
            a = np.maximum(at_most, a)
    windows = client.gather(client.map(_window, held, a, b, j=j, pure=False))
    return float(np.sort(np.concatenate([np.empty(0), *windows]))[rank - int(a.sum())])


def _thresholds(client: Any, held: Sequence[Any], method: TopBottomCoding,
                p: int) -> tuple[np.ndarray, np.ndarray]:
    """Every column's bottom and top threshold (quantiles found on the cluster)."""
    if method.at is not Threshold.QUANTILE:
        return method.thresholds(np.empty((0, p)))
    low, high = np.full(p, -np.inf), np.full(p, np.inf)
    for j in range(p):
        n = sum(client.gather(client.map(_size, held, j=j, pure=False)))
        for q, into in ((method.bottom, low), (method.top, high)):
            if q is not None:  # no value present: the quantile is missing, as numpy's
                into[j] = order_statistic(client, held, j, quantile_rank(n, q)) if n else np.nan
    return low, high


def _extent(columns: list[np.ndarray], low: np.ndarray, high: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """The partition's extent of the coding, and how many values are coded at the bottom
    and at the top of each column."""
    extents, coded = [], []
    for j, values in enumerate(columns):
        masked = np.clip(values, low[j], high[j])
        extents.append(masking_extent(values[:, None], masked[:, None]))
        coded.append((int(np.searchsorted(values, low[j], side="left")),
                      int(values.size - np.searchsorted(values, high[j], side="right"))))
    return (np.hstack(extents) if extents else np.empty((5, 0)),
            np.array(coded, dtype=np.int64).reshape(-1, 2))


def _code_piece(piece: Piece, method: TopBottomCoding, names: Sequence[str],
                schema: Schema | None) -> pd.DataFrame:
    """The partition coded at the thresholds of ``method`` (a part may be left as it was:
    the table's coding was judged whole)."""
    frame = read_piece(piece).reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return method.release(frame, columns=list(names), schema=schema,
                              refuse_unchanged=False).frame


def _plain(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def topcode_at_scale(client: Any, dataset: Dataset, output: str | Path | Location,
                     method: TopBottomCoding, *, columns: Sequence[str] | None = None,
                     schema: Schema | None = None,
                     storage_options: Mapping[str, Any] | None = None,
                     progress: Callable[[int], None] | None = None,
                     refuse_unchanged: bool = True) -> TopCodingAtScale:
    """Top and bottom coding of ``dataset`` (module docstring), written as the Parquet data
    set ``output``.

    Parameters
    ----------
    client
        A ``distributed.Client``.
    dataset : Dataset
        The partitions (:func:`microagg.at_scale.dataset.open_dataset`).
    output : str, Path or Location
        The data set to write (a folder, or a URL: :mod:`~microagg.at_scale.storage`).
    method : TopBottomCoding
        The method and its parameters.
    columns : sequence of str, optional
        The columns to code (default: as one machine chooses them, read on the first rows).
    schema : Schema, optional
        The declared schema.
    storage_options : mapping, optional
        Those of ``output`` when it is a URL.
    progress : callable, optional
        Called with the records written so far.

    Returns
    -------
    TopCodingAtScale
        The thresholds and the values coded at each.

    Raises
    ------
    InputError
        For columns that are not numeric, or a coding that changes no value (nothing is
        written; with ``refuse_unchanged`` False it is said in a warning and written, as a
        recipe's step on one machine does).
    """
    import dask

    refusal = method.at_scale_refusal()
    if refusal:
        raise ParameterError("engine", f"dask cannot run {method.name}: {refusal}")
    if columns:
        dataset.require(list(columns))
    resolved, names, _ = method.masked_values(dataset.head(), columns=columns, schema=schema)
    held = client.compute([dask.delayed(_sorted_columns)(p, method, names, schema)
                           for p in dataset.pieces])
    try:
        low, high = _thresholds(client, held, method, len(names))
        scans = client.gather(client.map(_extent, held, low=low, high=high, pure=False))
    finally:
        client.cancel(held)
    extent = combined_extent([e for e, _ in scans]) if scans else np.empty((5, 0))
    check_extent(extent, names, method, refuse_unchanged)
    coded = np.sum([c for _, c in scans], axis=0) if scans else np.zeros((len(names), 2))
    at = _CodedAt(top=method.top, bottom=method.bottom, at=method.at,
                  low=tuple(low.tolist()), high=tuple(high.tolist()))
    parts = [dask.delayed(_code_piece)(p, at, names, schema) for p in dataset.pieces]
    write_dataset(client, parts, output, source=dataset.source, progress=progress,
                  storage_options=storage_options)
    identifiers = [a.name for a in resolved if a.role is Role.IDENTIFIER]
    written = [c for c in dataset.columns if c not in identifiers]
    quantile = method.at is Threshold.QUANTILE
    return TopCodingAtScale(
        method=method.name, parameter=method.parameter, value=method.value,
        parameters={k: v.value if isinstance(v, Threshold) else v
                    for k, v in method.parameters().items()},
        columns=list(names),
        thresholds={name: {"bottom": _plain(low[j]), "top": _plain(high[j])}
                    for j, name in enumerate(names)},
        coded={name: {"bottom": int(coded[j, 0]), "top": int(coded[j, 1])}
               for j, name in enumerate(names)},
        records=dataset.n, partitions=len(dataset.pieces), identifiers_dropped=identifiers,
        released_unchanged=[c for c in written if c not in names],
        notes=["every record is coded on its own at the thresholds"
               + (", the quantiles of each column found on the cluster as one machine takes "
                  "them (inverted_cdf)" if quantile else "")
               + ", so the data set written is the table one machine writes, partition by "
                 "partition in input order"])
