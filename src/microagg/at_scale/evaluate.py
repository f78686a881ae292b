"""Utility and disclosure risk of a masked data set on a Dask cluster.

* **By map-reduce** (every partition returns a few sums): means, variances, their variations,
  the JSD per attribute on ``bins`` equal bins of the original's range, and, when the masked
  data set is row-aligned with the original (same partition sizes, e.g. a block-MDAV output),
  SSE and SSE/SST as in :func:`~microagg.evaluation.utility.sse_percent`.
* **Record linkage** (000 §5.2) on a uniform random sample of masked records, each linked to
  its nearest original over *all* originals, partition by partition (a k-d tree per original
  partition, then exact squared distances among the originals near the nearest); ties at the
  nearest distance count 1/t as on one machine. Distances divide each
  attribute by the original's range. The sample proportion comes with its Wilson 95 %
  interval and the sample size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, read_matrix
from microagg.errors import InputError
from microagg.evaluation.utility import js_divergence

__all__ = ["ScaleEvaluation", "evaluate_at_scale"]

JSD_BINS = 50
LINKAGE_SAMPLE = 1000


@dataclass(frozen=True)
class ScaleEvaluation:
    """What :func:`evaluate_at_scale` measured; per-attribute lists follow ``columns``."""

    records: int
    columns: list[str]
    aligned: bool
    sse: float | None
    sse_percent: float | None
    mean_variation: list[float | None]
    variance_variation: list[float | None]
    jsd: list[float]
    record_linkage_percent: float | None
    record_linkage_ci95: tuple[float, float] | None
    record_linkage_sample: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _moments(piece: Piece, columns: Sequence[str]) -> np.ndarray:
    X = read_matrix(piece, columns)
    return np.stack([X.sum(axis=0), (X * X).sum(axis=0), X.min(axis=0, initial=np.inf),
                     X.max(axis=0, initial=-np.inf)])


def _histograms(piece: Piece, columns: Sequence[str], lows: np.ndarray, highs: np.ndarray,
                bins: int) -> np.ndarray:
    X = read_matrix(piece, columns)
    span = np.where(highs > lows, highs - lows, 1.0)
    position = np.clip(np.floor((X - lows) / span * bins), 0, bins - 1).astype(np.int64)
    return np.stack([np.bincount(position[:, j], minlength=bins) for j in range(X.shape[1])])


def _errors(original: Piece, masked: Piece, columns: Sequence[str], center: np.ndarray
            ) -> np.ndarray:
    x, y = read_matrix(original, columns), read_matrix(masked, columns)
    return np.stack([((x - y) ** 2).sum(axis=0), ((x - center) ** 2).sum(axis=0)])


def _sample_rows(n: int, size: int, seed: int) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).choice(n, size=min(size, n), replace=False))


def _take(piece: Piece, offset: int, rows: np.ndarray, columns: Sequence[str]) -> np.ndarray:
    local = rows[(rows >= offset) & (rows < offset + piece.rows)] - offset
    return read_matrix(piece, columns)[local]


def _nearest(piece: Piece, columns: Sequence[str], widths: np.ndarray, queries: np.ndarray
             ) -> np.ndarray:
    from scipy.spatial import cKDTree

    distance, _ = cKDTree(read_matrix(piece, columns) / widths).query(queries, k=1)
    return distance


def _ties(piece: Piece, columns: Sequence[str], widths: np.ndarray, queries: np.ndarray,
          best: np.ndarray) -> np.ndarray:
    """Per query: this partition's smallest squared distance among the originals near the
    global nearest distance ``best``, and how many originals share it (rows (2, queries))."""
    from scipy.spatial import cKDTree

    X = read_matrix(piece, columns) / widths
    near = cKDTree(X).query_ball_point(queries, r=best * (1 + 1e-9) + 1e-300)
    out = np.stack([np.full(len(queries), np.inf), np.zeros(len(queries))])
    for i, (idx, q) in enumerate(zip(near, queries, strict=True)):
        if len(idx):
            squared = _squared(X[idx], q)
            out[0, i] = squared.min()
            out[1, i] = np.count_nonzero(squared == out[0, i])
    return out


def _squared(points: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Squared distances summed attribute by attribute, the same way for every pair (so equal
    distances compare equal, as in :func:`~microagg.evaluation.risk.record_linkage`)."""
    total = np.zeros(points.shape[0])
    for j in range(points.shape[1]):
        total += (points[:, j] - query[j]) ** 2
    return total


def _wilson(successes: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def _variation(a: np.ndarray, b: np.ndarray) -> list[float | None]:
    """|b − a| / |a| per attribute (None where a is 0)."""
    return [float(abs(y - x) / abs(x)) if x != 0 else None for x, y in zip(a, b, strict=True)]


def _compared_columns(original: Dataset, masked: Dataset, columns: Sequence[str] | None
                      ) -> list[str]:
    """``columns``, or the numeric columns both data sets have, after checking they exist."""
    if columns is None:
        head = original.head()
        columns = [c for c in original.columns if c in masked.columns
                   and pd.api.types.is_numeric_dtype(head[c])
                   and not pd.api.types.is_bool_dtype(head[c])]
    columns = list(columns)
    if not columns:
        raise InputError("no numeric column to compare")
    original.require(columns)
    masked.require(columns)
    if original.n != masked.n:
        raise InputError(f"the original has {original.n:,} records and the masked data set "
                         f"{masked.n:,}")
    return columns


def _aligned_errors(client: Any, original: Dataset, masked: Dataset, columns: Sequence[str],
                    mean_x: np.ndarray) -> tuple[float, float | None]:
    """SSE and SSE/SST (%) of row-aligned data sets."""
    import dask

    errors = np.sum(client.compute([dask.delayed(_errors)(a, b, columns, mean_x) for a, b
                                    in zip(original.pieces, masked.pieces, strict=True)],
                                   sync=True), axis=0)
    keep = errors[1] > 0
    percent = float(100 * np.mean(errors[0][keep] / errors[1][keep])) if keep.any() else None
    return float(errors[0].sum()), percent


def _linkage(client: Any, original: Dataset, masked: Dataset, columns: Sequence[str],
             widths: np.ndarray, rows: np.ndarray) -> tuple[float, tuple[float, float]]:
    """Record linkage (%) of the masked ``rows`` of row-aligned data sets against every
    original (distances divide by ``widths``), and its Wilson 95 % interval."""
    import dask

    own_x = np.concatenate(client.compute(
        [dask.delayed(_take)(p, int(o), rows, columns) for p, o in
         zip(original.pieces, original.offsets, strict=True)], sync=True)) / widths
    queries = np.concatenate(client.compute(
        [dask.delayed(_take)(p, int(o), rows, columns) for p, o in
         zip(masked.pieces, masked.offsets, strict=True)], sync=True)) / widths
    best = np.min(client.compute([dask.delayed(_nearest)(p, columns, widths, queries)
                                  for p in original.pieces], sync=True), axis=0)
    local = np.array(client.compute([dask.delayed(_ties)(p, columns, widths, queries, best)
                                     for p in original.pieces], sync=True))
    nearest = local[:, 0].min(axis=0)
    tied = np.where(local[:, 0] == nearest, local[:, 1], 0).sum(axis=0)
    own = np.array([_squared(own_x[i:i + 1], queries[i])[0] for i in range(queries.shape[0])])
    linked = np.where(own == nearest, 1.0 / np.maximum(tied, 1), 0.0)
    low, high = _wilson(float(linked.sum()), rows.size)
    return float(100 * linked.mean()), (100 * low, 100 * high)


def evaluate_at_scale(client: Any, original: Dataset, masked: Dataset, *,
                      columns: Sequence[str] | None = None, bins: int = JSD_BINS,
                      sample: int = LINKAGE_SAMPLE, seed: int = 0) -> ScaleEvaluation:
    """Compare ``masked`` with ``original`` on ``columns`` (default: the numeric columns
    both have) by map-reduce (module docstring). Record linkage needs row-aligned data sets;
    ``sample`` = 0 skips it."""
    import dask

    columns = _compared_columns(original, masked, columns)
    n = original.n
    aligned = list(original.sizes) == list(masked.sizes)
    moments = client.compute([dask.delayed(_moments)(p, columns) for d in (original, masked)
                              for p in d.pieces], sync=True)
    split = len(original.pieces)
    mx, my = (np.sum(m, axis=0) for m in (moments[:split], moments[split:]))
    mean_x, mean_y = mx[0] / n, my[0] / n
    var_x = np.maximum(mx[1] / n - mean_x ** 2, 0.0)
    var_y = np.maximum(my[1] / n - mean_y ** 2, 0.0)
    lows = np.min([m[2] for m in moments[:split]], axis=0)
    highs = np.max([m[3] for m in moments[:split]], axis=0)
    histograms = client.compute([dask.delayed(_histograms)(p, columns, lows, highs, bins)
                                 for d in (original, masked) for p in d.pieces], sync=True)
    hx, hy = np.sum(histograms[:split], axis=0) / n, np.sum(histograms[split:], axis=0) / n
    jsd = [js_divergence(hx[j], hy[j]) for j in range(len(columns))]
    sse = percent = None
    linkage = interval = None
    taken = 0
    if aligned:
        sse, percent = _aligned_errors(client, original, masked, columns, mean_x)
        if sample > 0:
            rows = _sample_rows(n, sample, seed)
            taken = rows.size
            linkage, interval = _linkage(client, original, masked, columns,
                                         np.where(highs > lows, highs - lows, 1.0), rows)
    return ScaleEvaluation(
        records=n, columns=columns, aligned=aligned, sse=sse, sse_percent=percent,
        mean_variation=_variation(mean_x, mean_y), variance_variation=_variation(var_x, var_y),
        jsd=jsd, record_linkage_percent=linkage, record_linkage_ci95=interval,
        record_linkage_sample=taken)
