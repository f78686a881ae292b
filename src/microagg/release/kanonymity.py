"""k-anonymous microaggregation of the quasi-identifiers of a table."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from microagg.aggregate import cluster_sizes, replace_by_centroids, replace_by_means
from microagg.distance import SCALINGS, Categorical, scale
from microagg.errors import InputError
from microagg.models import k_anonymity
from microagg.partition._validate import check_k
from microagg.partition.insensitive import REFERENCES, insensitive
from microagg.partition.mdav import mdav, vmdav
from microagg.partition.univariate import individual_ranking, optimal_univariate
from microagg.release.base import Release
from microagg.schema import Role, Schema
from microagg.table import Table, decode, encode, require_rows_and_columns

__all__ = ["METHODS", "microaggregate", "partition_table"]

METHODS = ("mdav", "vmdav", "individual-ranking", "optimal-univariate", "insensitive")
UNIVARIATE = ("individual-ranking", "optimal-univariate")
Progress = Callable[[int], None]


def chosen_columns(schema: Schema, columns: Sequence[str] | None) -> list[str]:
    """The columns to microaggregate, numeric ones first (the order of the label matrix of
    univariate methods): ``columns``, else the schema's quasi-identifiers, else every numeric
    column."""
    if columns:
        for name in columns:
            if name not in schema:
                raise InputError(f"unknown column '{name}' (the data has: "
                                 f"{', '.join(schema.names)})")
        chosen = list(columns)
    else:
        chosen = list(schema.quasi_identifiers) or [a.name for a in schema if a.is_numeric]
    if not chosen:
        raise InputError("no column to microaggregate: name them with --columns or declare "
                         "quasi-identifiers in the schema")
    for name in chosen:
        if schema[name].role is Role.IDENTIFIER:
            raise InputError(f"column '{name}' is an identifier; identifiers are dropped, "
                             "not microaggregated")
    return ([c for c in chosen if schema[c].is_numeric]
            + [c for c in chosen if schema[c].is_categorical])


def resolve_scaling(scaling: str, has_categories: bool) -> str:
    """``auto`` is z-scores for numeric data and domain widths (000 eq. 8) for mixed data."""
    if scaling == "auto":
        return "range" if has_categories else "zscore"
    if scaling not in SCALINGS:
        raise InputError(f"unknown scaling '{scaling}' (choose one of: auto, "
                         f"{', '.join(SCALINGS)})")
    return scaling


def categorical_part(table: Table, columns: Sequence[str]) -> Categorical:
    """The categorical attributes among ``columns`` as a record-distance part."""
    names = [c for c in columns if table.schema[c].is_categorical]
    codes = (np.column_stack([table.code_column(c) for c in names]) if names
             else np.empty((table.n_rows, 0), dtype=np.int64))
    return Categorical(codes, tuple(table.metric(c) for c in names))


def partition_table(table: Table, columns: Sequence[str], k: int, *, method: str = "mdav",
                    scaling: str = "auto", gamma: float = 0.2, reference: str = "corners",
                    progress: Progress | None = None) -> np.ndarray:
    """Cluster labels of the table's rows over ``columns`` (numeric first, then categorical)
    with ``method``."""
    if method not in METHODS:
        raise InputError(f"unknown method '{method}' (choose one of: {', '.join(METHODS)})")
    if reference not in REFERENCES:
        raise InputError(f"unknown reference '{reference}' (choose one of: "
                         f"{', '.join(REFERENCES)})")
    numeric = [c for c in columns if table.schema[c].is_numeric]
    X = table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0))
    categorical = categorical_part(table, columns)
    scaling = resolve_scaling(scaling, bool(categorical.metrics))
    k = check_k(k, table.n_rows)
    bounds = [table.schema[c].bounds for c in numeric]
    if method == "mdav":
        return mdav(scale(X, scaling, bounds), k, categorical=categorical, progress=progress)
    if method == "vmdav":
        return vmdav(scale(X, scaling, bounds), k, gamma, categorical=categorical,
                     progress=progress)
    if method == "individual-ranking":
        return individual_ranking(X, k, categorical=categorical)
    if method == "optimal-univariate":
        return optimal_univariate(X, k, categorical=categorical)
    undeclared = [c for c, b in zip(numeric, bounds, strict=True) if b is None]
    if undeclared:
        raise InputError(
            f"insensitive microaggregation needs a declared domain for every numeric column; "
            f"'{undeclared[0]}' has none (declare it in the schema: its order must not "
            "depend on the data)")
    lows = np.array([b[0] for b in bounds])
    highs = np.array([b[1] for b in bounds])
    return insensitive(X, k, lows, highs, categorical=categorical, reference=reference,
                       progress=progress)


def microaggregate(frame: pd.DataFrame, k: int, *, schema: Schema | None = None,
                   method: str = "mdav", columns: Sequence[str] | None = None,
                   scaling: str = "auto", gamma: float = 0.2, reference: str = "corners",
                   drop_incomplete: bool = False, clamp: bool = False,
                   progress: Progress | None = None) -> Release:
    """Microaggregate the quasi-identifiers of ``frame`` into clusters of at least k records.

    ``columns`` defaults to the schema's quasi-identifiers, else every numeric column. Numeric
    values are replaced by their cluster mean, categorical ones by their cluster's marginality
    centroid (000 eq. 5), which may be an inner concept of the attribute's taxonomy (the report
    lists those). Identifiers are dropped; other columns are kept as they are. Methods:
    ``mdav`` (default), ``vmdav`` (with ``gamma``), ``individual-ranking`` and
    ``optimal-univariate`` (attribute by attribute: the release is then *not* k-anonymous as
    a whole, and the report says so), ``insensitive`` (declared numeric domains required;
    ``reference`` "corners" or "single"). ``scaling`` applies to the numeric part of the
    distances of mdav and vmdav; ``auto`` means z-scores for numeric data and domain widths
    (000 eq. 8) when categorical attributes take part.
    """
    require_rows_and_columns(frame)
    schema = (Schema.infer(frame) if schema is None else schema).complete(frame)
    chosen = chosen_columns(schema, columns)
    schema = schema.with_roles({c: Role.QUASI for c in chosen})
    table = encode(frame, schema, drop_incomplete=drop_incomplete, clamp=clamp)
    labels = partition_table(table, chosen, k, method=method, scaling=scaling, gamma=gamma,
                             reference=reference, progress=progress)
    numeric_chosen = [c for c in chosen if table.schema[c].is_numeric]
    categorical_chosen = [c for c in chosen if table.schema[c].is_categorical]
    numeric = table.numeric.copy()
    if numeric_chosen:
        positions = [table.numeric_names.index(c) for c in numeric_chosen]
        numeric_labels = labels if labels.ndim == 1 else labels[:, :len(numeric_chosen)]
        numeric[:, positions] = replace_by_means(table.numeric[:, positions], numeric_labels)
    codes = table.codes.copy()
    concepts: dict[str, tuple[str, ...]] = {}
    inner: dict[str, list[str]] = {}
    for offset, name in enumerate(categorical_chosen):
        metric = table.metric(name)
        column_labels = labels if labels.ndim == 1 else labels[:, len(numeric_chosen) + offset]
        position = table.categorical_names.index(name)
        codes[:, position] = replace_by_centroids(table.code_column(name), column_labels,
                                                  metric)
        concepts[name] = metric.labels
        used = np.unique(codes[:, position])
        inner_used = [metric.labels[c] for c in used if c >= metric.n_leaves]
        if inner_used:
            inner[name] = inner_used
    kept = [a.name for a in table.schema if a.role is not Role.IDENTIFIER]
    masked = decode(table, numeric=numeric, codes=codes, categories=concepts, columns=kept)
    anonymity = k_anonymity(masked, chosen)
    resolved = resolve_scaling(scaling, bool(categorical_chosen))
    report = {
        "method": method,
        "k": int(k),
        "columns": chosen,
        "scaling": resolved if method in ("mdav", "vmdav") else None,
        "reference": reference if method == "insensitive" else None,
        "gamma": gamma if method == "vmdav" else None,
        "records": table.n_rows,
        "rows_dropped_as_incomplete": int(len(frame) - table.n_rows),
        "identifiers_dropped": [a.name for a in table.schema if a.role is Role.IDENTIFIER],
        "clusters": _cluster_summary(labels, chosen),
        "k_anonymity": {"smallest_class": anonymity.smallest_class,
                        "classes": anonymity.classes, "holds": anonymity.holds(k)},
    }
    if inner:
        report["generalized_categories"] = inner
        report.setdefault("notes", []).append(
            "some categorical values were replaced by inner concepts of their taxonomy (the "
            "marginality centroid of a cluster); they are listed under "
            "generalized_categories")
    if method in UNIVARIATE:
        report.setdefault("notes", []).append(
            "univariate microaggregation groups each attribute separately: every value is "
            "shared by at least k records, but combinations of values need not be, so the "
            "release is not k-anonymous in general")
    return Release(frame=masked, labels=labels, report=report)


def _histogram(labels: np.ndarray) -> dict[str, int]:
    sizes = cluster_sizes(labels)
    values, counts = np.unique(sizes, return_counts=True)
    return {str(int(v)): int(c) for v, c in zip(values, counts, strict=True)}


def _cluster_summary(labels: np.ndarray, columns: Sequence[str]) -> dict:
    if labels.ndim == 1:
        sizes = cluster_sizes(labels)
        return {"count": int(sizes.size), "smallest": int(sizes.min()),
                "largest": int(sizes.max()), "size_histogram": _histogram(labels)}
    return {c: {"count": int(labels[:, j].max()) + 1, "size_histogram": _histogram(labels[:, j])}
            for j, c in enumerate(columns)}
