"""Input checks shared by the partitioners."""

from __future__ import annotations

import numbers

import numpy as np

from microagg.errors import InputError


def check_k(k: object, n: int) -> int:
    """``k`` as an int, refusing k < 1 and k > n with a message naming the option."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise InputError(f"k must be an integer, got {k!r}")
    k = int(k)
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if k > n:
        raise InputError(f"k = {k} exceeds the number of records ({n})")
    return k


def check_matrix(X: np.ndarray, k: object, *, ndim: int = 2) -> np.ndarray:
    """A C-contiguous float64 copy-free view of ``X`` after checking shape, finiteness and k."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if ndim == 2 and X.ndim == 1:
        X = X[:, None]
    if X.ndim != ndim:
        raise InputError(f"expected a {ndim}-dimensional array, got shape {X.shape}")
    if X.shape[0] == 0:
        raise InputError("the table has no rows")
    if X.ndim == 2 and X.shape[1] == 0:
        raise InputError("no attribute to microaggregate")
    if not np.isfinite(X).all():
        raise InputError("the data contain NaN or infinite values")
    check_k(k, X.shape[0])
    return X
