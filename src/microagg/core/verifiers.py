"""Verifiers of privacy models on a released table: k-anonymity and t-closeness.

An *equivalence class* is a set of records sharing the same quasi-identifier values. A table is
k-anonymous when every class has at least k records. It is t-close for a confidential attribute
when the Earth Mover's Distance (EMD) between the attribute's distribution in every class and
in the whole table is at most t (paper 002, Definition 2 and §2.2); the ground distances
(ordered, equal, hierarchical) are those of :mod:`microagg.core.emd`. With several confidential
attributes, each must satisfy t.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microagg.core.emd import GroundModel, emd_by_class
from microagg.core.frequencies import combinations
from microagg.data.schema import Kind
from microagg.data.table import Table
from microagg.errors import InputError
from microagg.options import GroundDistance, MissingValues, parse

__all__ = [
    "KAnonymity",
    "TCloseness",
    "equivalence_classes",
    "ground_model",
    "k_anonymity",
    "t_closeness",
    "table_t_closeness",
]

# EMD values are sums of O(n) floating-point terms; a class whose EMD exceeds t by less than
# this is reported as satisfying t (the error of the computation is far below it).
EMD_TOLERANCE = 1e-9


@dataclass(frozen=True)
class KAnonymity:
    """Equivalence-class statistics of a table over its quasi-identifiers."""

    records: int
    classes: int
    smallest_class: int
    largest_class: int

    def holds(self, k: int) -> bool:
        return self.smallest_class >= k


@dataclass(frozen=True)
class TCloseness:
    """The EMD of each equivalence class to the whole table, for one confidential attribute."""

    attribute: str
    distance: GroundDistance
    emd: np.ndarray  # one value per class, in class-label order

    @property
    def t(self) -> float:
        """The smallest t for which the table is t-close: the largest class EMD."""
        return float(self.emd.max()) if self.emd.size else 0.0

    @property
    def worst_class(self) -> int:
        return int(np.argmax(self.emd))

    def holds(self, t: float) -> bool:
        return self.t <= t + EMD_TOLERANCE


def _require_columns(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    for column in columns:
        if column not in frame.columns:
            raise InputError(
                f"unknown column '{column}' (the data has: {', '.join(map(str, frame.columns))})"
            )


def equivalence_classes(frame: pd.DataFrame, quasi: Sequence[str]) -> np.ndarray:
    """Class label (int64, numbered in order of first appearance) of each row over ``quasi``."""
    quasi = list(quasi)
    if not quasi:
        raise InputError("at least one quasi-identifier is needed")
    _require_columns(frame, quasi)
    labels = frame.groupby(quasi, sort=False, dropna=False).ngroup()
    return labels.to_numpy(dtype=np.int64)


def k_anonymity(frame: pd.DataFrame, quasi: Sequence[str],
                missing: MissingValues | str = MissingValues.MATCHES_ANY) -> KAnonymity:
    """Sizes of the equivalence classes of ``frame`` over the quasi-identifiers ``quasi``.

    Where a quasi-identifier is missing, ``missing`` says what it matches
    (:mod:`microagg.core.frequencies`): under ``matches-any`` (the default, sdcMicro's) the
    smallest and largest "class" are the smallest and largest sample frequency f_k of a
    record, and ``classes`` counts the distinct combinations written.
    """
    if len(frame) == 0:
        raise InputError("the table has no rows")
    _require_columns(frame, list(quasi))
    frequencies, classes = combinations(frame, quasi, missing)
    return KAnonymity(
        records=len(frame),
        classes=classes,
        smallest_class=int(frequencies.min()),
        largest_class=int(frequencies.max()),
    )


def t_closeness(frame: pd.DataFrame, quasi: Sequence[str], confidential: str, *,
                distance: GroundDistance | str | None = None,
                parent: np.ndarray | None = None) -> TCloseness:
    """EMD of the confidential attribute in each equivalence class to the whole table.

    ``distance`` defaults to ``ordered`` for numeric columns (and ordered categoricals) and
    ``equal`` for the others; ``hierarchical`` needs the taxonomy ``parent`` array, with the
    column holding concept numbers (:func:`ground_model` builds it from a schema).
    """
    _require_columns(frame, [confidential])
    if confidential in quasi:
        raise InputError(
            f"column '{confidential}' cannot be both quasi-identifier and confidential"
        )
    classes = equivalence_classes(frame, quasi)
    column = frame[confidential]
    if distance is None:
        ordered = (pd.api.types.is_numeric_dtype(column)
                   or (isinstance(column.dtype, pd.CategoricalDtype) and column.cat.ordered))
        distance = GroundDistance.ORDERED if ordered else GroundDistance.EQUAL
    distance = parse(GroundDistance, distance, "distance")
    if isinstance(column.dtype, pd.CategoricalDtype):
        values = column.cat.codes.to_numpy()
    else:
        values = column.to_numpy()
    model = _model(confidential, values, distance, parent)
    return TCloseness(attribute=confidential, distance=distance,
                      emd=emd_by_class(classes, model))


def _model(name: str, values: np.ndarray, distance: GroundDistance,
           parent: np.ndarray | None) -> GroundModel:
    if distance is GroundDistance.ORDERED:
        return GroundModel.ordered(name, values)
    if distance is GroundDistance.EQUAL:
        return GroundModel.tree(name, values)
    if parent is None:
        raise InputError(f"'{name}': the hierarchical distance needs a taxonomy")
    return GroundModel.tree(name, values, parent)


def ground_model(table: Table, name: str, distance: GroundDistance | str | None = None
                 ) -> GroundModel:
    """The EMD model of attribute ``name`` of an encoded table: ``ordered`` for numeric and
    ordinal attributes (the order of their values, or levels); for nominal ones ``equal``
    (default) or ``hierarchical`` on the attribute's taxonomy (a flat taxonomy, without one,
    which gives the equal distance)."""
    attribute = table.schema[name]
    if attribute.is_numeric:
        default = GroundDistance.ORDERED
        values = table.numeric_matrix([name])[:, 0]
    else:
        default = (GroundDistance.ORDERED if attribute.kind is Kind.ORDINAL
                   else GroundDistance.EQUAL)
        values = table.code_column(name)
    distance = default if distance is None else parse(GroundDistance, distance, "distance")
    if distance is not default and not (default is GroundDistance.EQUAL
                                        and distance is GroundDistance.HIERARCHICAL):
        raise InputError(f"'{name}' is {attribute.kind}: its EMD uses the "
                         f"{default.value} distance, not {distance.value}")
    if distance is GroundDistance.HIERARCHICAL and attribute.taxonomy is None:
        raise InputError(f"'{name}': the hierarchical distance needs the attribute's taxonomy "
                         "in the schema (without one it would be the equal distance)")
    parent = table.metric(name).parent if distance is GroundDistance.HIERARCHICAL else None
    return _model(name, values, distance, parent)


def table_t_closeness(table: Table, quasi: Sequence[str], confidential: str,
                      distance: GroundDistance | str | None = None) -> TCloseness:
    """:func:`t_closeness` of an encoded table, with the schema's kinds and taxonomies (the
    order of ordinal levels, the tree of a nominal attribute for ``hierarchical``)."""
    from microagg.data.table import decode

    if confidential in quasi:
        raise InputError(
            f"column '{confidential}' cannot be both quasi-identifier and confidential")
    model = ground_model(table, confidential, distance)
    classes = equivalence_classes(decode(table), quasi)
    return TCloseness(attribute=confidential, distance=model.distance,
                      emd=emd_by_class(classes, model))
