"""k-anonymous microaggregation of the quasi-identifiers of a table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.aggregate import cluster_sizes, replace_by_centroids, replace_by_means
from microagg.core.distance import Categorical, scale
from microagg.core.verifiers import k_anonymity
from microagg.data.schema import Role, Schema
from microagg.data.table import Table, decode, encode, require_rows_and_columns
from microagg.errors import InputError
from microagg.options import Method, Reference, Scaling, parse
from microagg.partition._validate import check_k
from microagg.partition.insensitive import insensitive
from microagg.partition.mdav import mdav, vmdav
from microagg.partition.univariate import individual_ranking, optimal_univariate
from microagg.release.base import Release
from microagg.release.inputs import check_clamp, masked_columns
from microagg.release.report import KAnonymityReport

__all__ = ["ClusterValues", "microaggregate", "partition_table", "replace_by_clusters"]

Progress = Callable[[int], None]


def resolve_scaling(scaling: Scaling | str, has_categories: bool) -> Scaling:
    """``auto`` is z-scores for numeric data and domain widths (000 eq. 8) for mixed data."""
    scaling = parse(Scaling, scaling, "scaling")
    if scaling is Scaling.AUTO:
        return Scaling.RANGE if has_categories else Scaling.ZSCORE
    return scaling


def categorical_part(table: Table, columns: Sequence[str]) -> Categorical:
    """The categorical attributes among ``columns`` as a record-distance part."""
    names = [c for c in columns if table.schema[c].is_categorical]
    codes = (np.column_stack([table.code_column(c) for c in names]) if names
             else np.empty((table.n_rows, 0), dtype=np.int64))
    return Categorical(codes, tuple(table.metric(c) for c in names))


def partition_table(table: Table, columns: Sequence[str], k: int, *,
                    method: Method | str = Method.MDAV, scaling: Scaling | str = Scaling.AUTO,
                    gamma: float = 0.2, reference: Reference | str = Reference.CORNERS,
                    threads: int | None = None, progress: Progress | None = None) -> np.ndarray:
    """Cluster labels of the table's rows over ``columns`` (numeric first, then categorical)
    with ``method``."""
    method = parse(Method, method, "method")
    reference = parse(Reference, reference, "reference")
    numeric = [c for c in columns if table.schema[c].is_numeric]
    k = check_k(k, table.n_rows)
    X = table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0))
    categorical = categorical_part(table, columns)
    scaling = resolve_scaling(scaling, bool(categorical.metrics))
    bounds = [table.schema[c].bounds for c in numeric]
    if method is Method.MDAV:
        return mdav(scale(X, scaling, bounds), k, categorical=categorical, threads=threads,
                    progress=progress)
    if method is Method.VMDAV:
        return vmdav(scale(X, scaling, bounds), k, gamma, categorical=categorical,
                     threads=threads, progress=progress)
    if method is Method.INDIVIDUAL_RANKING:
        return individual_ranking(X, k, categorical=categorical)
    if method is Method.OPTIMAL_UNIVARIATE:
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
                       threads=threads, progress=progress)


@dataclass(frozen=True)
class ClusterValues:
    """A table's arrays with some columns replaced by the statistics of their cluster."""

    numeric: np.ndarray
    codes: np.ndarray
    concepts: dict[str, tuple[str, ...]]  # the concept labels of each replaced category
    generalized: dict[str, list[str]]  # inner taxonomy concepts written, per column


def replace_by_clusters(table: Table, columns: Sequence[str], labels: np.ndarray
                        ) -> ClusterValues:
    """Numeric ``columns`` replaced by their cluster mean, categorical ones by their cluster's
    marginality centroid (000 eq. 5), which may be an inner concept of the taxonomy.
    ``labels`` is one partition, or one per column (numeric columns first) for univariate
    methods."""
    numeric_chosen = [c for c in columns if table.schema[c].is_numeric]
    categorical_chosen = [c for c in columns if table.schema[c].is_categorical]
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
    return ClusterValues(numeric=numeric, codes=codes, concepts=concepts, generalized=inner)


def _check_option_use(method: Method, *, scaling: Scaling | str, gamma: float | None,
                      reference: Reference | str | None) -> None:
    """An option the method ignores is an error, not silence."""
    if gamma is not None and method is not Method.VMDAV:
        raise InputError(f"--gamma applies to --method vmdav only, not {method.value}")
    if reference is not None and method is not Method.INSENSITIVE:
        raise InputError(f"--reference applies to --method insensitive only, not "
                         f"{method.value}")
    if (parse(Scaling, scaling, "scaling") is not Scaling.AUTO
            and method not in (Method.MDAV, Method.VMDAV)):
        raise InputError(f"--standardize applies to --method mdav and vmdav only, not "
                         f"{method.value}")


def microaggregate(frame: pd.DataFrame, *, k: int, schema: Schema | None = None,
                   method: Method | str = Method.MDAV, columns: Sequence[str] | None = None,
                   scaling: Scaling | str = Scaling.AUTO, gamma: float | None = None,
                   reference: Reference | str | None = None, drop_incomplete: bool = False,
                   clamp: bool = False, threads: int | None = None,
                   progress: Progress | None = None) -> Release:
    """Microaggregate the quasi-identifiers of ``frame`` into clusters of at least k records.

    ``columns`` defaults to the schema's quasi-identifiers; without a schema (or one that
    declares none) every non-identifier column is masked, categorical ones with a flat
    taxonomy. Numeric values are replaced by their cluster mean, categorical ones by their
    cluster's marginality centroid (000 eq. 5), which may be an inner concept of the
    attribute's taxonomy (the report lists those). Identifiers are dropped; other columns are
    written unchanged, and the report lists them and gives k-anonymity over every written
    column as well as over the masked ones. Methods: ``mdav`` (default), ``vmdav`` (with
    ``gamma``, default 0.2), ``individual-ranking`` and ``optimal-univariate`` (attribute by
    attribute: the release is then *not* k-anonymous as a whole, and the report says so),
    ``insensitive`` (declared numeric domains required; ``reference`` "corners" (default) or
    "single"). ``scaling`` applies to the numeric part of the distances of mdav and vmdav;
    ``auto`` means z-scores for numeric data and domain widths (000 eq. 8) when categorical
    attributes take part. An option the method ignores is refused.
    """
    method = parse(Method, method, "method")
    _check_option_use(method, scaling=scaling, gamma=gamma, reference=reference)
    gamma = 0.2 if gamma is None else gamma
    reference = parse(Reference, Reference.CORNERS if reference is None else reference,
                      "reference")
    require_rows_and_columns(frame)
    declared = schema is not None
    schema = (Schema.infer(frame) if schema is None else schema).complete(frame)
    chosen = masked_columns(schema, columns, declared=declared)
    if clamp:
        check_clamp(schema, chosen)
    schema = schema.with_roles({c: Role.QUASI for c in chosen})
    table = encode(frame, schema, drop_incomplete=drop_incomplete, clamp=clamp)
    check_k(k, table.n_rows, least=2)
    labels = partition_table(table, chosen, k, method=method, scaling=scaling, gamma=gamma,
                             reference=reference, threads=threads, progress=progress)
    masked = replace_by_clusters(table, chosen, labels)
    same = (np.array_equal(masked.numeric, table.numeric)
            and np.array_equal(masked.codes, table.codes))
    categorical_chosen = [c for c in chosen if table.schema[c].is_categorical]
    inner = masked.generalized
    kept = [a.name for a in table.schema if a.role is not Role.IDENTIFIER]
    masked = decode(table, numeric=masked.numeric, codes=masked.codes,
                    categories=masked.concepts, columns=kept)
    unchanged = [c for c in kept if c not in chosen]
    k = int(k)
    notes = []
    if inner:
        notes.append("some categorical values were replaced by inner concepts of their "
                     "taxonomy (the marginality centroid of a cluster); they are listed under "
                     "generalized_categories")
    if method.univariate:
        notes.append("univariate microaggregation groups each attribute separately: every "
                     "value is shared by at least k records, but combinations of values need "
                     "not be, so the release is not k-anonymous in general")
    if unchanged:
        notes.append(f"released unchanged: {', '.join(unchanged)}; k-anonymity over the table "
                     "as written counts them too")
    if same:
        notes.append("no value changed: every cluster's records already shared their values "
                     "(the data were k-anonymous over these columns as they are)")
    report = KAnonymityReport(
        method=method.value, k=k, columns=chosen, records=table.n_rows,
        rows_dropped_as_incomplete=int(len(frame) - table.n_rows),
        identifiers_dropped=[a.name for a in table.schema if a.role is Role.IDENTIFIER],
        released_unchanged=unchanged, clusters=cluster_summary(labels, chosen),
        k_anonymity=_anonymity(masked, chosen, k),
        k_anonymity_as_written=_anonymity(masked, kept, k),
        scaling=(resolve_scaling(scaling, bool(categorical_chosen)).value
                 if method in (Method.MDAV, Method.VMDAV) else None),
        reference=reference.value if method is Method.INSENSITIVE else None,
        gamma=gamma if method is Method.VMDAV else None,
        generalized_categories=inner, clamped=dict(table.clamped), notes=notes)
    return Release(frame=masked, labels=labels, report=report)


def _anonymity(frame: pd.DataFrame, columns: Sequence[str], k: int) -> dict[str, Any]:
    result = k_anonymity(frame, columns)
    return {"smallest_class": result.smallest_class, "classes": result.classes,
            "holds": result.holds(k)}


def _histogram(labels: np.ndarray) -> dict[str, int]:
    sizes = cluster_sizes(labels)
    values, counts = np.unique(sizes, return_counts=True)
    return {str(int(v)): int(c) for v, c in zip(values, counts, strict=True)}


def cluster_summary(labels: np.ndarray, columns: Sequence[str]) -> dict:
    if labels.ndim == 1:
        sizes = cluster_sizes(labels)
        return {"count": int(sizes.size), "smallest": int(sizes.min()),
                "largest": int(sizes.max()), "size_histogram": _histogram(labels)}
    return {c: {"count": int(labels[:, j].max()) + 1, "size_histogram": _histogram(labels[:, j])}
            for j, c in enumerate(columns)}
