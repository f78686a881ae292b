"""Scalings that turn attributes into comparable coordinates for Euclidean distances.

* ``zscore``: (x - mean) / sd, with the population standard deviation (as sdcMicro's MDAV,
  which weights squared differences by 1/variance). The default for k-anonymity.
* ``range``: (x - a) / (b - a), with [a, b] the attribute's declared domain, or its range in
  the data when none is declared. This is the normalization of paper 000 eq. 8 and what its
  experiments used (with the domain [0, 1.5 · max]).
* ``none``: raw values.

Scaling an attribute by a data statistic (mean, sd, range) makes the distance data-dependent;
insensitive microaggregation and DP must use declared domains only (:func:`domain_normalize`).

Categorical attributes enter record distances through :class:`Categorical`: attribute j
contributes (δ_j(a, b) / δ_j(a_b, a_t))², its semantic (or rank) distance divided by the
distance between its domain boundaries (paper 000 eq. 8). The squared distance of two records
is the sum over the numeric attributes, in column order, then over the categorical ones.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from microagg.data.taxonomy import CategoryMetric
from microagg.errors import InputError
from microagg.options import Scaling, parse

__all__ = ["Categorical", "domain_normalize", "scale"]


def scale(X: np.ndarray, method: Scaling | str = Scaling.ZSCORE,
          bounds: Sequence[tuple[float, float] | None] | None = None) -> np.ndarray:
    """A scaled copy of ``X`` (n, p) by ``zscore``, ``range`` or ``none`` (``auto`` is
    resolved by the release). ``bounds`` gives each column's declared domain or None (used by
    ``range``). Constant columns are left centred, not divided by zero."""
    method = parse(Scaling, method, "scaling")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if method is Scaling.NONE:
        return X.copy()
    any_missing = bool(np.isnan(X).any())  # missing values: statistics over the values present
    if method is Scaling.ZSCORE:
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a column with no value at all
            sd = np.nanstd(X, axis=0) if any_missing else X.std(axis=0)
            mean = np.nanmean(X, axis=0) if any_missing else X.mean(axis=0)
        return (X - mean) / np.where(sd > 0, sd, 1.0)
    if method is Scaling.RANGE:
        bounds = list(bounds) if bounds is not None else [None] * X.shape[1]
        if len(bounds) != X.shape[1]:
            raise InputError("range scaling needs one domain (or None) per column")
        lowest, highest = (np.nanmin, np.nanmax) if any_missing else (np.min, np.max)
        low = np.array([b[0] if b is not None else lowest(X[:, j])
                        for j, b in enumerate(bounds)])
        high = np.array([b[1] if b is not None else highest(X[:, j])
                         for j, b in enumerate(bounds)])
        width = high - low
        return (X - low) / np.where(width > 0, width, 1.0)
    raise InputError("scaling 'auto' is resolved by the release; choose zscore, range or none")


def domain_normalize(X: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """(x - a) / (b - a) with declared domains [a, b] only (paper 000 eq. 8): the coordinates
    insensitive microaggregation orders records by. Values must lie in their domain."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    lows = np.asarray(lows, dtype=np.float64)
    highs = np.asarray(highs, dtype=np.float64)
    if lows.shape != (X.shape[1],) or highs.shape != (X.shape[1],):
        raise InputError("one declared domain is needed per attribute")
    if not np.all(highs > lows):
        raise InputError("every domain must have high > low")
    if np.any(X < lows) or np.any(X > highs):
        raise InputError("values outside their declared domain; clamp them first")
    return (X - lows) / (highs - lows)


@dataclass(frozen=True, eq=False)
class Categorical:
    """The categorical attributes of a record distance: ``codes[i, j]`` is the concept of row i
    for attribute j, numbered as in ``metrics[j]`` (categories first, then inner concepts), or
    -1 for a missing value (which only the partitioners of records with missing values take:
    :mod:`microagg.partition.mdav_missing`)."""

    codes: np.ndarray
    metrics: tuple[CategoryMetric, ...]

    def __post_init__(self) -> None:
        codes = np.ascontiguousarray(self.codes, dtype=np.int64)
        if codes.ndim == 1:
            codes = codes[:, None]
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "metrics", tuple(self.metrics))
        if codes.shape[1] != len(self.metrics):
            raise InputError("one metric is needed per categorical attribute")
        for j, metric in enumerate(self.metrics):
            column = codes[:, j]
            if column.size and (column.min() < -1 or column.max() >= metric.n_concepts):
                raise InputError(f"attribute '{metric.name}': concept codes out of range")

    @property
    def width(self) -> int:
        """Size of the padded concept dimension of the tables."""
        return max((m.n_concepts for m in self.metrics), default=1)

    def distances(self) -> np.ndarray:
        """(q, K, K) array of the distances δ_j between concepts, padded with zeros."""
        out = np.zeros((len(self.metrics), self.width, self.width))
        for j, metric in enumerate(self.metrics):
            size = metric.n_concepts
            out[j, :size, :size] = metric.distances
        return out

    def normalized(self) -> np.ndarray:
        """(q, K, K) array of δ_j / δ_j(a_b, a_t), padded with zeros."""
        scales = np.array([m.scale for m in self.metrics]).reshape(-1, 1, 1)
        return self.distances() / scales if self.metrics else self.distances()

    def squared(self) -> np.ndarray:
        """(q, K, K) array of the squared contributions (δ_j / δ_j(a_b, a_t))²."""
        return self.normalized() ** 2

    def parents(self) -> np.ndarray:
        """(q, K) tree parents, -1 for roots, for ordinal chains and for padding."""
        out = np.full((len(self.metrics), self.width), -1, dtype=np.int64)
        for j, metric in enumerate(self.metrics):
            out[j, : metric.n_concepts] = metric.parent
        return out

    def select(self, rows: np.ndarray) -> Categorical:
        return Categorical(self.codes[rows], self.metrics)


def no_categories(n: int) -> Categorical:
    """The empty categorical part of a purely numeric distance."""
    return Categorical(np.empty((n, 0), dtype=np.int64), ())
