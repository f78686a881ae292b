"""Roles read off a table that has no schema: columns that must not be masked by default.

Without a schema every column but the identifiers is a quasi-identifier, so nothing leaves
unmasked by default. That default is unsafe for three kinds of column, which a release must
never average: record identifiers (``id``, a running number 1…n, a column of distinct names),
sampling weights (``fnlwgt``, ``weight``) and household identifiers (``hhid``). Their roles
cannot be decided from the data alone — a column called ``weight`` may be a sampling weight or
a body weight, an integer column of distinct values may be a row number or an amount — so
they are *suspected*, not assigned: a release that would mask a suspected column without
being told to refuses it, naming the column, the reason and the way to declare its role
(:func:`suspect`). ``microagg schema IN -o S.yaml`` writes the roles suspected here as a
schema for the data owner to read and edit (:func:`suggested_roles`).

A suspicion read off a column's *name* is a function of the header; one read off its
*values* (distinct, numbering the rows) is a function of the records, which one record can
switch. So only names give roles by themselves (:func:`named_role`: the web app's and
``microagg schema``'s default roles, and a DP release's refusals); what the values suggest is
said beside, for the data owner to apply.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from microagg.data.schema import Role

__all__ = ["MASKABLE", "NEVER_MASKED", "named_role", "suggested_roles", "suspect"]

NEVER_MASKED = frozenset({Role.IDENTIFIER, Role.WEIGHT, Role.STRATUM, Role.HOUSEHOLD})
"""Roles a release never masks (identifiers are dropped, the others written unchanged)."""

MASKABLE = frozenset(Role) - NEVER_MASKED

_IDENTIFIER_NAME = re.compile(
    r"(?i)^(id|uid|uuid|guid|key|serial|record|recno|rec_?id|row_?id|row_?number|index|"
    r"case_?id|person_?id|patient_?id|respondent_?id|.*[_\-. ]id|id[_\-. ].*)$")
_CAMEL_IDENTIFIER = re.compile(r"^([a-z]+Id|[a-z]+ID|[A-Z]+ID)$")  # personId, UTILITYID
_WEIGHT_NAME = re.compile(
    r"(?i)^(wt|wgt|wght|weight|weights|pweight|fweight|.*wgt|.*[_\-. ]wt|.*weight|"
    r"weight[_\-. ].*)$")
_HOUSEHOLD_NAME = re.compile(r"(?i)^(hh|hhid|hh[_\-. ]?id|household|household[_\-. ]?id|"
                             r".*[_\-. ]hid|hid)$")

_MIN_ROWS_FOR_DISTINCT = 20
"""Below this many rows, all-distinct values say nothing (a tiny table is mostly unique)."""


def _running_number(series: pd.Series) -> bool:
    """Integers, all distinct, forming one run from 0 or 1: a row number."""
    values = series.dropna()
    if len(values) < _MIN_ROWS_FOR_DISTINCT or not pd.api.types.is_integer_dtype(values):
        return False
    numbers = values.to_numpy(dtype=np.float64)
    if not np.all(numbers == np.round(numbers)):
        return False
    return bool(numbers.min() in (0.0, 1.0) and np.unique(numbers).size == numbers.size
                and numbers.max() - numbers.min() == numbers.size - 1)


def _distinct_text(series: pd.Series) -> bool:
    """Text whose values are all distinct: names, codes of records."""
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return False
    values = series.dropna()
    if len(values) < _MIN_ROWS_FOR_DISTINCT:
        return False
    try:
        return bool(values.nunique() == len(values))
    except TypeError:  # cells holding lists or mappings: refused when the column is read
        return False


def suspect(name: str, series: pd.Series, *, values: bool = True
            ) -> tuple[Role, str] | None:
    """The role a column of an undeclared table is suspected to have, and why; ``None`` for a
    column that may be masked as a quasi-identifier. ``values`` False judges by the name
    alone, as a differentially private release does: a refusal that followed the values
    (distinct, or numbering the rows) would tell whether they are, an event one record can
    switch.

    Examples
    --------
    >>> import pandas as pd
    >>> suspect("fnlwgt", pd.Series([77516.0, 83311.0]))
    (<Role.WEIGHT: 'weight'>, 'its name says so')
    >>> suspect("age", pd.Series([39, 50])) is None
    True
    """
    named = named_role(name)
    if named is not None and (named is not Role.WEIGHT or not values
                              or pd.api.types.is_numeric_dtype(series)):
        return named, "its name says so"
    if not values:
        return None
    if _running_number(series):
        return Role.IDENTIFIER, "its values number the rows"
    if _distinct_text(series):
        return Role.IDENTIFIER, "every value is distinct"
    return None


def named_role(name: str) -> Role | None:
    """The role a column's name alone says it has (household, identifier, weight), if any.

    Examples
    --------
    >>> named_role("fnlwgt"), named_role("hhid"), named_role("age")
    (<Role.WEIGHT: 'weight'>, <Role.HOUSEHOLD: 'household'>, None)
    """
    if _HOUSEHOLD_NAME.match(name):
        return Role.HOUSEHOLD
    if _IDENTIFIER_NAME.match(name) or _CAMEL_IDENTIFIER.match(name):
        return Role.IDENTIFIER
    if _WEIGHT_NAME.match(name):
        return Role.WEIGHT
    return None


def suggested_roles(frame: pd.DataFrame) -> dict[str, tuple[Role, str]]:
    """The role of every column of ``frame`` as :func:`suspect` reads it (quasi-identifier
    when nothing is suspected), with the reason."""
    out: dict[str, tuple[Role, str]] = {}
    for name in frame.columns:
        found = suspect(str(name), frame[name])
        out[str(name)] = found if found is not None else (Role.QUASI, "")
    return out
