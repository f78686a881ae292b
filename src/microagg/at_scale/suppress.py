"""Local suppression of a data set on a Dask cluster (``microagg suppress --engine dask``).

Local suppression decides a record's suppressions from the frequencies of every other
record's keys, so its partitions cannot be suppressed apart. What it reads of a record is
the codes of its keys (:func:`~microagg.core.frequencies.key_codes`), so the cluster does
this in three passes, and the result is the one machine's, value for value:

1. every partition lists the distinct values of each key in order of first appearance; the
   client joins the lists in partition order, which numbers the values as one machine
   numbers them on the whole table;
2. every partition codes its keys by those numbers (-1 where a value is missing) and sends
   the codes, ``8·q`` bytes a record, to the client, which runs the suppression of
   :class:`~microagg.release.methods.LocalSuppression` on them (near-linear in the records:
   :mod:`microagg.core.suppression`);
3. every partition receives the mask of its own rows, makes those values missing and writes
   itself in input order, the other columns unchanged, identifiers dropped.

The client holds the codes of every record (about 0.5 GB for 10⁷ records and 7 keys) and the
suppression's working set; no record's other columns leave its partition. The written data
set is checked again by the group-by of :func:`~microagg.at_scale.risk.risk_at_scale`: its
smallest class is the report's ``k_anonymity``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, open_dataset, read_piece, write_dataset
from microagg.at_scale.per_record import RISK_KS, DatasetReport, risk_figures
from microagg.at_scale.risk import risk_at_scale
from microagg.at_scale.storage import Location
from microagg.data.schema import Role, Schema
from microagg.data.table import missing_mask
from microagg.errors import InputError, ParameterError

__all__ = ["SuppressionAtScale", "suppress_at_scale"]


@dataclass(frozen=True)
class SuppressionAtScale(DatasetReport):
    """What local suppression did on a data set: the values suppressed per key, the passes'
    counts, and the frequencies of the keys before and after (as
    :class:`~microagg.at_scale.per_record.PerRecordReport` gives them); ``k_anonymity``
    is the written data set's, counted again."""

    method: str
    parameters: dict[str, Any]
    keys: list[str]
    importance: list[str]
    records: int
    partitions: int
    identifiers_dropped: list[str]
    suppressions: dict[str, int]
    total_suppressions: int
    greedy_suppressions: int
    restored: int
    missing_before: dict[str, int]
    before: dict[str, Any]
    after: dict[str, Any]
    k_anonymity: dict[str, Any]
    engine: str = "dask"
    notes: list[str] = field(default_factory=list)


def _values(piece: Piece, keys: Sequence[str]) -> list[np.ndarray]:
    """The distinct values of each key in the partition, in order of first appearance."""
    frame = read_piece(piece, list(keys))
    return [np.asarray(pd.unique(frame[key][~missing_mask(frame[key])]), dtype=object)
            for key in keys]


def _numbering(parts: Sequence[list[np.ndarray]], q: int) -> list[pd.Index]:
    """Every key's values over all partitions, in order of first appearance."""
    return [pd.Index(pd.unique(np.concatenate([np.empty(0, dtype=object),
                                               *(p[j] for p in parts)])), dtype=object)
            for j in range(q)]


def _codes(piece: Piece, keys: Sequence[str], numbering: Sequence[pd.Index]) -> np.ndarray:
    """The partition's keys coded by ``numbering`` (-1 where missing)."""
    frame = read_piece(piece, list(keys))
    columns = []
    for key, index in zip(keys, numbering, strict=True):
        codes = index.get_indexer(pd.Index(frame[key].astype(object))).astype(np.int64)
        codes[missing_mask(frame[key])] = -1
        columns.append(codes)
    return (np.column_stack(columns) if columns
            else np.empty((len(frame), 0), dtype=np.int64))


def _suppress_piece(piece: Piece, keys: Sequence[str], mask: np.ndarray,
                    identifiers: Sequence[str]) -> pd.DataFrame:
    """The partition with the values of ``mask`` made missing, identifiers dropped."""
    from microagg.release.families.keys import with_missing

    frame = read_piece(piece).reset_index(drop=True)
    written = frame.drop(columns=list(identifiers))
    for j, key in enumerate(keys):
        if mask[:, j].any():
            written[key] = with_missing(frame[key], mask[:, j])
    return written


def suppress_at_scale(client: Any, dataset: Dataset, output: str | Path | Location,
                      method: Any, keys: Sequence[str], *, schema: Schema | None = None,
                      storage_options: Mapping[str, Any] | None = None,
                      progress: Callable[[int], None] | None = None) -> SuppressionAtScale:
    """Local suppression of ``keys`` in ``dataset`` (module docstring), written as the
    Parquet data set ``output``.

    Parameters
    ----------
    client
        A ``distributed.Client``.
    dataset : Dataset
        The partitions (:func:`microagg.at_scale.dataset.open_dataset`).
    output : str, Path or Location
        The data set to write (a folder, or a URL: :mod:`~microagg.at_scale.storage`).
    method : LocalSuppression
        The method and its parameters.
    keys : sequence of str
        The key variables.
    schema : Schema, optional
        The declared schema (its identifiers are dropped; strata are refused).
    storage_options : mapping, optional
        Those of ``output`` when it is a URL.
    progress : callable, optional
        Called with the records written so far.

    Returns
    -------
    SuppressionAtScale
        The suppressions, and the frequencies of the keys before and after.

    Raises
    ------
    InputError
        For keys the data set does not have, or a schema with strata.
    """
    import dask

    from microagg.release.families.keys import plain_parameters
    from microagg.release.inputs import resolve_schema

    refusal = method.at_scale_refusal()
    if refusal:
        raise ParameterError("engine", f"dask cannot run {method.name}: {refusal}")
    keys = list(dict.fromkeys(keys))
    if not keys:
        raise InputError("name the key variables with `keys`")
    dataset.require(keys)
    resolved, _ = resolve_schema(dataset.head(), schema, None, strict=False)
    if resolved.names_with_role(Role.STRATUM):
        raise InputError("strata are suppressed on one machine: with --engine dask, write "
                         "each stratum as a data set of its own and suppress each")
    identifiers = [a.name for a in resolved if a.role is Role.IDENTIFIER]
    before = risk_at_scale(client, dataset, keys, k=(*RISK_KS, method.k))
    values = client.compute([dask.delayed(_values)(p, keys) for p in dataset.pieces],
                            sync=True)
    numbering = _numbering(values, len(keys))
    pieces_codes = client.compute([dask.delayed(_codes)(p, keys, numbering)
                                   for p in dataset.pieces], sync=True)
    codes = np.concatenate(pieces_codes) if pieces_codes else np.empty((0, len(keys)))
    bounds = np.cumsum([0, *(len(c) for c in pieces_codes)])
    del pieces_codes  # the partitions' copies of the codes: 0.5 GB at 10^7 records, 6 keys
    mask, greedy, restored = method.suppressed(codes, keys)
    masks = client.scatter([mask[a:b] for a, b in itertools.pairwise(bounds)])
    parts = [dask.delayed(_suppress_piece)(p, keys, m, identifiers)
             for p, m in zip(dataset.pieces, masks, strict=True)]
    write_dataset(client, parts, output, source=dataset.source, progress=progress,
                  storage_options=storage_options)
    after = risk_at_scale(client, open_dataset(output, storage_options=storage_options), keys,
                          k=(*RISK_KS, method.k))
    rank = method.rank(codes, keys)
    smallest = int(after.combinations["fk"].min())
    return SuppressionAtScale(
        method=method.name, parameters=plain_parameters(method),
        keys=keys, importance=sorted(keys, key=lambda k: -rank[keys.index(k)]),
        records=dataset.n, partitions=len(dataset.pieces), identifiers_dropped=identifiers,
        suppressions={key: int(mask[:, j].sum()) for j, key in enumerate(keys)},
        total_suppressions=int(mask.sum()), greedy_suppressions=greedy, restored=restored,
        missing_before={key: int((codes[:, j] < 0).sum()) for j, key in enumerate(keys)},
        before=risk_figures(before), after=risk_figures(after),
        k_anonymity={"k": method.k, "smallest_class": smallest,
                     "holds": smallest >= method.k},
        notes=["the codes of the keys of every record were suppressed together on the "
               "client, as one machine suppresses the whole table; the data set written was "
               "counted again"])
