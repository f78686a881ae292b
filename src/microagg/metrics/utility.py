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
  original and masked values with 100 equal bins over the attribute domain.
"""

from __future__ import annotations

import numpy as np

from microagg.errors import InputError

__all__ = [
    "JSD_BINS",
    "js_divergence",
    "jsd",
    "mean_variation",
    "relative_error",
    "relative_errors",
    "sse",
    "sse_percent",
    "variance_variation",
]

JSD_BINS = 100


def _pair(original: np.ndarray, masked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(original, dtype=np.float64)
    y = np.asarray(masked, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if y.ndim == 1:
        y = y[:, None]
    if x.shape != y.shape:
        raise InputError(f"original and masked data differ in shape: {x.shape} vs {y.shape}")
    if x.shape[0] == 0:
        raise InputError("the table has no rows")
    return x, y


def sse(original: np.ndarray, masked: np.ndarray) -> float:
    """Sum of squared errors on the raw scale (000 §5.2)."""
    x, y = _pair(original, masked)
    return float(np.sum((x - y) ** 2))


def sse_percent(original: np.ndarray, masked: np.ndarray) -> float:
    """SSE/SST · 100 on data standardized by the original's mean and standard deviation.

    Constant original columns (SST = 0) are left out; NaN if every column is constant.
    """
    x, y = _pair(original, masked)
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
    x, y = _pair(original, masked)
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
    x, y = _pair(original, masked)
    vx, vy = x.var(axis=0), y.var(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(vx > 0, np.abs(vy - vx) / vx, np.nan)


def mean_variation(original: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """|mean(y) - mean(x)| / |mean(x)| per attribute (NaN where mean(x) = 0)."""
    x, y = _pair(original, masked)
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
    x, y = _pair(original, masked)
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
