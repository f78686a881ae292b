"""Post-processing of noisy cluster statistics and the records sampled from them (004 §4.3,
§5.2), vectorized over clusters. Everything here is post-processing of a DP output, so it
costs no privacy; none of it looks at the data.

* :func:`nearest_covariance`: the symmetric matrix nearest in Frobenius norm to a noisy
  covariance that is positive semi-definite and whose coefficients lie in the box a sample
  covariance of values in the domain can reach. Dykstra's alternating projections between
  the PSD cone (eigenvalues clipped at 0, the exact Frobenius projection, Higham 1988) and
  the box (clipping), as Higham (2002) does for correlation matrices: with Dykstra's
  correction the iterates converge to the nearest point of the intersection, not merely a
  point of it.
* :func:`sample_normal` (m = 1) and :func:`sample_skew_normal` (m = 2, Azzalini and Dalla
  Valle 1996; Azzalini and Capitanio 1999): k_i records per cluster.

The multivariate skew-normal is written here rather than taken from a library: scipy has the
univariate ``skewnorm`` only, and the stochastic representation below is a few lines. With
b = √(2/π), δ ∈ (−1, 1)^d and a correlation matrix Ω̄ such that Ω* = [[1, δᵀ], [δ, Ω̄]] is
positive definite, draw (X₀, X) ~ N(0, Ω*) and set Z = X if X₀ > 0 else −X; then
Y = ξ + ω ⊙ Z has mean ξ + ω b δ, covariance ω (Ω̄ − b² δ δᵀ) ω, and marginal skewness
γ_i = (4 − π)/2 · (b δ_i)³ / (1 − b² δ_i²)^{3/2}, which lies in (−γ_max, γ_max),
γ_max = √2 (4 − π) / (π − 2)^{3/2} ≈ 0.9953. :func:`skew_normal_parameters` inverts these
three equations (the method of moments with the released mean, covariance and marginal
coskewness φ_iii / q_ii^{3/2}, as in 004 §5.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["SKEWNESS_LIMIT", "SkewNormal", "covariance_bound", "nearest_covariance",
           "sample_normal", "sample_skew_normal", "skew_normal_parameters"]

_B = math.sqrt(2 / math.pi)
# The largest |skewness| of a univariate skew-normal (δ -> ±1).
SKEWNESS_LIMIT = math.sqrt(2) * (4 - math.pi) / (math.pi - 2) ** 1.5
# Released skewness is kept this far inside the limit (δ = ±1 is a degenerate half-normal).
_SKEWNESS_MARGIN = 0.99
_DYKSTRA_ITERATIONS = 200
_DYKSTRA_TOLERANCE = 1e-12
_BISECTIONS = 40


def covariance_bound(sizes: np.ndarray) -> np.ndarray:
    """The largest ``|coefficient|`` of the unbiased sample covariance of k values in [0, 1]:
    ⌊k/2⌋ ⌈k/2⌉ / (k (k − 1)), reached by half the values at each end (a variance; a
    covariance is bounded by the geometric mean of two variances). For every k it is at least
    the 1/4 of 004 §4.3 (footnote 2), which bounds the population variance."""
    k = np.asarray(sizes, dtype=np.float64)
    return np.floor(k / 2) * np.ceil(k / 2) / (k * (k - 1))


def _psd(A: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(A)
    return (vectors * np.maximum(values, 0.0)[..., None, :]) @ np.swapaxes(vectors, -1, -2)


def nearest_covariance(A: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """For a stack of symmetric matrices A (c, d, d): the nearest (Frobenius) positive
    semi-definite matrices with lows <= coefficients <= highs (broadcast against A), by
    Dykstra's alternating projections. Returns exactly PSD matrices, within 1e-12 of the box
    when the iteration converges (it always does: both sets are convex and contain 0)."""
    A = 0.5 * (A + np.swapaxes(A, -1, -2))
    Y = np.clip(A, lows, highs)
    if np.all(np.linalg.eigvalsh(Y)[..., 0] >= 0):
        return Y
    correction = np.zeros_like(A)
    Y = A
    X = A
    for _ in range(_DYKSTRA_ITERATIONS):
        R = Y - correction
        X = _psd(R)
        correction = X - R
        Y = np.clip(X, lows, highs)
        if np.abs(Y - X).max() <= _DYKSTRA_TOLERANCE:
            break
    return X


def _square_root(S: np.ndarray) -> np.ndarray:
    """L with L Lᵀ = S for PSD S (eigen factor; Cholesky fails on singular matrices)."""
    values, vectors = np.linalg.eigh(S)
    return vectors * np.sqrt(np.maximum(values, 0.0))[..., None, :]


def _apply(L: np.ndarray, labels: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Row r of the result is L[labels[r]] @ Z[r], gathered one coefficient at a time (never
    an (n, d, d) copy of the factors)."""
    out = np.zeros((labels.size, L.shape[1]))
    for i in range(L.shape[1]):
        for j in range(L.shape[2]):
            out[:, i] += L[labels, i, j] * Z[:, j]
    return out


def sample_normal(means: np.ndarray, covariances: np.ndarray, labels: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
    """One draw from N(means[c], covariances[c]) for every row of cluster c = labels[row]."""
    Z = rng.standard_normal((labels.size, means.shape[1]))
    return means[labels] + _apply(_square_root(covariances), labels, Z)


@dataclass(frozen=True, eq=False)
class SkewNormal:
    """Azzalini's multivariate skew-normal per cluster: location ξ (c, d), scale ω (c, d),
    shape δ (c, d) and the (d+1)-square factor of Ω* = [[1, δᵀ], [δ, Ω̄]]; ``skewness`` is
    the marginal skewness it has (the requested one, shrunk where infeasible)."""

    location: np.ndarray
    scale: np.ndarray
    delta: np.ndarray
    factor: np.ndarray
    skewness: np.ndarray


def _delta(skewness: np.ndarray) -> np.ndarray:
    """δ of a univariate skew-normal of the given skewness (|γ| < γ_max)."""
    r = np.cbrt(2 * skewness / (4 - math.pi))
    return r / np.sqrt(1 + r * r) / _B


def skew_normal_parameters(means: np.ndarray, covariances: np.ndarray,
                           skewness: np.ndarray) -> SkewNormal:
    """The skew-normals with the given means, covariances (PSD) and marginal skewness, by the
    method of moments (module docstring). Skewness is clipped to 0.99 γ_max; where the
    marginal shapes δ do not fit the correlations (Ω* not positive definite), all of a
    cluster's skewness is shrunk by a factor 0.8 until they do. Attributes with zero variance
    get no skewness."""
    c, d = means.shape
    sd = np.sqrt(np.maximum(np.diagonal(covariances, axis1=1, axis2=2), 0.0))
    flat = sd <= 1e-12
    safe = np.where(flat, 1.0, sd)
    corr = covariances / safe[:, :, None] / safe[:, None, :]
    eye = np.eye(d)
    corr = np.where(flat[:, :, None] | flat[:, None, :], eye, corr)
    # A touch of ridge keeps singular correlation matrices invertible (post-processing).
    corr = 0.999999 * corr + 0.000001 * eye
    limit = _SKEWNESS_MARGIN * SKEWNESS_LIMIT
    target = np.where(flat, 0.0, np.clip(skewness, -limit, limit))

    def shape(factor: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        delta = _delta(target * factor[:, None])
        v = 1 - (_B * delta) ** 2
        R = corr * np.sqrt(v)[:, :, None] * np.sqrt(v)[:, None, :]
        quad = np.einsum("ci,ci->c", delta, np.linalg.solve(R, delta[..., None])[..., 0])
        return delta, v, R, (1 - _B**2) * quad < 1 - 1e-9

    low, high = np.zeros(c), np.ones(c)
    feasible = shape(high)[3]
    low[feasible] = 1.0
    for _ in range(_BISECTIONS):
        if np.all(feasible):
            break
        middle = 0.5 * (low + high)
        ok = shape(middle)[3]
        low = np.where(ok & ~feasible, middle, low)
        high = np.where(~ok & ~feasible, middle, high)
    delta, v, R, _ = shape(low)
    gamma = target * low[:, None]
    omega = np.where(flat, 0.0, sd / np.sqrt(v))
    star = np.empty((c, d + 1, d + 1))
    star[:, 0, 0] = 1.0
    star[:, 0, 1:] = delta
    star[:, 1:, 0] = delta
    star[:, 1:, 1:] = R + _B**2 * delta[:, :, None] * delta[:, None, :]
    location = means - omega * _B * delta
    return SkewNormal(location=location, scale=omega, delta=delta,
                      factor=np.linalg.cholesky(star), skewness=gamma)


def sample_skew_normal(model: SkewNormal, labels: np.ndarray,
                       rng: np.random.Generator) -> np.ndarray:
    """One draw from cluster labels[row]'s skew-normal for every row."""
    W = rng.standard_normal((labels.size, model.factor.shape[1]))
    joint = _apply(model.factor, labels, W)
    Z = joint[:, 1:] * np.where(joint[:, :1] > 0, 1.0, -1.0)
    return model.location[labels] + model.scale[labels] * Z
