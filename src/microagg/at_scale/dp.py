"""The sort-bound DP releases on a Dask cluster: individual ranking (001 Alg. 1, numeric
attributes, unlinked) and single-reference insensitive microaggregation (000 Alg. 2-4 with
R_1 for every cluster; numeric and categorical attributes).

Both group the records k by k along total orders fixed before the data are seen, so the only
distributed step is the sort (:mod:`~microagg.at_scale.sort`). The group sums come back to this
process (n/k rows), where the noise is drawn by the very code of the single-machine release
with the same generator: a seeded run releases the same noisy group values on one machine and
on the cluster, bit for bit. A categorical attribute is summed as the indicators of its
categories, so each group brings back its category counts, from which the marginality of every
concept, and the exponential mechanism's choice, are the single-machine ones (000 Alg. 4).
The written rows are those values repeated by the group sizes, in a uniformly random order
drawn without gathering the rows (:mod:`~microagg.at_scale.shuffle`), in partitions of about
``rows_per_bucket`` rows; the order differs from the single-machine one (another uniform draw).

Missing values are read as the schema declares (``missing:``), cell by cell in each partition,
as on one machine (:data:`~microagg.release.inputs.MISSING_RULE`); the owner is told how many
per column. What the cluster path does not do (each is refused with a message): categorical
attributes in individual ranking, carried columns, bounds from the data, missing values the
schema declares no value for (no ``drop_incomplete``), the corner sequence of references
(its order changes with every cluster, so it is not a single sort) and the linked
individual-ranking table (it would need every record's groups back in one row).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from microagg.at_scale.dataset import (
    Dataset,
    Piece,
    check_dataset_output,
    read_piece,
    write_dataset,
)
from microagg.at_scale.shuffle import shuffled_partitions
from microagg.at_scale.sort import Sortable, group_sums
from microagg.at_scale.storage import Location
from microagg.core.distance import Categorical
from microagg.data.io import declared_text
from microagg.data.schema import Schema
from microagg.data.taxonomy import CategoryMetric
from microagg.errors import InputError
from microagg.options import Calibration, Linkage, parse
from microagg.partition._validate import check_k
from microagg.partition.insensitive import order_keys
from microagg.release.dp.categorical import private_concepts
from microagg.release.dp.cells import declared_cells
from microagg.release.dp.mechanisms import Budget, attribute_budgets, make_rng
from microagg.release.dp.numeric import private_numeric
from microagg.release.dp.publish import privacy_report
from microagg.release.dp.unit import PrivacyUnit
from microagg.release.families.dp import small_k_warnings
from microagg.release.inputs import NO_DROPPING, DPInput, prepare_dp, undeclared_missing
from microagg.release.methods.dp_individual_ranking import (
    DPIndividualRanking,
    noisy_ranked_means,
)
from microagg.release.methods.dp_insensitive import DPInsensitive
from microagg.release.reports.report import NoiseLevel, PrivacyReport

__all__ = ["ScaleRelease", "dp_release_at_scale"]

ROWS_PER_BUCKET = 1_000_000


@dataclass(frozen=True)
class ScaleRelease:
    """A release written as a Parquet data set: its privacy report, the owner's notices (never
    published) and the rows of every written partition."""

    report: PrivacyReport
    notices: tuple[str, ...]
    rows: list[int]


@dataclass(frozen=True)
class _Columns:
    """What a partition task needs to read the protected columns as the single-machine release
    does: their names, declared numeric domains, and, when some are categorical, the schema
    completed on the first partition (so every partition codes categories alike) and the
    options of :func:`~microagg.release.inputs.prepare_dp`."""

    numeric: list[str]
    lows: np.ndarray
    highs: np.ndarray
    categorical: list[str]
    schema: Schema
    protected: list[str]
    bounds: dict[str, tuple[float, float]]

    @property
    def fills(self) -> np.ndarray:
        """The value a missing cell of each numeric column is read as (NaN: none declared)."""
        return np.array([np.nan if self.schema[c].missing is None
                         else float(self.schema[c].missing) for c in self.numeric])


def _prepared(piece: Piece, columns: _Columns) -> DPInput:
    return prepare_dp(read_piece(piece, text=declared_text(columns.schema)),
                      schema=columns.schema,
                      columns=columns.protected, bounds=columns.bounds,
                      bounds_from_data=False, drops_rows=False)


def _numbers(piece: Piece, columns: _Columns) -> np.ndarray:
    """The partition's numeric protected columns read cell by cell
    (:mod:`microagg.release.dp.cells`: how a cell is read never follows the file's other
    cells), NaN where missing; a cell that is no number is refused, naming it."""
    frame = read_piece(piece, columns.numeric)
    out = np.empty((len(frame), len(columns.numeric)))
    for j, name in enumerate(columns.numeric):
        cells = declared_cells(frame[name], columns.schema[name])
        if cells.dtype == object:
            row = int(np.flatnonzero(cells.map(lambda c: not isinstance(c, float)))[0])
            raise InputError(f"column '{name}' of {piece.path} is numeric but row {row + 1} "
                             f"holds '{cells.iloc[row]}'")
        out[:, j] = cells.to_numpy(dtype=np.float64)
    return out


def _numeric(piece: Piece, columns: _Columns) -> tuple[np.ndarray, np.ndarray]:
    """The partition's numeric protected values, each missing cell read as the value the
    schema declares for its column, and how many cells of each column were read so."""
    X = _numbers(piece, columns)
    missing = np.isnan(X)
    filled = missing.sum(axis=0)
    fills = columns.fills
    if filled.any() and not X.flags.writeable:  # a view of the file's own buffers
        X = X.copy()
    for j in np.flatnonzero(filled):
        if np.isnan(fills[j]):
            row = int(np.flatnonzero(missing[:, j])[0]) + 1
            raise undeclared_missing(columns.numeric[j], f"{row} of {piece.path}", True,
                                     remedy=NO_DROPPING)
        X[missing[:, j], j] = fills[j]
    return X, filled


def _load(piece: Piece, columns: _Columns) -> tuple[np.ndarray, np.ndarray]:
    """The partition's numeric values clamped into their domains, and its category codes."""
    if not columns.categorical:
        X = _numeric(piece, columns)[0]
        return np.clip(X, columns.lows, columns.highs), np.empty((X.shape[0], 0), np.int64)
    data = _prepared(piece, columns)
    return data.X, data.part.codes


def _counts(piece: Piece, columns: _Columns) -> np.ndarray:
    """Per protected column of the partition: how many values lay outside their domain
    (numeric columns) and how many missing cells were read as the declared value."""
    if columns.categorical:
        data = _prepared(piece, columns)
        return np.array([[data.clamped.get(c, 0) for c in columns.protected],
                         [data.filled.get(c, 0) for c in columns.protected]], dtype=np.int64)
    X, filled = _numeric(piece, columns)
    return np.vstack([((X < columns.lows) | (X > columns.highs)).sum(axis=0), filled])


def _total(counts: list[np.ndarray]) -> np.ndarray:
    return np.sum(counts, axis=0)


def _ranked(loaded: tuple[np.ndarray, np.ndarray], offset: int) -> list[Sortable]:
    """One sort per column: by value, ties by row number (001 Alg. 1)."""
    X = loaded[0]
    rows = np.arange(offset, offset + X.shape[0])
    none = np.empty((X.shape[0], 0))
    return [Sortable(np.ascontiguousarray(X[:, j]), none, rows) for j in range(X.shape[1])]


def _insensitive(loaded: tuple[np.ndarray, np.ndarray], offset: int, lows: np.ndarray,
                 highs: np.ndarray, metrics: tuple[CategoryMetric, ...]) -> list[Sortable]:
    """One sort: distance to R_1, ties lexicographically, then by row (000 §4.1-4.2); the
    values to sum are the numeric values and, per categorical attribute, the indicator of
    each category (their sums are the group's category counts)."""
    X, codes = loaded
    key, ties = order_keys(X if X.shape[1] else None, lows, highs,
                           Categorical(codes, metrics))
    counts = [np.eye(m.n_leaves)[codes[:, j]] for j, m in enumerate(metrics)]
    return [Sortable(key, ties, np.arange(offset, offset + X.shape[0]),
                     np.hstack([X, *counts]))]


@dataclass(frozen=True)
class _NoisyGroups:
    """The mechanism's output for the written table and the report."""

    budget: Budget
    sets: list[tuple[list[str], np.ndarray]]
    sensitivities: list[dict[str, Any]]
    noise: dict[str, NoiseLevel]
    described: str
    linkage: Linkage | None
    calibration: Calibration | None
    warnings: list[str]


def _noisy_groups(ranking: bool, sums: list[np.ndarray], *, data: DPInput, k: int,
                  sizes: np.ndarray, epsilon: float, calibration: Calibration | str | None,
                  rng: np.random.Generator) -> _NoisyGroups:
    """The noisy group values from the group sums, in this process and with the
    single-machine code (001 Alg. 1 per attribute; 000 Alg. 3 on the cluster means)."""
    names, lows, highs = data.numeric, data.lows, data.highs
    groups = sizes.size
    n = int(sizes.sum())
    budget = Budget(epsilon)
    sets: list[tuple[list[str], np.ndarray]] = []
    sensitivities: list[dict[str, Any]] = []
    noise: dict[str, NoiseLevel] = {}
    if ranking:
        shares = budget.split({name: 1.0 for name in names},
                              "sequential composition over the m protected attributes (001 "
                              "Lemma 2)")
        for j, name in enumerate(names):
            noisy, entry, noise[name] = noisy_ranked_means(
                sums[j][:, 0] / sizes, name=name, low=lows[j], high=highs[j], k=k,
                epsilon=shares[name], rng=rng)
            sets.append(([name], noisy[:, None]))
            sensitivities.append(entry)
        described = ("individual-ranking microaggregation + Laplace mechanism (Sánchez et "
                     "al. 2016, Alg. 1), on a Dask cluster")
        linkage_used: Linkage | None = Linkage.UNLINKED
        calibration_used = None
        warnings_: list[str] = []
    else:
        calibration_used = parse(Calibration, calibration or "correct", "calibration")
        numeric_epsilon, category_epsilon = attribute_budgets(
            budget, names, data.categorical, calibration_used,
            "sequential composition over attributes")
        p = len(names)
        columns = [sums[0][:, :p]]
        if names:
            noisy, sensitivities, noise = private_numeric(
                sums[0][:, :p] / sizes[:, None], data=data, factor=groups / k,
                epsilon=numeric_epsilon, calibration=calibration_used, rng=rng,
                statistic="cluster means",
                formula="c / k  (Soria-Comas et al. 2014, §4; L1 over the matrix)")
            columns = [noisy]
        start = p
        for name, metric in zip(data.categorical, data.part.metrics, strict=True):
            counts = np.zeros((groups, metric.n_concepts))
            counts[:, :metric.n_leaves] = sums[0][:, start:start + metric.n_leaves]
            start += metric.n_leaves
            chosen, entry, noise[name] = private_concepts(
                -(counts @ metric.distances), metric, budget=budget,
                part=None if calibration_used is Calibration.PAPER else name,
                epsilon=category_epsilon[name], rng=rng, name=name, groups="cluster",
                source="Soria-Comas et al. 2014, Alg. 4 and eq. 6, with c for n/k", group_size=k)
            sensitivities.append(entry)
            columns.append(chosen[:, None].astype(np.float64))
        sets = [([*names, *data.categorical], np.hstack(columns))]
        described = ("insensitive microaggregation (single reference) + Laplace / exponential "
                     "mechanism (Soria-Comas et al. 2014, Alg. 2-4), on a Dask cluster")
        linkage_used = None
        warnings_ = small_k_warnings(k, n)
    return _NoisyGroups(budget, sets, sensitivities, noise, described, linkage_used,
                        calibration_used, warnings_)


def dp_release_at_scale(client: Any, dataset: Dataset, output: str | Path | Location,
                        method: DPInsensitive | DPIndividualRanking, *,
                        columns: Sequence[str] | None = None, schema: Schema | None = None,
                        bounds: Mapping[str, tuple[float, float]] | None = None,
                        rng: np.random.Generator | int | None = None,
                        rows_per_bucket: int = ROWS_PER_BUCKET,
                        progress: Callable[[int], None] | None = None) -> ScaleRelease:
    """The ε-DP release by ``method`` (individual ranking, or insensitive microaggregation
    with the single reference point) of ``dataset``, written as the Parquet data set
    ``output`` (module docstring). Columns, ``schema``, ``bounds`` and ``rng`` as in
    :meth:`microagg.release.families.dp.DPMethod.release`. The method says itself whether it can run
    here (:meth:`~microagg.release.methods.base.ReleaseMethod.at_scale_refusal`)."""
    refusal = method.at_scale_refusal()
    if refusal:
        raise InputError(f"`engine` dask cannot run {method.name}: {refusal}")
    ranking = isinstance(method, DPIndividualRanking)
    epsilon, k = method.epsilon, method.k
    calibration = None if ranking else method.calibration  # type: ignore[union-attr]
    seeded = rng is not None and not isinstance(rng, np.random.Generator)
    rng = make_rng(rng)
    head = dataset.head(text=declared_text(schema))
    data = prepare_dp(head, schema=schema, columns=columns, bounds=bounds,
                      bounds_from_data=False, drops_rows=False)
    dataset.check_types(data.columns)  # a column it drops may hold anything
    if data.categorical and ranking:
        raise InputError(f"column '{data.categorical[0]}' is categorical; individual ranking "
                         "on a cluster protects numeric columns only (name them with "
                         "`columns`, or use `method` insensitive `reference` single)")
    completed = (Schema.infer(head, strict=False) if schema is None
                 else schema).complete(head, strict=False)
    spec = _Columns(list(data.numeric), data.lows, data.highs, list(data.categorical),
                    completed, list(data.columns), dict(bounds or {}))
    n = dataset.n
    k = check_k(k, n)
    groups = n // k
    sizes = np.full(groups, k, dtype=np.int64)
    sizes[-1] = n - k * (groups - 1)
    names, lows, highs = data.numeric, data.lows, data.highs
    buckets = max(1, math.ceil(n / rows_per_bucket))
    import dask

    offsets = [int(o) for o in dataset.offsets]
    metrics = tuple(data.part.metrics)
    sort = (_ranked if ranking else
            functools.partial(_insensitive, lows=lows, highs=highs, metrics=metrics))

    def sources() -> list[Any]:
        return [dask.delayed(sort)(dask.delayed(_load)(p, spec), o)
                for p, o in zip(dataset.pieces, offsets, strict=True)]

    counted = dask.delayed(_total)([dask.delayed(_counts)(p, spec) for p in dataset.pieces])
    widths = ([1] * len(names) if ranking else
              [len(names) + sum(m.n_leaves for m in metrics)])
    check_dataset_output(output, dataset.source)
    sums, (counts,) = group_sums(client, sources(), sources, n=n, k=k, widths=widths,
                                 buckets=buckets, extra=[counted])
    noisy = _noisy_groups(ranking, sums, data=data, k=k, sizes=sizes, epsilon=epsilon,
                          calibration=calibration, rng=rng)
    parts = max(1, math.ceil(n / rows_per_bucket))
    out_rows = np.diff(np.linspace(0, n, parts + 1).round().astype(np.int64))
    frames = shuffled_partitions(
        client, noisy.sets, sizes, out_rows, rng, order=data.columns,
        categories={c: m.labels for c, m in zip(data.categorical, metrics, strict=True)})
    rows, _ = write_dataset(client, frames, output, source=dataset.source, progress=progress)
    report = privacy_report(
        data, records=n, method=noisy.described, budget=noisy.budget, k=k, groups=groups,
        sensitivities=noisy.sensitivities, noise=noisy.noise, seeded=seeded,
        calibration=noisy.calibration,
        reference=None if ranking else "single", linkage=noisy.linkage,
        unlinked=noisy.linkage is Linkage.UNLINKED and len(data.columns) > 1,
        warnings_=noisy.warnings, unit=PrivacyUnit.of(head, schema, None, None))
    protected = spec.protected
    notices = tuple(f"{int(c):,} value(s) of '{name}' lay outside its declared domain and were "
                    "clamped into it" for name, c in zip(protected, counts[0], strict=True) if c)
    notices += tuple(f"{int(c):,} missing value(s) of '{name}' were read as the value the "
                     "schema declares (missing:)"
                     for name, c in zip(protected, counts[1], strict=True) if c)
    return ScaleRelease(report, notices, rows)
