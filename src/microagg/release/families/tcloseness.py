"""k-anonymous t-close release (paper 002): quasi-identifiers replaced by the centroids of
clusters whose confidential distributions are within EMD t of the whole table's.

Missing quasi-identifier values are taken by every method (the distances and centroids of
:mod:`microagg.partition.tcloseness`). Each member of a class is written with the class's
value (its centroid over the values present; a value missing in the whole class stays
missing), so every class is written as one combination of values. Under ``matches-any``
(a missing value matches any value, the semantics the report declares) the records that
match a record are then a union of whole classes, each within t, and their confidential
distribution is within t too, since the EMD to a fixed distribution is convex; k-anonymity
holds under both semantics. The written table is verified under ``matches-any``. A missing
confidential value is a category of its own for a nominal attribute and is refused for an
ordered one (:mod:`microagg.core.verifiers`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pandas as pd

from microagg.core.distance import scale
from microagg.core.verifiers import emd_by_written_class, ground_model, k_anonymity
from microagg.data.roles import NEVER_MASKED
from microagg.data.schema import Kind, Role, Schema
from microagg.data.table import (
    Table,
    decode,
    encode,
    missing_counts,
    require_rows_and_columns,
)
from microagg.errors import InputError, ParameterError
from microagg.options import GroundDistance, MissingValues, Scaling, TClosenessMethod
from microagg.partition._validate import check_k
from microagg.release.base import Release
from microagg.release.design import Design
from microagg.release.families.kanonymity import (
    categorical_part,
    clusters_of,
    numeric_part,
    replace_by_clusters,
    resolve_scaling,
)
from microagg.release.inputs import check_clamp, refuse_suspects, require_known, resolve_schema
from microagg.release.methods.base import Family, ReleaseMethod
from microagg.release.methods.mdav import SCALING_HELP
from microagg.release.params import Choice, Interval, Optional, param
from microagg.release.reports.report import Anonymity, TClosenessReport

if TYPE_CHECKING:
    from microagg.core.emd import GroundModel
    from microagg.partition.tcloseness import TClosePartition

__all__ = ["TCloseMethod"]

Progress = Callable[[int], None]


def _roles(schema: Schema, quasi: Sequence[str] | None, confidential: Sequence[str] | None,
           *, declared: bool, frame: pd.DataFrame,
           roles: Mapping[str, Role | str] | None) -> tuple[list[str], list[str]]:
    """(quasi-identifiers numeric first, confidential attributes): as named, else the
    schema's; without a declared schema every column that may be masked and is not
    confidential is a quasi-identifier (as for a k-anonymous release: nothing leaves
    unmasked by default), a column suspected to be an identifier or a weight refused."""
    confidential = (list(confidential) if confidential
                    else list(schema.names_with_role(Role.CONFIDENTIAL)))
    if not confidential:
        raise InputError("no confidential attribute: name it with `confidential` or declare "
                         "it in the schema")
    require_known(schema, confidential, "`confidential`")
    if quasi:
        quasi = list(quasi)
    elif declared:
        quasi = list(schema.quasi_identifiers)
    else:
        quasi = [a.name for a in schema
                 if a.role not in NEVER_MASKED and a.name not in confidential]
        refuse_suspects(frame, quasi, roles)
    if not quasi:
        raise InputError("no quasi-identifier: name them with `quasi` or declare them in the "
                         "schema")
    require_known(schema, quasi, "`quasi`")
    both = [c for c in confidential if c in quasi]
    if both:
        raise InputError(f"column '{both[0]}' cannot be both quasi-identifier and "
                         "confidential")
    numeric_first = ([c for c in quasi if schema[c].is_numeric]
                     + [c for c in quasi if schema[c].is_categorical])
    return numeric_first, confidential


@dataclass(frozen=True, kw_only=True)
class TCloseMethod(ReleaseMethod):
    """A k-anonymous t-close release by microaggregation (paper 002): the family's pipeline
    (:meth:`release`) around the method's partition algorithm (``algorithm``).

    Every method has the class size ``k``, the largest EMD ``t``, the EMD of nominal
    confidential attributes (``distance``: equal, or hierarchical on the schema's taxonomy)
    and the ``scaling`` of the numeric quasi-identifiers.
    """

    family: ClassVar[Family] = Family.T_CLOSENESS
    algorithm: ClassVar[TClosenessMethod]
    uses_threads: ClassVar[bool] = True

    k: int = param(Interval(int, 2), help="Smallest class size.")
    t: float = param(Interval(float, 0, 1, closed="right"),
                     help="Largest EMD of a class to the whole table, in (0, 1].")
    distance: GroundDistance | None = param(
        Optional(Choice(GroundDistance)), default=None,
        help="EMD of nominal confidential attributes: equal (default) | hierarchical (on the "
             "schema's taxonomy).")
    scaling: Scaling = param(Choice(Scaling), default=Scaling.AUTO, help=SCALING_HELP,
                             aliases=("--standardize",))

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.distance is GroundDistance.ORDERED:
            raise ParameterError("distance", "chooses the EMD of nominal attributes: equal or "
                                 "hierarchical (numeric and ordinal ones always use the "
                                 "ordered one)")

    def microaggregation_labels(self, table: Table, quasi: Sequence[str], size: int, *,
                                threads: int | None, progress: Progress | None
                                ) -> np.ndarray:
        """The microaggregation ``merge`` starts from (the other methods start from none)."""
        raise InputError(f"{self.name} does not start from a microaggregation")

    def missing_refusal(self) -> str | None:
        """Why this method cannot take missing quasi-identifier values (None: it can)."""
        return None

    def release(self, frame: pd.DataFrame, *, quasi: Sequence[str] | None = None,
                confidential: Sequence[str] | None = None, schema: Schema | None = None,
                roles: Mapping[str, Role | str] | None = None,
                drop_incomplete: bool = False, clamp: bool = False,
                round_values: bool = True, threads: int | None = None,
                progress: Progress | None = None) -> Release[TClosenessReport]:
        """A k-anonymous t-close release of ``frame``.

        Quasi-identifiers (``quasi``, default the schema's) are replaced by the centroid of
        their class (means; marginality centroids for categories); the confidential
        attributes (``confidential``, default the schema's) and other non-identifier columns
        are written as they are, rows in input order. Every class has at least k records and,
        for every confidential attribute, an EMD of at most t to the whole table: ordered
        distance for numeric and ordinal attributes, ``distance`` for nominal ones. The report
        is computed on the written table. ``threads`` caps the threads of Alg. 3 and of the
        microaggregation ``merge`` starts from. Without a schema and ``quasi``, every column
        that may be masked and is not confidential is a quasi-identifier. Cluster means are
        weighted by the schema's ``weight`` column (``roles``), written unchanged.

        Missing quasi-identifier values are skipped by distances and centroids, and every
        member of a class is written with the class's value (a value missing in the whole
        class stays missing), so that, a missing value matching any value, every set of
        matching records is a union of t-close classes (module docstring). A missing
        confidential value is a category of its own for a nominal attribute; an ordered one
        with missing values is refused. ``drop_incomplete`` drops the rows with a missing
        value first.
        """

        from microagg.core.threads import check_threads
        from microagg.partition.tcloseness import t_close_partition

        if threads is not None and not self.uses_threads:
            raise ParameterError("threads", f"applies to methods that split their passes "
                                 f"between threads, not {self.name} (it runs on one thread)")
        threads = check_threads(threads)
        table, quasi, confidential = _encoded(self, frame, quasi, confidential, schema,
                                              drop_incomplete, clamp, roles)
        check_k(self.k, table.n_rows, least=2)
        missing = missing_counts(table, quasi)
        if missing and (refusal := self.missing_refusal()) is not None:
            name, count = next(iter(missing.items()))
            raise InputError(f"column '{name}' has {count:,} missing value(s): {refusal}, or "
                             "drop the incomplete rows (`drop_incomplete`)")
        models = _ground_models(table, confidential, self.distance)
        categorical = categorical_part(table, quasi)
        X, bounds = numeric_part(table, quasi)
        X = scale(X, resolve_scaling(self.scaling, bool(categorical.metrics)), bounds)

        def microaggregate(size: int) -> np.ndarray:
            return self.microaggregation_labels(table, quasi, size, threads=threads,
                                                progress=progress)

        partition = t_close_partition(X, models, self.k, self.t, method=self.algorithm,
                                      categorical=categorical, microaggregate=microaggregate,
                                      progress=progress, threads=threads)
        return _tclose_release(self, frame, table, quasi, confidential, models, partition,
                               bool(categorical.metrics), round_values,
                               Design.of(frame, table, self.k).weights)

    def reported_microaggregation(self) -> str | None:
        return None


def _encoded(method: TCloseMethod, frame: pd.DataFrame, quasi: Sequence[str] | None,
             confidential: Sequence[str] | None, schema: Schema | None,
             drop_incomplete: bool, clamp: bool,
             roles: Mapping[str, Role | str] | None = None
             ) -> tuple[Table, list[str], list[str]]:
    """The table with its quasi-identifiers and confidential attributes, checked."""
    require_rows_and_columns(frame)
    schema, declared = resolve_schema(frame, schema, roles)
    quasi, confidential = _roles(schema, quasi, confidential, declared=declared, frame=frame,
                                 roles=roles)
    if clamp:
        check_clamp(schema, [*quasi, *confidential])
    schema = schema.with_roles({**{c: Role.QUASI for c in quasi},
                                **{c: Role.CONFIDENTIAL for c in confidential}})
    if (method.distance is not None
            and not any(schema[c].kind is Kind.NOMINAL for c in confidential)):
        raise ParameterError("distance", f"chooses the EMD of nominal confidential "
                             f"attributes; {', '.join(confidential)} use the ordered distance")
    table = encode(frame, schema, drop_incomplete=drop_incomplete, clamp=clamp, missing=True)
    return table, quasi, confidential


def _ground_models(table: Table, confidential: Sequence[str],
                   nominal: GroundDistance | None) -> list[GroundModel]:
    """The EMD model of every confidential attribute; a constant one is refused."""
    models = []
    for name in confidential:
        chosen = nominal if table.schema[name].kind is Kind.NOMINAL else None
        model = ground_model(table, name, chosen)
        if model.m < 2 or np.unique(model.values).size < 2:
            raise InputError(f"confidential attribute '{name}' is constant: it discloses "
                             "nothing and t-closeness cannot be measured on it")
        models.append(model)
    return models


def _tclose_release(method: TCloseMethod, frame: pd.DataFrame, table: Table,
                    quasi: list[str], confidential: list[str], models: list[GroundModel],
                    partition: TClosePartition, has_categories: bool, round_values: bool = True,
                    weights: np.ndarray | None = None) -> Release[TClosenessReport]:
    """The written table of a t-close partition and its report, verified on the table (a
    missing quasi-identifier value matching any value)."""
    labels = partition.labels
    values = replace_by_clusters(table, quasi, labels, weights, fill_missing=True)
    numeric = values.numeric
    if round_values:  # post-processing of the quasi-identifiers: classes and EMDs unchanged
        numeric = table.rounded(numeric, [c for c in quasi if table.schema[c].is_numeric])
    kept = [a.name for a in table.schema if a.role is not Role.IDENTIFIER]
    masked = decode(table, numeric=numeric, codes=values.codes,
                    categories=values.concepts, columns=kept)
    semantics = MissingValues.MATCHES_ANY
    largest = {m.name: float(emd_by_written_class(masked, quasi, m, semantics).max())
               for m in models}
    anonymity = k_anonymity(masked, quasi, semantics)
    missing = {**missing_counts(table, quasi), **missing_counts(table, confidential)}
    notes = _missing_notes(table, quasi, confidential, weights)
    if partition.merges:
        notes.append(f"{partition.merges} merge(s) of Alg. 1 brought every class within t"
                     + ("" if method.algorithm is TClosenessMethod.MERGE else
                        f" after {method.name} ({partition.classes_before_merging} classes)"))
    if values.generalized:
        notes.append("some categorical quasi-identifiers were replaced by inner concepts of "
                     "their taxonomy; they are listed under generalized_categories")
    report = TClosenessReport(
        method=method.name, k=method.k, effective_k=partition.effective_k, t=method.t,
        quasi_identifiers=quasi, confidential=confidential,
        distances={m.name: m.distance.value for m in models}, records=table.n_rows,
        rows_dropped_as_incomplete=int(len(frame) - table.n_rows),
        identifiers_dropped=[a.name for a in table.schema if a.role is Role.IDENTIFIER],
        released_unchanged=[c for c in kept if c not in quasi],
        clusters=clusters_of(labels),
        classes_before_merging=partition.classes_before_merging, merges=partition.merges,
        largest_emd=largest,
        k_anonymity=Anonymity(anonymity.smallest_class, anonymity.classes,
                              anonymity.holds(method.k), anonymity.all_missing),
        t_closeness_holds=all(v <= method.t + 1e-9 for v in largest.values()),
        microaggregation=method.reported_microaggregation(),
        scaling=resolve_scaling(method.scaling, has_categories).value,
        generalized_categories=values.generalized, clamped=dict(table.clamped),
        weight=next(iter(table.schema.names_with_role(Role.WEIGHT)), None),
        missing_values=missing, missing_semantics=semantics.value, notes=notes)
    if not (report.k_anonymity["holds"] and report.t_closeness_holds):
        raise AssertionError("the written table fails its own k-anonymity or t-closeness")
    return Release(frame=masked, labels=labels, report=report)


def _missing_notes(table: Table, quasi: Sequence[str], confidential: Sequence[str],
                   weights: np.ndarray | None) -> list[str]:
    """What the report says about the weight and the missing values of the input."""
    notes = []
    if weights is not None:
        weight = table.schema.names_with_role(Role.WEIGHT)[0]
        notes.append(f"class means are weighted by '{weight}' (sum(w x) / sum(w)); the weight "
                     "is written unchanged")
    missing = missing_counts(table, quasi)
    if missing:
        notes.append("missing quasi-identifier values (" + ", ".join(
            f"{c}: {n:,}" for c, n in missing.items()) + ") are skipped by distances and "
                     "centroids and written as their class's value (a value missing in the "
                     "whole class stays missing): every class is written as one combination, "
                     "so where a missing value matches any value, the records that match a "
                     "record are a union of t-close classes, t-close too (the EMD is convex)")
    absent = missing_counts(table, confidential)
    if absent:
        notes.append("missing confidential values (" + ", ".join(
            f"{c}: {n:,}" for c, n in absent.items()) + ") are written as they are and "
                     "count in the EMD as a category of their own")
    return notes
