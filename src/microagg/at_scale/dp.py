"""The sort-bound DP releases on a Dask cluster: individual ranking (001 Alg. 1, numeric
attributes, unlinked) and single-reference insensitive microaggregation (000 Alg. 2-3 with
R_1 for every cluster, numeric attributes).

Both group the records k by k along total orders fixed before the data are seen, so the only
distributed step is the sort (:mod:`~microagg.at_scale.sort`). The group sums come back to this
process (n/k rows), where the noise is drawn by the very code of the single-machine release
with the same generator: a seeded run releases the same noisy group values on one machine and
on the cluster, bit for bit. The written rows are those values repeated by the group sizes, in
a uniformly random order drawn without gathering the rows (:mod:`~microagg.at_scale.shuffle`),
in partitions of about ``rows_per_bucket`` rows; the order differs from the single-machine one
(another uniform draw).

What the cluster path does not do (each is refused with a message): categorical attributes,
carried columns, bounds from the data, missing values (no ``drop_incomplete``), the corner
sequence of references (its order changes with every cluster, so it is not a single sort) and
the linked individual-ranking table (it would need every record's groups back in one row).
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
    read_matrix,
    spill_folder,
    write_dataset,
)
from microagg.at_scale.shuffle import shuffled_partitions
from microagg.at_scale.sort import Sortable, group_sums
from microagg.errors import InputError
from microagg.mechanisms import Budget, attribute_budgets, make_rng
from microagg.options import Calibration, DPMethod, Linkage, Reference, parse
from microagg.partition._validate import check_k
from microagg.partition.insensitive import order_keys
from microagg.release.dp_insensitive import small_k_warnings
from microagg.release.dp_ranking import noisy_ranked_means
from microagg.release.inputs import DPInput, prepare_dp
from microagg.release.numeric import private_numeric
from microagg.release.publish import privacy_report
from microagg.release.report import PrivacyReport
from microagg.schema import Schema

__all__ = ["ScaleRelease", "dp_release_at_scale"]

ROWS_PER_BUCKET = 1_000_000


@dataclass(frozen=True)
class ScaleRelease:
    """A release written as a Parquet data set: its privacy report, the owner's notices (never
    published) and the rows of every written partition."""

    report: PrivacyReport
    notices: tuple[str, ...]
    rows: list[int]


def _load(piece: Piece, names: Sequence[str], lows: np.ndarray, highs: np.ndarray
          ) -> np.ndarray:
    """The partition's protected values clamped into their domains."""
    return np.clip(read_matrix(piece, names), lows, highs)


def _clamped(piece: Piece, names: Sequence[str], lows: np.ndarray, highs: np.ndarray
             ) -> np.ndarray:
    """How many values of each column of the partition lie outside their domain."""
    X = read_matrix(piece, names)
    return ((X < lows) | (X > highs)).sum(axis=0)


def _clamped_total(counts: list[np.ndarray]) -> np.ndarray:
    return np.sum(counts, axis=0)


def _ranked(X: np.ndarray, offset: int) -> list[Sortable]:
    """One sort per column: by value, ties by row number (001 Alg. 1)."""
    rows = np.arange(offset, offset + X.shape[0])
    none = np.empty((X.shape[0], 0))
    return [Sortable(np.ascontiguousarray(X[:, j]), none, rows) for j in range(X.shape[1])]


def _insensitive(X: np.ndarray, offset: int, lows: np.ndarray, highs: np.ndarray
                 ) -> list[Sortable]:
    """One sort: distance to R_1, ties lexicographically, then by row (000 §4.1-4.2)."""
    key, ties = order_keys(X, lows, highs)
    return [Sortable(key, ties, np.arange(offset, offset + X.shape[0]), X)]


@dataclass(frozen=True)
class _NoisyGroups:
    """The mechanism's output for the written table and the report."""

    budget: Budget
    sets: list[tuple[list[str], np.ndarray]]
    sensitivities: list[dict[str, Any]]
    noise: dict[str, dict[str, Any]]
    described: str
    linkage: Linkage | None
    calibration: Calibration | None
    warnings: list[str]


def _noisy_groups(method: DPMethod, sums: list[np.ndarray], *, data: DPInput, k: int,
                  sizes: np.ndarray, epsilon: float, calibration: Calibration | str | None,
                  rng: np.random.Generator) -> _NoisyGroups:
    """The noisy group values from the group sums, in this process and with the
    single-machine code (001 Alg. 1 per attribute; 000 Alg. 3 on the cluster means)."""
    names, lows, highs = data.numeric, data.lows, data.highs
    groups = sizes.size
    n = int(sizes.sum())
    budget = Budget(epsilon)
    if method is DPMethod.INDIVIDUAL_RANKING:
        shares = budget.split({name: 1.0 for name in names},
                              "sequential composition over the m protected attributes (001 "
                              "Lemma 2)")
        sets, sensitivities, noise = [], [], {}
        for j, name in enumerate(names):
            noisy, entry, noise[name] = noisy_ranked_means(
                sums[j][:, 0] / sizes, name=name, low=lows[j], high=highs[j], k=k,
                epsilon=shares[name], rng=rng)
            sets.append(([name], noisy[:, None]))
            sensitivities.append(entry)
        described = ("individual-ranking microaggregation + Laplace mechanism (paper 001, "
                     "Alg. 1), on a Dask cluster")
        linkage_used: Linkage | None = Linkage.UNLINKED
        calibration_used = None
        warnings_: list[str] = []
    else:
        calibration_used = parse(Calibration, calibration or "correct", "calibration")
        numeric_epsilon, _ = attribute_budgets(budget, names, [], calibration_used,
                                               "sequential composition over attributes")
        noisy, sensitivities, noise = private_numeric(
            sums[0] / sizes[:, None], data=data, factor=groups / k, epsilon=numeric_epsilon,
            calibration=calibration_used, rng=rng, statistic="cluster means",
            formula="c / k  (000 §4; L1 over the matrix)")
        sets = [(list(names), noisy)]
        described = ("insensitive microaggregation (single reference) + Laplace mechanism "
                     "(paper 000, Alg. 2-3), on a Dask cluster")
        linkage_used = None
        warnings_ = small_k_warnings(k, n)
    return _NoisyGroups(budget, sets, sensitivities, noise, described, linkage_used,
                        calibration_used, warnings_)


def _refuse(option: str, value: object, method: DPMethod, why: str) -> None:
    if value is not None:
        raise InputError(f"{option} {value} is not available with --engine dask for --method "
                         f"{method.value}: {why}")


def dp_release_at_scale(client: Any, dataset: Dataset, output: str | Path, *,
                        method: DPMethod | str, epsilon: float, k: int,
                        columns: Sequence[str] | None = None, schema: Schema | None = None,
                        bounds: Mapping[str, tuple[float, float]] | None = None,
                        reference: Reference | str | None = None,
                        calibration: Calibration | str | None = None,
                        linkage: Linkage | str | None = None,
                        rng: np.random.Generator | int | None = None,
                        rows_per_bucket: int = ROWS_PER_BUCKET,
                        progress: Callable[[int], None] | None = None) -> ScaleRelease:
    """The ε-DP release of ``method`` (``individual-ranking`` or ``insensitive``) of
    ``dataset``, written as the Parquet data set ``output`` (module docstring). Columns,
    ``schema``, ``bounds`` and ``rng`` as in :func:`microagg.release.dp.dp_release`."""
    method = parse(DPMethod, method, "method")
    if method is DPMethod.INDIVIDUAL_RANKING:
        if linkage is not None and parse(Linkage, linkage, "linkage") is Linkage.LINKED:
            raise InputError("--linkage linked is not available with --engine dask: it needs "
                             "every record's groups back in one row; the default, unlinked, "
                             "is the DP table")
        _refuse("--reference", reference, method, "it applies to insensitive only")
        _refuse("--calibration", calibration, method, "individual ranking gives every "
                "attribute epsilon/m")
    elif method is DPMethod.INSENSITIVE:
        if reference is None or parse(Reference, reference, "reference") is not \
                Reference.SINGLE:
            raise InputError("--engine dask runs insensitive microaggregation with "
                             "--reference single only (one total order, one distributed "
                             "sort); the corner sequence changes the order per cluster")
        _refuse("--linkage", linkage, method, "it applies to individual ranking only")
    else:
        raise InputError(f"--method {method.value} is not available with --engine dask; use "
                         "individual-ranking or insensitive")
    seeded = rng is not None and not isinstance(rng, np.random.Generator)
    rng = make_rng(rng)
    data = prepare_dp(dataset.head(), schema=schema, columns=columns, bounds=bounds,
                      bounds_from_data=False)
    if data.categorical:
        raise InputError(f"column '{data.categorical[0]}' is categorical; the cluster path "
                         "protects numeric columns only (name them with --columns)")
    n = dataset.n
    k = check_k(k, n)
    groups = n // k
    sizes = np.full(groups, k, dtype=np.int64)
    sizes[-1] = n - k * (groups - 1)
    names, lows, highs = data.numeric, data.lows, data.highs
    buckets = max(1, math.ceil(n / rows_per_bucket))
    import dask

    offsets = [int(o) for o in dataset.offsets]
    sort = (_ranked if method is DPMethod.INDIVIDUAL_RANKING else
            functools.partial(_insensitive, lows=lows, highs=highs))

    def sources() -> list[Any]:
        return [dask.delayed(sort)(dask.delayed(_load)(p, names, lows, highs), o)
                for p, o in zip(dataset.pieces, offsets, strict=True)]

    clamped = dask.delayed(_clamped_total)([dask.delayed(_clamped)(p, names, lows, highs)
                                            for p in dataset.pieces])
    widths = [1] * len(names) if method is DPMethod.INDIVIDUAL_RANKING else [len(names)]
    with spill_folder(check_dataset_output(output, dataset.source)) as spill:
        sums, (counts,) = group_sums(client, sources(), sources, n=n, k=k, widths=widths,
                                     buckets=buckets, spill=spill, extra=[clamped])
        noisy = _noisy_groups(method, sums, data=data, k=k, sizes=sizes, epsilon=epsilon,
                              calibration=calibration, rng=rng)
        parts = max(1, math.ceil(n / rows_per_bucket))
        out_rows = np.diff(np.linspace(0, n, parts + 1).round().astype(np.int64))
        frames = shuffled_partitions(noisy.sets, sizes, out_rows, rng, order=names,
                                     spill=spill)
        rows, _ = write_dataset(client, frames, output, source=dataset.source,
                                progress=progress)
    report = privacy_report(
        data, records=n, method=noisy.described, budget=noisy.budget, k=k, groups=groups,
        sensitivities=noisy.sensitivities, noise=noisy.noise, seeded=seeded,
        calibration=noisy.calibration,
        reference="single" if method is DPMethod.INSENSITIVE else None, linkage=noisy.linkage,
        unlinked=noisy.linkage is Linkage.UNLINKED and len(names) > 1,
        warnings_=noisy.warnings)
    notices = tuple(f"{int(c):,} value(s) of '{name}' lay outside its declared domain and were "
                    "clamped into it" for name, c in zip(names, counts, strict=True) if c)
    return ScaleRelease(report, notices, rows)
