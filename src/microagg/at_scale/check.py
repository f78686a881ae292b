"""k-anonymity of a data set on a Dask cluster (``microagg check --engine dask``).

The classes over the quasi-identifiers are counted by the group-by of
:func:`~microagg.at_scale.risk.risk_at_scale`: every partition counts its records per
combination of values, the client adds the partial tables up and computes the sample
frequency f_k of every combination as one machine does (a missing value matching any value,
or a category of its own; a record whose quasi-identifiers are all missing counted apart).
The smallest and largest class, the number of combinations and the missing values of each
quasi-identifier are those :func:`microagg.evaluation.check.check_table` finds on the whole
table (tests/test_scale_per_record.py). l-diversity and t-closeness compare distributions
within every class and stay on one machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, read_piece
from microagg.at_scale.risk import risk_at_scale
from microagg.core.verifiers import KAnonymity
from microagg.data.table import missing_mask
from microagg.evaluation.check import KCheck, TableCheck
from microagg.options import MissingValues, parse
from microagg.partition._validate import check_k

__all__ = ["check_at_scale"]


def _missing(piece: Piece, quasi: Sequence[str]) -> pd.Series:
    """The missing values of each quasi-identifier in one partition."""
    frame = read_piece(piece, list(quasi))
    return pd.Series({c: int(missing_mask(frame[c]).sum()) for c in quasi}, dtype="int64")


def check_at_scale(client: Any, dataset: Dataset, quasi: Sequence[str], k: int,
                   missing: MissingValues | str = MissingValues.MATCHES_ANY) -> TableCheck:
    """Whether ``dataset`` is k-anonymous over ``quasi`` (module docstring).

    Parameters
    ----------
    client
        A ``distributed.Client``.
    dataset : Dataset
        The partitions (:func:`microagg.at_scale.dataset.open_dataset`).
    quasi : sequence of str
        The quasi-identifiers.
    k : int
        The smallest class required.
    missing : MissingValues or str
        What a missing quasi-identifier value matches, as
        :func:`microagg.evaluation.check.check_table` reads it.

    Returns
    -------
    TableCheck
        Its ``k_anonymity`` as one machine computes it on the whole table.
    """
    import dask

    missing = parse(MissingValues, missing, "missing")
    check_k(k, dataset.n)
    risk = risk_at_scale(client, dataset, quasi, missing=missing, k=[k])
    fk = risk.combinations["fk"]
    classes = KAnonymity(records=risk.n, classes=len(fk), smallest_class=int(fk.min()),
                         largest_class=int(fk.max()), all_missing=risk.all_missing)
    counts = sum(client.compute([dask.delayed(_missing)(p, list(quasi))
                                 for p in dataset.pieces], sync=True))
    return TableCheck(risk.n, list(quasi), KCheck(k, classes), None, None, missing,
                      {c: int(n) for c, n in counts.items() if n})
