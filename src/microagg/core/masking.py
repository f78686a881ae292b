"""Masking methods of statistical disclosure control other than microaggregation (003 §5).

Each is a pure function of an ``(n, p)`` float matrix and a random generator, returning the
masked matrix with the same rows in the same order:

* :func:`correlated_noise`: Y = X + N(0, γΣ), Σ the covariance matrix of X (003 §5). The noise
  is drawn through the eigen-decomposition of Σ, so a singular Σ (Census has PTOTVAL =
  PEARNVAL + POTHVAL exactly) is handled: the noise lives in the span of the data, and exact
  linear relations between attributes survive.
* :func:`multiplicative_noise`: Höhne's variant (003 §5; Hundepool et al. 2012 §3.4). Every
  value is multiplied by ``1 + b_i·|e_ij|``, e_ij ~ N(0, s²), with one random sign b_i = ±1 per
  record (all the attributes of a record move in the same direction, the "1 ± N(0, s)" of the
  paper), then the linear transformation that restores the mean vector and the covariance
  matrix of X exactly: Y = x̄ + (Y' − ȳ') Σ_Y'^(-1/2) Σ_X^(1/2), with symmetric square roots
  (the whitening that moves the data least, independent of the column order).
* :func:`rank_swap`: rank swapping (Moore 1996), as sdcMicro's ``rankSwap`` without top and
  bottom coding: per attribute, the values are visited in increasing rank; a value not yet
  swapped is swapped with one chosen uniformly among the values not yet swapped whose rank
  is above it by less than ``fraction`` · n. The window is a *fraction* of the records
  (0.2 = 20 % of them), which is what sdcMicro's ``P`` does although it documents a percent.

The choice among a uniform pick of partners uses a Fenwick tree of the free ranks, so a swap
costs O(log n) whatever the window: O(n log n) per attribute.
"""

from __future__ import annotations

import numba
import numpy as np

from microagg.core.rng import make_rng
from microagg.errors import InputError

__all__ = ["correlated_draw", "correlated_noise", "multiplicative_noise", "multiplied",
           "noise_axes", "rank_swap", "restoring"]


def _matrix(X: np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(X, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] < 2:
        raise InputError(f"{what} needs a matrix of at least two records")
    if not np.all(np.isfinite(x)):
        raise InputError(f"{what} needs finite numeric values (no missing values)")
    return x


def _nonnegative(value: float, name: str) -> float:
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise InputError(f"{name} must be a non-negative number, got {value}")
    return value


def _symmetric_root(covariance: np.ndarray, *, inverse: bool = False) -> np.ndarray:
    """Σ^(1/2), or the pseudo-inverse root Σ^(-1/2) on the span of Σ (eigenvalues at the
    rounding level of the largest are taken as zero)."""
    values, vectors = np.linalg.eigh(covariance)
    floor = max(values.max(), 0.0) * covariance.shape[0] * np.finfo(float).eps
    positive = values > floor
    root = np.zeros_like(values)
    root[positive] = values[positive] ** (-0.5 if inverse else 0.5)
    return (vectors * root) @ vectors.T


def correlated_noise(X: np.ndarray, gamma: float, *,
                     rng: np.random.Generator | int | None = None) -> np.ndarray:
    """Y = X + N(0, γΣ) with Σ the sample covariance of X (003 §5): the covariance of Y is
    (1 + γ)Σ in expectation. ``gamma`` = 0 returns a copy of X."""
    x = _matrix(X, "correlated noise")
    gamma = _nonnegative(gamma, "the noise ratio gamma")
    scale, vectors = noise_axes(np.cov(x, rowvar=False).reshape(x.shape[1], -1), gamma)
    return x + correlated_draw(x.shape, scale, vectors, make_rng(rng))


def noise_axes(covariance: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """The axes of N(0, γΣ) and the noise's standard deviation along each.

    Eigenvalues below the numerical-rank tolerance (as ``numpy.linalg.matrix_rank``) are
    zero: a singular Σ (an exact linear relation) gets no noise across the relation.

    Parameters
    ----------
    covariance : ndarray
        The ``(p, p)`` covariance matrix Σ.
    gamma : float
        The noise's covariance as a multiple of Σ.

    Returns
    -------
    tuple of ndarray
        The ``p`` standard deviations and the ``(p, p)`` eigenvectors (one per column).
    """
    values, vectors = np.linalg.eigh(covariance)
    tolerance = values.max(initial=0.0) * covariance.shape[0] * np.finfo(float).eps
    return np.sqrt(gamma * np.where(values > tolerance, values, 0.0)), vectors


def correlated_draw(shape: tuple[int, int], scale: np.ndarray, vectors: np.ndarray,
                    generator: np.random.Generator) -> np.ndarray:
    """Noise of ``shape`` drawn from N(0, γΣ) given by :func:`noise_axes`.

    Parameters
    ----------
    shape : tuple of int
        The ``(n, p)`` rows and columns.
    scale, vectors : ndarray
        The standard deviations and the axes (:func:`noise_axes`).
    generator : numpy.random.Generator
        Where the draws come from (``n · p`` standard normal draws, row by row).

    Returns
    -------
    ndarray
        The ``(n, p)`` noise.
    """
    return (generator.standard_normal(shape) * scale) @ vectors.T


def multiplicative_noise(X: np.ndarray, s: float, *,
                         rng: np.random.Generator | int | None = None) -> np.ndarray:
    """Höhne's multiplicative noise (003 §5): ``x_ij · (1 + b_i |e_ij|)``, e_ij ~ N(0, s²), one sign
    b_i per record; then the means and the covariance matrix of X are restored exactly."""
    x = _matrix(X, "multiplicative noise")
    s = _nonnegative(s, "the noise deviation s")
    noisy = multiplied(x, s, make_rng(rng))
    target = np.cov(x, rowvar=False).reshape(x.shape[1], -1)
    current = np.cov(noisy, rowvar=False).reshape(x.shape[1], -1)
    return x.mean(axis=0) + (noisy - noisy.mean(axis=0)) @ restoring(current, target)


def multiplied(x: np.ndarray, s: float, generator: np.random.Generator) -> np.ndarray:
    """The first step of :func:`multiplicative_noise`: ``x_ij · (1 + b_i |e_ij|)``.

    Parameters
    ----------
    x : ndarray
        The ``(n, p)`` values.
    s : float
        The standard deviation of e_ij.
    generator : numpy.random.Generator
        Where the draws come from (the n signs, then the ``n · p`` normal draws).

    Returns
    -------
    ndarray
        The ``(n, p)`` values multiplied, before the moments are restored.
    """
    sign = generator.choice(np.array([-1.0, 1.0]), size=(x.shape[0], 1))
    return x * (1.0 + sign * np.abs(generator.normal(0.0, s, x.shape)))


def restoring(current: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The linear map Σ_current^(-1/2) Σ_target^(1/2) (symmetric roots) that gives centred
    data of covariance ``current`` the covariance ``target``.

    Parameters
    ----------
    current, target : ndarray
        The ``(p, p)`` covariance matrices.

    Returns
    -------
    ndarray
        The ``(p, p)`` map, applied on the right of the centred rows.
    """
    return _symmetric_root(current, inverse=True) @ _symmetric_root(target)


@numba.njit(cache=True)
def _swap_column(values: np.ndarray, window: int, picks: np.ndarray) -> np.ndarray:
    """Rank swapping of one sorted column. ``picks[j]`` in [0, 1) chooses the partner of rank
    j among the free ranks j+1 .. j+window-1 (sdcMicro's loop, with a Fenwick tree of free
    ranks in place of a scan of the window)."""
    n = values.shape[0]
    out = values.copy()
    tree = np.zeros(n + 1, dtype=np.int64)  # Fenwick tree over ranks 1..n, 1 = free
    for i in range(1, n + 1):
        tree[i] += 1
        parent = i + (i & -i)
        if parent <= n:
            tree[parent] += tree[i]
    free = np.ones(n, dtype=np.bool_)
    top = 1
    while top * 2 <= n:
        top *= 2
    for j in range(n):
        if not free[j]:
            continue
        # free ranks in (j, r): prefix(r) - prefix(j + 1), 0-based ranks, r exclusive
        r = min(n, j + window)
        count = 0
        i = r
        while i > 0:
            count += tree[i]
            i -= i & -i
        i = j + 1
        while i > 0:
            count -= tree[i]
            i -= i & -i
        if count <= 0:
            continue
        # the target-th free rank overall, counting the free ranks up to j first
        target = min(int(picks[j] * count), count - 1) + 1
        i = j + 1
        while i > 0:
            target += tree[i]
            i -= i & -i
        position = 0
        step = top
        while step > 0:
            nxt = position + step
            if nxt <= n and tree[nxt] < target:
                position = nxt
                target -= tree[nxt]
            step //= 2
        partner = position  # 0-based rank
        out[j], out[partner] = out[partner], out[j]
        for rank in (j, partner):
            free[rank] = False
            i = rank + 1
            while i <= n:
                tree[i] -= 1
                i += i & -i
    return out


def rank_swap(X: np.ndarray, fraction: float, *,
              rng: np.random.Generator | int | None = None) -> np.ndarray:
    """Rank swapping (003 §5): per attribute, values swapped only with a value whose rank is
    higher by less than ``fraction`` · n (a fraction of the records, in [0, 1]; sdcMicro's
    ``P``). Ties in a column are ordered by row number."""
    x = _matrix(X, "rank swapping")
    fraction = _nonnegative(fraction, "the rank-swap window fraction")
    if fraction > 1:
        raise InputError(
            f"the rank-swap window is a fraction of the records in [0, 1], got {fraction} "
            f"(for a window of {fraction} % write {fraction / 100:g})")
    n = x.shape[0]
    window = int(n * fraction)  # sdcMicro: r = min(n, (int)(j + n·P)), partners j+1 .. r-1
    generator = make_rng(rng)
    out = np.empty_like(x)
    for j in range(x.shape[1]):
        order = np.argsort(x[:, j], kind="stable")
        out[order, j] = _swap_column(x[order, j], window, generator.random(size=(n,)))
    return out
