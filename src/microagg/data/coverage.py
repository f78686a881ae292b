"""Whether a table's categorical values lie among those its schema declares: a column's
declared categories, or its taxonomy's leaves.

A declaration that does not cover the data fails where the data is encoded, which may be
late (a comparison that recodes at its last candidate). Checked when the declaration is
made, and again before anything is computed, the refusal comes at once and names the
column, the values outside and how many cells hold them. The check is for the data's
owner: a release whose input lies outside its declarations is refused anyway.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from microagg.data.schema import Attribute, Schema, taxonomy_leaves
from microagg.data.table import category_labels, missing_mask
from microagg.errors import SchemaError

__all__ = ["check_covered", "outside"]

SHOWN = 3
"""The values outside a declaration a message names (the most frequent)."""


def outside(series: pd.Series, attribute: Attribute) -> dict[str, int]:
    """The values of ``series`` that ``attribute`` does not declare (neither among its
    declared categories nor leaves of its taxonomy), each with its number of cells, the
    most frequent first; empty when it declares no categories (a numeric column, or
    categories read off the data) or every value is declared. Missing cells are not values.

    Examples
    --------
    >>> from microagg.data.schema import Kind, Role
    >>> column = Attribute("sex", Role.QUASI, Kind.NOMINAL, domain=("F", "M"))
    >>> outside(pd.Series(["F", "?", "M", "?", None, "x"]), column)
    {'?': 2, 'x': 1}
    """
    declared = _declared(attribute)
    if declared is None:
        return {}
    present = ~missing_mask(series)
    labels = category_labels(series)[present]
    counts = labels[~labels.isin(declared)].value_counts(sort=False)
    ranked = sorted(counts.items(), key=lambda item: (-int(item[1]), str(item[0])))
    return {str(value): int(count) for value, count in ranked}


def check_covered(frame: pd.DataFrame, schema: Schema,
                  columns: Sequence[str] | None = None) -> None:
    """Raise a :class:`~microagg.errors.SchemaError` naming the first of ``columns``
    (default: every column of ``frame`` the schema describes) that holds a value its
    declaration does not cover (:func:`outside`), with the most frequent such values.

    Examples
    --------
    >>> from microagg.data.schema import Kind, Role
    >>> schema = Schema((Attribute("sex", Role.QUASI, Kind.NOMINAL, domain=("F", "M")),))
    >>> check_covered(pd.DataFrame({"sex": ["F", "M", None]}), schema)
    >>> try:
    ...     check_covered(pd.DataFrame({"sex": ["F", "?", "?"]}), schema)
    ... except SchemaError as exc:
    ...     print(str(exc)[:72])
    column 'sex' holds 2 cells whose value is not one of its declared catego
    """
    names = [c for c in (frame.columns if columns is None else columns)
             if c in schema.names and c in frame.columns]
    for name in names:
        attribute = schema[name]
        found = outside(frame[name], attribute)
        if not found:
            continue
        cells = sum(found.values())
        listed = ", ".join(f"'{v}' ({n:,})" for v, n in list(found.items())[:SHOWN])
        more = len(found) - SHOWN
        if more > 0:
            listed += f" and {more:,} other value{'s' if more > 1 else ''}"
        what = (f"a leaf of its taxonomy {attribute.taxonomy.name}"
                if attribute.taxonomy is not None and attribute.categories is None
                else "one of its declared categories")
        raise SchemaError(f"column '{name}' holds {cells:,} cell{'s' if cells > 1 else ''} "
                          f"whose value is not {what}: {listed}; read such values as "
                          "missing (missing-value tokens when the table is read), or add "
                          "them to the declaration")


def _declared(attribute: Attribute) -> frozenset[str] | None:
    """The categories ``attribute`` declares (its domain, else its taxonomy's leaves), or
    ``None`` when it declares none."""
    if attribute.is_numeric or (attribute.observed and attribute.taxonomy is None):
        return None
    if attribute.categories is not None:
        return frozenset(map(str, attribute.categories))
    if attribute.taxonomy is not None:
        return frozenset(map(str, taxonomy_leaves(attribute.taxonomy)))
    return None
