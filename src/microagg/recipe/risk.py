"""The disclosure risk of a table's key variables, measured before a recipe and after each of
its steps: one function, :func:`measure_risk`, that the recipe runner, its report and the web
app call, so that a finer measure replaces it in one place.

The measure is the sample frequency f_k of each record's combination of key values
(:func:`~microagg.core.frequencies.sample_frequencies`, with the declared missing-value
semantics: by default a missing value matches any value, sdcMicro's ``alpha = 1``) and the
record's individual re-identification risk. With the schema's sampling weight (every weight
at least 1) it is Benedetti and Franconi's (1998) risk from f_k and the weighted frequency
F_k, as sdcMicro's ``indivRisk`` computes it (:func:`microagg.risk.individual.individual_risk`,
the measure of ``microagg risk``); without one, 1 / f_k: the chance that an intruder who knows
the record's keys and that it is in the file picks it among the records that share them
(Hundepool et al. 2012, §3.3.2), an upper bound of the former. Every measure of
:mod:`microagg.risk.registry` shown from its declaration whose needs the keys and the weight
meet is measured too, with its default parameters, its figures after the summary's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.frequencies import combinations
from microagg.data.schema import Role, Schema
from microagg.options import MissingValues, parse
from microagg.risk.registry import percent

__all__ = ["DEFAULT_VIOLATION_KS", "RiskSummary", "measure_risk", "percent", "risk_keys",
           "risk_weight"]

DEFAULT_VIOLATION_KS = (2, 3, 5)
"""The k of the violation counts every summary gives (with any k a caller adds)."""

MEASURE = ("sample frequency f_k of each record's combination of key values and its "
           "re-identification risk 1/f_k (an upper bound of the individual risk)")
WEIGHTED_MEASURE = ("sample frequency f_k and weighted frequency F_k of each record's "
                    "combination of key values, and its individual risk (Benedetti-Franconi, "
                    "sdcMicro's indivRisk) under the sampling weight {weight}")


@dataclass(frozen=True, eq=False)
class RiskSummary:
    """The risk of a table over its key variables. ``global_risk`` is the mean record risk,
    ``expected_reidentifications`` their sum; ``violations`` maps k to the number of records
    in classes smaller than k (f_k < k). ``fk`` and ``record_risk`` are per record, in row
    order (not in the JSON form)."""

    n: int
    keys: list[str]
    missing: str
    global_risk: float
    expected_reidentifications: float
    violations: dict[int, int]
    unique_percent: float
    smallest_class: int
    classes: int
    fk: np.ndarray = field(repr=False)
    record_risk: np.ndarray = field(repr=False)
    measure: str = MEASURE
    weight: str | None = None  # the sampling weight the individual risk used, if any
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)  # declared measures

    @property
    def risk_label(self) -> str:
        """What a record's risk is, in words, for tables and plots."""
        return f"individual risk, weight {self.weight}" if self.weight else "1 / f_k"

    def holds(self, k: int) -> bool:
        """Whether the table is k-anonymous over the keys."""
        return self.smallest_class >= k

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "keys": list(self.keys), "missing": self.missing,
                "global_risk": self.global_risk,
                "expected_reidentifications": self.expected_reidentifications,
                "violations": {str(k): v for k, v in self.violations.items()},
                "unique_percent": self.unique_percent, "smallest_class": self.smallest_class,
                "classes": self.classes, "measure": self.measure, **self.measured}


def risk_keys(schema: Schema | None, frame: pd.DataFrame,
              named: Sequence[str] = ()) -> list[str]:
    """The key variables of ``frame``: the schema's quasi-identifiers it holds; without a
    schema, the keys ``named`` by the recipe's steps that it holds, else every column."""
    if schema is None:
        held = [key for key in named if key in frame.columns]
        return held or [str(c) for c in frame.columns]
    return [a.name for a in schema if a.role is Role.QUASI and a.name in frame.columns]


def risk_weight(schema: Schema | None, frame: pd.DataFrame) -> str | None:
    """The sampling weight column of ``frame`` the schema declares (one, present, every value
    a number of at least 1), or ``None``."""
    if schema is None:
        return None
    weights = [a.name for a in schema if a.role is Role.WEIGHT and a.name in frame.columns]
    if len(weights) != 1:
        return None
    values = pd.to_numeric(frame[weights[0]], errors="coerce")
    return weights[0] if bool((values >= 1).all()) else None


def measure_risk(frame: pd.DataFrame, keys: Sequence[str], *,
                 missing: MissingValues | str = MissingValues.MATCHES_ANY,
                 ks: Iterable[int] = (), weight: str | None = None,
                 codes: np.ndarray | None = None) -> RiskSummary:
    """The risk of ``frame`` over ``keys`` (module docstring), with the violations of k for
    2, 3, 5 and every k of ``ks``; with ``weight`` (a column of weights of at least 1) the
    individual risk accounts for the population through F_k. ``codes``: the key codes of
    ``frame`` over ``keys`` (:func:`~microagg.core.frequencies.key_codes`) when known.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sex": ["m", "m", "f", "f", "f"], "region": list("aabbc")})
    >>> risk = measure_risk(frame, ["sex", "region"])
    >>> risk.fk.tolist(), risk.expected_reidentifications, risk.violations[2]
    ([2, 2, 2, 2, 1], 3.0, 1)
    """
    semantics = parse(MissingValues, missing, "missing")
    n = len(frame)
    if not keys or n == 0:
        fk = np.full(n, n, dtype=np.int64)
        classes = 1 if n else 0
    else:
        fk, classes = combinations(frame, keys, semantics, codes)
    risk = 1.0 / np.maximum(fk, 1)
    measure = MEASURE
    weights: np.ndarray | None = None
    if weight is not None and keys and n:
        from microagg.core.frequencies import key_codes, key_frequencies
        from microagg.risk.individual import individual_risk

        weights = pd.to_numeric(frame[weight]).to_numpy(np.float64)
        if codes is None:
            codes = key_codes(frame, keys)
        _, Fk = key_frequencies(codes, semantics, weights)
        risk = individual_risk(fk, Fk)
        measure = WEIGHTED_MEASURE.format(weight=weight)
    chosen = sorted({*DEFAULT_VIOLATION_KS, *(int(k) for k in ks)})
    measured = _declared(frame, keys, semantics, weight if weights is not None else None)
    return RiskSummary(
        n=n, keys=list(keys), missing=semantics.value,
        global_risk=float(risk.mean()) if n else 0.0,
        expected_reidentifications=float(risk.sum()),
        violations={k: int((fk < k).sum()) for k in chosen},
        unique_percent=float(100.0 * (fk == 1).sum() / n) if n else 0.0,
        smallest_class=int(fk.min()) if n else 0, classes=classes, fk=fk, record_risk=risk,
        measure=measure, weight=weight if measure != MEASURE else None, measured=measured)



def _declared(frame: pd.DataFrame, keys: Sequence[str], missing: MissingValues,
              weight: str | None) -> dict[str, dict[str, Any]]:
    """The figures of the measures shown from their declaration whose needs are met."""
    from microagg.risk.registry import MEASURES, computed

    if not keys or not computed():
        return {}
    from microagg.risk.categorical import declared_measures

    found = declared_measures(frame, keys, missing=missing, weight=weight)
    return {name: MEASURES[name].figures_of(result) or {} for name, result in found.items()}
