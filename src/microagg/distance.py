"""Scalings that turn attributes into comparable coordinates for Euclidean distances.

* ``zscore``: (x - mean) / sd, with the population standard deviation (as sdcMicro's MDAV,
  which weights squared differences by 1/variance). The default for k-anonymity.
* ``range``: (x - a) / (b - a), with [a, b] the attribute's declared domain, or its range in
  the data when none is declared. This is the normalization of paper 000 eq. 8 and what its
  experiments used (with the domain [0, 1.5 · max]).
* ``none``: raw values.

Scaling an attribute by a data statistic (mean, sd, range) makes the distance data-dependent;
insensitive microaggregation and DP must use declared domains only (:func:`domain_normalize`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from microagg.errors import InputError

__all__ = ["SCALINGS", "domain_normalize", "scale"]

SCALINGS = ("zscore", "range", "none")


def scale(X: np.ndarray, method: str = "zscore",
          bounds: Sequence[tuple[float, float] | None] | None = None) -> np.ndarray:
    """A scaled copy of ``X`` (n, p). ``bounds`` gives each column's declared domain or None
    (used by ``range``). Constant columns are left centred, not divided by zero."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if method == "none":
        return X.copy()
    if method == "zscore":
        sd = X.std(axis=0)
        return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if method == "range":
        bounds = list(bounds) if bounds is not None else [None] * X.shape[1]
        if len(bounds) != X.shape[1]:
            raise InputError("range scaling needs one domain (or None) per column")
        low = np.array([b[0] if b is not None else X[:, j].min() for j, b in enumerate(bounds)])
        high = np.array([b[1] if b is not None else X[:, j].max() for j, b in enumerate(bounds)])
        width = high - low
        return (X - low) / np.where(width > 0, width, 1.0)
    raise InputError(f"unknown scaling '{method}' (choose one of: {', '.join(SCALINGS)})")


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
