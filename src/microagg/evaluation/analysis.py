"""Utility measured by the analyst's own analysis: does a regression fitted on the release
say what it says on the original, and can a classifier tell the release from the original?

* **Regression** (Karr, Kohnen, Oganian, Reiter and Sanil 2006): the model ``y ~ a + b + …``
  fitted by ordinary least squares on each table; per coefficient the estimates, their
  confidence intervals, the **CI overlap** ``J = ½ (w / (U_o − L_o) + w / (U_r − L_r))`` with
  ``w = max(0, min(U_o, U_r) − max(L_o, L_r))`` (1 when the intervals coincide, 0 when they are
  disjoint) and the **standardized difference** ``|β_r − β_o| / se_o``.
* **Classification** (train on the release, test on held-out originals): a classifier of a
  target column trained once on the original's training part and once on the release, both
  scored on original records that the release was not made from; accuracy, balanced
  accuracy and (for two classes) the area under the ROC curve of each, and their
  differences. Needs scikit-learn.
* **Propensity score mean squared error** (Woo, Reiter, Oganian and Karr 2009; Snoke, Raab,
  Nowok, Dibben and Slavkovic 2018): the two tables stacked, a logistic model of "this row is
  from the release" on every compared column, and ``pMSE = (1/N) Σ (p̂_i − c)²`` with
  ``c = n_r / N``. Under the null of indistinguishable tables its expectation is
  ``(k − 1)(1 − c)² c / N`` for ``k`` parameters; their ratio ``S_pMSE`` is near 1 for a release
  a classifier cannot tell apart from the original, and grows as it can.

Rows with a missing value in a model's columns are left out of that model (listwise
deletion), as statistical packages do by default. A categorical column enters as one
indicator per level but its first (in sorted order), named ``column[T.level]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from microagg.errors import InputError

__all__ = ["ClassificationUtility", "Coefficient", "PropensityUtility", "RegressionUtility",
           "classification_utility", "pmse", "regression_utility"]

_TERM = re.compile(r'^(?:C\((?P<cat>.+)\)|Q\((?P<q>["\'])(?P<quoted>.+)(?P=q)\)|(?P<name>.+))$')


@dataclass(frozen=True)
class Coefficient:
    """One coefficient of a regression on the original and on the release."""

    term: str
    original: float | None
    original_ci: tuple[float, float] | None
    released: float | None
    released_ci: tuple[float, float] | None
    ci_overlap: float | None  # Karr et al. (2006); None when one side lacks the term
    standardized_difference: float | None  # |β_r - β_o| / se_o


@dataclass(frozen=True)
class RegressionUtility:
    """A regression fitted on the original and on the release (module docstring)."""

    formula: str
    level: float
    n_original: int
    n_released: int
    coefficients: tuple[Coefficient, ...]

    @property
    def mean_ci_overlap(self) -> float | None:
        """The CI overlap averaged over the coefficients both fits have."""
        values = [c.ci_overlap for c in self.coefficients if c.ci_overlap is not None]
        return float(np.mean(values)) if values else None

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain JSON values (``evaluate --json``'s ``regression``)."""
        out = asdict(self)
        out["coefficients"] = [{**asdict(c), "original_ci": _pair(c.original_ci),
                                "released_ci": _pair(c.released_ci)}
                               for c in self.coefficients]
        out["mean_ci_overlap"] = self.mean_ci_overlap
        return out


@dataclass(frozen=True)
class PropensityUtility:
    """How well a logistic model tells the release from the original (module docstring)."""

    pmse: float
    expected_pmse: float  # its expectation when the tables are indistinguishable
    standardized_pmse: float  # S_pMSE = pmse / expected_pmse
    parameters: int
    n_original: int
    n_released: int
    columns: tuple[str, ...]
    converged: bool

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain JSON values (``evaluate --json``'s ``pmse``)."""
        return {**asdict(self), "columns": list(self.columns)}


def _pair(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [float(ci[0]), float(ci[1])]


def _parse(formula: str, columns: Sequence[str]) -> tuple[str, list[tuple[str, str, bool]]]:
    """``y ~ a + C(b) + Q("c-d")`` as the response and the terms (label, column, categorical)."""
    if formula.count("~") != 1:
        raise InputError(f"a regression is written 'y ~ a + b', got {formula!r}")
    left, right = (part.strip() for part in formula.split("~"))
    terms = []
    for text in [left, *(t.strip() for t in right.split("+"))]:
        match = _TERM.match(text)
        if not text or match is None:
            raise InputError(f"an empty term in the regression {formula!r}")
        column = match["cat"] or match["quoted"] or match["name"]
        column = column.strip()
        if column not in columns:
            raise InputError(f"the regression {formula!r} names '{column}', which is not a "
                             "column of both tables")
        terms.append((text, column, match["cat"] is not None))
    (_, response, _), *rest = terms
    if not rest:
        raise InputError(f"the regression {formula!r} has no explanatory term")
    return response, rest


def _is_categorical(values: pd.Series, forced: bool) -> bool:
    return forced or not (pd.api.types.is_numeric_dtype(values)
                          and not pd.api.types.is_bool_dtype(values))


def _levels(tables: Sequence[pd.DataFrame], terms: Sequence[tuple[str, str, bool]]
            ) -> dict[str, list[str]]:
    """The levels of every categorical term's column, as text: the first table's in sorted
    order (its first is the baseline of every table), then those only later tables hold. A
    column that is numeric in one table and text in another is categorical in all."""
    levels = {}
    for _, column, forced in terms:
        if any(_is_categorical(t[column], forced) for t in tables):
            found = [sorted(set(t[column].dropna().astype(str))) for t in tables]
            levels[column] = list(dict.fromkeys(level for group in found for level in group))
    return levels


def _design(frame: pd.DataFrame, terms: Sequence[tuple[str, str, bool]],
            levels: dict[str, list[str]]) -> tuple[np.ndarray, list[str]]:
    """The design matrix (an intercept first) of complete rows ``frame``, with its column
    names: a categorical term (a column of ``levels``) as one indicator per level but the
    first; a level ``frame`` does not hold has no column."""
    blocks: list[np.ndarray] = [np.ones((len(frame), 1))]
    names = ["Intercept"]
    for label, column, _ in terms:
        values = frame[column]
        if column not in levels:
            blocks.append(values.to_numpy(dtype=float)[:, None])
            names.append(label)
            continue
        text = values.astype(str)
        held = [level for level in levels[column] if bool((text == level).any())]
        # without the first table's baseline, this table's first level is the baseline, and
        # its terms are named for it: they are compared with none of the first table's
        against = "" if not held or held[0] == levels[column][0] else f"; against {held[0]}"
        for level in held[1:]:
            blocks.append((text == level).to_numpy(dtype=float)[:, None])
            names.append(f"{label}[T.{level}{against}]")
    return np.hstack(blocks), names


def _ols(y: np.ndarray, X: np.ndarray, level: float
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least-squares estimates, their standard errors and confidence intervals."""
    from scipy import stats

    n, p = X.shape
    if n <= p:
        raise InputError(f"a regression with {p} parameters needs more than {p} complete rows, "
                         f"got {n}")
    q, r = np.linalg.qr(X)
    if np.min(np.abs(np.diag(r))) <= 1e-10 * np.max(np.abs(np.diag(r))):
        raise InputError("the regression's terms are collinear on one of the tables (a "
                         "category that never occurs, or a constant column): drop a term")
    beta = np.linalg.solve(r, q.T @ y)
    residual = y - X @ beta
    sigma2 = float(residual @ residual) / (n - p)
    inverse = np.linalg.inv(r)
    se = np.sqrt(sigma2 * np.sum(inverse * inverse, axis=1))
    half = stats.t.ppf(0.5 + level / 2, n - p) * se
    return beta, se, np.column_stack([beta - half, beta + half])


Fit = tuple[float, float, np.ndarray]  # estimate, standard error, interval


def _coefficient(term: str, o: Fit | None, r: Fit | None) -> Coefficient:
    """One term compared: both fits, or the one that has it."""
    def ci(fit: Fit | None) -> tuple[float, float] | None:
        return None if fit is None else (float(fit[2][0]), float(fit[2][1]))

    overlap = difference = None
    if o is not None and r is not None:
        overlap = _overlap(o[2], r[2])
        difference = float(abs(r[0] - o[0]) / o[1])
    return Coefficient(term, None if o is None else float(o[0]), ci(o),
                       None if r is None else float(r[0]), ci(r), overlap, difference)


def _overlap(a: np.ndarray, b: np.ndarray) -> float:
    width = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return float(0.5 * (width / (a[1] - a[0]) + width / (b[1] - b[0])))


def regression_utility(original: pd.DataFrame, released: pd.DataFrame, formula: str, *,
                       level: float = 0.95) -> RegressionUtility:
    """The regression ``formula`` fitted on ``original`` and on ``released``, compared
    coefficient by coefficient (Karr et al. 2006).

    Parameters
    ----------
    original, released : pandas.DataFrame
        The tables; their rows need not correspond.
    formula : str
        ``y ~ a + b + …``; ``C(a)`` makes a numeric column categorical, ``Q("a-b")`` names a
        column that is not a Python name. A column that is not numeric is categorical.
    level : float
        The confidence level of the intervals.

    Returns
    -------
    RegressionUtility
        Per coefficient (the intercept first) both estimates, both intervals, their overlap
        and the standardized difference.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=500)
    >>> original = pd.DataFrame({"x": x, "y": 2 * x + rng.normal(size=500)})
    >>> same = regression_utility(original, original, "y ~ x")
    >>> same.mean_ci_overlap
    1.0
    >>> noisy = original.assign(x=x + rng.normal(scale=2, size=500))
    >>> regression_utility(original, noisy, "y ~ x").coefficients[1].ci_overlap
    0.0
    """
    if not 0 < level < 1:
        raise InputError(f"the confidence level is between 0 and 1, got {level}")
    shared = [c for c in original.columns if c in released.columns]
    response, terms = _parse(formula, shared)
    used = list(dict.fromkeys([response, *(column for _, column, _ in terms)]))
    fits = []
    completes = [frame[used].dropna() for frame in (original, released)]
    levels = _levels(completes, terms)
    for complete in completes:
        if not pd.api.types.is_numeric_dtype(complete[response]):
            raise InputError(f"the response '{response}' of a regression is numeric")
        X, names = _design(complete, terms, levels)
        fits.append((dict(zip(names, zip(*_ols(complete[response].to_numpy(dtype=float), X,
                                                  level), strict=True), strict=True)),
                     len(complete), names))
    (a, n_a, names_a), (b, n_b, names_b) = fits
    coefficients = [_coefficient(term, a.get(term), b.get(term))
                    for term in dict.fromkeys([*names_a, *names_b])]
    return RegressionUtility(formula, level, n_a, n_b, tuple(coefficients))


def _logistic(X: np.ndarray, t: np.ndarray, iterations: int = 100
              ) -> tuple[np.ndarray, bool]:
    """Maximum-likelihood logistic regression by Newton's method: the fitted probabilities
    and whether the estimates converged."""
    beta = np.zeros(X.shape[1])
    converged = False
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(X @ beta)))
        weight = p * (1.0 - p)
        step = np.linalg.lstsq((X * weight[:, None]).T @ X, X.T @ (t - p), rcond=None)[0]
        beta = beta + step
        if np.max(np.abs(step)) < 1e-12 * max(1.0, float(np.max(np.abs(beta)))):
            converged = True
            break
    return 1.0 / (1.0 + np.exp(-(X @ beta))), converged


def pmse(original: pd.DataFrame, released: pd.DataFrame,
         columns: Sequence[str] | None = None) -> PropensityUtility:
    """The propensity score mean squared error of ``released`` against ``original`` with a
    logistic model of main effects (Woo et al. 2009; Snoke et al. 2018).

    Parameters
    ----------
    original, released : pandas.DataFrame
        The tables; their rows need not correspond.
    columns : sequence of str, optional
        The compared columns (default: every column of both). A column that is not numeric
        enters as indicators of its levels, taken over both tables.

    Returns
    -------
    PropensityUtility
        ``pmse``, its null expectation and their ratio ``standardized_pmse``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> original = pd.DataFrame({"x": rng.normal(size=2000)})
    >>> alike = pd.DataFrame({"x": rng.normal(size=2000)})
    >>> shifted = pd.DataFrame({"x": rng.normal(1.0, size=2000)})
    >>> pmse(original, alike).standardized_pmse < 5 < pmse(original, shifted).standardized_pmse
    True
    """
    chosen = list(columns) if columns is not None else [
        c for c in original.columns if c in released.columns]
    missing = [c for c in chosen if c not in original.columns or c not in released.columns]
    if missing or not chosen:
        raise InputError(f"pMSE compares columns of both tables; '{missing[0]}' is not one"
                         if missing else "pMSE needs at least one column")
    tables = [original[chosen].dropna(), released[chosen].dropna()]
    n_o, n_r = len(tables[0]), len(tables[1])
    terms = [(c, c, False) for c in chosen]
    levels = _levels(tables, terms)
    both = pd.concat([t.astype({c: str for c in levels}) for t in tables], ignore_index=True)
    X, _ = _design(both, terms, levels)
    scale = X[:, 1:].std(axis=0)
    scale[scale == 0] = 1.0
    X[:, 1:] = (X[:, 1:] - X[:, 1:].mean(axis=0)) / scale  # the fit is the same, better posed
    t = np.r_[np.zeros(n_o), np.ones(n_r)]
    p, converged = _logistic(X, t)
    n = n_o + n_r
    c = n_r / n
    value = float(np.mean((p - c) ** 2))
    k = X.shape[1]
    expected = (k - 1) * (1 - c) ** 2 * c / n
    return PropensityUtility(value, expected, value / expected, k, n_o, n_r, tuple(chosen),
                             converged)


@dataclass(frozen=True)
class ClassificationUtility:
    """A classifier trained on the original and on the release, scored on held-out original
    records (module docstring)."""

    target: str
    features: tuple[str, ...]
    model: str
    n_train: int
    n_released: int
    n_holdout: int
    on_original: dict[str, float | None]  # accuracy, balanced_accuracy, auc
    on_released: dict[str, float | None]

    @property
    def accuracy_lost(self) -> float:
        """Accuracy of the model trained on the original minus that of the release's."""
        return float(self.on_original["accuracy"] or 0.0) - float(
            self.on_released["accuracy"] or 0.0)

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain JSON values (``evaluate --json``'s ``classification``)."""
        return {**asdict(self), "features": list(self.features),
                "accuracy_lost": self.accuracy_lost}


def _scores(model: Any, X: np.ndarray, y: np.ndarray) -> dict[str, float | None]:
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score

    predicted = model.predict(X)
    auc = None
    if len(model.classes_) == 2 and len(np.unique(y)) == 2:
        auc = float(roc_auc_score(y == model.classes_[1], model.predict_proba(X)[:, 1]))
    return {"accuracy": float(accuracy_score(y, predicted)),
            "balanced_accuracy": float(balanced_accuracy_score(y, predicted)), "auc": auc}


def classification_utility(train: pd.DataFrame, released: pd.DataFrame,
                           holdout: pd.DataFrame, target: str,
                           features: Sequence[str] | None = None, *,
                           seed: int = 0) -> ClassificationUtility:
    """A classifier of ``target`` trained on ``train`` (the original the release was made
    from) and on ``released``, both scored on ``holdout`` (original records the release was
    not made from).

    The classifier is scikit-learn's histogram gradient boosting, categories given to it as
    categories, seeded with ``seed``: the same data give the same figures.

    Parameters
    ----------
    train, released, holdout : pandas.DataFrame
        The original's part the release protects, the release, and the held-out originals.
    target : str
        The column to predict (its values are the classes).
    features : sequence of str, optional
        The predictors (default: every other column of the three tables).
    seed : int
        The classifier's seed.

    Returns
    -------
    ClassificationUtility
        Accuracy, balanced accuracy and AUC (two classes) of both models on ``holdout``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=3000)
    >>> table = pd.DataFrame({"x": x, "y": np.where(x + rng.normal(0, .5, 3000) > 0, "a", "b")})
    >>> train, holdout = table[:2000], table[2000:]
    >>> same = classification_utility(train, train, holdout, "y")
    >>> same.accuracy_lost, same.on_original["accuracy"] > 0.8
    (0.0, True)
    """
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
    except ImportError:  # pragma: no cover - the optional dependency absent
        raise InputError("the classification utility needs scikit-learn: pip install "
                         "scikit-learn") from None
    tables = (train, released, holdout)
    chosen = list(features) if features is not None else [
        c for c in train.columns if c != target and all(c in t.columns for t in tables)]
    absent = [c for c in [target, *chosen] if any(c not in t.columns for t in tables)]
    if absent or not chosen:
        raise InputError(f"'{absent[0]}' is not a column of the three tables" if absent
                         else "the classification needs at least one feature")
    levels = {c: sorted(set().union(*(t[c].dropna().astype(str).unique() for t in tables)))
              for c in chosen if not all(pd.api.types.is_numeric_dtype(t[c]) for t in tables)}
    # the classifier takes at most 255 categories a column; more are ordered codes to it
    categorical = [c in levels and len(levels[c]) <= 255 for c in chosen]

    def encode(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        rows = frame[frame[target].notna()]
        columns = [pd.Categorical(rows[c].astype(str).where(rows[c].notna()),
                                  categories=levels[c]).codes.astype(float)
                   if c in levels else rows[c].to_numpy(dtype=float) for c in chosen]
        X = np.column_stack(columns)
        for j, c in enumerate(chosen):
            if c in levels:
                X[X[:, j] < 0, j] = np.nan  # a missing category is missing to the model
        return X, rows[target].astype(str).to_numpy()

    (X_t, y_t), (X_r, y_r), (X_h, y_h) = (encode(t) for t in tables)
    found = []
    for X, y in ((X_t, y_t), (X_r, y_r)):
        if len(np.unique(y)) < 2:
            raise InputError(f"'{target}' has one class in a training table: nothing to "
                             "classify")
        model = HistGradientBoostingClassifier(categorical_features=np.array(categorical),
                                               random_state=seed)
        found.append(_scores(model.fit(X, y), X_h, y_h))
    return ClassificationUtility(target, tuple(chosen), "histogram gradient boosting",
                                 len(y_t), len(y_r), len(y_h), found[0], found[1])
