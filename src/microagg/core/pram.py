"""Invariant PRAM (post-randomisation) of a categorical variable (Kooiman, Willenborg and
Gouweleeuw 1997; Gouweleeuw, Kooiman, Willenborg and de Wolf 1998; sdcMicro ``pram``).

PRAM replaces a record's category i by category j with probability R_ij, independently from
record to record. The expected marginal after PRAM is p'R, p the marginal before; R is
*invariant* when p'R = p'. The construction (Gouweleeuw et al. 1998, §3; sdcMicro's
``pram`` with ``pd`` and ``alpha``), for L categories with marginal p:

* P, the "retention" matrix: P_ii = θ_i (the retention probability), P_ij = (1 − θ_i) /
  (L − 1) for j ≠ i;
* λ' = p'P, the expected marginal after P, and Q the Bayes inverse of P:
  Q_kj = P_jk p_j / λ_k (the probability that a record written k had category j);
* R = P Q is invariant: (p'PQ)_j = Σ_k λ_k P_jk p_j / λ_k = p_j Σ_k P_jk = p_j;
* R_α = α R + (1 − α) I, invariant too, moves a share α of the way (α = 1: R itself).

sdcMicro draws each θ_i uniformly in [pd, 1]; here θ_i = θ for every category, so the
matrix depends on the marginal and the two parameters only (and is written in the report);
:func:`invariant_matrix` takes a vector of θ_i as well, to reproduce sdcMicro's draws.
"""

from __future__ import annotations

import numpy as np

__all__ = ["invariant_matrix", "pram_codes"]


def invariant_matrix(p: np.ndarray, retention: float | np.ndarray, alpha: float
                     ) -> np.ndarray:
    """R_α of the module docstring for the marginal ``p`` (counts or shares; categories
    with p_j = 0 are never written), ``retention`` θ (one for all categories, or one per
    category) and ``alpha``.

    Examples
    --------
    >>> p = np.array([0.5, 0.3, 0.2])
    >>> R = invariant_matrix(p, 0.8, 0.5)
    >>> bool(np.allclose(p @ R, p)), bool(np.allclose(R.sum(axis=1), 1.0))
    (True, True)
    """
    p = np.asarray(p, dtype=np.float64)
    p = p / p.sum()
    size = p.size
    if size == 1:
        return np.ones((1, 1))
    theta = np.broadcast_to(np.asarray(retention, dtype=np.float64), (size,))
    P = np.repeat(((1.0 - theta) / (size - 1))[:, None], size, axis=1)
    np.fill_diagonal(P, theta)
    lam = p @ P
    Q = np.zeros((size, size))
    seen = lam > 0
    Q[seen] = (P * p[:, None]).T[seen] / lam[seen, None]
    Q[~seen, np.flatnonzero(~seen)] = 1.0  # a category nobody is written as: any row
    R = P @ Q
    return alpha * R + (1.0 - alpha) * np.eye(size)


def pram_codes(codes: np.ndarray, matrix: np.ndarray, rng: np.random.Generator
               ) -> np.ndarray:
    """The categories written for records of categories ``codes`` (0..L-1): record by
    record, j with probability matrix[codes[i], j]; one uniform draw per record, in row
    order, turned into a category by the row's cumulative probabilities.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> pram_codes(np.array([0, 1, 1]), np.eye(2), rng).tolist()
    [0, 1, 1]
    """
    u = rng.random(codes.size)
    cumulative = np.cumsum(matrix, axis=1)
    cumulative[:, -1] = np.inf  # rounding never leaves a draw beyond the last category
    out = np.empty(codes.size, dtype=np.int64)
    for category in np.unique(codes):
        rows = np.flatnonzero(codes == category)
        out[rows] = np.searchsorted(cumulative[category], u[rows], side="right")
    return out
