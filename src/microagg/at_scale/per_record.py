"""Methods that protect each record on its own, on a Dask cluster (``microagg recode
--engine dask``).

A method whose step reads no other record (``records_alone``: global recoding by declared
breaks or taxonomy levels) gives every record the same values in any
partition as in the whole table, so the cluster runs it partition by partition: every task
reads its partition, releases it by the method under the declared schema, and writes it in
input order; the records never meet. The schema's taxonomy files are read on the client and
travel with the tasks, so that no worker needs to see the client's files. The data set
written holds, row for row, the values one machine writes (tests/test_scale_per_record.py).

The report's figures that need all records come from two group-bys of the key variables
(:func:`~microagg.at_scale.risk.risk_at_scale`), one over the input and one over the data set
written: the risk before and after, and the records in classes below k = 2, 3 and 5.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, open_dataset, read_piece, write_dataset
from microagg.at_scale.risk import ScaleRisk, risk_at_scale
from microagg.at_scale.storage import Location
from microagg.data.schema import Role, Schema
from microagg.errors import InputError, ParameterError

__all__ = ["RISK_KS", "DatasetReport", "PerRecordReport", "per_record_at_scale", "risk_figures"]

RISK_KS = (2, 3, 5)
"""The k of the records-below-k figures of the report."""


class DatasetReport:
    """A report of a data set written on the cluster: its fields are its JSON form."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, as the command prints it and writes it to ``OUT.report.json``.

        Returns
        -------
        dict
            Every field, by name.
        """
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class PerRecordReport(DatasetReport):
    """What a per-record method did on a data set: its parameters, the columns it changed,
    and the frequencies of the key variables before and after, with the names the report of
    one machine gives them (``smallest_class``, ``sample_uniques``, ``below_k``,
    ``classes``, ``all_missing``), and their global risk and expected re-identifications."""

    method: str
    parameters: dict[str, Any]
    keys: list[str]
    changed: list[str]
    records: int
    partitions: int
    identifiers_dropped: list[str]
    released_unchanged: list[str]
    before: dict[str, Any]
    after: dict[str, Any]
    engine: str = "dask"
    notes: list[str] = field(default_factory=list)


def risk_figures(risk: ScaleRisk) -> dict[str, Any]:
    """The figures of the keys the report gives on one machine (``smallest_class``,
    ``sample_uniques``, ``below_k``, ``classes``, ``all_missing``), and the risk.

    Parameters
    ----------
    risk : ScaleRisk
        The group-by of the keys over a data set.

    Returns
    -------
    dict
        The figures, by name.
    """
    table = risk.combinations
    return {"smallest_class": int(table["fk"].min()),
            "sample_uniques": int(table["records"][table["fk"] == 1].sum()),
            "below_k": {str(k): v for k, v in risk.violations.items()},
            "classes": len(table), "all_missing": risk.all_missing,
            "global_risk": risk.global_risk,
            "expected_reidentifications": risk.expected_reidentifications}


def _taxonomy_files(schema: Schema | None) -> dict[str, tuple[str, bytes]]:
    """The taxonomy files the schema names, read here: column -> (file name, content)."""
    if schema is None:
        return {}
    files = {}
    for attribute in schema:
        if attribute.taxonomy is not None:
            try:
                files[attribute.name] = (attribute.taxonomy.name,
                                         Path(attribute.taxonomy).read_bytes())
            except OSError as exc:
                raise InputError(f"cannot read the taxonomy of '{attribute.name}': "
                                 f"{exc.strerror or exc}") from None
    return files


def _release_piece(piece: Piece, method: Any, schema: Schema | None,
                   taxonomies: Mapping[str, tuple[str, bytes]],
                   keys: Sequence[str]) -> pd.DataFrame:
    """One partition released by ``method`` (its rows in order, identifiers dropped); the
    schema's taxonomies are the files read on the client, written to a folder of this task
    (a worker need not see the client's files)."""
    frame = read_piece(piece).reset_index(drop=True)
    if not taxonomies:
        return method.release(frame, keys=list(keys), schema=schema).frame
    assert schema is not None
    with tempfile.TemporaryDirectory(prefix="microagg-") as folder:
        local = {}
        for i, (column, (name, content)) in enumerate(taxonomies.items()):
            path = Path(folder) / str(i) / name
            path.parent.mkdir()
            path.write_bytes(content)
            local[column] = path
        here = Schema(tuple(replace(a, taxonomy=local[a.name]) if a.name in local else a
                            for a in schema))
        return method.release(frame, keys=list(keys), schema=here).frame


def per_record_at_scale(client: Any, dataset: Dataset, output: str | Path | Location,
                        method: Any, *, schema: Schema | None = None,
                        keys: Sequence[str] | None = None,
                        storage_options: Mapping[str, Any] | None = None,
                        progress: Callable[[int], None] | None = None) -> PerRecordReport:
    """Release ``dataset`` by ``method`` partition by partition (module docstring), written
    as the Parquet data set ``output``.

    Parameters
    ----------
    client
        A ``distributed.Client``.
    dataset : Dataset
        The partitions (:func:`microagg.at_scale.dataset.open_dataset`).
    output : str, Path or Location
        The data set to write (a folder, or a URL: :mod:`~microagg.at_scale.storage`).
    method : KeyMethod
        A method of the keys family whose ``records_alone`` is true.
    schema : Schema, optional
        The declared schema (taxonomies, roles); the undeclared columns are read as one
        machine reads them.
    keys : sequence of str, optional
        The key variables of the report's risk (default: the method's columns and the
        schema's quasi-identifiers, as on one machine).
    storage_options : mapping, optional
        Those of ``output`` when it is a URL.
    progress : callable, optional
        Called with the records written so far.

    Returns
    -------
    PerRecordReport
        The method's parameters and the risk of the keys before and after.

    Raises
    ------
    ParameterError
        When the method reads other records (its refusal says what to do instead).
    """
    import dask

    from microagg.release.families.keys import plain_parameters
    from microagg.release.inputs import require_known, resolve_schema

    refusal = method.at_scale_refusal() or (
        None if method.records_alone else "a record's values depend on other records")
    if refusal:
        raise ParameterError("engine", f"dask cannot run {method.name} partition by "
                             f"partition: {refusal}")
    head = dataset.head()
    resolved, declared = resolve_schema(head, schema, None, strict=False)
    chosen = list(dict.fromkeys(keys)) if keys else method.default_keys(resolved, declared)
    require_known(resolved, chosen, "`keys`")
    dataset.require(chosen)
    before = risk_at_scale(client, dataset, chosen, k=RISK_KS)
    taxonomies = _taxonomy_files(schema)
    parts = [dask.delayed(_release_piece)(p, method, schema, taxonomies, chosen)
             for p in dataset.pieces]
    write_dataset(client, parts, output, source=dataset.source, progress=progress,
                  storage_options=storage_options)
    written = open_dataset(output, storage_options=storage_options)
    after = risk_at_scale(client, written, chosen, k=RISK_KS)
    identifiers = [a.name for a in resolved if a.role is Role.IDENTIFIER]
    changed = [c for c in method.named_columns() if c in dataset.columns]
    unchanged = [c for c in written.columns if c not in changed]
    return PerRecordReport(
        method=method.name, parameters=plain_parameters(method), keys=chosen, changed=changed,
        records=dataset.n, partitions=len(dataset.pieces), identifiers_dropped=identifiers,
        released_unchanged=unchanged, before=risk_figures(before),
        after=risk_figures(after),
        notes=["every record is protected on its own, so the data set written is the table "
               "one machine writes, partition by partition in input order"])
