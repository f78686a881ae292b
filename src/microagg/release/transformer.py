"""A scikit-learn-compatible transformer around any release method, for pipelines.

:class:`Microaggregator` follows scikit-learn's estimator conventions without importing it
(``get_params``/``set_params`` for ``clone`` and grid search, ``fit``/``transform``/
``fit_transform``, ``set_output(transform="pandas")``, ``random_state`` as the seed's name,
fitted attributes ending in ``_``). A release is a function of the whole table it is given,
not a model fitted on one table and applied to another: ``transform(X)`` releases ``X``
itself, and ``fit`` only checks the parameters and records the columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.schema import Schema
from microagg.errors import ParameterError
from microagg.release.base import Release
from microagg.release.methods import Family, ReleaseMethod

__all__ = ["Microaggregator"]

_OUTPUTS = ("default", "pandas")


class Microaggregator:
    """Release a table in a scikit-learn pipeline: k-anonymous microaggregation by default,
    any release method when ``method`` is a method object.

    Parameters
    ----------
    method : str or ReleaseMethod, default "mdav"
        A k-anonymity method by name (mdav, vmdav, individual-ranking, optimal-univariate,
        insensitive), made with ``k`` and ``params``; or a method object of any family
        (``CorrelatedNoise(gamma=0.1)``, ``DPLaplace(epsilon=1.0)`` …), which owns its
        parameters (``k`` and ``params`` must then be left out).
    k : int or None, default None
        The smallest cluster size, needed by a method given by name.
    columns : sequence of str or None, default None
        The columns to release (the method's default when ``None``); for t-closeness, the
        quasi-identifiers.
    schema : Schema or None, default None
        Roles, kinds and domains (a DP method needs the domains).
    random_state : int, numpy Generator or None, default None
        The seed of a randomized method (masking, DP); refused for a deterministic one,
        which it would not change. A seeded DP release is weaker than ε-DP (the report says
        so).
    **params
        The named method's other parameters (``scaling``, ``gamma`` …).

    Attributes
    ----------
    method_ : ReleaseMethod
        The method object used.
    release_ : Release
        The last release (its ``report``, ``labels`` …).
    labels_ : ndarray
        The partition of the last release, in input row order.
    n_features_in_, feature_names_in_
        The columns of the table seen by :meth:`fit`.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"age": [21, 22, 23, 60, 61, 62], "income": [1.0, 2, 3, 7, 8, 9]})
    >>> model = Microaggregator(k=3).set_output(transform="pandas")
    >>> model.fit_transform(X)["income"].tolist()
    [2.0, 2.0, 2.0, 8.0, 8.0, 8.0]
    >>> model.labels_.tolist(), model.get_params()["k"]
    ([0, 0, 0, 1, 1, 1], 3)
    """

    def __init__(self, method: str | ReleaseMethod = "mdav", *, k: int | None = None,
                 columns: Sequence[str] | None = None, schema: Schema | None = None,
                 random_state: int | np.random.Generator | None = None,
                 **params: Any) -> None:
        self.method = method
        self.k = k
        self.columns = columns
        self.schema = schema
        self.random_state = random_state
        self._params = dict(params)
        self._output = "default"

    # scikit-learn's estimator protocol -------------------------------------------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters by name (scikit-learn's ``clone`` rebuilds from them)."""
        return {"method": self.method, "k": self.k, "columns": self.columns,
                "schema": self.schema, "random_state": self.random_state, **self._params}

    def set_params(self, **params: Any) -> Microaggregator:
        """Set constructor parameters (as a grid search does); returns ``self``."""
        for name, value in params.items():
            if name in ("method", "k", "columns", "schema", "random_state"):
                setattr(self, name, value)
            else:
                self._params[name] = value
        return self

    def set_output(self, *, transform: str | None = None) -> Microaggregator:
        """``transform="pandas"``: return DataFrames; ``"default"``: numpy arrays."""
        if transform is not None:
            if transform not in _OUTPUTS:
                raise ParameterError("transform", f"must be one of {', '.join(_OUTPUTS)}, "
                                     f"got {transform!r}")
            self._output = transform
        return self

    def fit(self, X: Any, y: Any = None) -> Microaggregator:
        """Check the parameters and record the columns of ``X``; returns ``self``."""
        frame = _as_frame(X)
        self.method_ = self._make()
        self.n_features_in_ = frame.shape[1]
        self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        return self

    def transform(self, X: Any) -> Any:
        """The release of ``X`` (rows in input order, except a DP release's, which are in
        random order as written)."""
        if not hasattr(self, "method_"):
            self.fit(X)
        frame = _as_frame(X)
        release = self._release(frame)
        self.release_: Release[Any] = release
        self.labels_ = release.labels
        if self._output == "pandas":
            return release.frame
        return release.frame.to_numpy()

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """:meth:`fit`, then :meth:`transform` of the same ``X``. A DP release cannot be
        aligned with ``y`` (its rows are written in random order), so ``y`` is refused."""
        self.fit(X)
        if y is not None and self.method_.family is Family.DIFFERENTIAL_PRIVACY:
            raise ParameterError("y", "cannot follow a DP release: its rows are written in a "
                                 "uniformly random order (the input order would show who was "
                                 "clustered with whom), so they no longer match y")
        return self.transform(X)

    # the release ------------------------------------------------------------------------
    def _make(self) -> ReleaseMethod:
        from microagg.release.functions import make_method

        if isinstance(self.method, ReleaseMethod):
            given = [name for name, value in (("k", self.k), *self._params.items())
                     if value is not None]
            if given:
                raise ParameterError(given[0], "belongs to the method object when `method` is "
                                     "one: set it there")
            return self.method
        return make_method(Family.K_ANONYMITY, self.method, {"k": self.k, **self._params})

    def _release(self, frame: pd.DataFrame) -> Release[Any]:
        method = self.method_
        randomized = (method.family in (Family.MASKING, Family.DIFFERENTIAL_PRIVACY)
                      or getattr(method, "randomized", False))
        if self.random_state is not None and not randomized:
            raise ParameterError("random_state", f"applies to randomized methods (masking, "
                                 f"differential privacy), not {method.name}, which is "
                                 "deterministic")
        options: dict[str, Any] = {"schema": self.schema}
        columns = list(self.columns) if self.columns is not None else None
        options[{Family.T_CLOSENESS: "quasi", Family.KEYS: "keys"}.get(
            method.family, "columns")] = columns
        if randomized:
            options["rng"] = self.random_state
        return method.release(frame, **options)

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.get_params().items() if v is not None}
        return f"Microaggregator({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


def _as_frame(X: Any) -> pd.DataFrame:
    """``X`` as a DataFrame; an array's columns are named x0, x1, … (scikit-learn's names)."""
    if isinstance(X, pd.DataFrame):
        return X
    array = np.asarray(X)
    if array.ndim != 2:
        raise ParameterError("X", f"must be a 2-D table, got {array.ndim} dimension(s)")
    return pd.DataFrame(array, columns=[f"x{j}" for j in range(array.shape[1])])

