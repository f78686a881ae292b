"""Utility (information-loss) measures between an original and a masked numeric matrix.

All functions take two ``(n, p)`` float arrays, original ``X`` and masked ``Y``, with the same
rows in the same order. They are the measures of the papers:

* SSE on the raw scale (000 §5.2): Σ_i Σ_j (x_ij - y_ij)²;
* SSE/SST in percent on standardized data, the usual "IL" of the microaggregation literature:
  100 · Σ_j SSE_j / s_j² / Σ_j SST_j / s_j², with s_j the standard deviation of original column
  j and SST_j = Σ_i (x_ij - mean_j)²;
* relative error RE (001 §4.2): mean over all values of |x - y| / max(|x|, s_j), with the sanity
  bound s_j = (b_j - a_j) / 100 tied to the attribute domain [a_j, b_j];
* variation of variances and of means (000 §5.4, 001 §4.2): |Θ' - Θ| / |Θ| per attribute;
* Jensen-Shannon divergence (001 §4.2), base 2 so it lies in [0, 1], between histograms of
  original and masked values with 100 equal bins over the attribute domain;
* the earth mover's distance of 003 eq. 1 between the original and the masked distributions
  (:func:`emd`), which needs no row alignment and so also measures synthetic releases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import ot

from microagg.aggregate import cluster_means
from microagg.errors import InputError
from microagg.partition.mdav import mdav

__all__ = [
    "EMD_EXACT_LIMIT",
    "JSD_BINS",
    "EarthMovers",
    "emd",
    "js_divergence",
    "jsd",
    "mean_variation",
    "paired_matrices",
    "relative_error",
    "relative_errors",
    "sse",
    "sse_percent",
    "variance_variation",
]

JSD_BINS = 100


def paired_matrices(original: np.ndarray, masked: np.ndarray, *, aligned: bool = True,
                    finite_for: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Original and masked data as float matrices (a vector is one attribute), checked: the
    same attributes, rows in both, the same rows too when ``aligned`` (row i of one is row i
    of the other), and finite values when ``finite_for`` names the measure that needs them."""
    x = np.asarray(original, dtype=np.float64)
    y = np.asarray(masked, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if y.ndim == 1:
        y = y[:, None]
    if x.ndim != 2 or y.ndim != 2 or (x.shape != y.shape if aligned
                                      else x.shape[1] != y.shape[1]):
        what = "shape" if aligned else "their attributes"
        raise InputError(f"original and masked data differ in {what}: {x.shape} vs {y.shape}")
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise InputError("the table has no rows")
    if finite_for is not None and not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError(f"{finite_for} needs finite values")
    return x, y


def sse(original: np.ndarray, masked: np.ndarray) -> float:
    """Sum of squared errors on the raw scale (000 §5.2)."""
    x, y = paired_matrices(original, masked)
    return float(np.sum((x - y) ** 2))


def sse_percent(original: np.ndarray, masked: np.ndarray) -> float:
    """SSE/SST · 100 on data standardized by the original's mean and standard deviation.

    Constant original columns (SST = 0) are left out; NaN if every column is constant.
    """
    x, y = paired_matrices(original, masked)
    centred = x - x.mean(axis=0)
    sst = np.sum(centred**2, axis=0)
    keep = sst > 0
    if not keep.any():
        return float("nan")
    # Standardizing column j divides both SSE_j and SST_j by s_j²; the ratio per column is
    # what remains, weighted equally: Σ_j SSE_j/SST_j / p.
    sse_j = np.sum((x - y) ** 2, axis=0)
    return float(100.0 * np.mean(sse_j[keep] / sst[keep]))


def relative_errors(original: np.ndarray, masked: np.ndarray, widths: np.ndarray
                    ) -> np.ndarray:
    """|x - y| / max(|x|, width_j / 100) for every value (001 §4.2), flattened."""
    x, y = paired_matrices(original, masked)
    widths = np.broadcast_to(np.asarray(widths, dtype=np.float64), (x.shape[1],))
    if np.any(widths <= 0):
        raise InputError("relative error needs positive domain widths")
    denominator = np.maximum(np.abs(x), widths / 100.0)
    return (np.abs(x - y) / denominator).ravel()


def relative_error(original: np.ndarray, masked: np.ndarray, widths: np.ndarray) -> float:
    """Mean of |x - y| / max(|x|, width_j / 100) over all values (001 §4.2)."""
    return float(np.mean(relative_errors(original, masked, widths)))


def variance_variation(original: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """|Var(y) - Var(x)| / Var(x) per attribute (NaN where Var(x) = 0)."""
    x, y = paired_matrices(original, masked)
    vx, vy = x.var(axis=0), y.var(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(vx > 0, np.abs(vy - vx) / vx, np.nan)


def mean_variation(original: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """|mean(y) - mean(x)| / |mean(x)| per attribute (NaN where mean(x) = 0)."""
    x, y = paired_matrices(original, masked)
    mx, my = x.mean(axis=0), y.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mx != 0, np.abs(my - mx) / np.abs(mx), np.nan)


def _histogram(values: np.ndarray, lo: float, hi: float, bins: int) -> np.ndarray:
    position = np.floor((values - lo) / (hi - lo) * bins)
    position = np.clip(position, 0, bins - 1).astype(np.int64)  # outside the domain: edge bins
    return np.bincount(position, minlength=bins) / values.size


def js_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence, base 2, of two discrete distributions."""
    m = 0.5 * (p + q)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl_p = np.where(p > 0, p * np.log2(p / m), 0.0).sum()
        kl_q = np.where(q > 0, q * np.log2(q / m), 0.0).sum()
    return float(max(0.0, 0.5 * (kl_p + kl_q)))


def jsd(original: np.ndarray, masked: np.ndarray, lows: np.ndarray, highs: np.ndarray,
        bins: int = JSD_BINS) -> np.ndarray:
    """Jensen-Shannon divergence (base 2) per attribute between binned distributions.

    Bins split each domain [low_j, high_j] into ``bins`` equal parts; masked values outside the
    domain fall into the edge bins.
    """
    x, y = paired_matrices(original, masked)
    p_count = x.shape[1]
    lows = np.broadcast_to(np.asarray(lows, dtype=np.float64), (p_count,))
    highs = np.broadcast_to(np.asarray(highs, dtype=np.float64), (p_count,))
    out = np.empty(p_count)
    for j in range(p_count):
        if not highs[j] > lows[j]:
            raise InputError("JSD needs domains with high > low")
        out[j] = js_divergence(
            _histogram(x[:, j], lows[j], highs[j], bins),
            _histogram(y[:, j], lows[j], highs[j], bins),
        )
    return out


EMD_EXACT_LIMIT = 5000
"""Up to this many records per data set, :func:`emd` puts every record in its own cluster and
is exact; above it, records are grouped so that the cost matrix stays at most this size
squared (200 MB)."""


@dataclass(frozen=True)
class EarthMovers:
    """The EMD of 003 eq. 1 and how it was computed.

    ``clusters`` = (h, k), the numbers of clusters of the original and the masked data; when
    ``exact`` is false they are MDAV clusters and the true EMD between the record
    distributions lies within ``bound`` of ``value`` (moving every record to its cluster mean
    is a transport plan, so each side's clustering moves the EMD by at most its mean distance
    between a record and its cluster mean).
    """

    value: float
    exact: bool
    clusters: tuple[int, int]
    bound: float


def _clusters(points: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Means, weights and mean record-to-mean distance of ``points`` grouped by MDAV."""
    if size <= 1:
        return points, np.full(points.shape[0], 1.0 / points.shape[0]), 0.0
    labels = mdav(points, size)
    means = cluster_means(points, labels)
    weights = np.bincount(labels) / points.shape[0]
    spread = float(np.mean(np.linalg.norm(points - means[labels], axis=1)))
    return means, weights, spread


def emd(original: np.ndarray, masked: np.ndarray, lows: np.ndarray, highs: np.ndarray, *,
        max_points: int = EMD_EXACT_LIMIT) -> EarthMovers:
    """Earth mover's distance (003 eq. 1, Rubner et al. 2000) between the distributions of the
    original and the masked records, the ground distance being Euclidean on attributes scaled
    to [0, 1] by the domain [low_j, high_j] (the scale that reproduces 003 Table 1).

    Each data set is grouped into clusters represented by their mean and their share of the
    records (003 §2.2). With at most ``max_points`` records a cluster is a single record and
    the value is the exact EMD between the two empirical distributions; above, each data set
    is clustered by MDAV into clusters of ⌈n / max_points⌉ records (see
    :class:`EarthMovers` for the bound). The transport problem is solved exactly by POT's
    network simplex (``ot.emd2``). Masked data may have another number of records.
    """
    x, y = paired_matrices(original, masked, aligned=False, finite_for="the EMD")
    if max_points < 1:
        raise InputError(f"max_points must be at least 1, got {max_points}")
    lows = np.broadcast_to(np.asarray(lows, dtype=np.float64), (x.shape[1],))
    widths = np.broadcast_to(np.asarray(highs, dtype=np.float64), (x.shape[1],)) - lows
    if np.any(~(widths > 0)):
        raise InputError("the EMD needs domains with high > low")
    tx, wx, ex = _clusters((x - lows) / widths, math.ceil(x.shape[0] / max_points))
    ty, wy, ey = _clusters((y - lows) / widths, math.ceil(y.shape[0] / max_points))
    cost = ot.dist(tx, ty, metric="euclidean")
    value, log = ot.emd2(wx, wy, cost, numItermax=max(100_000, 50 * cost.size), log=True)
    if log["warning"] is not None:
        raise RuntimeError(f"the transport problem was not solved: {log['warning']}")
    return EarthMovers(float(value), exact=ex == 0.0 and ey == 0.0,
                       clusters=(tx.shape[0], ty.shape[0]), bound=ex + ey)
