"""Input checks shared by the partitioners."""

from __future__ import annotations

import numbers

import numpy as np

from microagg.core.distance import Categorical, no_categories
from microagg.errors import InputError


def check_k(k: object, n: int, *, least: int = 1) -> int:
    """``k`` as an int, refusing k < ``least`` and k > n with a message naming the option.
    A k-anonymous release asks for ``least`` = 2: with k = 1 every record stays as it is."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise InputError(f"k must be an integer, got {k!r}")
    k = int(k)
    if k < 1:
        raise InputError(f"`k` must be at least 1, got {k}")
    if k < least:
        raise InputError(f"k = {k} leaves every record as it is and would call the table "
                         f"protected: a k-anonymous release needs k >= {least}")
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


def prepare(X: np.ndarray | None, k: int, categorical: Categorical | None, *,
            missing: bool = False) -> tuple[np.ndarray, Categorical, int]:
    """Check the numeric matrix, the categorical part and k; return them (n x 0 numeric
    matrix when there is none) and k as an int. With ``missing``, NaN (a missing value) is
    allowed in the numeric matrix, never an infinite value."""
    if X is None:
        if categorical is None:
            raise InputError("no attribute to microaggregate")
        X = np.empty((categorical.codes.shape[0], 0))
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise InputError(f"expected a 2-dimensional array, got shape {X.shape}")
    n = X.shape[0]
    if n == 0:
        raise InputError("the table has no rows")
    categorical = no_categories(n) if categorical is None else categorical
    if categorical.codes.shape[0] != n:
        raise InputError(f"{categorical.codes.shape[0]} categorical rows for {n} numeric rows")
    if X.shape[1] + categorical.codes.shape[1] == 0:
        raise InputError("no attribute to microaggregate")
    if np.isinf(X).any() or (not missing and np.isnan(X).any()):
        raise InputError("the data contain NaN or infinite values")
    return X, categorical, check_k(k, n)


def has_missing(X: np.ndarray, categorical: Categorical) -> bool:
    """Whether the records have a missing value: NaN among the numbers, -1 among the
    concepts."""
    return bool(np.isnan(X).any() or (categorical.codes < 0).any())
