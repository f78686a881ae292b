"""Encode a DataFrame under a Schema into arrays, and decode arrays back into a DataFrame.

Numeric attributes become columns of one float64 matrix; ordinal and nominal attributes become
int64 codes into their list of categories (the declared domain, or the sorted observed values
when none is declared). Decoding restores the column order and, where the values allow it, the
original dtypes: an integer column whose masked values are no longer integral comes back as
float64 (a cluster mean of integers is usually not an integer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.column_checks import check_categories
from microagg.data.precision import decimals_of, round_to
from microagg.data.schema import (
    LARGEST_BOUND,
    Attribute,
    Kind,
    Role,
    Schema,
    category_text,
)
from microagg.data.taxonomy import CategoryMetric, Taxonomy
from microagg.errors import InputError

MISSING_CODE = -1
"""The code of a missing value of a categorical attribute (a numeric one is NaN)."""

# Larger magnitudes overflow the squares of distances and variances (1e154² ~ 1e308).
LARGEST_VALUE = LARGEST_BOUND

__all__ = [
    "LARGEST_VALUE",
    "MISSING_CODE",
    "Table",
    "category_labels",
    "category_metric",
    "declared_dtypes",
    "decode",
    "encode",
    "missing_counts",
    "missing_mask",
    "require_rows_and_columns",
]


@dataclass(frozen=True, eq=False)
class Table:
    """A microdata table as arrays.

    ``numeric`` is ``(n, p)`` float64 over the numeric attributes and ``codes`` is ``(n, q)``
    int64 over the categorical ones, both in schema order. ``row_positions`` are the positions
    of the kept rows in the source DataFrame (rows dropped as incomplete are absent).
    ``clamped`` counts, per numeric attribute, the values clamped into its declared domain;
    :meth:`decimals` is a numeric attribute's precision in the input (:func:`decimals_of`).
    """

    schema: Schema
    numeric: np.ndarray
    codes: np.ndarray
    categories: Mapping[str, tuple[str, ...]]
    index: pd.Index
    dtypes: Mapping[str, Any]
    row_positions: np.ndarray
    clamped: Mapping[str, int] = field(default_factory=dict)
    _decimals: dict = field(default_factory=dict, repr=False)
    _metrics: dict = field(default_factory=dict, repr=False)

    @property
    def n_rows(self) -> int:
        return int(self.row_positions.shape[0])

    @property
    def numeric_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.schema if a.is_numeric)

    @property
    def categorical_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.schema if a.is_categorical)

    def numeric_matrix(self, names: Sequence[str] | None = None) -> np.ndarray:
        """The float64 matrix of the numeric attributes ``names`` (default: all), C-ordered."""
        all_names = self.numeric_names
        if names is None:
            return np.ascontiguousarray(self.numeric)
        positions = []
        for name in names:
            if name not in all_names:
                kind = self.schema[name].kind
                raise InputError(f"column '{name}' is {kind}, a numeric column is needed here")
            positions.append(all_names.index(name))
        return np.ascontiguousarray(self.numeric[:, positions])

    def metric(self, name: str) -> CategoryMetric:
        """The distance between the categories (and inner concepts) of a categorical
        attribute: its taxonomy's semantic distance, a flat taxonomy without one, or the rank
        distance of an ordinal attribute. Built on first use."""
        if name not in self._metrics:
            if name not in self.categorical_names:
                raise InputError(f"column '{name}' is numeric, a categorical column is "
                                 "needed here")
            self._metrics[name] = category_metric(self.schema[name], self.categories[name])
        return self._metrics[name]

    def decimals(self, name: str) -> int | None:
        """The decimals the numeric attribute ``name`` is written with in the input
        (:func:`~microagg.data.precision.decimals_of`), read on first use."""
        if name not in self._decimals:
            values = self.numeric[:, self.numeric_names.index(name)]
            self._decimals[name] = decimals_of(values, self.dtypes[name])
        return self._decimals[name]

    def rounded(self, numeric: np.ndarray, names: Sequence[str]) -> np.ndarray:
        """A copy of ``numeric`` (the table's shape) with the numeric attributes ``names``
        rounded to their input precision (:mod:`microagg.data.precision`)."""
        out = numeric.copy()
        for name in names:
            j = self.numeric_names.index(name)
            out[:, j] = round_to(out[:, j], self.decimals(name))
        return out

    def code_column(self, name: str) -> np.ndarray:
        names = self.categorical_names
        if name not in names:
            raise InputError(f"column '{name}' is numeric, a categorical column is needed here")
        return self.codes[:, names.index(name)]


def category_metric(attribute: Attribute, categories: Sequence[str]) -> CategoryMetric:
    """The metric of a categorical attribute whose codes number ``categories``."""
    if attribute.kind is Kind.ORDINAL:
        return CategoryMetric.chain(attribute.name, categories)
    if attribute.taxonomy is not None:
        # a released table's categories end with the taxonomy's inner concepts, in its order
        whole = Taxonomy.load(attribute.taxonomy)
        inner = set(whole.labels[whole.n_leaves:])
        taxonomy = Taxonomy.load(attribute.taxonomy,
                                 leaf_order=[c for c in categories if c not in inner])
    else:
        taxonomy = Taxonomy.flat(categories)
    return CategoryMetric.nominal(attribute.name, taxonomy)


def missing_mask(series: pd.Series) -> np.ndarray:
    """True where a value is missing: NaN/None/NaT, or a string that is empty after stripping."""
    mask = np.array(series.isna(), dtype=bool)
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        as_text = series[~mask].astype(str).str.strip()
        blank = np.zeros(len(series), dtype=bool)
        blank[np.flatnonzero(~mask)] = (as_text == "").to_numpy(dtype=bool)
        mask |= blank
    return mask


def missing_counts(table: Table, names: Sequence[str]) -> dict[str, int]:
    """The number of missing values of each of the columns ``names`` that has any."""
    counts = {}
    for name in names:
        if table.schema[name].is_numeric:
            count = int(np.isnan(table.numeric_matrix([name])).sum())
        else:
            count = int((table.code_column(name) == MISSING_CODE).sum())
        if count:
            counts[name] = count
    return counts


def require_rows_and_columns(frame: pd.DataFrame) -> None:
    """Refuse a table with no columns or no rows."""
    if frame.shape[1] == 0:
        raise InputError("the table has no columns")
    if frame.shape[0] == 0:
        raise InputError("the table has no rows")


def encode(
    frame: pd.DataFrame,
    schema: Schema | None = None,
    *,
    drop_incomplete: bool = False,
    clamp: bool = False,
    released: bool = False,
    missing: bool = False,
    finite: bool = True,
) -> Table:
    """Encode ``frame`` under ``schema`` (inferred when ``None``).

    Columns of the frame that the schema does not declare are added with role ``other``.
    Missing values are refused (the error names the column and the first row, counted from 1
    after the header) unless ``drop_incomplete`` is set, which drops every row with a missing
    value in any column, or ``missing`` is set, which keeps them: NaN in the numeric matrix,
    code :data:`MISSING_CODE` among the categories. Numeric values outside a declared domain
    are refused unless ``clamp`` is set, which clamps them to the domain; infinite numbers and
    numbers beyond ±:data:`LARGEST_VALUE` are refused unless clamped, or unless not
    ``finite`` (a method that only compares each value with thresholds). A ``released``
    table (the output of a release, to verify) may also hold the inner concepts of a nominal
    attribute's taxonomy (the root ``*`` of the flat one), to which microaggregation
    generalizes; their codes follow the categories', and such a table is for grouping, not
    for distances.
    """
    require_rows_and_columns(frame)
    schema = Schema.infer(frame) if schema is None else schema.complete(frame)

    incomplete = np.zeros(len(frame), dtype=bool)
    for attribute in schema:
        column_missing = missing_mask(frame[attribute.name])
        if column_missing.any() and not (drop_incomplete or missing):
            row = int(np.flatnonzero(column_missing)[0]) + 1
            raise InputError(
                f"column '{attribute.name}' has a missing value in row {row}; fill it, or drop "
                "incomplete rows explicitly (`drop_incomplete`)"
            )
        incomplete |= column_missing
    keep = (np.arange(len(frame)) if missing and not drop_incomplete
            else np.flatnonzero(~incomplete))
    if keep.size == 0:
        raise InputError("no complete row is left after dropping incomplete rows")
    kept = frame.iloc[keep]

    numeric_columns: list[np.ndarray] = []
    code_columns: list[np.ndarray] = []
    categories: dict[str, tuple[str, ...]] = {}
    clamped: dict[str, int] = {}
    for attribute in schema:
        series = kept[attribute.name]
        if (attribute.inferred and attribute.is_categorical and attribute.domain is None
                and attribute.role in (Role.QUASI, Role.CONFIDENTIAL)):
            check_categories(attribute.name, series)
        if attribute.is_numeric:
            values, clamped[attribute.name] = _encode_numeric(series, attribute, keep, clamp,
                                                              finite)
            numeric_columns.append(values)
        else:
            cats, codes = _encode_categorical(series, attribute, keep, released)
            categories[attribute.name] = cats
            code_columns.append(codes)
    n = keep.size
    numeric = np.column_stack(numeric_columns) if numeric_columns else np.empty((n, 0))
    codes = (
        np.column_stack(code_columns).astype(np.int64)
        if code_columns
        else np.empty((n, 0), dtype=np.int64)
    )
    return Table(
        schema=schema,
        numeric=np.ascontiguousarray(numeric, dtype=np.float64),
        codes=np.ascontiguousarray(codes),
        categories=categories,
        index=kept.index,
        dtypes={a.name: frame[a.name].dtype for a in schema},
        row_positions=keep.astype(np.int64),
        clamped={name: count for name, count in clamped.items() if count},
    )


_BOOLEAN_TEXT = {"true": 1.0, "false": 0.0}


def _boolean_number(value: Any) -> Any:
    """True and False (as booleans, or as the text a CSV file holds) as 1.0 and 0.0."""
    if isinstance(value, bool | np.bool_):
        return float(value)
    if isinstance(value, str):
        return _BOOLEAN_TEXT.get(value.strip().lower(), value)
    return value


def _encode_numeric(
    series: pd.Series, attribute: Attribute, positions: np.ndarray, clamp: bool,
    finite: bool = True,
) -> tuple[np.ndarray, int]:
    """The column as float64, and how many values were clamped into the declared domain."""
    name = attribute.name
    absent = missing_mask(series)
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        # True and False are 1 and 0, as a boolean column reads them (one with missing values,
        # or with a number among them, is read as objects or text)
        objects = series.astype(object).map(_boolean_number)
        coerced = pd.to_numeric(objects.astype(str).str.strip(), errors="coerce")
        bad = coerced.isna().to_numpy() & ~absent
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"column '{name}' is numeric but row {positions[i] + 1} holds "
                f"the text '{series.iloc[i]}'"
            )
        values = coerced.to_numpy(dtype=np.float64, copy=True)
        values[absent] = np.nan
    bounds = attribute.bounds
    if bounds is not None and clamp:  # every number, infinite or huge, into the domain
        lo, hi = bounds
        outside = (values < lo) | (values > hi)
        return np.clip(values, lo, hi), int(outside.sum())
    if not finite:
        return values, 0
    infinite = ~np.isfinite(values) & ~absent
    if infinite.any():
        i = int(np.flatnonzero(infinite)[0])
        raise InputError(f"column '{name}' has an infinite value in row {positions[i] + 1}")
    huge = np.abs(values) > LARGEST_VALUE
    if huge.any():
        i = int(np.flatnonzero(huge)[0])
        raise InputError(f"column '{name}': value {values[i]:g} in row {positions[i] + 1} is "
                         f"beyond ±{LARGEST_VALUE:g}, where sums and squares overflow; rescale "
                         "the column (e.g. express it in millions)")
    if bounds is not None:
        lo, hi = bounds
        outside = (values < lo) | (values > hi)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise InputError(
                f"column '{name}': value {values[i]:g} in row {positions[i] + 1} is outside "
                f"the declared domain [{lo:g}, {hi:g}]; clamp it explicitly (`clamp`) or "
                "widen the domain"
            )
    return values, 0


def category_labels(series: pd.Series) -> pd.Series:
    """String labels of a categorical column; integral floats print without '.0'."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        texts = [category_text(c) for c in series.dtype.categories]
        every = np.array([*texts, "nan"], dtype=object)  # code -1 (missing) reads "nan"
        return pd.Series(every[series.cat.codes.to_numpy()], index=series.index)
    if pd.api.types.is_float_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        present = ~np.isnan(values)
        if np.all(values[present] == np.round(values[present])):
            text = np.where(present, values, 0).astype(np.int64).astype(str).astype(object)
            text[~present] = ""
            return pd.Series(text, index=series.index)
    return series.astype(str).str.strip()


def _encode_categorical(
    series: pd.Series, attribute: Attribute, positions: np.ndarray, released: bool = False
) -> tuple[tuple[str, ...], np.ndarray]:
    absent = missing_mask(series)
    labels = category_labels(series)
    declared = attribute.categories
    taxonomy = Taxonomy.load(attribute.taxonomy) if attribute.taxonomy is not None else None
    if declared is None and taxonomy is not None:
        declared = taxonomy.leaves  # the taxonomy declares them
    if declared is not None and released and attribute.kind is Kind.NOMINAL:
        inner = (taxonomy.labels[taxonomy.n_leaves:] if taxonomy is not None
                 else Taxonomy.flat(declared).labels[len(declared):])
        declared = (*declared, *(c for c in inner if c not in declared))
    if declared is not None:
        categories = declared
    else:
        observed = pd.unique(labels.to_numpy()[~absent])
        numeric_order = (pd.api.types.is_numeric_dtype(series)
                         and not pd.api.types.is_bool_dtype(series))
        key = (lambda s: float(s)) if numeric_order else None
        categories = tuple(sorted((str(v) for v in observed), key=key))
    codes = pd.Index(list(categories)).get_indexer(pd.Index(labels)).astype(np.int64)
    codes[absent] = MISSING_CODE
    unknown = (codes < 0) & ~absent
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        where = ("" if attribute.categories is not None or taxonomy is None
                 else f" (the leaves of its taxonomy {attribute.taxonomy})")
        raise InputError(
            f"column '{attribute.name}': value '{labels.iloc[i]}' in row {positions[i] + 1} is "
            f"not one of the declared categories{where}"
        )
    return tuple(categories), codes


def decode(
    table: Table,
    numeric: np.ndarray | None = None,
    codes: np.ndarray | None = None,
    *,
    categories: Mapping[str, Sequence[str]] | None = None,
    columns: Sequence[str] | None = None,
    dtypes: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Arrays back to a DataFrame with the table's index, column order and dtypes.

    ``numeric`` and ``codes`` replace the table's arrays (same shapes); ``categories`` replaces
    the label list of the named categorical attributes (so codes may point at labels beyond the
    declared categories, e.g. inner concepts of a taxonomy). ``columns`` restricts and orders
    the output (default: every attribute of the schema). ``dtypes`` replaces the input dtypes
    of the named columns (a DP release takes them from the schema: :func:`declared_dtypes`).
    """
    numeric = table.numeric if numeric is None else np.asarray(numeric, dtype=np.float64)
    codes = table.codes if codes is None else np.asarray(codes, dtype=np.int64)
    if numeric.shape != table.numeric.shape or codes.shape != table.codes.shape:
        raise InputError("decode: the arrays do not have the table's shape")
    labels = dict(table.categories)
    if categories:
        labels.update({k: tuple(v) for k, v in categories.items()})
    numeric_names = table.numeric_names
    categorical_names = table.categorical_names
    names = table.schema.names if columns is None else tuple(columns)
    types = {**table.dtypes, **(dtypes or {})}
    out: dict[str, pd.Series] = {}
    for name in names:
        attribute = table.schema[name]
        dtype = types[name]
        if attribute.kind is Kind.NUMERIC:
            values = numeric[:, numeric_names.index(name)]
            # whole numbers with missing values: nullable integers
            any_missing = bool(np.isnan(values).any())
            out[name] = pd.Series(_restore_numeric(values, dtype,
                                                   table.decimals(name) if any_missing else None),
                                  index=table.index)
        else:
            column_codes = codes[:, categorical_names.index(name)]
            column_labels = np.asarray((*labels[name], None), dtype=object)[column_codes]
            out[name] = _restore_categorical(column_labels, dtype, table.index, labels[name])
    return pd.DataFrame(out, index=table.index)


def declared_dtypes(schema: Schema, names: Sequence[str]) -> dict[str, np.dtype]:
    """The written types of the columns ``names``, from the schema alone: float64 for a
    numeric attribute, text (object) for a categorical one, whose categories the schema
    declares as text. A differentially private release writes these, never types that follow
    the data (an integer column that appears only when every input value was whole would
    tell whether a record holds a fraction; docs/design.md, "Differential privacy")."""
    return {name: np.dtype(np.float64) if schema[name].is_numeric else np.dtype(object)
            for name in names}


def _restore_numeric(values: np.ndarray, dtype: Any, decimals: int | None = None) -> Any:
    """The written values of a numeric column: its input dtype where the values allow it.
    A column of whole numbers with missing values is written as a nullable integer (a CSV
    reader reads such a column as floats only because of its missing values)."""
    present = ~np.isnan(values)
    if pd.api.types.is_bool_dtype(dtype) and present.all() and np.isin(values, (0.0, 1.0)).all():
        return values.astype(bool)
    whole = bool(np.all(values[present] == np.round(values[present])))
    integer = pd.api.types.is_integer_dtype(dtype) or (decimals == 0 and not present.all())
    if integer and whole and (values[present].size == 0
                              or np.abs(values[present]).max() < 2.0**63):
        if present.all():
            return values.astype(dtype)
        return pd.array(values, dtype="Float64").astype("Int64")
    return values


def _restore_categorical(labels: np.ndarray, dtype: Any, index: pd.Index,
                         every: Sequence[str]) -> pd.Series:
    """A categorical column in its input type. A Categorical keeps its categories and their
    order, followed by the categories of ``every`` (the table's, e.g. a taxonomy's inner
    concepts) that the column now holds."""
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        numbers = pd.to_numeric(pd.Series(labels, index=index), errors="coerce")
        if not numbers.isna().any():
            restored = _restore_numeric(numbers.to_numpy(dtype=np.float64), dtype)
            return pd.Series(restored, index=index)
    if isinstance(dtype, pd.CategoricalDtype):
        declared = [category_text(c) for c in dtype.categories]
        held = set(labels.tolist()) - set(declared)
        categories = [*declared, *(c for c in every if c in held)]
        return pd.Series(pd.Categorical(labels, categories=categories, ordered=dtype.ordered),
                         index=index)
    series = pd.Series(labels, index=index, dtype=object)
    if pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype):
        return series.astype(dtype)
    return series
