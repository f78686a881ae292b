"""k-anonymous microaggregation of the quasi-identifiers of a table."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.core.distance import Categorical
from microagg.core.frequencies import all_missing_note
from microagg.core.verifiers import k_anonymity
from microagg.data.schema import Role, Schema
from microagg.data.table import (
    MISSING_CODE,
    Table,
    decode,
    encode,
    missing_counts,
    require_rows_and_columns,
)
from microagg.errors import InputError, ParameterError
from microagg.options import MissingValues, Scaling, parse
from microagg.partition._validate import check_k
from microagg.release.base import Release
from microagg.release.design import Design
from microagg.release.inputs import check_clamp, masked_columns, resolve_schema
from microagg.release.methods.base import Family, ReleaseMethod
from microagg.release.params import Interval, param
from microagg.release.reports.report import Anonymity, Clusters, KAnonymityReport

__all__ = ["ClusterValues", "KAnonymityMethod", "categorical_part", "cluster_summary",
           "numeric_part", "replace_by_clusters", "resolve_scaling"]

Progress = Callable[[int], None]


def resolve_scaling(scaling: Scaling | str, has_categories: bool) -> Scaling:
    """``auto`` is z-scores for numeric data and domain widths (000 eq. 8) for mixed data."""
    scaling = parse(Scaling, scaling, "scaling")
    if scaling is Scaling.AUTO:
        return Scaling.RANGE if has_categories else Scaling.ZSCORE
    return scaling


def numeric_part(table: Table, columns: Sequence[str]
                 ) -> tuple[np.ndarray, list[tuple[float, float] | None]]:
    """The numeric attributes among ``columns`` as a matrix, and their declared domains."""
    numeric = [c for c in columns if table.schema[c].is_numeric]
    X = table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0))
    return X, [table.schema[c].bounds for c in numeric]


def categorical_part(table: Table, columns: Sequence[str]) -> Categorical:
    """The categorical attributes among ``columns`` as a record-distance part."""
    names = [c for c in columns if table.schema[c].is_categorical]
    codes = (np.column_stack([table.code_column(c) for c in names]) if names
             else np.empty((table.n_rows, 0), dtype=np.int64))
    return Categorical(codes, tuple(table.metric(c) for c in names))


@dataclass(frozen=True)
class ClusterValues:
    """A table's arrays with some columns replaced by the statistics of their cluster."""

    numeric: np.ndarray
    codes: np.ndarray
    concepts: dict[str, tuple[str, ...]]  # the concept labels of each replaced category
    generalized: dict[str, list[str]]  # inner taxonomy concepts written, per column


def replace_by_clusters(table: Table, columns: Sequence[str], labels: np.ndarray,
                        weights: np.ndarray | None = None, *,
                        fill_missing: bool = False) -> ClusterValues:
    """Numeric ``columns`` replaced by their cluster mean, categorical ones by their cluster's
    marginality centroid (000 eq. 5), which may be an inner concept of the taxonomy.
    ``labels`` is one partition, or one per column (numeric columns first) for univariate
    methods. ``weights`` weight the means (not the centroids of categories). Means and
    centroids are over the values present; a missing value stays missing, or with
    ``fill_missing`` (one partition only) takes its cluster's value, so that every record of
    a cluster is written alike (a value missing in the whole cluster stays missing)."""

    from microagg.core.aggregate import replace_by_centroids, replace_by_means

    numeric_chosen = [c for c in columns if table.schema[c].is_numeric]
    categorical_chosen = [c for c in columns if table.schema[c].is_categorical]
    numeric = table.numeric.copy()
    if numeric_chosen:
        positions = [table.numeric_names.index(c) for c in numeric_chosen]
        numeric_labels = labels if labels.ndim == 1 else labels[:, :len(numeric_chosen)]
        numeric[:, positions] = replace_by_means(table.numeric[:, positions], numeric_labels,
                                                 weights, keep_missing=not fill_missing)
    codes = table.codes.copy()
    concepts: dict[str, tuple[str, ...]] = {}
    inner: dict[str, list[str]] = {}
    for offset, name in enumerate(categorical_chosen):
        metric = table.metric(name)
        column_labels = labels if labels.ndim == 1 else labels[:, len(numeric_chosen) + offset]
        position = table.categorical_names.index(name)
        original = table.code_column(name)
        present = original != MISSING_CODE
        codes[:, position] = MISSING_CODE
        if present.any():
            codes[present, position] = replace_by_centroids(
                original[present], column_labels[present], metric)
            if fill_missing:  # each cluster's centroid, for its members without a value too
                of_cluster = np.full(int(column_labels.max()) + 1, MISSING_CODE)
                of_cluster[column_labels[present]] = codes[present, position]
                codes[:, position] = of_cluster[column_labels]
        concepts[name] = metric.labels
        used = np.unique(codes[codes[:, position] != MISSING_CODE, position])
        inner_used = [metric.labels[c] for c in used if c >= metric.n_leaves]
        if inner_used:
            inner[name] = inner_used
    return ClusterValues(numeric=numeric, codes=codes, concepts=concepts, generalized=inner)


@dataclass(frozen=True, kw_only=True)
class KAnonymityMethod(ReleaseMethod):
    """A k-anonymous microaggregation: the family's pipeline (:meth:`release`) around the
    method's own step, the partition of the records (:meth:`labels`).

    Every method of the family has the cluster size ``k``; ``univariate`` methods group each
    attribute on its own (their release is not k-anonymous as a whole), and only methods with
    ``uses_threads`` take a ``threads`` cap.
    """

    family: ClassVar[Family] = Family.K_ANONYMITY
    univariate: ClassVar[bool] = False
    uses_threads: ClassVar[bool] = False
    takes_missing: ClassVar[bool] = False

    k: int = param(Interval(int, 2, hint="with k = 1 every record stays as it is, and a "
                                         "k-anonymous release needs k >= 2"),
                   help="Smallest cluster size.")

    def labels(self, table: Table, columns: Sequence[str], *, threads: int | None = None,
               progress: Progress | None = None) -> np.ndarray:
        """The partition of the table's rows over ``columns`` (numeric first): one label per
        row, or one per row and column for a univariate method."""
        raise NotImplementedError

    def reported(self, has_categories: bool) -> dict[str, Any]:
        """The method's parameters as the report states them (``scaling`` resolved)."""
        return {}

    def release(self, frame: pd.DataFrame, *, schema: Schema | None = None,
                columns: Sequence[str] | None = None,
                roles: Mapping[str, Role | str] | None = None,
                drop_incomplete: bool = False, clamp: bool = False,
                round_values: bool = True, threads: int | None = None,
                progress: Progress | None = None) -> Release[KAnonymityReport]:
        """Microaggregate the quasi-identifiers of ``frame`` into clusters of at least k
        records.

        ``columns`` defaults to the schema's quasi-identifiers; without a schema (or one that
        declares none) every column whose role may be masked is masked, categorical ones with
        a flat taxonomy, and a column that looks like an identifier or a sampling weight is
        refused until its role is given (``roles``, column -> role, applies over the schema).
        Numeric values are replaced by their cluster mean (weighted by the ``weight`` column
        when the schema declares one, as sdcMicro's ``microaggregation(weights=)``) and
        rounded to the column's precision in the input unless ``round_values`` is false
        (:mod:`microagg.data.precision`); categorical ones by their cluster's marginality
        centroid (000 eq. 5), which may be an inner concept of the attribute's taxonomy (the
        report lists those). Each stratum (``stratum`` columns) is microaggregated on its
        own. Missing values are kept missing and skipped by distances and centroids
        (:mod:`microagg.partition.mdav_missing`; methods that do not take them say so), and
        k-anonymity is verified with a missing value matching any value. Identifiers are
        dropped; other columns are written unchanged, and the report lists them and gives
        k-anonymity over every written column as well as over the masked ones.
        ``drop_incomplete`` drops the rows with a missing value first; ``clamp`` clamps
        values into their declared domains; ``threads`` caps the partitioner's threads;
        ``progress`` is called with the records clustered so far.
        """

        from microagg.core.threads import check_threads

        if threads is not None and not self.uses_threads:
            raise ParameterError("threads", f"applies to methods that split their passes "
                                 f"between threads, not {self.name}")
        threads = check_threads(threads)
        require_rows_and_columns(frame)
        schema, declared = resolve_schema(frame, schema, roles)
        chosen = masked_columns(schema, columns, declared=declared, frame=frame, roles=roles)
        if clamp:
            check_clamp(schema, chosen)
        schema = schema.with_roles({c: Role.QUASI for c in chosen})
        table = encode(frame, schema, drop_incomplete=drop_incomplete, clamp=clamp,
                       missing=True)
        check_k(self.k, table.n_rows, least=2)
        missing = missing_counts(table, chosen)
        if missing and not self.takes_missing:
            name, count = next(iter(missing.items()))
            raise InputError(f"column '{name}' has {count:,} missing value(s), which "
                             f"{self.name} does not take: use mdav, or drop the incomplete "
                             "rows (`drop_incomplete`)")
        design = Design.of(frame, table, self.k)
        clustered = 0  # the records of the strata done, so that progress counts them all

        def part_labels(part: Table) -> np.ndarray:
            nonlocal clustered
            before = clustered
            counted = None if progress is None else (lambda rows: progress(before + rows))
            labels = self.labels(part, chosen, threads=threads, progress=counted)
            clustered += part.n_rows
            return labels

        labels = design.stratified(part_labels, table)
        return _kanonymous_release(self, frame, table, chosen, labels, design,
                                   round_values=round_values, missing=missing)


def _notes(method: KAnonymityMethod, inner: dict[str, list[str]], unchanged: list[str],
           same: bool) -> list[str]:
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
    return notes


def _kanonymous_release(method: KAnonymityMethod, frame: pd.DataFrame, table: Table,
                        chosen: list[str], labels: np.ndarray, design: Design, *,
                        round_values: bool, missing: dict[str, int]
                        ) -> Release[KAnonymityReport]:
    """The masked table of ``labels`` and its report."""
    values = replace_by_clusters(table, chosen, labels, design.weights)
    numeric_chosen = [c for c in chosen if table.schema[c].is_numeric]
    rounded = {c: d for c in numeric_chosen
               if (d := table.decimals(c)) is not None} if round_values else {}
    numeric = table.rounded(values.numeric, list(rounded)) if rounded else values.numeric
    same = (np.array_equal(numeric, table.numeric, equal_nan=True)
            and np.array_equal(values.codes, table.codes))
    kept = [a.name for a in table.schema if a.role is not Role.IDENTIFIER]
    masked = decode(table, numeric=numeric, codes=values.codes,
                    categories=values.concepts, columns=kept)
    unchanged = [c for c in kept if c not in chosen]
    reported = method.reported(any(table.schema[c].is_categorical for c in chosen))
    notes = _notes(method, values.generalized, unchanged, same)
    notes += _design_notes(design, rounded, missing)
    anonymity = _anonymity(masked, chosen, method.k)
    if anonymity.all_missing:
        notes.append(all_missing_note(anonymity.all_missing, "masked columns"))
    report = KAnonymityReport(
        method=method.name, k=method.k, columns=chosen, records=table.n_rows,
        rows_dropped_as_incomplete=int(len(frame) - table.n_rows),
        identifiers_dropped=[a.name for a in table.schema if a.role is Role.IDENTIFIER],
        released_unchanged=unchanged, clusters=cluster_summary(labels, chosen),
        k_anonymity=anonymity,
        k_anonymity_as_written=_anonymity(masked, kept, method.k) if unchanged else anonymity,
        scaling=reported.get("scaling"), reference=reported.get("reference"),
        gamma=reported.get("gamma"), generalized_categories=values.generalized,
        clamped=dict(table.clamped), weight=design.weight,
        strata=list(design.strata_columns), n_strata=design.n_strata,
        rounded=rounded, missing_values=missing,
        missing_semantics=MissingValues.MATCHES_ANY.value, notes=notes)
    return Release(frame=masked, labels=labels, report=report)


def _design_notes(design: Design, rounded: dict[str, int], missing: dict[str, int]
                  ) -> list[str]:
    notes = []
    if design.weight is not None:
        notes.append(f"cluster means are weighted by '{design.weight}' (sum(w x) / sum(w), as "
                     "sdcMicro's microaggregation(weights=)); the weight is written unchanged")
    if design.strata is not None:
        notes.append(f"each of the {design.n_strata} strata of "
                     f"{', '.join(design.strata_columns)} was microaggregated on its own")
    if rounded:
        notes.append("masked numeric values are rounded to the precision of their column in "
                     "the input (" + ", ".join(f"{c}: {d} decimal(s)" for c, d in
                                               rounded.items()) + "); each value moves by "
                     "at most half a unit of its last decimal, and a cluster's records keep "
                     "one value, so k-anonymity is unchanged")
    if missing:
        notes.append("missing values stay missing (" + ", ".join(
            f"{c}: {n:,}" for c, n in missing.items()) + "); distances and means skip them, "
                     "and k-anonymity counts a missing value as matching any value")
    return notes


def _anonymity(frame: pd.DataFrame, columns: Sequence[str], k: int) -> Anonymity:
    result = k_anonymity(frame, columns, MissingValues.MATCHES_ANY)
    return Anonymity(result.smallest_class, result.classes, result.holds(k), result.all_missing)


def _histogram(labels: np.ndarray) -> dict[str, int]:
    from microagg.core.aggregate import cluster_sizes

    sizes = cluster_sizes(labels)
    values, counts = np.unique(sizes, return_counts=True)
    return {str(int(v)): int(c) for v, c in zip(values, counts, strict=True)}


def clusters_of(labels: np.ndarray) -> Clusters:
    """The clusters of a partition (1-D labels): count, smallest, largest, size histogram."""

    from microagg.core.aggregate import cluster_sizes

    sizes = cluster_sizes(labels)
    return Clusters(count=int(sizes.size), size_histogram=_histogram(labels),
                    smallest=int(sizes.min()), largest=int(sizes.max()))


def cluster_summary(labels: np.ndarray, columns: Sequence[str]
                    ) -> Clusters | dict[str, Clusters]:
    """The clusters of ``labels``; one entry per attribute for a univariate (2-D) partition."""
    if labels.ndim == 1:
        return clusters_of(labels)
    return {c: Clusters(count=int(labels[:, j].max()) + 1,
                        size_histogram=_histogram(labels[:, j]))
            for j, c in enumerate(columns)}
