"""The disclosure risk of a table's categorical key variables, all measures at once
(``microagg risk``; sdcMicro's ``measure_risk``, ``kAnon_violations``, ``ldiversity`` and
``suda2`` on one table).

:func:`categorical_risk` codes the keys once and returns a :class:`CategoricalRisk`: per
record the sample frequency f_k, the population estimate F_k, the individual risk
(:mod:`~microagg.risk.individual`), the household risk, the SUDA and DIS scores
(:mod:`~microagg.risk.suda`) and the l-diversity of a sensitive attribute
(:mod:`~microagg.risk.ldiversity`); for the table the global risk, the expected number of
re-identifications and the k-anonymity violations (records in classes smaller than k,
unweighted: f_k < k, and weighted: F_k < k, as sdcMicro's ``kAnon_violations``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.frequencies import all_missing, key_codes, key_frequencies
from microagg.data.schema import Role, Schema
from microagg.data.table import require_rows_and_columns
from microagg.data.weights import sampling_weights
from microagg.errors import InputError
from microagg.options import MissingValues, parse
from microagg.risk.individual import household_risk, individual_risk
from microagg.risk.ldiversity import LDiversity, l_diversity
from microagg.risk.registry import MEASURES, Measured, RiskMeasure, computed
from microagg.risk.suda import Suda, suda2

__all__ = ["DEFAULT_K", "CategoricalRisk", "categorical_risk", "declared_measures",
           "k_values"]

DEFAULT_K = (2, 3, 5)
"""The k whose violations are always counted."""


@dataclass(frozen=True)
class CategoricalRisk:
    """Every risk measure of the keys of one table (:func:`categorical_risk`).

    Per record, in row order: ``fk`` (sample frequency), ``Fk`` (estimated population
    frequency: the summed weights, or f_k without a weight), ``risk`` (individual risk),
    ``household_risk`` (None without a household column), the SUDA2 scores in ``suda`` and
    the l-diversity in ``l_diversity`` (None without a sensitive attribute).
    ``violations[k]`` is the number of records with f_k < k, ``weighted_violations[k]``
    (None without a weight) of those with F_k < k. ``all_missing`` counts the records whose
    keys are all missing: under ``matches-any`` they match every record only through
    missing values and are counted apart, as sdcMicro's ``freqCalc`` counts them (their f_k
    is n; they count for no record that has every key: :mod:`microagg.core.frequencies`).
    ``measured`` holds the result of every measure shown from its declaration
    (:func:`microagg.risk.registry.computed`) whose needs were met, by name.
    """

    keys: list[str]
    weight: str | None
    household: str | None
    missing: MissingValues
    fk: np.ndarray
    Fk: np.ndarray
    risk: np.ndarray
    household_risk: np.ndarray | None
    violations: dict[int, int]
    weighted_violations: dict[int, int] | None
    suda: Suda
    l_diversity: LDiversity | None
    all_missing: int = 0
    measured: dict[str, Measured] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """The number of records."""
        return int(self.fk.size)

    @property
    def expected_reidentifications(self) -> float:
        """Σ risk: the expected number of re-identifications (sdcMicro's ``global_risk_ER``)."""
        return float(self.risk.sum())

    @property
    def global_risk(self) -> float:
        """The mean individual risk (sdcMicro's ``global_risk``)."""
        return self.expected_reidentifications / self.n if self.n else 0.0

    @property
    def sample_uniques(self) -> int:
        """The records unique on the keys (f_k = 1)."""
        return int((self.fk == 1).sum())

    def records(self) -> pd.DataFrame:
        """One row per record, in row order: fk, Fk, risk, [household_risk,] suda_score,
        dis_score[, l_distinct, l_entropy, l_recursive], then the declared columns of every
        measure in ``measured``."""
        columns: dict[str, np.ndarray] = {"fk": self.fk, "Fk": self.Fk, "risk": self.risk}
        if self.household_risk is not None:
            columns["household_risk"] = self.household_risk
        columns["suda_score"] = self.suda.scores
        columns["dis_score"] = self.suda.dis_scores
        if self.l_diversity is not None:
            columns["l_distinct"] = self.l_diversity.distinct
            columns["l_entropy"] = self.l_diversity.entropy
            columns["l_recursive"] = self.l_diversity.recursive
        for name, result in self.measured.items():
            columns.update({column: result.columns[column]
                            for column in MEASURES[name].columns})
        return pd.DataFrame(columns)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``microagg risk --json``); its keys are stable: after those of the
        first release, one object per measure shown from its declaration (its figures, in
        order; null when its needs were not met)."""
        household = None
        if self.household_risk is not None:
            expected = float(self.household_risk.sum())
            household = {"column": self.household, "expected_reidentifications": expected,
                         "global_risk": expected / self.n if self.n else 0.0,
                         "global_risk_percent": 100 * expected / self.n if self.n else 0.0}
        return {
            "n": self.n, "keys": self.keys, "weight": self.weight,
            "missing": self.missing.value, "all_missing": self.all_missing,
            "sample_uniques": self.sample_uniques,
            "global_risk": self.global_risk, "global_risk_percent": 100 * self.global_risk,
            "expected_reidentifications": self.expected_reidentifications,
            "largest_risk": float(self.risk.max(initial=0.0)),
            "household_risk": household,
            "violations": {str(k): v for k, v in self.violations.items()},
            "weighted_violations": (None if self.weighted_violations is None else
                                    {str(k): v for k, v in self.weighted_violations.items()}),
            "suda_contributions": self.suda.contributions,
            "suda": self.suda.to_dict(),
            "l_diversity": None if self.l_diversity is None else self.l_diversity.to_dict(),
            **{m.name: m.figures_of(self.measured.get(m.name)) for m in computed()},
        }



def categorical_risk(frame: pd.DataFrame, keys: Sequence[str] | None = None, *,
                     weight: str | None = None, household: str | None = None,
                     sensitive: str | None = None, schema: Schema | None = None,
                     missing: MissingValues | str = MissingValues.MATCHES_ANY,
                     k: Iterable[int] = (), dis_fraction: float = 0.01,
                     l_c: float = 2.0, parameters: Mapping[str, Any] | None = None
                     ) -> CategoricalRisk:
    """The disclosure risk of the categorical key variables ``keys`` of ``frame``.

    Parameters
    ----------
    frame
        The table (any column type; each distinct value of a key is a category).
    keys
        The key variables (quasi-identifiers); default: the quasi-identifiers ``schema``
        declares.
    weight
        The sampling weight column (at least 1 in every row); default: the one ``schema``
        declares, if any. Without a weight the sample is the population: F_k = f_k and the
        risk is 1/f_k.
    household
        The household identifier column; default: the one ``schema`` declares, if any.
    sensitive
        A sensitive attribute whose l-diversity is measured.
    schema
        A schema whose roles give the defaults above.
    missing
        What a missing key value matches: ``matches-any`` (any value, sdcMicro's default) or
        ``category`` (only another missing value).
    k
        Further k whose violations are counted, beside 2, 3 and 5.
    dis_fraction
        The sampling fraction of the SUDA2 DIS score (sdcMicro's default 0.01).
    l_c
        The constant c of recursive (c, l)-diversity (sdcMicro's default 2).
    parameters
        The parameters of the measures shown from their declaration
        (:mod:`microagg.risk.registry`), by name; a parameter not given takes its default.

    Returns
    -------
    CategoricalRisk
        Every measure, per record and for the table.

    Raises
    ------
    InputError
        When the table has no records (or no columns), a key is unknown, or a weight is
        below 1.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sex": ["m", "m", "f", "f", "f"],
    ...                       "region": ["a", "a", "a", "b", "b"],
    ...                       "w": [10.0, 30.0, 5.0, 20.0, 20.0]})
    >>> result = categorical_risk(frame, ["sex", "region"], weight="w")
    >>> result.fk.tolist(), result.Fk.tolist()
    ([2, 2, 1, 2, 2], [40.0, 40.0, 5.0, 40.0, 40.0])
    >>> result.violations, result.sample_uniques
    ({2: 1, 3: 5, 5: 5}, 1)
    """
    missing = parse(MissingValues, missing, "`missing`")
    require_rows_and_columns(frame)  # no record, no risk to measure (as every command)
    keys, weight, household = _design(frame, keys, weight, household, schema)
    if sensitive is not None:
        _known(frame, [sensitive], "sensitive")
        if sensitive in keys:
            raise InputError(f"`sensitive` column '{sensitive}' is also a key variable")
    ks = k_values(k)
    codes = key_codes(frame, keys)
    weights = _weights(frame, weight)
    fk, weighted = key_frequencies(codes, missing, weights)
    Fk = fk.astype(np.float64) if weighted is None else weighted
    risk = individual_risk(fk, weighted)
    households = homes = None
    if household is not None:
        homes = _household_codes(frame, household)
        households = household_risk(risk, homes)
    diversity = sensitive_codes = None
    if sensitive is not None:
        sensitive_codes = key_codes(frame, [sensitive])[:, 0]
        diversity = l_diversity(codes, sensitive_codes, missing, c=l_c, attribute=sensitive)
    given = {"keys": keys, "codes": codes, "fk": fk, "Fk": Fk, "risk": risk,
             "missing": missing, "weights": weights, "sensitive": sensitive_codes,
             "household": homes}
    measured = _measured(computed(), given, parameters)
    return CategoricalRisk(
        keys, weight, household, missing, fk, Fk, risk, households,
        {q: int((fk < q).sum()) for q in ks},
        None if weights is None else {q: int((Fk < q).sum()) for q in ks},
        suda2(codes, keys, missing, dis_fraction=dis_fraction, fk=fk), diversity,
        int(all_missing(codes).sum()), measured)


def declared_measures(frame: pd.DataFrame, keys: Sequence[str], *,
                      missing: MissingValues | str = MissingValues.MATCHES_ANY,
                      weight: str | None = None, household: str | None = None,
                      sensitive: str | None = None,
                      parameters: Mapping[str, Any] | None = None,
                      only: Sequence[str] | None = None) -> dict[str, Measured]:
    """The measures shown from their declaration (:func:`microagg.risk.registry.computed`)
    over the keys of ``frame``, as :func:`categorical_risk` measures them, without the
    others: by name, those whose needs are met.

    Parameters
    ----------
    frame, keys, missing, weight, household, sensitive, parameters
        As :func:`categorical_risk` (the columns are not checked again).
    only : sequence of str, optional
        The names of the measures to compute (default: every declared one).

    Returns
    -------
    dict
        Each measure's :class:`~microagg.risk.registry.Measured`, in the registry's order.
    """
    declared = [m for m in computed() if only is None or m.name in only]
    if not declared or not len(frame):
        return {}
    missing = parse(MissingValues, missing, "`missing`")
    codes = key_codes(frame, keys)
    weights = _weights(frame, weight)
    fk, weighted = key_frequencies(codes, missing, weights)
    given = {"keys": list(keys), "codes": codes, "fk": fk,
             "Fk": fk.astype(np.float64) if weighted is None else weighted,
             "risk": individual_risk(fk, weighted), "missing": missing, "weights": weights,
             "sensitive": None if sensitive is None else key_codes(frame, [sensitive])[:, 0],
             "household": None if household is None else _household_codes(frame, household)}
    return _measured(declared, given, parameters)


def _measured(declared: Iterable[RiskMeasure], given: dict[str, Any],
              parameters: Mapping[str, Any] | None) -> dict[str, Measured]:
    """The result of each of ``declared`` whose needs ``given`` meets, by name."""
    return {m.name: result for m in declared
            if (result := m.measured(given, **(parameters or {}))) is not None}


def _design(frame: pd.DataFrame, keys: Sequence[str] | None, weight: str | None,
            household: str | None, schema: Schema | None
            ) -> tuple[list[str], str | None, str | None]:
    """The keys, weight and household: as given, else as ``schema`` declares them."""
    if keys is None:
        keys = schema.quasi_identifiers if schema is not None else ()
        if not keys:
            raise InputError("`keys` is needed (or a schema that declares quasi-identifiers)")
    keys = list(keys)
    if len(set(keys)) != len(keys):
        raise InputError(f"`keys` names a column twice: {', '.join(keys)}")
    weight = weight if weight is not None else _role(schema, Role.WEIGHT)
    household = household if household is not None else _role(schema, Role.HOUSEHOLD)
    _known(frame, keys, "keys")
    for name, column in (("weight", weight), ("household", household)):
        if column is not None:
            _known(frame, [column], name)
            if column in keys:
                raise InputError(f"`{name}` column '{column}' is also a key variable")
    return keys, weight, household


def _role(schema: Schema | None, role: Role) -> str | None:
    """The one column ``schema`` declares with ``role`` (None if none)."""
    if schema is None:
        return None
    names = schema.names_with_role(role)
    if len(names) > 1:
        raise InputError(f"the schema declares {len(names)} {role.value} columns "
                         f"({', '.join(names)}); name the one to use with `{role.value}`")
    return names[0] if names else None


def _known(frame: pd.DataFrame, names: Sequence[str], parameter: str) -> None:
    for name in names:
        if name not in frame.columns:
            raise InputError(f"`{parameter}`: unknown column '{name}' "
                             f"(the data has: {', '.join(map(str, frame.columns))})")


def k_values(extra: Iterable[int]) -> list[int]:
    """The k whose violations are counted: 2, 3, 5 and ``extra`` (whole numbers ≥ 1),
    sorted."""
    chosen = set(DEFAULT_K)
    for value in extra:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"`k` must be whole numbers of at least 1, got {value!r}")
        chosen.add(int(value))
    return sorted(chosen)


def _weights(frame: pd.DataFrame, weight: str | None) -> np.ndarray | None:
    """The sampling weights, checked (:mod:`microagg.data.weights`: the risk estimate needs
    F_k ≥ f_k)."""
    return None if weight is None else sampling_weights(frame[weight], weight)


def _household_codes(frame: pd.DataFrame, household: str) -> np.ndarray:
    codes = key_codes(frame, [household])[:, 0]
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        raise InputError(f"household column '{household}': row {row + 1} is missing; every "
                         "record needs its household")
    return codes
