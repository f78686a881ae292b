"""The mean vector and the covariance matrix of a data set, by a map-reduce over its partitions.

Every partition gives its records, its mean and its matrix of cross-products of deviations
from its own mean (:meth:`Moments.of`); two such summaries are combined by the pairwise update
of Chan, Golub and LeVeque (1979): with δ the difference of the means,

    n = n_a + n_b,   mean = mean_a + δ n_b / n,   M2 = M2_a + M2_b + δ δᵀ n_a n_b / n.

No sum of squares of raw values is ever formed, so a column far from zero (large mean, small
spread) keeps its digits; the covariance ``M2 / (n - 1)`` is ``numpy.cov``'s within rounding
(tests/test_scale_mask.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce

import numpy as np

__all__ = ["Moments"]


@dataclass(frozen=True, eq=False)
class Moments:
    """The records, the mean vector and the cross-products of deviations (M2) of a part of
    the rows of a ``(n, p)`` matrix.

    Examples
    --------
    >>> x = np.array([[1.0, 2.0], [2.0, 4.0], [4.0, 5.0], [8.0, 1.0]])
    >>> together = Moments.of(x[:1]) + Moments.of(x[1:])
    >>> bool(np.allclose(together.covariance(), np.cov(x, rowvar=False)))
    True
    """

    n: int
    mean: np.ndarray
    m2: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray) -> Moments:
        """The moments of the rows of ``values``.

        Parameters
        ----------
        values : ndarray
            A ``(n, p)`` matrix of finite values (``n`` may be 0).

        Returns
        -------
        Moments
            Its records, mean and M2.
        """
        n, p = values.shape
        if n == 0:
            return cls(0, np.zeros(p), np.zeros((p, p)))
        mean = values.mean(axis=0)
        centred = values - mean
        return cls(n, mean, centred.T @ centred)

    def __add__(self, other: Moments) -> Moments:
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        return Moments(n, self.mean + delta * (other.n / n),
                       self.m2 + other.m2 + np.outer(delta, delta) * (self.n * other.n / n))

    @staticmethod
    def total(parts: Iterable[Moments]) -> Moments:
        """The moments of every part's rows together (at least one part).

        Parameters
        ----------
        parts : iterable of Moments
            The parts' moments.

        Returns
        -------
        Moments
            Their combination.
        """
        return reduce(Moments.__add__, parts)

    def covariance(self, ddof: int = 1) -> np.ndarray:
        """The ``(p, p)`` covariance matrix ``M2 / (n - ddof)`` (``numpy.cov``'s with the
        default ``ddof`` 1).

        Parameters
        ----------
        ddof : int
            The degrees of freedom taken off ``n``.

        Returns
        -------
        ndarray
            The covariance matrix (NaN when ``n <= ddof``).
        """
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.m2 / (self.n - ddof) if self.n > ddof else np.full_like(self.m2,
                                                                                np.nan)

    def variance(self) -> np.ndarray:
        """Each column's variance over ``n`` (``numpy.var``'s, as the utility measures take
        it).

        Returns
        -------
        ndarray
            The ``p`` variances.
        """
        return np.diag(self.covariance(ddof=0)).copy()
