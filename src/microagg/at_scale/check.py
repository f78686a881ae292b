"""k-anonymity of a data set on a Dask cluster (``microagg check --engine dask``).

The classes over the quasi-identifiers are counted by the group-by of
:func:`~microagg.at_scale.risk.risk_at_scale`: every partition counts its records per
combination of values, the client adds the partial tables up and computes the sample
frequency f_k of every combination as one machine does (a missing value matching any value,
or a category of its own; a record whose quasi-identifiers are all missing counted apart).
The smallest and largest class, the number of combinations and the missing values of each
quasi-identifier are those :func:`microagg.evaluation.check.check_table` finds on the whole
table (tests/test_scale_per_record.py).

l-diversity takes one more group-by of the same machinery: every partition counts its
records per combination of quasi-identifier and sensitive values, the client adds the partial
tables up, and :func:`microagg.risk.ldiversity.l_diversity` reads every row of that table as
the records it counts: the classes (under ``matches-any`` the records matching every
combination, the all-missing ones counted apart) and their distinct, entropy and recursive
l are those of the whole table, and so are the records below l (tests/test_scale_check.py).
t-closeness counts the records per combination of quasi-identifier and confidential values
the same way: the whole table's distribution of the attribute (and, for the ordered
distance, its sorted distinct values) and the EMD of every class follow from that table
(:func:`microagg.core.verifiers.t_closeness` with every row standing for its records).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, read_piece
from microagg.at_scale.risk import combination_table, partial_counts, risk_at_scale
from microagg.core.verifiers import KAnonymity
from microagg.data.schema import Attribute, Kind, Schema
from microagg.data.table import missing_mask
from microagg.errors import InputError
from microagg.evaluation.check import KCheck, LCheck, TableCheck, TCheck, check_request
from microagg.options import GroundDistance, LDiversityKind, MissingValues, parse
from microagg.partition._validate import check_k

__all__ = ["check_at_scale"]


def _missing(piece: Piece, quasi: Sequence[str]) -> pd.Series:
    """The missing values of each quasi-identifier in one partition."""
    frame = read_piece(piece, list(quasi))
    return pd.Series({c: int(missing_mask(frame[c]).sum()) for c in quasi}, dtype="int64")


def _counted(client: Any, dataset: Dataset, columns: Sequence[str]
             ) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """The combinations of values of ``columns`` over all partitions (their codes: -1 where
    missing), the records of each and their values, from the group-by of every partition."""
    import dask

    dataset.require(list(columns))
    partials = client.compute([dask.delayed(partial_counts)(p, list(columns), None)
                               for p in dataset.pieces], sync=True)
    if not any(len(part) for part in partials):
        raise InputError(f"{dataset.source} has no rows")
    codes, records, _, ids = combination_table(partials, list(columns))
    first = np.unique(ids, return_index=True)[1]
    table = pd.concat([part for part in partials if len(part)], ignore_index=True)
    values = table[list(columns)].iloc[first].reset_index(drop=True).infer_objects()
    return codes, records, values


def _kind(column: pd.Series, declared: Attribute | None) -> Kind:
    """The kind of a confidential attribute: declared, else read off its values as
    :meth:`~microagg.data.schema.Schema.infer` reads them."""
    if declared is not None:
        if declared.kind is Kind.ORDINAL and declared.domain is None:
            raise InputError(f"'{declared.name}' is ordinal: declare the order of its levels "
                             "(domain) in the schema to check its t-closeness")
        return declared.kind
    if isinstance(column.dtype, pd.CategoricalDtype):
        return Kind.ORDINAL if column.cat.ordered else Kind.NOMINAL
    numeric = (pd.api.types.is_numeric_dtype(column)
               and not pd.api.types.is_bool_dtype(column))
    return Kind.NUMERIC if numeric else Kind.NOMINAL


def _t_check(client: Any, dataset: Dataset, quasi: Sequence[str], name: str, t: float,
             distance: GroundDistance | str | None, missing: MissingValues,
             schema: Schema | None) -> tuple[TCheck, int]:
    """The t-closeness of ``name`` over ``quasi`` (module docstring), and the records."""
    from microagg.core.verifiers import t_closeness

    if name in quasi:
        raise InputError(f"column '{name}' cannot be both quasi-identifier and confidential")
    _, records, values = _counted(client, dataset, [*quasi, name])
    chosen = parse(GroundDistance, distance, "`distance`") if distance else None
    if chosen is GroundDistance.ORDERED:
        raise InputError("`distance` is for nominal attributes: equal or hierarchical")
    if chosen is GroundDistance.HIERARCHICAL:
        raise InputError("--engine dask checks t-closeness with the ordered and equal "
                         "distances: check the hierarchical one with --engine local")
    declared = schema[name] if schema is not None and name in schema.names else None
    kind = _kind(values[name], declared)
    if kind is Kind.ORDINAL:
        chosen = None  # the order of the categories
        if declared is not None and declared.domain is not None:
            values[name] = pd.Categorical(values[name], categories=list(declared.domain),
                                          ordered=True)
    else:
        chosen = GroundDistance.ORDERED if kind is Kind.NUMERIC else GroundDistance.EQUAL
    report = t_closeness(values, quasi, name, distance=chosen, missing=missing,
                         records=records)
    return TCheck(t, report), int(records.sum())


def _l_check(client: Any, dataset: Dataset, quasi: Sequence[str], sensitive: str,
             l: float, kind: LDiversityKind | str | None, c: float | None,  # noqa: E741
             missing: MissingValues) -> tuple[LCheck, int]:
    """The l-diversity of ``sensitive`` over ``quasi`` (module docstring), and the records."""
    from microagg.risk.ldiversity import l_diversity

    if sensitive in quasi:
        raise InputError(f"column '{sensitive}' cannot be both quasi-identifier and sensitive")
    chosen = parse(LDiversityKind, kind or LDiversityKind.DISTINCT, "`l_kind`")
    codes, records, _ = _counted(client, dataset, [*quasi, sensitive])
    report = l_diversity(codes[:, :-1], codes[:, -1], missing, c=2.0 if c is None else c,
                         attribute=sensitive, records=records)
    return LCheck(l, chosen, report), int(records.sum())


def check_at_scale(client: Any, dataset: Dataset, quasi: Sequence[str], k: int | None = None,
                   missing: MissingValues | str = MissingValues.MATCHES_ANY, *,
                   l: float | None = None, sensitive: str | None = None,  # noqa: E741
                   l_kind: LDiversityKind | str | None = None, l_c: float | None = None,
                   t: float | None = None, confidential: Sequence[str] = (),
                   distance: GroundDistance | str | None = None, schema: Schema | None = None
                   ) -> TableCheck:
    """Whether ``dataset`` is k-anonymous, l-diverse and t-close over ``quasi`` (module
    docstring).

    Parameters
    ----------
    client
        A ``distributed.Client``.
    dataset : Dataset
        The partitions (:func:`microagg.at_scale.dataset.open_dataset`).
    quasi : sequence of str
        The quasi-identifiers.
    k : int, optional
        The smallest class required.
    missing : MissingValues or str
        What a missing quasi-identifier value matches, as
        :func:`microagg.evaluation.check.check_table` reads it.
    l, sensitive, l_kind, l_c
        The l-diversity asked of ``sensitive``, as
        :func:`microagg.evaluation.check.check_table` reads them.
    t, confidential, distance
        The t-closeness asked of every ``confidential`` attribute, as
        :func:`~microagg.evaluation.check.check_table` reads them (the hierarchical
        distance is checked on one machine).
    schema : Schema, optional
        The kinds of the confidential attributes (numeric and ordinal ones, with the order
        of their levels, use the ordered distance); without it a numeric column is numeric
        and any other nominal.

    Returns
    -------
    TableCheck
        Its ``k_anonymity``, ``l_diversity`` and ``t_closeness`` as one machine computes
        them on the whole table.
    """
    import dask

    check_request(k=k, t=t, confidential=confidential, distance=distance, l=l,
                  sensitive=sensitive, l_kind=l_kind, l_c=l_c)
    missing = parse(MissingValues, missing, "missing")
    k_check, l_check, n = None, None, 0
    if k is not None:
        check_k(k, dataset.n)
        risk = risk_at_scale(client, dataset, quasi, missing=missing, k=[k])
        fk = risk.combinations["fk"]
        classes = KAnonymity(records=risk.n, classes=len(fk), smallest_class=int(fk.min()),
                             largest_class=int(fk.max()), all_missing=risk.all_missing)
        k_check, n = KCheck(k, classes), risk.n
    if l is not None and sensitive is not None:
        l_check, n = _l_check(client, dataset, quasi, sensitive, l, l_kind, l_c, missing)
    t_checks = None
    if t is not None:
        t_checks = []
        for name in confidential:
            found, n = _t_check(client, dataset, quasi, name, t, distance, missing, schema)
            t_checks.append(found)
        if distance and all(c.report.distance is GroundDistance.ORDERED for c in t_checks):
            raise InputError(f"`distance` chooses the EMD of nominal attributes; "
                             f"{', '.join(confidential)} use the ordered distance")
    counts = sum(client.compute([dask.delayed(_missing)(p, list(quasi))
                                 for p in dataset.pieces], sync=True))
    return TableCheck(n, list(quasi), k_check, t_checks, l_check, missing,
                      {c: int(found) for c, found in counts.items() if found})
