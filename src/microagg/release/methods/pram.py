"""Invariant PRAM of key variables (sdcMicro ``pram``; Gouweleeuw et al. 1998)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd

from microagg.core.pram import invariant_matrix, pram_codes
from microagg.data.schema import category_text
from microagg.data.table import missing_mask
from microagg.errors import InputError
from microagg.release.families.keys import KeyData, KeyMethod, KeyStep
from microagg.release.methods.base import release_method
from microagg.release.params import Interval, param
from microagg.release.reports.key_reports import PramMatrix, PramReport

__all__ = ["MAX_CATEGORIES", "InvariantPram", "categories_of", "pram_notes", "rebuilt",
           "require_few_categories", "why_fixed"]

MAX_CATEGORIES = 500
"""The most categories a column may have for PRAM (its matrix has their square)."""


@release_method
class InvariantPram(KeyMethod):
    """Invariant PRAM: each value of the keys is replaced, record by record and at random,
    by a category drawn from its row of a transition matrix R that leaves the expected
    marginal of the column unchanged (p'R = p'): R = α P Q + (1 − α) I, P keeping a
    category with probability ``retention`` and moving it uniformly otherwise, Q the Bayes
    inverse of P (:mod:`microagg.core.pram`, where the formula is derived). The marginal p is
    the column's, in each stratum when strata are declared (one matrix per stratum), and
    weighted by the sampling weight when one is declared (so the expected weighted totals,
    the estimates of the population, are kept). A column's categories are its declared
    categories (a categorical column's) or its distinct values; missing values stay
    missing. The matrices are in the report; a known seed reproduces the draws.

    PRAM gives no ex-ante guarantee: a record keeps its category with probability R_ii,
    and the risk of the keys after PRAM is measured, not bounded.

    A column whose values present are of one category (in each stratum), or that has no
    value present, cannot change: its matrix keeps every record (R_ii = 1). When no key can
    change, the release is refused (an ``InputError`` naming each key and why), as masking
    refuses a table it would leave as it is; a key that cannot change beside others that
    can is named in a note. (A draw that happens to keep every value of keys that could
    change is a PRAM release all the same: the report counts the values changed.)

    References
    ----------
    Kooiman, P., Willenborg, L. and Gouweleeuw, J. (1997), PRAM: a method for disclosure
    limitation of microdata, Statistics Netherlands research paper 9705; Gouweleeuw, J.,
    Kooiman, P., Willenborg, L. and de Wolf, P.-P. (1998), Post randomisation for
    statistical disclosure control: theory and implementation, *Journal of Official
    Statistics* 14(4), 463-478, §3 (invariant PRAM); sdcMicro's ``pram`` (``pd``, ``alpha``).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"region": ["a"] * 60 + ["b"] * 30 + ["c"] * 10})
    >>> release = InvariantPram(retention=0.8, alpha=0.5).release(frame, keys=["region"],
    ...                                                            rng=1)
    >>> matrix = release.report.matrices[0]
    >>> [round(float(x), 6) for x in np.array(matrix.marginal) @ np.array(matrix.matrix)]
    [0.6, 0.3, 0.1]
    """

    name: ClassVar[str] = "invariant-pram"
    summary: ClassVar[str] = "invariant PRAM: categories redrawn, expected marginal kept"
    command: ClassVar[str] = "pram"
    report_type: ClassVar[type[PramReport]] = PramReport
    randomized: ClassVar[bool] = True

    retention: float = param(Interval(float, 0.0, 1.0, closed="left"), default=0.8,
                             help="The probability with which the matrix P keeps a "
                                  "category (sdcMicro's pd, drawn there between pd and 1).")
    alpha: float = param(Interval(float, 0.0, 1.0, closed="right"), default=0.5,
                         help="The share of the invariant matrix in R = alpha P Q + "
                              "(1 - alpha) I (1: P Q itself).")

    def at_scale_refusal(self) -> str | None:
        """``None``: the matrices come from the keys' frequencies counted on the cluster and
        every partition draws on its own (:mod:`microagg.at_scale.pram`)."""
        return None

    def matrix(self, mass: np.ndarray) -> tuple[np.ndarray, bool]:
        """The transition matrix of a column whose categories hold ``mass`` (counts or
        weights), and whether it can move a value present.

        Parameters
        ----------
        mass : ndarray
            The records (or their weights) of each category.

        Returns
        -------
        tuple
            The matrix R, and whether a category present leaves itself with R_ii < 1.
        """
        matrix = invariant_matrix(mass, self.retention, self.alpha)
        return matrix, bool((np.diag(matrix)[mass > 0] < 1.0 - 1e-12).any())

    def protect(self, data: KeyData, rng: np.random.Generator) -> KeyStep:
        weights = data.design.weights
        columns: dict[str, pd.Series] = {}
        matrices: list[PramMatrix] = []
        changed: dict[str, int] = {}
        fixed: dict[str, str] = {}  # the keys PRAM cannot change, and why
        for key in data.keys:
            series = data.frame[key]
            categories, codes = categories_of(series)
            require_few_categories(key, len(categories))
            drawn = codes.copy()
            movable = False
            for rows, stratum in data.strata():
                present = rows[codes[rows] >= 0]
                if present.size == 0:
                    continue
                mass = np.bincount(codes[present], minlength=len(categories),
                                   weights=None if weights is None else weights[present])
                matrix, moves = self.matrix(mass)
                movable |= moves
                drawn[present] = pram_codes(codes[present], matrix, rng)
                matrices.append(PramMatrix(
                    key, [category_text(c) for c in categories],
                    (mass / mass.sum()).tolist(), matrix.tolist(), stratum))
            if not movable:
                fixed[key] = why_fixed(codes, categories, data.design.strata is not None)
            changed[key] = int((drawn != codes).sum())
            columns[key] = rebuilt(series, categories, drawn)
        marginal, notes = pram_notes(data.keys, fixed, data.design.weight,
                                     data.design.strata is not None)
        return KeyStep(columns, {
            "retention": self.retention, "alpha": self.alpha,
            "marginal": marginal, "matrices": matrices,
            "changed_values": changed}, notes)


def require_few_categories(key: str, count: int) -> None:
    """Refuse a column of more than :data:`MAX_CATEGORIES` categories.

    Parameters
    ----------
    key : str
        The column.
    count : int
        Its categories.

    Raises
    ------
    InputError
        When it has too many.
    """
    if count > MAX_CATEGORIES:
        raise InputError(f"column '{key}' has {count:,} categories; PRAM redraws categories "
                         f"(at most {MAX_CATEGORIES}): recode it first (microagg recode)")


def pram_notes(keys: list[str], fixed: dict[str, str], weight: str | None, strata: bool
               ) -> tuple[str, list[str]]:
    """The marginal PRAM keeps and the notes of its report; refused when no key can change.

    Parameters
    ----------
    keys : list of str
        The keys.
    fixed : dict
        The keys PRAM cannot change, and why (:func:`why_fixed`).
    weight : str or None
        The sampling weight's column.
    strata : bool
        Whether there is a matrix per stratum.

    Returns
    -------
    tuple
        The marginal's description and the notes.

    Raises
    ------
    InputError
        When no key can change.
    """
    if len(fixed) == len(keys):
        raise InputError("PRAM can change no value: " + "; ".join(
            f"column '{key}' {why}" for key, why in fixed.items()) + ": the table would be "
            "written as it is and called protected; choose keys with two categories or "
            "more")
    marginal = "weighted by '" + weight + "'" if weight else "counts of the records"
    notes = [f"the expected marginal of each column ({marginal}) is kept: p'R = p' for "
             "the matrix of each column" + (" and stratum" if strata else "")]
    notes += [f"column '{key}' {why}: PRAM cannot change it" for key, why in fixed.items()]
    return marginal, notes


def why_fixed(codes: np.ndarray, categories: pd.Index, strata: bool) -> str:
    """Why PRAM cannot change a column of category ``codes``: no value, or one category."""
    present = np.unique(codes[codes >= 0])
    if present.size == 0:
        return "has no value present"
    if present.size == 1:
        return f"has one category ({category_text(categories[int(present[0])])})"
    return "has one category in each stratum"


def categories_of(series: pd.Series) -> tuple[pd.Index, np.ndarray]:
    """The categories of a column (its declared ones, else its distinct values in order)
    and each row's category number, -1 where the value is missing."""
    missing = missing_mask(series)
    if isinstance(series.dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy().astype(np.int64)
        codes[missing] = -1
        return series.cat.categories, codes
    codes_, uniques = pd.factorize(series[~missing], sort=True)
    codes = np.full(len(series), -1, dtype=np.int64)
    codes[~missing] = codes_
    return pd.Index(uniques), codes


def rebuilt(series: pd.Series, categories: pd.Index, codes: np.ndarray) -> pd.Series:
    """The column with each present value replaced by category ``codes``; missing values,
    the dtype and the index as they were."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return pd.Series(pd.Categorical.from_codes(codes, dtype=series.dtype),
                         index=series.index, name=series.name)
    out = series.copy()
    present = np.flatnonzero(codes >= 0)
    values = categories.take(codes[present]).to_numpy()
    if out.dtype != object:  # the categories are the column's own values: a lossless cast
        values = pd.array(values).astype(out.dtype)
    out.iloc[present] = values
    return out
