"""A masked release by one of the methods of :mod:`microagg.core.masking` (003 §5): the chosen
numeric columns are masked, identifiers dropped, every other column and every row kept in
order. A masking method gives no ex-ante guarantee; the report says so and points to the
measures of its risk."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import ClassVar

import numpy as np
import pandas as pd

from microagg.core.rng import make_rng
from microagg.data.column_checks import check_categories
from microagg.data.roles import NEVER_MASKED
from microagg.data.schema import Kind, Role, Schema
from microagg.data.table import encode
from microagg.errors import InputError
from microagg.release.base import Release
from microagg.release.inputs import masked_columns, refuse_suspects, resolve_schema
from microagg.release.methods.base import Family, ReleaseMethod
from microagg.release.reports.report import MaskingReport

__all__ = ["UNCHANGED", "MaskingMethod", "check_extent", "combined_extent", "masked_frame",
           "masking_extent"]

UNCHANGED = 1e-9
"""A masking that moves no value by more than this fraction of its column's range changes
nothing a reader could see (a CSV release prints 15 significant digits)."""


@dataclass(frozen=True, kw_only=True)
class MaskingMethod(ReleaseMethod):
    """A masking of numeric columns (003 §5): the family's pipeline (:meth:`release`) around
    the method's own step (:meth:`mask`), whose one parameter is named by ``parameter``."""

    family: ClassVar[Family] = Family.MASKING
    parameter: ClassVar[str]
    unchanged_hint: ClassVar[str] = "use a larger parameter"
    # a method that compares each value with thresholds: a missing value stays missing and an
    # infinite or huge value is coded like any other; the others refuse them
    takes_missing: ClassVar[bool] = False

    def mask(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The masked values of the ``(n, p)`` matrix, rows in the same order."""
        raise NotImplementedError

    @property
    def value(self) -> float:
        return float(getattr(self, self.parameter))

    def masked_values(self, frame: pd.DataFrame, *, columns: Sequence[str] | None = None,
                      schema: Schema | None = None,
                      roles: Mapping[str, Role | str] | None = None
                      ) -> tuple[Schema, list[str], np.ndarray]:
        """The columns :meth:`release` masks and their values as it reads them.

        Parameters
        ----------
        frame : DataFrame
            The table.
        columns : sequence of str, optional
            The columns to mask (:meth:`release` says the default).
        schema : Schema, optional
            The declared schema.
        roles : mapping, optional
            Roles over the schema.

        Returns
        -------
        tuple
            The schema resolved (roles applied), the masked columns' names, and their
            ``(n, p)`` matrix of values (missing values as NaN where the method takes them).
        """
        from microagg.data.formats import as_declared
        from microagg.data.io import DIALECT_KEY
        from microagg.release.dp.cells import declared_cells

        given = set(schema.names) if schema is not None else set()
        chosen = schema is not None or bool(columns)
        schema, declared = resolve_schema(frame, schema, roles, strict=not chosen)
        named = set(columns or ())
        schema = Schema(tuple(
            replace(a, kind=Kind.NUMERIC, domain=None, observed=False)
            if a.name in named and not a.is_numeric and (a.name not in given or a.inferred)
            else a for a in schema))
        names = _masked_names(frame, schema, columns, declared, self.name, roles)
        read = as_declared(frame[names], schema)  # labelled SPSS/Stata columns: their codes
        cells = pd.DataFrame({c: declared_cells(read[c], schema[c], frame.attrs.get(
            DIALECT_KEY)) for c in names}, index=frame.index)
        for name in names:  # a cell that is no number: the column is not numeric
            text = [v for v in cells[name] if not isinstance(v, float)]
            if text:
                row = int(np.flatnonzero([not isinstance(v, float) for v in cells[name]])[0])
                raise InputError(f"column '{name}' is not numeric (row {row + 1} holds "
                                 f"'{text[0]}'); {self.name} masks numeric attributes only "
                                 "(choose others with `columns`)")
        undeclared = Schema(tuple(replace(schema[c], domain=None) for c in names))
        values = encode(cells, undeclared, missing=self.takes_missing,
                        finite=not self.takes_missing).numeric_matrix(names)
        return schema, names, values

    def release(self, frame: pd.DataFrame, *, columns: Sequence[str] | None = None,
                schema: Schema | None = None, roles: Mapping[str, Role | str] | None = None,
                rng: np.random.Generator | int | None = None,
                refuse_unchanged: bool = True) -> Release[MaskingReport]:
        """Mask ``columns`` of ``frame`` (default: the schema's quasi-identifiers, else every
        numeric column whose role may be masked, refusing one that looks like an identifier
        or a weight until ``roles`` gives its role; the report lists the columns written
        unchanged). An integer ``rng`` is a seed (the report says so); without one, OS
        entropy. A masking that changes no value is refused, or with ``refuse_unchanged``
        False (a recipe's step: whether it changed anything must not decide whether the
        recipe runs) said in a warning. A column the masking does not read, when the schema
        or ``columns`` say which it reads, is not read: its values never stop the release.
        A column ``columns`` names is numeric by that (unless a schema declares it otherwise),
        and every cell of a masked column is read on its own as a number
        (:mod:`microagg.release.dp.cells`), never by the type a reader guessed for the column."""
        schema, names, values = self.masked_values(frame, columns=columns, schema=schema,
                                                   roles=roles)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
            try:
                masked = self.mask(values, make_rng(rng))
            except np.linalg.LinAlgError:  # a covariance that overflowed has no eigenvalues
                masked = np.full_like(values, np.nan)
        check_extent(masking_extent(values, masked), names, self, refuse_unchanged)
        identifiers = [a.name for a in schema if a.role is Role.IDENTIFIER]
        out = masked_frame(frame, identifiers, names, masked)
        report = MaskingReport(
            method=self.name, parameter=self.parameter, value=self.value, columns=names,
            records=len(frame), identifiers_dropped=identifiers,
            released_unchanged=[c for c in out.columns if c not in names],
            seeded=isinstance(rng, int | np.integer), parameters=_plain(self.parameters()))
        return Release(out, np.arange(len(frame), dtype=np.int64), report)


def masked_frame(frame: pd.DataFrame, identifiers: Sequence[str], names: Sequence[str],
                 masked: np.ndarray) -> pd.DataFrame:
    """The table a masking writes: ``frame`` without its identifiers, the masked columns
    replaced by their masked values, every other column and every row kept in order.

    Parameters
    ----------
    frame : DataFrame
        The table.
    identifiers : sequence of str
        The columns dropped.
    names : sequence of str
        The columns masked, in the order of the columns of ``masked``.
    masked : ndarray
        Their ``(n, p)`` masked values, rows in the order of ``frame``.

    Returns
    -------
    DataFrame
        The table written.
    """
    out = frame.drop(columns=list(identifiers)).copy()
    for j, name in enumerate(names):
        out[name] = masked[:, j]
    return out


def _plain(parameters: dict[str, object]) -> dict[str, object]:
    """Parameters as JSON holds them (an option's value, not the enum member)."""
    return {k: v.value if isinstance(v, StrEnum) else v for k, v in parameters.items()}


def _masked_names(frame: pd.DataFrame, schema: Schema, columns: Sequence[str] | None,
                  declared: bool, method: str,
                  roles: Mapping[str, Role | str] | None = None) -> list[str]:
    if columns or declared:
        names = masked_columns(schema, columns, declared=declared)
    else:
        names = [a.name for a in schema if a.role not in NEVER_MASKED and a.is_numeric]
        refuse_suspects(frame, names, roles)
        if not names:
            for attribute in schema:  # numbers the file holds in a form not read as numbers
                if attribute.role is not Role.IDENTIFIER:
                    check_categories(attribute.name, frame[attribute.name])
            raise InputError("no numeric column to mask: name them with `columns`")
    text = [c for c in names if not schema[c].is_numeric]
    if text:
        raise InputError(f"column '{text[0]}' is not numeric; {method} masks numeric "
                         "attributes only (choose others with `columns`)")
    return names


def masking_extent(values: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """How far a masking moved each column, in the figures :func:`check_extent` judges.

    Parameters
    ----------
    values, masked : ndarray
        The ``(n, p)`` values and their masked values, rows in the same order.

    Returns
    -------
    ndarray
        A ``(5, p)`` array, one column per column masked: whether a finite value became
        infinite or missing (1 or 0), the smallest and the largest finite value, the largest
        absolute finite value, and the most a finite value moved. The extents of parts of
        the rows, combined by :func:`combined_extent`, are the extent of all of them.
    """
    present = np.isfinite(values)
    with np.errstate(invalid="ignore"):  # inf - inf where an infinite value stayed
        moved = np.where(present, np.abs(masked - values), 0.0)
    return np.vstack([
        (~np.isfinite(masked) & present).any(axis=0),
        np.where(present, values, np.inf).min(axis=0, initial=np.inf),
        np.where(present, values, -np.inf).max(axis=0, initial=-np.inf),
        np.where(present, np.abs(values), 0.0).max(axis=0, initial=0.0),
        moved.max(axis=0, initial=0.0)]).astype(np.float64)


def combined_extent(extents: Sequence[np.ndarray]) -> np.ndarray:
    """The extent of :func:`masking_extent` over the rows of every part.

    Parameters
    ----------
    extents : sequence of ndarray
        The ``(5, p)`` extent of each part (at least one).

    Returns
    -------
    ndarray
        Their ``(5, p)`` extent together.
    """
    stack = np.stack(extents)
    return np.vstack([stack[:, 0].max(axis=0), stack[:, 1].min(axis=0),
                      stack[:, 2].max(axis=0), stack[:, 3].max(axis=0),
                      stack[:, 4].max(axis=0)])


def check_extent(extent: np.ndarray, names: Sequence[str], method: MaskingMethod,
                 refuse_unchanged: bool = True) -> None:
    """Refuse a masked table that is not one: values that overflowed, or no value changed
    (said in a warning instead when not ``refuse_unchanged``).

    Parameters
    ----------
    extent : ndarray
        The masking's :func:`masking_extent` over every row.
    names : sequence of str
        The columns masked, in the extent's order.
    method : MaskingMethod
        The method (named in the message).
    refuse_unchanged : bool
        Refuse a masking that changed no value (else warn).

    Raises
    ------
    InputError
        For a value that overflowed, or no value changed (``refuse_unchanged``).
    """
    what = f"{method.name} with {method.parameter} = {method.value:g}"
    bad, low, high, largest, moved = extent
    if (bad > 0).any():
        column = names[int(np.flatnonzero(bad > 0)[0])]
        raise InputError(f"{what} overflows: column '{column}' would hold values beyond the "
                         "floating-point range; use a smaller parameter")
    spread = np.where(high >= low, high - low, 0.0)
    if np.all(moved <= UNCHANGED * np.where(spread > 0, spread, largest)):
        said = (f"{what} changes no value beyond rounding (every value moves by less than "
                f"{UNCHANGED:g} of its column's range)")
        if not refuse_unchanged:
            warnings.warn(f"{said}: the columns are written as they are", UserWarning,
                          stacklevel=3)
            return
        raise InputError(f"{said}: the table would be written as it is and called masked; "
                         f"{method.unchanged_hint}")
