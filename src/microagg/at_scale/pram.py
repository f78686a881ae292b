"""Invariant PRAM of a data set on a Dask cluster (``microagg pram --engine dask``).

PRAM reads other records only through each key's marginal, which makes its transition
matrix; once the matrix is known, every record is redrawn on its own. So the cluster runs it
in two passes:

1. every partition counts the records (or sums their sampling weights, read by the one rule
   of :func:`~microagg.data.weights.sampling_weights`) of each category of each key; the
   client adds the counts and builds the matrix one machine builds from the same marginal
   (:meth:`~microagg.release.methods.InvariantPram.matrix`): the categories are the
   declared ones of a categorical column, else the distinct values sorted, as on one
   machine;
2. every partition redraws its keys from the matrices with a generator of its own, seeded by
   the run's seed and the partition's index (``SeedSequence(seed).spawn``: the partitions'
   draws are independent, and the same seed draws the same data set), and writes itself in
   input order, identifiers dropped, the other columns unchanged.

The draws differ from one machine's (one generator there runs through the whole table), but
follow the same matrices: the expected marginal of each key is kept, and each record keeps
its category with probability R_ii. The report gives the fields of one machine's report
(``matrices``, ``changed_values``, ``marginal`` …) with the frequencies of the keys before and
after from the group-by of :func:`~microagg.at_scale.risk.risk_at_scale`. Strata (one matrix
per stratum) are drawn on one machine.
"""

from __future__ import annotations

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
from microagg.core.pram import pram_codes
from microagg.data.schema import Role, Schema, category_text
from microagg.data.table import missing_mask
from microagg.data.weights import sampling_weights
from microagg.errors import InputError, ParameterError
from microagg.release.methods.pram import (
    InvariantPram,
    categories_of,
    pram_notes,
    rebuilt,
    require_few_categories,
    why_fixed,
)
from microagg.release.reports.key_reports import PramMatrix

__all__ = ["KeyMatrix", "PramAtScale", "pram_at_scale", "pram_matrices"]


@dataclass(frozen=True)
class PramAtScale(DatasetReport):
    """What PRAM did on a data set: the fields of one machine's report (the matrices, the
    values changed per key, the frequencies of the keys before and after)."""

    method: str
    parameters: dict[str, Any]
    keys: list[str]
    changed: list[str]
    records: int
    partitions: int
    identifiers_dropped: list[str]
    released_unchanged: list[str]
    retention: float
    alpha: float
    marginal: str
    matrices: list[PramMatrix]
    changed_values: dict[str, int]
    weight: str | None
    seeded: bool
    before: dict[str, Any]
    after: dict[str, Any]
    engine: str = "dask"
    notes: list[str] = field(default_factory=list)


def _counts(piece: Piece, keys: Sequence[str], weight: str | None, offset: int
            ) -> list[tuple[pd.Index, bool, np.ndarray]]:
    """Each key's categories in the partition (declared, or its distinct values sorted),
    whether they are a categorical column's, and the records (or weights) of each."""
    frame = read_piece(piece, [*keys, *([weight] if weight else [])])
    weights = (None if weight is None else sampling_weights(
        frame[weight], weight, offset + np.arange(len(frame))))
    out = []
    for key in keys:
        series = frame[key]
        categories, codes = categories_of(series)
        present = codes >= 0
        mass = np.bincount(codes[present], minlength=len(categories),
                           weights=None if weights is None else weights[present])
        out.append((categories, isinstance(series.dtype, pd.CategoricalDtype), mass))
    return out


def _together(parts: Sequence[tuple[pd.Index, bool, np.ndarray]]
              ) -> tuple[pd.Index, np.ndarray]:
    """A key's categories over every partition, and the records (or weights) of each: a
    categorical column's declared categories when every partition declares the same, else
    the distinct values sorted (as one machine numbers the whole column)."""
    first = parts[0][0]
    if all(categorical and c.equals(first) for c, categorical, _ in parts):
        return first, np.sum([m for _, _, m in parts], axis=0)
    values = pd.Series(np.concatenate([np.empty(0, dtype=object),
                                       *(np.asarray(c, dtype=object) for c, _, _ in parts)]))
    categories = pd.Index(pd.factorize(values.infer_objects(), sort=True)[1])
    mass = np.zeros(len(categories), dtype=np.result_type(*(m.dtype for _, _, m in parts)))
    for c, _, m in parts:
        np.add.at(mass, categories.get_indexer(c), m)
    return categories, mass


@dataclass(frozen=True, eq=False)
class KeyMatrix:
    """A key's categories over the data set, the records (or weights) of each, and its
    transition matrix (None when no value is present)."""

    categories: pd.Index
    mass: np.ndarray
    matrix: np.ndarray | None

    def entry(self, key: str) -> PramMatrix:
        """The report's entry of the matrix, as one machine writes it."""
        assert self.matrix is not None
        return PramMatrix(key, [category_text(c) for c in self.categories],
                          (self.mass / self.mass.sum()).tolist(), self.matrix.tolist())


def pram_matrices(method: InvariantPram, keys: Sequence[str],
                  counts: Sequence[list[tuple[pd.Index, bool, np.ndarray]]]
                  ) -> tuple[list[KeyMatrix], dict[str, str]]:
    """The matrix of each key from the counts of every partition, as one machine builds it.

    Parameters
    ----------
    method : InvariantPram
        The method and its parameters.
    keys : sequence of str
        The keys.
    counts : sequence of list
        Every partition's categories and counts of each key (at least one partition).

    Returns
    -------
    tuple
        Each key's :class:`KeyMatrix`, and the keys PRAM cannot change with why.
    """
    made, fixed = [], {}
    for j, key in enumerate(keys):
        categories, mass = _together([part[j] for part in counts])
        require_few_categories(key, len(categories))
        present = np.flatnonzero(mass > 0)
        matrix, moves = method.matrix(mass) if present.size else (None, False)
        if not moves:
            fixed[key] = why_fixed(present, categories, False)
        made.append(KeyMatrix(categories, mass, matrix))
    return made, fixed


def _draw_piece(piece: Piece, keys: Sequence[str], matrices: Sequence[KeyMatrix],
                identifiers: Sequence[str],
                seed: np.random.SeedSequence) -> tuple[pd.DataFrame, list[int]]:
    """The partition with its keys redrawn by their matrices (generator seeded by ``seed``),
    identifiers dropped; and the values changed per key."""
    frame = read_piece(piece).reset_index(drop=True)
    rng = np.random.default_rng(seed)
    written = frame.drop(columns=list(identifiers))
    changed = []
    for key, made in zip(keys, matrices, strict=True):
        series, cats, matrix = frame[key], made.categories, made.matrix
        if isinstance(series.dtype, pd.CategoricalDtype) and \
                not series.cat.categories.equals(cats):
            series = series.astype(object)
        missing = missing_mask(series)
        codes = np.full(len(series), -1, dtype=np.int64)
        codes[~missing] = cats.get_indexer(pd.Index(series[~missing].astype(object)))
        drawn = codes.copy()
        present = np.flatnonzero(codes >= 0)
        if matrix is not None and present.size:
            drawn[present] = pram_codes(codes[present], matrix, rng)
        changed.append(int((drawn != codes).sum()))
        written[key] = rebuilt(series, cats, drawn)
    return written, changed


def pram_at_scale(client: Any, dataset: Dataset, output: str | Path | Location,
                  method: InvariantPram, *, keys: Sequence[str] | None = None,
                  schema: Schema | None = None, seed: int | None = None,
                  storage_options: Mapping[str, Any] | None = None,
                  progress: Callable[[int], None] | None = None) -> PramAtScale:
    """Invariant PRAM of the ``keys`` of ``dataset`` (module docstring), written as the
    Parquet data set ``output``.

    The draws differ from one machine's for the same seed, but follow the same matrices.

    Parameters
    ----------
    client
        A ``distributed.Client``.
    dataset : Dataset
        The partitions (:func:`microagg.at_scale.dataset.open_dataset`).
    output : str, Path or Location
        The data set to write (a folder, or a URL: :mod:`~microagg.at_scale.storage`).
    method : InvariantPram
        The method and its parameters.
    keys : sequence of str, optional
        The keys (default: the schema's quasi-identifiers).
    schema : Schema, optional
        The declared schema (its identifiers are dropped, its weight read; strata are
        refused).
    seed : int, optional
        The run's seed (default: OS entropy); partition i draws with the i-th child of
        ``SeedSequence(seed)``.
    storage_options : mapping, optional
        Those of ``output`` when it is a URL.
    progress : callable, optional
        Called with the records written so far.

    Returns
    -------
    PramAtScale
        The matrices, the values changed, and the frequencies of the keys before and after.

    Raises
    ------
    InputError
        For no keys, keys the data set does not have, a schema with strata, a key of too
        many categories, or keys of which none can change (nothing is written).
    """
    import dask

    from microagg.release.families.keys import plain_parameters
    from microagg.release.inputs import require_known, resolve_schema

    refusal = method.at_scale_refusal()
    if refusal:
        raise ParameterError("engine", f"dask cannot run {method.name}: {refusal}")
    resolved, declared = resolve_schema(dataset.head(), schema, None, strict=False)
    chosen = list(dict.fromkeys(keys)) if keys else method.default_keys(resolved, declared)
    if not chosen:
        raise InputError("name the key variables with `keys` (or declare quasi-identifiers "
                         "in a schema)")
    require_known(resolved, chosen, "`keys`")
    dataset.require(chosen)
    if resolved.names_with_role(Role.STRATUM):
        raise InputError("strata are redrawn on one machine: with --engine dask, write each "
                         "stratum as a data set of its own and run pram on each")
    weights = resolved.names_with_role(Role.WEIGHT)
    if len(weights) > 1:
        raise InputError(f"the schema declares {len(weights)} weight columns "
                         f"({', '.join(weights)}); a table has one sampling weight")
    weight = weights[0] if weights else None
    counts = client.compute([dask.delayed(_counts)(p, chosen, weight, int(offset))
                             for p, offset in zip(dataset.pieces, dataset.offsets,
                                                  strict=True)], sync=True)
    matrices, fixed = pram_matrices(method, chosen, counts)
    marginal, notes = pram_notes(chosen, fixed, weight, False)
    before = risk_at_scale(client, dataset, chosen, k=RISK_KS)
    identifiers = [a.name for a in resolved if a.role is Role.IDENTIFIER]
    seeds = np.random.SeedSequence(seed).spawn(len(dataset.pieces))
    tasks = [dask.delayed(_draw_piece, nout=2)(p, chosen, matrices, identifiers, s)
             for p, s in zip(dataset.pieces, seeds, strict=True)]
    _, changed = write_dataset(client, [t[0] for t in tasks], output, source=dataset.source,
                               progress=progress, extra=[t[1] for t in tasks],
                               storage_options=storage_options)
    after = risk_at_scale(client, open_dataset(output, storage_options=storage_options),
                          chosen, k=RISK_KS)
    total = np.sum(changed, axis=0) if changed else np.zeros(len(chosen), dtype=np.int64)
    return PramAtScale(
        method=method.name, parameters=plain_parameters(method), keys=chosen,
        changed=chosen, records=dataset.n, partitions=len(dataset.pieces),
        identifiers_dropped=identifiers,
        released_unchanged=[c for c in dataset.columns if c not in chosen
                            and c not in identifiers],
        retention=method.retention, alpha=method.alpha, marginal=marginal,
        matrices=[m.entry(key) for key, m in zip(chosen, matrices, strict=True)
                  if m.matrix is not None],
        changed_values={key: int(n) for key, n in zip(chosen, total, strict=True)},
        weight=weight, seeded=seed is not None, before=risk_figures(before),
        after=risk_figures(after),
        notes=[*notes, "every partition drew with a generator of its own (the run's seed and "
               "the partition's index): the draws differ from one machine's but follow the "
               "same matrices"])
