"""The mean vector and the covariance matrix of a data set, by a map-reduce over its partitions.

Every partition gives its records, its mean and its matrix of cross-products of deviations
from its own mean (:meth:`Moments.of`); two such summaries are combined by the pairwise update
of Chan, Golub and LeVeque (1979): with δ the difference of the means,

    n = n_a + n_b,   mean = mean_a + δ n_b / n,   M2 = M2_a + M2_b + δ δᵀ n_a n_b / n.

No sum of squares of raw values is ever formed. Every partition first subtracts one shift
from its values, the same for all (a value near the data's mean, read on the client), so that
the means combined are small beside the spread: a column far from zero (a large mean, a small
spread) would otherwise lose in the difference of two partitions' means the digits that its
rounding takes from them. The covariance ``M2 / (n - 1)`` is ``numpy.cov``'s within 1e-12 of
the columns' spread (tests/test_scale_mask.py).
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
    the rows of a ``(n, p)`` matrix; the mean is kept as ``shift + center``.

    Examples
    --------
    >>> x = np.array([[1.0, 2.0], [2.0, 4.0], [4.0, 5.0], [8.0, 1.0]])
    >>> shift = x[0]
    >>> together = Moments.of(x[:1], shift) + Moments.of(x[1:], shift)
    >>> bool(np.allclose(together.covariance(), np.cov(x, rowvar=False)))
    True
    """

    n: int
    shift: np.ndarray
    center: np.ndarray
    m2: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, shift: np.ndarray | None = None) -> Moments:
        """The moments of the rows of ``values``.

        Parameters
        ----------
        values : ndarray
            A ``(n, p)`` matrix of finite values (``n`` may be 0).
        shift : ndarray, optional
            The ``p`` values subtracted first, the same for every part combined (default 0):
            near the mean, they keep the digits of a column far from zero.

        Returns
        -------
        Moments
            Its records, mean and M2.
        """
        n, p = values.shape
        shift = np.zeros(p) if shift is None else np.asarray(shift, dtype=np.float64)
        if n == 0:
            return cls(0, shift, np.zeros(p), np.zeros((p, p)))
        shifted = values - shift
        center = shifted.mean(axis=0)
        centred = shifted - center
        return cls(n, shift, center, centred.T @ centred)

    @property
    def mean(self) -> np.ndarray:
        """The ``p`` means."""
        return self.shift + self.center

    def __add__(self, other: Moments) -> Moments:
        if not np.array_equal(self.shift, other.shift):
            raise ValueError("moments of parts with different shifts cannot be combined")
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.center - self.center
        return Moments(n, self.shift, self.center + delta * (other.n / n),
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
