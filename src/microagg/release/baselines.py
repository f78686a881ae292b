"""Plain ε-DP noise on every record, without microaggregation (the papers' baseline).

One record's values form the query. Replacing one record changes only its own output, so the
records compose in parallel. In the default ``correct`` mode, the numeric block of a record has
L1 sensitivity Σ_i (b_i − a_i) and gets Laplace noise of that scale over its share of ε; each
categorical value is chosen among all concepts by the exponential mechanism with quality
−δ(value, a) and sensitivity the diameter D_j of the categories, over its share. Shares are
one per attribute, as in the other releases.

``mode="paper"`` reproduces paper 000's figures: every attribute gets the full ε with scale
(b_i − a_i)/ε. That is (m·ε)-DP for m attributes, and the report says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from microagg.errors import InputError
from microagg.mechanisms import Budget, exponential_mechanism, laplace_mechanism, make_rng
from microagg.release.base import Release
from microagg.release.dp_insensitive import split_by_attributes
from microagg.release.privacy import (
    category_sensitivity,
    prepare,
    privacy_report,
    released_frame,
)
from microagg.schema import Schema

__all__ = ["LAPLACE_MODES", "dp_laplace"]

LAPLACE_MODES = ("correct", "paper")


def dp_laplace(frame: pd.DataFrame, epsilon: float, *, mode: str = "correct",
               schema: Schema | None = None, columns: Sequence[str] | None = None,
               bounds: Mapping[str, tuple[float, float]] | None = None,
               bounds_from_data: bool = False, rng: np.random.Generator | int | None = None,
               drop_incomplete: bool = False) -> Release:
    """Plain Laplace (numbers) / exponential mechanism (categories) on every record."""
    if mode not in LAPLACE_MODES:
        raise InputError(f"unknown Laplace mode '{mode}' (choose one of: "
                         f"{', '.join(LAPLACE_MODES)})")
    seed = rng if isinstance(rng, int) else None
    rng = make_rng(rng)
    data = prepare(frame, schema=schema, columns=columns, bounds=bounds,
                   bounds_from_data=bounds_from_data, drop_incomplete=drop_incomplete)
    budget = Budget(epsilon)
    m = len(data.columns)
    widths = data.highs - data.lows
    sensitivities = []
    numeric_values = data.X.copy()
    if mode == "correct":
        numeric_epsilon, category_epsilon = split_by_attributes(
            budget, data.numeric, data.categorical,
            "sequential composition over the attributes of a record; parallel over records")
        if data.numeric:
            numeric_values, info = laplace_mechanism(
                data.X, float(widths.sum()), numeric_epsilon, data.lows, data.highs, rng,
                changing=len(data.numeric))
            sensitivities.append({"statistic": "each record's numeric values",
                                  "mechanism": "Laplace",
                                  "formula": "sum_i (b_i - a_i)", **info.as_dict()})
    else:
        per_attribute = budget.reuse("every attribute, in full (paper mode)", m,
                                     "paper 000's baseline")
        category_epsilon = {name: per_attribute for name in data.categorical}
        for j, name in enumerate(data.numeric):
            numeric_values[:, j], info = laplace_mechanism(
                data.X[:, j], float(widths[j]), per_attribute, data.lows[j], data.highs[j],
                rng, changing=1)
            sensitivities.append({"statistic": f"each record's '{name}'",
                                  "mechanism": "Laplace",
                                  "formula": "b_i - a_i (per attribute; paper mode)",
                                  **info.as_dict()})
    concepts = np.empty((data.n, len(data.categorical)), dtype=np.int64)
    for j, (name, metric) in enumerate(zip(data.categorical, data.part.metrics, strict=True)):
        diameter = category_sensitivity(metric)
        quality = -metric.distances[data.part.codes[:, j]]
        concepts[:, j] = exponential_mechanism(quality, diameter, category_epsilon[name], rng)
        sensitivities.append({"statistic": f"each record's '{name}'",
                              "mechanism": "exponential", "formula": "diameter D",
                              "sensitivity": diameter, "epsilon": category_epsilon[name]})
    warnings = []
    if mode == "paper":
        warnings.append(f"paper mode: each of the {m} attributes spends the full epsilon, so "
                        f"the release is only {m * budget.epsilon:g}-differentially private; "
                        "use it to reproduce paper 000's baseline, never to publish")
    report = privacy_report(
        method=f"plain Laplace / exponential mechanism on every record ({mode} mode)",
        epsilon=budget.epsilon, ledger=budget.ledger, k=None, groups=None,
        sensitivities=sensitivities, data=data, warnings=warnings, seed=seed,
        multiplier=m if mode == "paper" else 1)
    return Release(frame=released_frame(data, numeric_values, concepts),
                   labels=np.arange(data.n, dtype=np.int64), report=report)
