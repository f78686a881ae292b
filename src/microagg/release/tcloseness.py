"""k-anonymous t-close release (paper 002): quasi-identifiers replaced by the centroids of
clusters whose confidential distributions are within EMD t of the whole table's."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from microagg.core.distance import scale
from microagg.core.emd import emd_by_class
from microagg.core.verifiers import equivalence_classes, ground_model, k_anonymity
from microagg.data.schema import Kind, Role, Schema
from microagg.data.table import decode, encode, require_rows_and_columns
from microagg.errors import InputError
from microagg.options import GroundDistance, Method, Scaling, TClosenessMethod, parse
from microagg.partition._validate import check_k
from microagg.partition.tcloseness import check_t, t_close_partition
from microagg.release.base import Release
from microagg.release.inputs import check_clamp, require_known
from microagg.release.kanonymity import (
    categorical_part,
    cluster_summary,
    partition_table,
    replace_by_clusters,
    resolve_scaling,
)
from microagg.release.report import TClosenessReport

__all__ = ["tclose"]

Progress = Callable[[int], None]


def _roles(schema: Schema, quasi: Sequence[str] | None, confidential: Sequence[str] | None
           ) -> tuple[list[str], list[str]]:
    quasi = list(dict.fromkeys(quasi)) if quasi else list(schema.quasi_identifiers)
    confidential = (list(dict.fromkeys(confidential)) if confidential
                    else list(schema.names_with_role(Role.CONFIDENTIAL)))
    if not quasi:
        raise InputError("no quasi-identifier: name them with --quasi or declare them in the "
                         "schema")
    if not confidential:
        raise InputError("no confidential attribute: name it with --confidential or declare "
                         "it in the schema")
    require_known(schema, quasi, "--quasi")
    require_known(schema, confidential, "--confidential")
    both = [c for c in confidential if c in quasi]
    if both:
        raise InputError(f"column '{both[0]}' cannot be both quasi-identifier and "
                         "confidential")
    numeric_first = ([c for c in quasi if schema[c].is_numeric]
                     + [c for c in quasi if schema[c].is_categorical])
    return numeric_first, confidential


def tclose(frame: pd.DataFrame, *, k: int, t: float, quasi: Sequence[str] | None = None,
           confidential: Sequence[str] | None = None,
           method: TClosenessMethod | str = TClosenessMethod.T_CLOSENESS_FIRST,
           schema: Schema | None = None, distance: GroundDistance | str | None = None,
           microaggregation: Method | str = Method.MDAV,
           scaling: Scaling | str = Scaling.AUTO, drop_incomplete: bool = False,
           clamp: bool = False, threads: int | None = None,
           progress: Progress | None = None) -> Release:
    """A k-anonymous t-close release by microaggregation (paper 002).

    Quasi-identifiers (``quasi``, default the schema's) are replaced by the centroid of their
    class (means; marginality centroids for categories); the confidential attributes
    (``confidential``, default the schema's) and other non-identifier columns are written as
    they are, rows in input order. Every class has at least k records and, for every
    confidential attribute, an EMD of at most t to the whole table: ordered distance for
    numeric and ordinal attributes, ``distance`` (``equal``, the default, or ``hierarchical``
    on the taxonomy) for nominal ones. ``method``: ``t-closeness-first`` (Alg. 3, default),
    ``k-anonymity-first`` (Alg. 2) or ``merge`` (Alg. 1 after ``microaggregation``, any
    partitioner of :func:`microagg.microaggregate`); Alg. 2 and 3 are followed by Alg. 1's
    merging of any class still above t. The report is computed on the written table.
    ``threads`` caps the threads of Alg. 3 and of the microaggregation ``merge`` starts
    from; Alg. 2 runs on one thread.
    """
    method = parse(TClosenessMethod, method, "method")
    microaggregation = parse(Method, microaggregation, "microaggregation")
    if microaggregation is not Method.MDAV and method is not TClosenessMethod.MERGE:
        raise InputError(f"--microaggregation applies to --method merge only, not "
                         f"{method.value}")
    nominal = None if distance is None else parse(GroundDistance, distance, "distance")
    if nominal is GroundDistance.ORDERED:
        raise InputError("--distance chooses the EMD of nominal attributes: equal or "
                         "hierarchical (numeric and ordinal ones always use the ordered one)")
    t = check_t(t)
    require_rows_and_columns(frame)
    schema = (Schema.infer(frame) if schema is None else schema).complete(frame)
    quasi, confidential = _roles(schema, quasi, confidential)
    if clamp:
        check_clamp(schema, [*quasi, *confidential])
    schema = schema.with_roles({**{c: Role.QUASI for c in quasi},
                                **{c: Role.CONFIDENTIAL for c in confidential}})
    if nominal is not None and not any(schema[c].kind is Kind.NOMINAL for c in confidential):
        raise InputError(f"--distance chooses the EMD of nominal confidential attributes; "
                         f"{', '.join(confidential)} use the ordered distance")
    if threads is not None and method is TClosenessMethod.K_ANONYMITY_FIRST:
        raise InputError("--threads applies to t-closeness-first and merge; "
                         "k-anonymity-first runs on one thread")
    table = encode(frame, schema, drop_incomplete=drop_incomplete, clamp=clamp)
    k = check_k(k, table.n_rows, least=2)
    models = []
    for name in confidential:
        chosen = nominal if table.schema[name].kind is Kind.NOMINAL else None
        model = ground_model(table, name, chosen)
        if model.m < 2 or np.unique(model.values).size < 2:
            raise InputError(f"confidential attribute '{name}' is constant: it discloses "
                             "nothing and t-closeness cannot be measured on it")
        models.append(model)
    numeric = [c for c in quasi if table.schema[c].is_numeric]
    categorical = categorical_part(table, quasi)
    resolved = resolve_scaling(scaling, bool(categorical.metrics))
    X = scale(table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0)),
              resolved, [table.schema[c].bounds for c in numeric])

    def microaggregate(size: int) -> np.ndarray:
        return partition_table(table, quasi, size, method=microaggregation, scaling=scaling,
                               threads=threads, progress=progress)

    partition = t_close_partition(X, models, k, t, method=method, categorical=categorical,
                                  microaggregate=microaggregate, progress=progress,
                                  threads=threads)
    labels = partition.labels
    values = replace_by_clusters(table, quasi, labels)
    kept = [a.name for a in table.schema if a.role is not Role.IDENTIFIER]
    masked = decode(table, numeric=values.numeric, codes=values.codes,
                    categories=values.concepts, columns=kept)
    written = equivalence_classes(masked, quasi)
    largest = {m.name: float(emd_by_class(written, m).max()) for m in models}
    anonymity = k_anonymity(masked, quasi)
    notes = []
    if partition.merges:
        notes.append(f"{partition.merges} merge(s) of Alg. 1 brought every class within t"
                     + ("" if method is TClosenessMethod.MERGE else
                        f" after {method.value} ({partition.classes_before_merging} classes)"))
    if values.generalized:
        notes.append("some categorical quasi-identifiers were replaced by inner concepts of "
                     "their taxonomy; they are listed under generalized_categories")
    report = TClosenessReport(
        method=method.value, k=k, effective_k=partition.effective_k, t=t,
        quasi_identifiers=quasi, confidential=confidential,
        distances={m.name: m.distance.value for m in models}, records=table.n_rows,
        rows_dropped_as_incomplete=int(len(frame) - table.n_rows),
        identifiers_dropped=[a.name for a in table.schema if a.role is Role.IDENTIFIER],
        released_unchanged=[c for c in kept if c not in quasi],
        clusters=cluster_summary(labels, quasi),
        classes_before_merging=partition.classes_before_merging, merges=partition.merges,
        largest_emd=largest,
        k_anonymity={"smallest_class": anonymity.smallest_class,
                     "classes": anonymity.classes, "holds": anonymity.holds(k)},
        t_closeness_holds=all(v <= t + 1e-9 for v in largest.values()),
        microaggregation=(microaggregation.value if method is TClosenessMethod.MERGE
                          else None),
        scaling=resolved.value, generalized_categories=values.generalized,
        clamped=dict(table.clamped), notes=notes)
    if not (report.k_anonymity["holds"] and report.t_closeness_holds):
        raise AssertionError("the written table fails its own k-anonymity or t-closeness")
    return Release(frame=masked, labels=labels, report=report)
