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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, read_piece
from microagg.at_scale.risk import _combinations, _partial, risk_at_scale
from microagg.core.verifiers import KAnonymity
from microagg.data.table import missing_mask
from microagg.errors import InputError
from microagg.evaluation.check import KCheck, LCheck, TableCheck, check_request
from microagg.options import LDiversityKind, MissingValues, parse
from microagg.partition._validate import check_k

__all__ = ["check_at_scale"]


def _missing(piece: Piece, quasi: Sequence[str]) -> pd.Series:
    """The missing values of each quasi-identifier in one partition."""
    frame = read_piece(piece, list(quasi))
    return pd.Series({c: int(missing_mask(frame[c]).sum()) for c in quasi}, dtype="int64")


def _counted(client: Any, dataset: Dataset, columns: Sequence[str]
             ) -> tuple[np.ndarray, np.ndarray]:
    """The combinations of values of ``columns`` over all partitions (their codes: -1 where
    missing) and the records of each, from the group-by of every partition."""
    import dask

    dataset.require(list(columns))
    partials = client.compute([dask.delayed(_partial)(p, list(columns), None)
                               for p in dataset.pieces], sync=True)
    if not any(len(part) for part in partials):
        raise InputError(f"{dataset.source} has no rows")
    codes, records, _, _ = _combinations(partials, list(columns))
    return codes, records


def _l_check(client: Any, dataset: Dataset, quasi: Sequence[str], sensitive: str,
             l: float, kind: LDiversityKind | str | None, c: float | None,  # noqa: E741
             missing: MissingValues) -> tuple[LCheck, int]:
    """The l-diversity of ``sensitive`` over ``quasi`` (module docstring), and the records."""
    from microagg.risk.ldiversity import l_diversity

    if sensitive in quasi:
        raise InputError(f"column '{sensitive}' cannot be both quasi-identifier and sensitive")
    chosen = parse(LDiversityKind, kind or LDiversityKind.DISTINCT, "`l_kind`")
    codes, records = _counted(client, dataset, [*quasi, sensitive])
    report = l_diversity(codes[:, :-1], codes[:, -1], missing, c=2.0 if c is None else c,
                         attribute=sensitive, records=records)
    return LCheck(l, chosen, report), int(records.sum())


def check_at_scale(client: Any, dataset: Dataset, quasi: Sequence[str], k: int | None = None,
                   missing: MissingValues | str = MissingValues.MATCHES_ANY, *,
                   l: float | None = None, sensitive: str | None = None,  # noqa: E741
                   l_kind: LDiversityKind | str | None = None, l_c: float | None = None
                   ) -> TableCheck:
    """Whether ``dataset`` is k-anonymous, and l-diverse, over ``quasi`` (module docstring).

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

    Returns
    -------
    TableCheck
        Its ``k_anonymity`` and ``l_diversity`` as one machine computes them on the whole
        table.
    """
    import dask

    check_request(k=k, t=None, confidential=(), distance=None, l=l, sensitive=sensitive,
                  l_kind=l_kind, l_c=l_c)
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
    counts = sum(client.compute([dask.delayed(_missing)(p, list(quasi))
                                 for p in dataset.pieces], sync=True))
    return TableCheck(n, list(quasi), k_check, None, l_check, missing,
                      {c: int(found) for c, found in counts.items() if found})
