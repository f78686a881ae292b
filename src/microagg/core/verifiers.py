"""Verifiers of privacy models on a released table: k-anonymity and t-closeness.

An *equivalence class* is a set of records sharing the same quasi-identifier values. A table is
k-anonymous when every class has at least k records. It is t-close for a confidential attribute
when the Earth Mover's Distance (EMD) between the attribute's distribution in every class and
in the whole table is at most t (paper 002, Definition 2 and §2.2); the ground distances
(ordered, equal, hierarchical) are those of :mod:`microagg.core.emd`. With several confidential
attributes, each must satisfy t.

Missing values follow the declared semantics (:mod:`microagg.core.frequencies`). Under
``category`` a missing quasi-identifier value is a value of its own and classes are as above.
Under ``matches-any`` (the default) the class of a record is its *matching set*, the records
that agree with it on every quasi-identifier both have (whose size is its f_k; a record
whose quasi-identifiers are all missing is in the matching set of no complete record, as
sdcMicro's ``freqCalc`` counts it); t-closeness
asks the confidential distribution of every matching set to be within t of the table's. A
missing confidential value of a nominal attribute is a category of its own, at distance 1
from every value (equal distance; hierarchical: a leaf under the root); an ordered attribute
(numeric, ordinal) with a missing value is refused, as a missing value has no place in its
order (docs/algorithms.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from microagg.core.frequencies import combinations, key_codes, matching_pairs, value_ids
from microagg.data.schema import Kind
from microagg.data.table import Table, missing_mask
from microagg.errors import InputError
from microagg.options import GroundDistance, MissingValues, parse

if TYPE_CHECKING:
    from microagg.core.emd import GroundModel

__all__ = [
    "KAnonymity",
    "TCloseness",
    "emd_by_written_class",
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
    """Equivalence-class statistics of a table over its quasi-identifiers. ``all_missing``
    counts the records whose quasi-identifiers are all missing: under ``matches-any`` they
    match every record only through missing values, and are counted apart (their f_k is n,
    and they count for no record without a missing value: :mod:`microagg.core.frequencies`),
    so that they cannot make a table look k-anonymous."""

    records: int
    classes: int
    smallest_class: int
    largest_class: int
    all_missing: int = 0

    def holds(self, k: int) -> bool:
        return self.smallest_class >= k


@dataclass(frozen=True)
class TCloseness:
    """The EMD of each equivalence class to the whole table, for one confidential attribute
    (under ``matches-any`` with missing quasi-identifiers, of the matching set of each
    combination of values written)."""

    attribute: str
    distance: GroundDistance
    emd: np.ndarray  # one value per class (or combination), in label order

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
    return value_ids(frame, quasi)


def k_anonymity(frame: pd.DataFrame, quasi: Sequence[str],
                missing: MissingValues | str = MissingValues.MATCHES_ANY) -> KAnonymity:
    """Sizes of the equivalence classes of ``frame`` over the quasi-identifiers ``quasi``.

    Where a quasi-identifier is missing, ``missing`` says what it matches
    (:mod:`microagg.core.frequencies`): under ``matches-any`` (the default, sdcMicro's) the
    smallest and largest "class" are the smallest and largest sample frequency f_k of a
    record, and ``classes`` counts the distinct combinations written; a record whose
    quasi-identifiers are all missing is counted apart (``all_missing``).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": [30, 40, None, None], "sex": ["m", "f", None, None]})
    >>> result = k_anonymity(frame, ["age", "sex"])
    >>> result.smallest_class, result.all_missing, result.holds(2)
    (1, 2, False)
    """
    if len(frame) == 0:
        raise InputError("the table has no rows")
    _require_columns(frame, list(quasi))
    frequencies, classes = combinations(frame, quasi, missing)
    blank = np.logical_and.reduce([missing_mask(frame[c]) for c in quasi])
    return KAnonymity(
        records=len(frame),
        classes=classes,
        smallest_class=int(frequencies.min()),
        largest_class=int(frequencies.max()),
        all_missing=int(np.count_nonzero(blank)),
    )


def emd_by_written_class(frame: pd.DataFrame, quasi: Sequence[str], model: GroundModel,
                         missing: MissingValues | str = MissingValues.MATCHES_ANY,
                         records: np.ndarray | None = None) -> np.ndarray:
    """EMD of ``model``'s attribute (whose rows are those of ``frame``) in every equivalence
    class of ``frame`` over ``quasi``, a missing value being treated by ``missing``: its own
    value (``category``), or matching any value (``matches-any``), in which case the EMD is
    that of the matching set of every combination of values written (module docstring).
    With ``records`` each row stands for that many records (a table of counts)."""

    from microagg.core.emd import emd_by_class, emd_of_counts

    missing = parse(MissingValues, missing, "missing")
    _require_columns(frame, list(quasi))
    codes = key_codes(frame, quasi)
    if missing is MissingValues.CATEGORY or not (codes < 0).any():
        classes = equivalence_classes(frame, quasi)
        if records is None:
            return emd_by_class(classes, model)
        return emd_of_counts(classes, model.values, records, model, int(classes.max()) + 1)
    combination, g, h = matching_pairs(codes)
    groups = int(combination.max()) + 1
    weight = np.ones(len(frame)) if records is None else np.asarray(records, np.float64)
    keys, inverse = np.unique(combination * model.m + model.values, return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), weights=weight)
    of_group, value = keys // model.m, keys % model.m
    starts = np.searchsorted(of_group, np.arange(groups), side="left")
    lengths = (np.searchsorted(of_group, np.arange(groups), side="right") - starts)[h]
    # every (g, h) pair brings all the (value, count) entries of combination h to g
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    at = np.repeat(starts[h], lengths) + offsets
    return emd_of_counts(np.repeat(g, lengths), value[at], counts[at], model, groups)


def t_closeness(frame: pd.DataFrame, quasi: Sequence[str], confidential: str, *,
                distance: GroundDistance | str | None = None,
                parent: np.ndarray | None = None,
                missing: MissingValues | str = MissingValues.MATCHES_ANY,
                records: np.ndarray | None = None) -> TCloseness:
    """EMD of the confidential attribute in each equivalence class to the whole table.

    ``distance`` defaults to ``ordered`` for numeric columns (and ordered categoricals) and
    ``equal`` for the others; ``hierarchical`` needs the taxonomy ``parent`` array, with the
    column holding concept numbers (:func:`ground_model` builds it from a schema). A missing
    quasi-identifier value is treated by ``missing`` (module docstring). With ``records``
    every row of ``frame`` stands for that many records: a table of counts, one row per
    combination of values (:mod:`microagg.at_scale.check`).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": [30, 30, None, 40], "ill": ["y", "n", "y", "n"]})
    >>> t_closeness(frame, ["age"], "ill").emd.round(3).tolist()  # matching sets
    [0.0, 0.0, 0.5]
    >>> t_closeness(frame, ["age"], "ill", missing="category").emd.round(3).tolist()
    [0.0, 0.5, 0.5]
    """
    _require_columns(frame, [confidential])
    if confidential in quasi:
        raise InputError(
            f"column '{confidential}' cannot be both quasi-identifier and confidential"
        )
    column = frame[confidential]
    if distance is None:
        ordered = (pd.api.types.is_numeric_dtype(column)
                   or (isinstance(column.dtype, pd.CategoricalDtype) and column.cat.ordered))
        distance = GroundDistance.ORDERED if ordered else GroundDistance.EQUAL
    distance = parse(GroundDistance, distance, "distance")
    if isinstance(column.dtype, pd.CategoricalDtype):
        values = column.cat.codes.to_numpy()
    elif column.isna().any() and not pd.api.types.is_numeric_dtype(column):
        values = pd.factorize(column, use_na_sentinel=True)[0]  # -1: missing
    else:
        values = column.to_numpy()
    model = _model(confidential, values, distance, parent, records)
    return TCloseness(attribute=confidential, distance=distance,
                      emd=emd_by_written_class(frame, quasi, model, missing, records))


def _missing_values(values: np.ndarray, records: np.ndarray | None = None) -> int:
    """How many of ``values`` (each standing for ``records`` records, default one) are
    missing: NaN among numbers, a negative code among codes."""
    if values.dtype.kind == "f":
        blank = np.isnan(values)
    elif values.dtype.kind in "iu":
        blank = values < 0
    else:
        blank = np.asarray(pd.isna(values), dtype=bool)
    return int(blank.sum() if records is None else np.asarray(records)[blank].sum())


def _model(name: str, values: np.ndarray, distance: GroundDistance,
           parent: np.ndarray | None, records: np.ndarray | None = None) -> GroundModel:
    from microagg.core.emd import GroundModel

    missing = _missing_values(values, records)
    if missing and distance is GroundDistance.ORDERED:
        raise InputError(
            f"confidential attribute '{name}' has {missing:,} missing value(s), and its EMD "
            "orders the values, where a missing value has no place: drop those records "
            "(`drop_incomplete`) or declare the attribute nominal (a missing value is then "
            "a category of its own)")
    if distance is GroundDistance.ORDERED:
        return GroundModel.ordered(name, values, records)
    if distance is GroundDistance.EQUAL:
        return GroundModel.tree(name, values, records=records)
    if parent is None:
        raise InputError(f"'{name}': the hierarchical distance needs a taxonomy")
    if missing:  # a missing value: one more leaf, under the root (at distance 1 from all)
        parent = np.asarray(parent, dtype=np.int64)
        root = int(np.flatnonzero(parent < 0)[0])
        values = np.where(values < 0, parent.size, values)
        parent = np.r_[parent, root]
    return GroundModel.tree(name, values, parent, records)


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
                      distance: GroundDistance | str | None = None,
                      missing: MissingValues | str = MissingValues.MATCHES_ANY) -> TCloseness:
    """:func:`t_closeness` of an encoded table, with the schema's kinds and taxonomies (the
    order of ordinal levels, the tree of a nominal attribute for ``hierarchical``)."""
    from microagg.data.table import decode

    if confidential in quasi:
        raise InputError(
            f"column '{confidential}' cannot be both quasi-identifier and confidential")
    model = ground_model(table, confidential, distance)
    return TCloseness(attribute=confidential, distance=model.distance,
                      emd=emd_by_written_class(decode(table), quasi, model, missing))
