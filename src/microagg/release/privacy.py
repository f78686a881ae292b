"""Shared parts of the differentially private releases: domain bounds, clamping, categorical
sensitivities and qualities, and the privacy report (see DESIGN.md, "Differential privacy:
the rules").

Neighbouring data sets have the same number n of records and differ in one record, replaced by
any other record of the domain; n is public. Bounds of numeric attributes come from the schema
or from ``bounds``; with ``bounds_from_data`` they are computed from the data (the papers' 1.5 x
max rule), which the report states makes the release *not* differentially private. Inputs are
clamped to their bounds before anything else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from microagg.distance import Categorical
from microagg.errors import InputError, PrivacyError
from microagg.mechanisms import Budget, exponential_mechanism
from microagg.release.kanonymity import chosen_columns
from microagg.schema import Role, Schema
from microagg.table import Table, decode, encode, require_rows_and_columns
from microagg.taxonomy import CategoryMetric

__all__ = [
    "CALIBRATIONS",
    "NEIGHBOURS",
    "DPInput",
    "attribute_budgets",
    "calibration_warnings",
    "category_sensitivity",
    "data_bounds",
    "guarantee",
    "marginality_quality",
    "prepare",
    "privacy_report",
    "private_centroids",
    "released_frame",
    "split_by_attributes",
]

NEIGHBOURS = ("two data sets are neighbours when they have the same number n of records and "
              "differ in one record, replaced by any other record of the domain; n is public")

SAMPLING = ("Laplace noise: the statistic is snapped to a power-of-two grid and perturbed by "
            "discrete Laplace noise drawn exactly (Canonne, Kamath, Steinke 2020), never by "
            "floating-point inverse-CDF sampling (Mironov 2012); exponential mechanism: stable "
            "softmax, inverse-CDF choice among the candidates")

CALIBRATIONS = ("correct", "per-attribute", "paper")


def split_by_attributes(budget: Budget, numeric: Sequence[str], categorical: Sequence[str],
                        reason: str) -> tuple[float, dict[str, float]]:
    """One share of ε per attribute: the numeric block gets one share per numeric attribute,
    each categorical attribute one share. Returns (ε of the numeric block, ε per category)."""
    weights = {**({"numeric block (" + ", ".join(numeric) + ")": float(len(numeric))}
                  if numeric else {}),
               **{name: 1.0 for name in categorical}}
    shares = budget.split(weights, reason)
    numeric_epsilon = next((v for key, v in shares.items() if key.startswith("numeric block")),
                           0.0)
    return numeric_epsilon, {name: shares[name] for name in categorical}


def attribute_budgets(budget: Budget, numeric: Sequence[str], categorical: Sequence[str],
                      calibration: str, reason: str) -> tuple[float, dict[str, float]]:
    """The ε of the numeric block (``correct``) or of each numeric attribute (the others), and
    the ε of each categorical attribute.

    ``correct``: one share per attribute; the numeric block is one vector query whose L1
    sensitivity sums the attributes' (000 §4), so the release is ε-DP.
    ``per-attribute``: ε/m for every attribute, each numeric one a query of its own with its
    own width: ε-DP too, and less noise relative to its width on every attribute narrower than
    the average (see docs/algorithms.md).
    ``paper``: every attribute spends the full ε, as in paper 000's experiments (§5); the
    ledger records the reuse and the release is (m·ε)-DP for m attributes.
    """
    if calibration not in CALIBRATIONS:
        raise InputError(f"unknown calibration '{calibration}' (choose one of: "
                         f"{', '.join(CALIBRATIONS)})")
    if calibration == "correct":
        return split_by_attributes(budget, numeric, categorical, reason)
    if calibration == "per-attribute":
        shares = budget.split({name: 1.0 for name in (*numeric, *categorical)}, reason)
        return (shares[numeric[0]] if numeric else 0.0,
                {name: shares[name] for name in categorical})
    full = budget.reuse("every attribute, in full (paper calibration)",
                        len(numeric) + len(categorical), "paper 000's experiments")
    return full, {name: full for name in categorical}


def calibration_warnings(calibration: str, m: int, epsilon: float) -> list[str]:
    """The warning a paper-calibrated release carries in its report (none otherwise)."""
    if calibration != "paper":
        return []
    return [f"paper calibration: each of the {m} attributes spends the full epsilon, so the "
            f"release is only {m * epsilon:g}-differentially private; use it to reproduce "
            "paper 000's figures, never to publish"]


def data_bounds(values: np.ndarray) -> tuple[float, float]:
    """The papers' rule (000 §5.1, 001 §4.1): [0, 1.5 max] for non-negative values; in
    general [min(0, 1.5 min), max(0, 1.5 max)], widened to width 1 if degenerate."""
    lo = min(0.0, 1.5 * float(values.min()))
    hi = max(0.0, 1.5 * float(values.max()))
    return (lo, hi) if hi > lo else (lo, lo + 1.0)


@dataclass(frozen=True, eq=False)
class DPInput:
    """A table prepared for a DP release: clamped numeric values with their bounds, and the
    categorical part."""

    table: Table
    numeric: list[str]
    categorical: list[str]
    X: np.ndarray
    lows: np.ndarray
    highs: np.ndarray
    domains: dict[str, dict[str, Any]]
    part: Categorical
    from_data: bool
    dropped: int

    @property
    def n(self) -> int:
        return self.table.n_rows

    @property
    def columns(self) -> list[str]:
        return [*self.numeric, *self.categorical]


def prepare(frame: pd.DataFrame, *, schema: Schema | None, columns: Sequence[str] | None,
            bounds: Mapping[str, tuple[float, float]] | None, bounds_from_data: bool,
            drop_incomplete: bool = False) -> DPInput:
    """Columns, bounds (never silently from the data) and clamped values of a DP release."""
    require_rows_and_columns(frame)
    schema = (Schema.infer(frame) if schema is None else schema).complete(frame)
    chosen = chosen_columns(schema, columns)
    schema = schema.with_roles({c: Role.QUASI for c in chosen})
    bounds = dict(bounds or {})
    for name, (lo, hi) in bounds.items():
        if name not in schema:
            raise InputError(f"--bounds names unknown column '{name}'")
        if not schema[name].is_numeric:
            raise InputError(f"--bounds: column '{name}' is {schema[name].kind}; bounds are "
                             "for numeric columns (categories take their taxonomy)")
        schema = Schema(tuple(replace(a, domain=(lo, hi)) if a.name == name else a
                              for a in schema))
    numeric = [c for c in chosen if schema[c].is_numeric]
    sources = {c: ("--bounds" if c in bounds else "schema") for c in numeric}
    undeclared = [c for c in numeric if schema[c].bounds is None]
    if undeclared and not bounds_from_data:
        raise PrivacyError(
            f"column '{undeclared[0]}' has no declared domain; differential privacy needs "
            "bounds that do not come from the data: declare it in the schema or pass --bounds "
            f"{undeclared[0]}=LO:HI (--bounds-from-data reproduces the papers but is not DP)")
    if undeclared:
        raw = encode(frame[undeclared], Schema.infer(frame[undeclared]),
                     drop_incomplete=drop_incomplete)
        derived = {c: data_bounds(raw.numeric[:, j]) for j, c in enumerate(undeclared)}
        schema = Schema(tuple(replace(a, domain=derived[a.name]) if a.name in derived else a
                              for a in schema))
        sources.update({c: "data (1.5 x max rule; not differentially private)"
                        for c in undeclared})
    table = encode(frame, schema, drop_incomplete=drop_incomplete, clamp=True)
    categorical = [c for c in chosen if schema[c].is_categorical]
    X = table.numeric_matrix(numeric) if numeric else np.empty((table.n_rows, 0))
    lows = np.array([schema[c].bounds[0] for c in numeric])
    highs = np.array([schema[c].bounds[1] for c in numeric])
    part = Categorical(np.column_stack([table.code_column(c) for c in categorical])
                       if categorical else np.empty((table.n_rows, 0), dtype=np.int64),
                       tuple(table.metric(c) for c in categorical))
    domains: dict[str, dict[str, Any]] = {
        c: {"low": float(lows[j]), "high": float(highs[j]), "source": sources[c]}
        for j, c in enumerate(numeric)}
    for c, metric in zip(categorical, part.metrics, strict=True):
        domains[c] = {"categories": metric.n_leaves, "concepts": metric.n_concepts,
                      "source": "taxonomy" if schema[c].taxonomy is not None
                      else ("rank order" if metric.ordinal else "flat taxonomy"),
                      "diameter": category_sensitivity(metric)}
    return DPInput(table=table, numeric=numeric, categorical=categorical, X=X, lows=lows,
                   highs=highs, domains=domains, part=part, from_data=bool(undeclared),
                   dropped=len(frame) - table.n_rows)


def category_sensitivity(metric: CategoryMetric) -> float:
    """Largest distance between two categories. Replacing one value v by v' changes the
    marginality of any concept a by |δ(v, a) − δ(v', a)| ≤ δ(v, v') (triangle inequality), so
    this bounds the sensitivity of a cluster's marginality. It is at least δ(a_b, a_t), the
    paper's choice, which does not bound it in every taxonomy."""
    leaves = metric.n_leaves
    return float(metric.distances[:leaves, :leaves].max())


def marginality_quality(codes: np.ndarray, labels: np.ndarray, metric: CategoryMetric
                        ) -> np.ndarray:
    """(clusters, concepts) qualities −m(S_c, a) (000 Alg. 4) of every concept a for the
    values S_c of every cluster c."""
    counts = np.zeros((int(labels.max()) + 1, metric.n_concepts))
    np.add.at(counts, (labels, codes), 1.0)
    return -(counts @ metric.distances)


def private_centroids(codes: np.ndarray, labels: np.ndarray, metric: CategoryMetric,
                      epsilon: float, rng: np.random.Generator, *, name: str, groups: str,
                      source: str) -> tuple[np.ndarray, dict[str, Any]]:
    """One concept per cluster of ``labels``, chosen among all concepts of the taxonomy by the
    exponential mechanism with quality −m(S_c, a) and sensitivity the diameter D (000 Alg. 4).
    One changed record may change every cluster, so each choice gets ε / c (sequential
    composition; eq. 6 with c for n/k). Returns the concept of every record and the report
    entry; ``groups`` names the clusters ("cluster", "ranked group") and ``source`` the
    paper's step."""
    clusters = int(labels.max()) + 1
    diameter = category_sensitivity(metric)
    per_cluster = epsilon / clusters
    chosen = exponential_mechanism(marginality_quality(codes, labels, metric), diameter,
                                   per_cluster, rng)
    return chosen[labels], {
        "statistic": f"marginality of each {groups}'s '{name}' values, over all "
                     f"{metric.n_concepts} concepts",
        "mechanism": "exponential",
        "formula": f"diameter D of the categories, per {groups}; epsilon / c per {groups} "
                   f"({source})",
        "sensitivity": diameter, "epsilon": epsilon, "epsilon_per_cluster": per_cluster}


def released_frame(data: DPInput, numeric_values: np.ndarray, concepts: np.ndarray
                   ) -> pd.DataFrame:
    """The released table: chosen numeric columns and categorical concepts replaced, other
    columns kept, identifiers dropped."""
    table = data.table
    numeric = table.numeric.copy()
    for j, name in enumerate(data.numeric):
        numeric[:, table.numeric_names.index(name)] = numeric_values[:, j]
    codes = table.codes.copy()
    labels = {}
    for j, name in enumerate(data.categorical):
        codes[:, table.categorical_names.index(name)] = concepts[:, j]
        labels[name] = data.part.metrics[j].labels
    kept = [a.name for a in table.schema if a.role is not Role.IDENTIFIER]
    return decode(table, numeric=numeric, codes=codes, categories=labels, columns=kept)


def guarantee(epsilon: float, data: DPInput, *, multiplier: int = 1) -> str:
    """The guarantee in one plain sentence, never rounded up."""
    if data.from_data:
        return ("This release is NOT differentially private: the domain bounds of some "
                "numeric attributes were computed from the data (--bounds-from-data), so the "
                "noise calibration depends on the data itself.")
    level = epsilon * multiplier
    extra = (f" (the paper's per-attribute calibration: the nominal ε = {epsilon:g} is spent "
             f"once per attribute, {multiplier} times)" if multiplier > 1 else "")
    return (f"The released table satisfies {level:g}-differential privacy{extra}: for any two "
            "neighbouring data sets (same size n, one record replaced), the probability of any "
            f"output differs by at most a factor e^{level:g}.")


def privacy_report(*, method: str, epsilon: float, ledger: list[dict[str, Any]], k: int | None,
                   groups: int | None, sensitivities: list[dict[str, Any]], data: DPInput,
                   warnings: list[str], seed: int | None, multiplier: int = 1
                   ) -> dict[str, Any]:
    """The privacy report written beside a DP release (OUT.privacy.json)."""
    notes = list(warnings)
    if data.dropped:
        notes.append("rows with missing values were dropped before the release; the "
                     "guarantee treats the remaining rows as the data set and their number as "
                     "public")
    return {
        "method": method,
        "differentially_private": not data.from_data,
        "guarantee": guarantee(epsilon, data, multiplier=multiplier),
        "epsilon": epsilon,
        "epsilon_split": ledger,
        "k": k,
        "groups": groups,
        "records": data.n,
        "columns": data.columns,
        "neighbouring": NEIGHBOURS,
        "sensitivities": sensitivities,
        "domains": data.domains,
        "sampling": SAMPLING,
        "seed": seed,
        "warnings": notes,
    }
