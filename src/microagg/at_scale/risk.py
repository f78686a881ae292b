"""The frequency-based risk measures of categorical keys on a Dask cluster (``microagg risk
--engine dask``).

One group-by: every partition counts its records and sums their weights per combination of
key values; the partial tables are added up into the table of all combinations (every
missing value one value, as :func:`~microagg.core.frequencies.key_codes` reads them), on
which f_k and F_k follow as on one machine (:func:`~microagg.core.frequencies.key_frequencies`
with the combinations weighted by their records and weights: under ``matches-any`` a
combination matches those that agree with it on every key both have). Then the individual
risk of every combination (:func:`microagg.risk.individual.individual_risk`), and the
table's measures as sums over combinations weighted by their records. With ``records_out``
a second pass groups every partition again and writes f_k, F_k and the risk of every
record, partition by partition, in input order: each partition receives the measures of its
own combinations only. The numbers are those of :func:`microagg.risk.categorical_risk`
(tests/test_scale_risk.py). The table of combinations is held by the client: its size is the
number of distinct combinations.

The household risk (``household``: 1 − Π (1 − r_i) over a household's members,
:func:`microagg.risk.individual.household_risk`) is a second pass: every partition receives
the risk of its own combinations, sums log(1 − r_i) and counts its records per household, and
the client adds the partial sums of a household that spans partitions; its expected
re-identifications are Σ over households of members × risk. With ``records_out`` each
partition then receives the risk of its own households, a column after ``risk``. SUDA2 and
l-diversity stay on one machine: the measures the Dask group-by computes, and those
it skips, are those :mod:`microagg.risk.registry` declares so (``at_scale``); a declared
measure it computes receives the combinations, each standing for its records
(:attr:`~microagg.risk.registry.MeasureInput.counts`), and its per-record columns join f_k,
F_k and the risk in ``records_out``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.at_scale.dataset import Dataset, Piece, read_piece, write_dataset
from microagg.at_scale.storage import Location
from microagg.core.frequencies import all_missing, combination_ids, key_codes, key_frequencies
from microagg.data.table import missing_mask
from microagg.data.weights import sampling_weights
from microagg.errors import InputError
from microagg.options import MissingValues, parse
from microagg.risk.categorical import k_values
from microagg.risk.individual import individual_risk
from microagg.risk.registry import MEASURES, Measured, computed

__all__ = ["ScaleRisk", "combination_table", "partial_counts", "risk_at_scale"]

_COUNT, _WEIGHT = "__microagg_count", "__microagg_weight"


@dataclass(frozen=True)
class ScaleRisk:
    """The table's risk measures from the combinations of key values (module docstring):
    ``combinations`` holds one row per combination: its f_k, F_k, risk and ``records``."""

    keys: list[str]
    weight: str | None
    missing: MissingValues
    combinations: pd.DataFrame
    violations: dict[int, int]
    weighted_violations: dict[int, int] | None
    all_missing: int = 0  # records whose keys are all missing (counted apart)
    measured: dict[str, Measured] = field(default_factory=dict)  # declared ones computed
    household: str | None = None  # the household column of the household risk
    household_expected: float | None = None  # Σ over records of their household's risk

    @property
    def n(self) -> int:
        return int(self.combinations["records"].sum())

    @property
    def expected_reidentifications(self) -> float:
        return float(np.sum(self.combinations["records"] * self.combinations["risk"]))

    @property
    def global_risk(self) -> float:
        return self.expected_reidentifications / self.n if self.n else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the keys of :meth:`CategoricalRisk.to_dict`, the measures that are
        not frequency counts null and named in ``skipped``."""
        table = self.combinations
        return {
            "n": self.n, "keys": self.keys, "weight": self.weight,
            "missing": self.missing.value, "all_missing": self.all_missing,
            "sample_uniques": int(table["records"][table["fk"] == 1].sum()),
            "global_risk": self.global_risk, "global_risk_percent": 100 * self.global_risk,
            "expected_reidentifications": self.expected_reidentifications,
            "largest_risk": float(table["risk"].max()) if len(table) else 0.0,
            "household_risk": None if self.household_expected is None else {
                "column": self.household,
                "expected_reidentifications": self.household_expected,
                "global_risk": self.household_expected / self.n if self.n else 0.0,
                "global_risk_percent": (100 * self.household_expected / self.n
                                        if self.n else 0.0)},
            "violations": {str(k): v for k, v in self.violations.items()},
            "weighted_violations": (None if self.weighted_violations is None else
                                    {str(k): v for k, v in self.weighted_violations.items()}),
            "suda_contributions": None, "suda": None, "l_diversity": None,
            **{m.name: m.figures_of(self.measured.get(m.name)) for m in computed()},
            "combinations": len(table), "engine": "dask",
            "skipped": [m.name for m in MEASURES.values() if not m.at_scale
                        and not (m.name == "household_risk" and self.household is not None)],
        }



def _keys_of(piece: Piece, keys: Sequence[str], weight: str | None) -> pd.DataFrame:
    """The partition's keys and, checked, its weights."""
    frame = read_piece(piece, [*keys, *([weight] if weight else [])]).reset_index(drop=True)
    if weight is not None:
        frame[weight] = sampling_weights(frame[weight], weight, where=f" of {piece.path}")
    return frame


def _groups(frame: pd.DataFrame, keys: Sequence[str]) -> Any:
    """The partition's records grouped by their key values, in order of first appearance."""
    return frame.groupby(list(keys), dropna=False, sort=False, observed=True)


def partial_counts(piece: Piece, keys: Sequence[str], weight: str | None) -> pd.DataFrame:
    """Records and summed weights per combination of one partition (run on a worker).

    Parameters
    ----------
    piece : Piece
        The partition.
    keys : sequence of str
        The columns whose combinations of values are counted.
    weight : str, optional
        The sampling weight column, summed per combination (else every record weighs 1).

    Returns
    -------
    pandas.DataFrame
        One row per combination present: its values, records and summed weights, in order
        of first appearance (the input of :func:`combination_table`).
    """
    frame = _keys_of(piece, keys, weight)
    frame[_COUNT] = 1
    frame[_WEIGHT] = 1.0 if weight is None else frame[weight]
    return _groups(frame, keys)[[_COUNT, _WEIGHT]].sum().reset_index()


def combination_table(partials: Sequence[pd.DataFrame], keys: Sequence[str]
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The combinations of key values over all partitions, told apart by their codes so that
    every missing value (NaN, None, a blank text) is one value, as on one machine.

    Parameters
    ----------
    partials : sequence of pandas.DataFrame
        The tables of :func:`partial_counts`, one per partition.
    keys : sequence of str
        Their key columns.

    Returns
    -------
    codes, records, weights, ids : numpy.ndarray
        Per combination its codes (-1 where missing), records and summed weights, and the
        combination of every row of the partitions' tables, in their order.
    """
    table = pd.concat(partials, ignore_index=True)
    codes = key_codes(table, keys)
    ids = combination_ids(codes, range(len(keys)))
    first = np.unique(ids, return_index=True)[1]
    records = np.bincount(ids, weights=table[_COUNT].to_numpy(np.float64))
    weights = np.bincount(ids, weights=table[_WEIGHT].to_numpy(np.float64))
    return codes[first], np.rint(records).astype(np.int64), weights, ids


def _records(piece: Piece, keys: Sequence[str], measures: pd.DataFrame,
             household: str | None = None, homes: pd.Series | None = None) -> pd.DataFrame:
    """f_k, F_k and the risk of every record of one partition, in its row order:
    ``measures`` holds those of the partition's own combinations, in the order its first
    pass met them (the same grouping, so the same order); with ``household``, the risk of
    the record's household (``homes``: of the partition's households) after ``risk``."""
    frame = read_piece(piece, [*keys, *([household] if household else [])]
                       ).reset_index(drop=True)
    records = measures.iloc[_groups(frame, keys).ngroup().to_numpy()].reset_index(drop=True)
    if household is None or homes is None:
        return records
    at = records.columns.get_loc("risk") + 1
    records.insert(at, "household_risk", homes.reindex(frame[household]).to_numpy())
    return records


def _household_logs(piece: Piece, keys: Sequence[str], household: str,
                    measures: pd.DataFrame) -> pd.DataFrame:
    """Σ log(1 − r_i) and the records of every household of one partition (``measures``: as
    :func:`_records`), indexed by the household's value; a missing household is refused."""
    frame = read_piece(piece, [*keys, household]).reset_index(drop=True)
    missing = missing_mask(frame[household])
    if missing.any():
        raise InputError(f"household column '{household}': a record of {piece.path} has "
                         "none; every record needs its household")
    risk = measures["risk"].to_numpy()[_groups(frame, keys).ngroup().to_numpy()]
    with np.errstate(divide="ignore"):
        logs = np.log1p(-risk.astype(np.float64))
    table = pd.DataFrame({"log": logs, "members": 1}, index=frame[household].to_numpy())
    return table.groupby(level=0, sort=False).sum()


def _household_risk(client: Any, dataset: Dataset, keys: Sequence[str], household: str,
                    own: Sequence[Any]) -> tuple[float, list[pd.Series]]:
    """The expected re-identifications of the household risk, and the risk of every
    partition's households (module docstring); ``own``: every partition's measures,
    scattered."""
    import dask

    partials = client.compute([dask.delayed(_household_logs)(p, keys, household, mine)
                               for p, mine in zip(dataset.pieces, own, strict=True)],
                              sync=True)
    whole = pd.concat(partials).groupby(level=0, sort=False).sum()
    risk = -np.expm1(whole["log"].to_numpy())
    expected = float(np.sum(risk * whole["members"].to_numpy()))
    homes = pd.Series(risk, index=whole.index)
    return expected, [homes.loc[part.index] for part in partials]


def _summed(codes: np.ndarray, missing: MissingValues, values: np.ndarray) -> np.ndarray:
    """Σ ``values`` over the combinations matching each combination."""
    summed = key_frequencies(codes, missing, values)[1]
    assert summed is not None
    return summed


def risk_at_scale(client: Any, dataset: Dataset, keys: Sequence[str], *,
                  weight: str | None = None,
                  missing: MissingValues | str = MissingValues.MATCHES_ANY,
                  k: Iterable[int] = (), records_out: str | Path | Location | None = None,
                  progress: Callable[[int], None] | None = None,
                  parameters: Mapping[str, Any] | None = None,
                  household: str | None = None) -> ScaleRisk:
    """The frequency-based risk measures of ``keys`` over ``dataset`` (module docstring), and
    with ``records_out`` a Parquet data set of every record's fk, Fk and risk.

    Parameters
    ----------
    client
        A ``distributed.Client``.
    dataset
        The partitions (:func:`microagg.at_scale.dataset.open_dataset`).
    keys, weight, missing, k
        As :func:`microagg.risk.categorical_risk`.
    records_out
        A folder (or URL: :mod:`~microagg.at_scale.storage`) to write one row per record
        to, partition by partition in input order.
    progress
        Called with the records written so far.
    parameters
        As :func:`microagg.risk.categorical_risk`: those of the declared measures the
        group-by computes.
    household
        The household identifier column: adds the household risk (a second pass).

    Returns
    -------
    ScaleRisk
        The measures, and the table of combinations they come from.
    """
    import dask

    missing = parse(MissingValues, missing, "`missing`")
    keys = list(keys)
    if not keys:
        raise InputError("`keys` is needed")
    if len(set(keys)) != len(keys):
        raise InputError(f"`keys` names a column twice: {', '.join(keys)}")
    dataset.require([*keys, *([weight] if weight else []), *([household] if household else [])])
    if weight is not None and weight in keys:
        raise InputError(f"`weight` column '{weight}' is also a key variable")
    if household is not None and household in keys:
        raise InputError(f"`household` column '{household}' is also a key variable")
    ks = k_values(k)
    partials = client.compute([dask.delayed(partial_counts)(p, keys, weight)
                               for p in dataset.pieces], sync=True)
    if not any(len(part) for part in partials):
        raise InputError(f"{dataset.source} has no rows")
    codes, records, weights, ids = combination_table(partials, keys)
    fk = np.rint(_summed(codes, missing, records.astype(np.float64))).astype(np.int64)
    Fk = fk.astype(np.float64) if weight is None else _summed(codes, missing, weights)
    measures = pd.DataFrame({"fk": fk, "Fk": Fk,
                             "risk": individual_risk(fk, None if weight is None else Fk)})
    given = {"keys": keys, "codes": codes, "fk": fk, "Fk": Fk,
             "risk": measures["risk"].to_numpy(), "missing": missing, "counts": records,
             "weights": None if weight is None else weights}
    measured = {m.name: result for m in computed() if m.at_scale
                if (result := m.measured(given, **(parameters or {}))) is not None}
    for name, found in measured.items():
        measures = measures.assign(**{c: found.columns[c] for c in MEASURES[name].columns})
    own: list[Any] = []
    if records_out is not None or household is not None:
        bounds = np.cumsum([0, *(len(part) for part in partials)])
        own = client.scatter([measures.iloc[ids[a:b]].reset_index(drop=True)
                              for a, b in itertools.pairwise(bounds)])
    expected: float | None = None
    homes: list[Any] = [None] * len(dataset.pieces)
    if household is not None:
        expected, homes = _household_risk(client, dataset, keys, household, own)
    scale = ScaleRisk(keys, weight, missing, measures.assign(records=records),
                       {q: int(records[fk < q].sum()) for q in ks},
                       None if weight is None else {q: int(records[Fk < q].sum()) for q in ks},
                       int(records[all_missing(codes)].sum()), measured, household, expected)
    if records_out is not None:
        if household is not None:
            homes = client.scatter(homes)
        parts = [dask.delayed(_records)(p, keys, mine, household, mine_homes)
                 for p, mine, mine_homes in zip(dataset.pieces, own, homes, strict=True)]
        write_dataset(client, parts, records_out, source=dataset.source, progress=progress)
    return scale
