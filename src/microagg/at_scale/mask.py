"""Correlated and multiplicative noise of a data set on a Dask cluster (``microagg mask
--engine dask``).

Both methods read other records only through the mean vector and the covariance matrix of
the masked columns, found by a map-reduce (:class:`~microagg.at_scale.moments.Moments`:
every partition's mean and cross-products, combined by Chan's pairwise update, equal to one
machine's ``numpy.cov`` within rounding). Every partition draws with a generator of its own,
the i-th child of ``SeedSequence(seed)`` (independent draws; the same seed draws the same
data set), in two passes over the partitions:

1. the moments: of the columns (correlated noise: Σ, whose eigen-decomposition the client
   takes as one machine does, :func:`~microagg.core.masking.noise_axes`); multiplicative
   noise also multiplies each partition by its draws
   (:func:`~microagg.core.masking.multiplied`) and gives the moments of the result, from
   which the client makes the map that restores the data's means and covariance
   (:func:`~microagg.core.masking.restoring`);
2. every partition masks its rows and is written in input order, identifiers dropped, the
   other columns unchanged, into the output's temporary place; it also gives how far the
   masking moved each column (:func:`~microagg.release.families.masking.masking_extent`),
   the moments of the masked columns and their squared errors, from which the client
   refuses, as one machine does, a masking that overflows or changes no value before the
   data set is put in place (nothing is then written).

The draws differ from one machine's (one generator there runs through the whole table), but
follow the same law: correlated noise adds N(0, γΣ) with the Σ of the whole table, and
multiplicative noise restores the means and the covariance matrix of the whole table, which
the data set written has within rounding. Missing values are refused, as on one machine.
Top and bottom coding runs by :mod:`microagg.at_scale.topcode`; rank swapping is refused
(its swaps follow each column's ranks over all records, one after another).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, read_piece, write_dataset
from microagg.at_scale.moments import Moments
from microagg.at_scale.per_record import DatasetReport
from microagg.at_scale.storage import Location
from microagg.core.masking import correlated_draw, multiplied, noise_axes, restoring
from microagg.data.schema import Role, Schema
from microagg.errors import InputError, ParameterError
from microagg.release.families.masking import (
    MaskingMethod,
    check_extent,
    combined_extent,
    masked_frame,
    masking_extent,
)
from microagg.release.methods.correlated_noise import CorrelatedNoise
from microagg.release.methods.multiplicative_noise import MultiplicativeNoise
from microagg.release.reports.report import MaskingReport

__all__ = ["OMITTED", "MaskAtScale", "mask_at_scale"]

OMITTED = {
    "risk": "the share of unique records and the smallest class of equal values before and "
            "after, record linkage and the rank risk: run microagg evaluate --engine dask on "
            "the input and the data set written (record linkage on a sample)",
    "relative_error, jsd, emd": "left to microagg evaluate --engine dask (they need the "
                                "domains or histograms of the columns: more passes)",
    "input": "the input's size and SHA-256 (a data set of many files, possibly at a URL)",
}
"""The figures of one machine's report that the report of the cluster leaves out, and why."""


@dataclass(frozen=True)
class MaskAtScale(DatasetReport):
    """What correlated or multiplicative noise did on a data set: the fields of one
    machine's report (``method``, ``parameter``, ``value``, ``columns`` …), and the
    figures of its utility that a map-reduce gives (``utility``: SSE/SST and, per column,
    the SSE and the mean and variance before and after); ``omitted`` names the others."""

    method: str
    parameter: str
    value: float
    parameters: dict[str, Any]
    columns: list[str]
    records: int
    partitions: int
    identifiers_dropped: list[str]
    released_unchanged: list[str]
    seeded: bool
    utility: dict[str, Any]
    guarantee: str = MaskingReport.guarantee
    omitted: dict[str, str] = field(default_factory=lambda: dict(OMITTED))
    engine: str = "dask"
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class _CorrelatedAt(CorrelatedNoise):
    """Correlated noise along axes found on the cluster (:func:`noise_axes` of the data
    set's Σ)."""

    scale: tuple[float, ...] = ()
    axes: tuple[tuple[float, ...], ...] = ()

    def mask(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return values + correlated_draw(values.shape, np.asarray(self.scale),
                                        np.asarray(self.axes).reshape(len(self.scale), -1),
                                        rng)


@dataclass(frozen=True, kw_only=True)
class _MultipliedAt(MultiplicativeNoise):
    """Multiplicative noise whose moments are restored to the data set's: the means of the
    columns (``target``), of the values multiplied (``current``), and the restoring map."""

    target: tuple[float, ...] = ()
    current: tuple[float, ...] = ()
    transform: tuple[tuple[float, ...], ...] = ()

    def mask(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p = len(self.target)
        noisy = multiplied(values, self.s, rng)
        return (np.asarray(self.target)
                + (noisy - np.asarray(self.current)) @ np.asarray(self.transform).reshape(p, p))


_ROW = re.compile(r"\brow (\d+)")


def _values(piece: Piece, method: MaskingMethod, names: Sequence[str],
            schema: Schema | None, offset: int = 0) -> np.ndarray:
    """The partition's masked columns as the masking reads them; a refusal names a row of
    the data set (the partition starts at row ``offset``), as one machine names it."""
    frame = read_piece(piece).reset_index(drop=True)
    try:
        return method.masked_values(frame, columns=list(names), schema=schema)[2]
    except InputError as error:
        raise InputError(_ROW.sub(lambda m: f"row {int(m.group(1)) + offset}",
                                  str(error))) from None


def _moments(piece: Piece, offset: int, method: MaskingMethod, names: Sequence[str],
             schema: Schema | None, seed: np.random.SeedSequence, shift: np.ndarray
             ) -> tuple[Moments, Moments | None]:
    """The moments of the partition's columns, and (multiplicative noise) of its values
    multiplied by its draws."""
    values = _values(piece, method, names, schema, offset)
    if isinstance(method, MultiplicativeNoise):
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused later
            noisy = multiplied(values, method.s, np.random.default_rng(seed))
            return Moments.of(values, shift), Moments.of(noisy, shift)
    return Moments.of(values, shift), None


def _mask_piece(piece: Piece, method: MaskingMethod, names: Sequence[str],
                schema: Schema | None, seed: np.random.SeedSequence, shift: np.ndarray
                ) -> tuple[pd.DataFrame, tuple[np.ndarray, Moments, np.ndarray]]:
    """The partition masked with its draws, identifiers dropped, as one machine writes a
    table; and how far the masking moved its columns, the moments of the masked columns and
    their squared errors (the masking is judged whole on the client before the data set is
    put in place)."""
    frame = read_piece(piece).reset_index(drop=True)
    resolved, _, values = method.masked_values(frame, columns=list(names), schema=schema)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused whole
        masked = method.mask(values, np.random.default_rng(seed))
        finite = np.isfinite(masked).all()
        scan = (masking_extent(values, masked),
                Moments.of(masked if finite else np.zeros_like(masked), shift),
                ((values - masked) ** 2).sum(axis=0))
    identifiers = [a.name for a in resolved if a.role is Role.IDENTIFIER]
    return masked_frame(frame, identifiers, names, masked), scan


def _flat(matrix: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(row) for row in np.asarray(matrix, dtype=np.float64).tolist())


def _planned(method: MaskingMethod, first: Sequence[tuple[Moments, Moments | None]]
             ) -> MaskingMethod:
    """The method with the moments of the whole data set in it (what every partition
    needs to mask its rows). A covariance that overflowed has no eigenvalues: the plan then
    masks every value as missing, which :func:`check_extent` refuses as on one machine."""
    data = Moments.total(m for m, _ in first)
    p = data.mean.size
    if isinstance(method, CorrelatedNoise):
        try:
            scale, axes = noise_axes(data.covariance(), method.gamma)
        except np.linalg.LinAlgError:
            scale, axes = np.full(p, np.nan), np.full((p, p), np.nan)
        return _CorrelatedAt(gamma=method.gamma, scale=tuple(scale.tolist()),
                             axes=_flat(axes))
    assert isinstance(method, MultiplicativeNoise)
    noisy = Moments.total(m for _, m in first if m is not None)
    try:
        transform = restoring(noisy.covariance(), data.covariance())
    except np.linalg.LinAlgError:
        transform = np.full((p, p), np.nan)
    return _MultipliedAt(s=method.s, target=tuple(data.mean.tolist()),
                         current=tuple(noisy.mean.tolist()), transform=_flat(transform))


def _ratio(a: float, b: float) -> float | None:
    return float(a / b) if b != 0 and np.isfinite(a / b) else None


def _utility(names: Sequence[str], before: Moments, after: Moments,
             sse: np.ndarray) -> dict[str, Any]:
    """SSE/SST % and each column's SSE, mean and variance before and after, as one
    machine's report measures them (variances over n; a constant column is left out of
    SSE/SST)."""
    vx, vy = before.variance(), after.variance()
    sst = np.diag(before.m2)
    kept = sst > 0
    return {
        "sse_percent": float(100.0 * np.mean(sse[kept] / sst[kept])) if kept.any() else None,
        "per_attribute": {name: {
            "sse": float(sse[j]), "mean_before": float(before.mean[j]),
            "mean_after": float(after.mean[j]), "variance_before": float(vx[j]),
            "variance_after": float(vy[j]),
            "mean_variation": _ratio(abs(after.mean[j] - before.mean[j]),
                                     abs(before.mean[j])),
            "variance_variation": _ratio(abs(vy[j] - vx[j]), vx[j])}
            for j, name in enumerate(names)}}


def mask_at_scale(client: Any, dataset: Dataset, output: str | Path | Location,
                  method: MaskingMethod, *, columns: Sequence[str] | None = None,
                  schema: Schema | None = None, seed: int | None = None,
                  storage_options: Mapping[str, Any] | None = None,
                  progress: Callable[[int], None] | None = None,
                  refuse_unchanged: bool = True) -> MaskAtScale:
    """Correlated or multiplicative noise on ``dataset`` (module docstring), written as the
    Parquet data set ``output``.

    The draws differ from one machine's for the same seed, but follow the same law, made
    from the moments of the whole data set.

    Parameters
    ----------
    client
        A ``distributed.Client``.
    dataset : Dataset
        The partitions (:func:`microagg.at_scale.dataset.open_dataset`).
    output : str, Path or Location
        The data set to write (a folder, or a URL: :mod:`~microagg.at_scale.storage`).
    method : CorrelatedNoise or MultiplicativeNoise
        The method and its parameter.
    columns : sequence of str, optional
        The columns to mask (default: as one machine chooses them, read on the first rows).
    schema : Schema, optional
        The declared schema (its identifiers are dropped).
    seed : int, optional
        The run's seed (default: OS entropy); partition i draws with the i-th child of
        ``SeedSequence(seed)``.
    storage_options : mapping, optional
        Those of ``output`` when it is a URL.
    progress : callable, optional
        Called with the records written so far.

    Returns
    -------
    MaskAtScale
        The parameters, the columns, and the utility a map-reduce measures.

    Raises
    ------
    ParameterError
        For a method the cluster does not run this way.
    InputError
        For columns that are not numeric or hold missing values, fewer than two records, or
        a masking that overflows or changes no value (nothing is written; with
        ``refuse_unchanged`` False no change is said in a warning and written).
    """
    import dask

    if not isinstance(method, CorrelatedNoise | MultiplicativeNoise):
        raise ParameterError("engine", f"dask cannot run {method.name} by its moments: "
                             f"{method.at_scale_refusal() or 'see microagg.at_scale.topcode'}")
    if seed is not None and seed < 0:
        raise InputError(f"the seed must be a non-negative integer, got {seed}")
    if columns:
        dataset.require(list(columns))
    resolved, names, head = method.masked_values(dataset.head(), columns=columns,
                                                 schema=schema)
    if dataset.n < 2:
        raise InputError(f"{method.name.replace('-', ' ')} needs a matrix of at least two "
                         "records")
    # the first rows' means: the shift that keeps the digits of the moments combined
    shift = head.mean(axis=0) if len(head) else np.zeros(len(names))
    seeds = np.random.SeedSequence(seed).spawn(len(dataset.pieces))
    pairs = list(zip(dataset.pieces, seeds, strict=True))
    first = client.compute([dask.delayed(_moments)(p, int(o), method, names, schema, s, shift)
                            for (p, s), o in zip(pairs, dataset.offsets, strict=True)],
                           sync=True)
    planned = _planned(method, first)
    tasks = [dask.delayed(_mask_piece, nout=2)(p, planned, names, schema, s, shift)
             for p, s in pairs]
    _, scans = write_dataset(
        client, [t[0] for t in tasks], output, source=dataset.source, progress=progress,
        extra=[t[1] for t in tasks], storage_options=storage_options,
        check=lambda scans: check_extent(combined_extent([e for e, _, _ in scans]), names,
                                         method, refuse_unchanged))
    identifiers = [a.name for a in resolved if a.role is Role.IDENTIFIER]
    written = [c for c in dataset.columns if c not in identifiers]
    after = Moments.total(m for _, m, _ in scans)
    what = ("adds N(0, gamma Sigma) with the Sigma of the whole data set"
            if isinstance(method, CorrelatedNoise)
            else "restores the means and the covariance matrix of the whole data set")
    return MaskAtScale(
        method=method.name, parameter=method.parameter, value=method.value,
        parameters=dict(method.parameters()), columns=list(names),
        records=dataset.n, partitions=len(dataset.pieces), identifiers_dropped=identifiers,
        released_unchanged=[c for c in written if c not in names], seeded=seed is not None,
        utility=_utility(names, Moments.total(m for m, _ in first), after,
                         np.sum([e for _, _, e in scans], axis=0)),
        notes=[f"the masking {what} (moments by a map-reduce over the partitions); every "
               "partition drew with a generator of its own (the run's seed and the "
               "partition's index): the draws differ from one machine's but follow the "
               "same law"])
