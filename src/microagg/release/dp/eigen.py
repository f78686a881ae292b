"""The eigen variant of cross-moment microaggregation (paper 004 §4.2, Prop. 9-10, Theorem 11
(ii)): per cluster the mean and the eigenvalues and eigenvectors of the covariance (m >= 1) and
of each slice Φ_a = [φ_abc]_bc of the coskewness (m = 2), with Laplace noise. It is ε-individual
DP (iDP, Soria-Comas et al. 2017) only: the eigenvector noise is calibrated to the cluster's
own eigengaps, a local sensitivity.

Every statistic is computed on the unit domain (as in :mod:`microagg.release.dp.moments`), so
on neighbouring clusters every entry of a covariance changes by at most e = 1/k (Prop. 6) and
every entry of a coskewness slice by at most e = 1/k (Prop. 8; 2/k when k = 3). The change ΔM
of a d × d matrix statistic is then dominated entrywise by e·J (J all ones), hence
‖ΔM‖_F <= d e and ‖ΔM‖_2 <= ‖e J‖_2 = d e (a nonnegative matrix dominating ``|ΔM|`` has the
larger spectral norm, Perron-Frobenius).

- **Eigenvalues** (Prop. 9-10, a global bound): sorted in nonincreasing order they move by
  ‖Δλ‖_2 <= ‖ΔM‖_F (Wielandt-Hoffman, Stewart & Sun IV Cor. 4.13), so
  ‖Δλ‖_1 <= √d · d e per matrix.
- **Eigenvectors** (local): the paper's Prop. 9 bound γ_i⁻¹ ‖ΔM‖_2 (first-order, Stewart &
  Sun V Thm. 2.8) is not a bound for every neighbour: A = diag(1, 0), A' = diag(0, 1) have gap
  1 and ‖ΔM‖_2 = 1, yet their first eigenvectors e1 and e2 are √2 apart. We use instead the
  Davis-Kahan variant of Yu, Wang & Samworth (2015, Biometrika, Cor. 1), which holds for any
  symmetric perturbation: with γ_i = min(λ_{i-1} − λ_i, λ_i − λ_{i+1}) (λ_0 = +∞,
  λ_{d+1} = −∞) and the neighbour's eigenvector signed so that v'ᵀv >= 0,
  ‖v' − v‖_2 <= 2^{3/2} ‖ΔM‖_2 / γ_i; and always ‖v' − v‖_2 <= √2 for such a sign. So
  b_i = min(2^{3/2} d e / γ_i, √2) in L2 and √d b_i in L1. A repeated eigenvalue (γ_i = 0)
  gets the cap √2, never an infinite scale.
- **Signs.** An eigenvector is defined up to its sign, and any rule fixing the sign can flip on
  a neighbour. The mechanism multiplies each eigenvector by its own fair random sign before
  the noise: the output density is then the average over signs σ of f(o − μ_σ(X)), and pairing
  σ on X with σ on the sign-aligned eigenvectors of X' bounds every term by e^ε, so the aligned
  bound b_i is the sensitivity. The reconstruction V diag(λ) Vᵀ does not depend on the signs.

Noise (exact discrete Laplace, one draw per coefficient): each cluster's tuple of statistics
with its own local L1 bound (the sum of the parts above and d/k for the mean, Prop. 5) and its
share of ε: the whole ε of the statistic for X^m (MDAV clusters, parallel composition), ε / c
for the insensitive partition (every one of the c clusters may change by one record). The
scales depend on the data and are not published. Post-processing: the nearest orthogonal
matrix to the noisy eigenvectors (polar factor), the matrix rebuilt from it and the noisy
eigenvalues, coskewness slices symmetrized over the permutations of their indices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import TYPE_CHECKING, Any

import numpy as np

from microagg.core.synthesis import covariance_bound
from microagg.release.dp.mechanisms import laplace_mechanism

if TYPE_CHECKING:
    from microagg.core.aggregate import ClusterMoments

__all__ = ["EigenPairs", "coefficients_of", "eigen_pairs", "eigenvalue_sensitivity",
           "eigenvector_bounds", "entry_bound", "perturb_eigen", "symmetric_matrices"]

INDIVIDUAL = "the eigengaps of every cluster's covariance and coskewness slices"


@dataclass(frozen=True, eq=False)
class EigenPairs:
    """Eigen-decompositions of a stack of symmetric matrices (c, s, d, d): ``values`` (c, s, d)
    in nonincreasing order, ``vectors`` (c, s, d, d) with column i belonging to value i."""

    values: np.ndarray
    vectors: np.ndarray


def symmetric_matrices(statistic: str, coefficients: np.ndarray, index: np.ndarray, d: int
                       ) -> np.ndarray:
    """The matrices of a symmetric statistic from its unique coefficients (c, len(index)): the
    covariance as one d × d matrix per cluster (c, 1, d, d), the coskewness as its d slices
    Φ_a = [φ_abc]_bc (c, d, d, d). ``index`` must hold every unique coefficient."""
    c = coefficients.shape[0]
    if statistic == "covariance":
        out = np.zeros((c, 1, d, d))
        for col, (i, j) in enumerate(index):
            out[:, 0, i, j] = out[:, 0, j, i] = coefficients[:, col]
        return out
    out = np.zeros((c, d, d, d))
    for col, row in enumerate(index):
        for a, b, e in set(permutations(row)):
            out[:, a, b, e] = coefficients[:, col]
    return out


def coefficients_of(statistic: str, matrices: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The unique coefficients ``index`` of rebuilt matrices (inverse of
    :func:`symmetric_matrices`); a coskewness coefficient is the mean of its entries over the
    permutations of its indices (the rebuilt slices need not agree with one another)."""
    if statistic == "covariance":
        return 0.5 * (matrices[:, 0, index[:, 0], index[:, 1]]
                      + matrices[:, 0, index[:, 1], index[:, 0]])
    out = np.empty((matrices.shape[0], index.shape[0]))
    for col, row in enumerate(index):
        cells = list(set(permutations(row)))
        out[:, col] = sum(matrices[:, a, b, e] for a, b, e in cells) / len(cells)
    return out


def eigen_pairs(matrices: np.ndarray) -> EigenPairs:
    """Eigenvalues in nonincreasing order and their unit eigenvectors."""
    values, vectors = np.linalg.eigh(matrices)
    return EigenPairs(values=values[..., ::-1].copy(), vectors=vectors[..., ::-1].copy())


def minimum_gaps(values: np.ndarray) -> np.ndarray:
    """γ_i = min(λ_{i-1} − λ_i, λ_i − λ_{i+1}) with λ_0 = +∞, λ_{d+1} = −∞ (values sorted in
    nonincreasing order along the last axis); +∞ for a 1 × 1 matrix."""
    step = np.maximum(values[..., :-1] - values[..., 1:], 0.0)
    inf = np.full((*values.shape[:-1], 1), np.inf)
    return np.minimum(np.concatenate([inf, step], axis=-1),
                      np.concatenate([step, inf], axis=-1))


def entry_bound(statistic: str, sizes: np.ndarray) -> np.ndarray:
    """The largest change of one entry of the statistic between neighbouring clusters of k
    records on the unit domain: 1/k for the covariance (Prop. 6), 1/k for the coskewness
    (Prop. 8) except 2/k when k = 3 (see
    :func:`~microagg.release.dp.moments.coefficient_sensitivity`)."""
    k = np.asarray(sizes, dtype=np.float64)
    if statistic == "covariance":
        return 1.0 / k
    return np.where(k == 3, 2.0, 1.0) / k


def eigenvalue_sensitivity(d: int, bound: np.ndarray | float) -> np.ndarray:
    """L1 bound on the change of the sorted eigenvalues of one d × d matrix whose entries each
    change by at most ``bound``: √d ‖bound · J‖_F = √d · d · bound (004 Prop. 9-10)."""
    return math.sqrt(d) * d * np.asarray(bound, dtype=np.float64)


def eigenvector_bounds(gaps: np.ndarray, d: int, bound: np.ndarray) -> np.ndarray:
    """L2 bounds b_i = min(2^{3/2} d · bound / γ_i, √2) on the change of each sign-aligned
    unit eigenvector (Yu, Wang & Samworth 2015, Cor. 1; module docstring). ``bound``
    broadcasts against ``gaps`` from the left (one value per cluster)."""
    spectral = d * np.asarray(bound, dtype=np.float64).reshape(
        (-1,) + (1,) * (gaps.ndim - 1))
    with np.errstate(divide="ignore"):
        return np.minimum(2.0 ** 1.5 * spectral / gaps, math.sqrt(2.0))


def _value_highs(statistic: str, sizes: np.ndarray, d: int) -> np.ndarray:
    """Largest |eigenvalue| a statistic of k values in [0, 1] can have: at most its Frobenius
    norm, d times its largest coefficient."""
    k = sizes.astype(np.float64)
    if statistic == "covariance":
        return d * covariance_bound(sizes)
    return d * k * k / ((k - 1) * (k - 2))


@dataclass(frozen=True, eq=False)
class _EigenTuple:
    """One statistic of every cluster as released by the eigen variant: the values (c, w) put
    through the mechanism, their clamping intervals, and the local L1 bound of each cluster."""

    values: np.ndarray
    lows: np.ndarray
    highs: np.ndarray
    sensitivity: np.ndarray  # (c,)
    global_part: np.ndarray  # (c,) the part that does not depend on the data


def _mean_tuple(moments: ClusterMoments) -> _EigenTuple:
    c, d = moments.means.shape
    sensitivity = d / moments.sizes.astype(np.float64)  # Prop. 5 with Λ = 1
    return _EigenTuple(moments.means, np.zeros((c, d)), np.ones((c, d)), sensitivity,
                       sensitivity)


def _matrix_tuple(statistic: str, moments: ClusterMoments, rng: np.random.Generator
                  ) -> _EigenTuple:
    """Eigenvalues then randomly signed eigenvectors of every matrix of the statistic."""
    coefficients, index = ((moments.covariance, moments.covariance_index)
                           if statistic == "covariance"
                           else (moments.coskewness, moments.coskewness_index))
    c, d = moments.means.shape
    pairs = eigen_pairs(symmetric_matrices(statistic, coefficients, index, d))
    s = pairs.values.shape[1]
    bound = entry_bound(statistic, moments.sizes)
    values_part = s * eigenvalue_sensitivity(d, bound)
    vector_part = math.sqrt(d) * eigenvector_bounds(
        minimum_gaps(pairs.values), d, bound).sum(axis=(1, 2))
    signs = rng.choice(np.array([-1.0, 1.0]), size=(c, s, 1, d))
    vectors = (pairs.vectors * signs).reshape(c, s * d * d)
    high = _value_highs(statistic, moments.sizes, d)[:, None]
    value_lows = (np.zeros((c, s * d)) if statistic == "covariance"
                  else np.broadcast_to(-high, (c, s * d)))
    return _EigenTuple(
        values=np.hstack([pairs.values.reshape(c, s * d), vectors]),
        lows=np.hstack([value_lows, -np.ones_like(vectors)]),
        highs=np.hstack([np.broadcast_to(high, (c, s * d)), np.ones_like(vectors)]),
        sensitivity=values_part + vector_part, global_part=values_part)


def _rebuild(statistic: str, noisy: np.ndarray, index: np.ndarray, d: int) -> np.ndarray:
    """Coefficients from noisy eigenvalues and eigenvectors: the nearest orthogonal matrix to
    the noisy eigenvectors (polar factor of its SVD), then V diag(λ) Vᵀ."""
    c = noisy.shape[0]
    s = noisy.shape[1] // (d + d * d)
    values = noisy[:, :s * d].reshape(c, s, d)
    u, _, vt = np.linalg.svd(noisy[:, s * d:].reshape(c, s, d, d))
    vectors = u @ vt
    matrices = (vectors * values[:, :, None, :]) @ np.swapaxes(vectors, -1, -2)
    return coefficients_of(statistic, matrices, index)


def perturb_eigen(moments: ClusterMoments, statistics: Sequence[str], *, epsilon: float,
                  across_clusters: bool, rng: np.random.Generator, what: str
                  ) -> tuple[dict[str, np.ndarray], list[dict[str, Any]], float]:
    """The eigen variant's release of ``statistics`` (a subset of mean, covariance,
    coskewness) of every cluster with budget ``epsilon`` (module docstring): the noisy
    coefficients rebuilt from the noisy eigen-decompositions, the report entry, and a
    data-independent lower bound on the standard deviation of the noise on a mean (in units of
    the unit domain; the eigenvector part adds a data-dependent amount)."""
    sizes = moments.sizes
    c = sizes.size
    tuples = {name: (_mean_tuple(moments) if name == "mean"
                     else _matrix_tuple(name, moments, rng)) for name in statistics}
    values = np.hstack([t.values for t in tuples.values()])
    lows = np.hstack([t.lows for t in tuples.values()])
    highs = np.hstack([t.highs for t in tuples.values()])
    sensitivity = np.sum([t.sensitivity for t in tuples.values()], axis=0)
    share = epsilon / c if across_clusters else epsilon
    out = np.empty_like(values)
    for r in range(c):
        out[r], _ = laplace_mechanism(values[r], sensitivity=float(sensitivity[r]),
                                      epsilon=share, lows=lows[r], highs=highs[r], rng=rng)
    noisy: dict[str, np.ndarray] = {}
    start = 0
    d = moments.means.shape[1]
    for name, t in tuples.items():
        block = out[:, start:start + t.values.shape[1]]
        start += t.values.shape[1]
        if name == "mean":
            noisy[name] = block
        else:
            index = (moments.covariance_index if name == "covariance"
                     else moments.coskewness_index)
            noisy[name] = _rebuild(name, block, index, d)
    least = float(np.min(np.sum([t.global_part for t in tuples.values()], axis=0)))
    entry = {"statistic": what, "mechanism": "Laplace (local sensitivity: individual DP)",
             "formula": "per cluster: d/k_i (mean, Prop. 5) + √d·d·e per matrix "
                        "(eigenvalues, Wielandt-Hoffman) + √d·min(2^1.5·d·e/γ, √2) per "
                        "eigenvector (Davis-Kahan, Yu-Wang-Samworth 2015), e = 1/k_i (2/k_i "
                        "for a coskewness of 3 records), γ the eigengap of the cluster's own "
                        "matrix; eigenvectors randomly signed",
             "epsilon": epsilon,
             "epsilon_per_cluster": share,
             "across_clusters": ("insensitive partition: every cluster may change, each "
                                 "gets epsilon / clusters" if across_clusters else
                                 "one cluster changes; parallel composition over clusters"),
             "scale": "per cluster, from its eigengaps: depends on the data, not published"}
    return noisy, [entry], math.sqrt(2.0) * least / share
