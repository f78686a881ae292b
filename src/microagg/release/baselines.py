"""Plain ε-DP noise on every record, without microaggregation (the papers' baseline).

One record's values form the query. Replacing one record changes only its own output, so the
records compose in parallel. With the default ``correct`` calibration, the numeric block of a
record has L1 sensitivity Σ_i (b_i − a_i) and gets Laplace noise of that scale over its share
of ε; each categorical value is chosen among all concepts by the exponential mechanism with
quality −δ(value, a) and sensitivity the diameter D_j of the categories, over its share.
Shares are one per attribute, as in the other releases.

``calibration="per-attribute"`` gives every attribute ε/m and scale m (b_i − a_i)/ε (001
§3.3; ε-DP). ``calibration="paper"`` reproduces paper 000's figures: every attribute gets the
full ε with scale (b_i − a_i)/ε. That is (m·ε)-DP for m attributes, and the report says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from microagg.mechanisms import Budget, exponential_mechanism, laplace_mechanism, make_rng
from microagg.release.base import Release
from microagg.release.privacy import (
    attribute_budgets,
    calibration_warnings,
    category_sensitivity,
    prepare,
    privacy_report,
    released_frame,
)
from microagg.schema import Schema

__all__ = ["dp_laplace"]


def dp_laplace(frame: pd.DataFrame, epsilon: float, *, calibration: str = "correct",
               schema: Schema | None = None, columns: Sequence[str] | None = None,
               bounds: Mapping[str, tuple[float, float]] | None = None,
               bounds_from_data: bool = False, rng: np.random.Generator | int | None = None,
               drop_incomplete: bool = False) -> Release:
    """Plain Laplace (numbers) / exponential mechanism (categories) on every record."""
    seed = rng if isinstance(rng, int) else None
    rng = make_rng(rng)
    data = prepare(frame, schema=schema, columns=columns, bounds=bounds,
                   bounds_from_data=bounds_from_data, drop_incomplete=drop_incomplete)
    budget = Budget(epsilon)
    m = len(data.columns)
    widths = data.highs - data.lows
    sensitivities = []
    numeric_values = data.X.copy()
    numeric_epsilon, category_epsilon = attribute_budgets(
        budget, data.numeric, data.categorical, calibration,
        "sequential composition over the attributes of a record; parallel over records")
    if data.numeric and calibration == "correct":
        numeric_values, info = laplace_mechanism(
            data.X, float(widths.sum()), numeric_epsilon, data.lows, data.highs, rng,
            changing=len(data.numeric))
        sensitivities.append({"statistic": "each record's numeric values",
                              "mechanism": "Laplace",
                              "formula": "sum_i (b_i - a_i)", **info.as_dict()})
    elif data.numeric:
        for j, name in enumerate(data.numeric):
            numeric_values[:, j], info = laplace_mechanism(
                data.X[:, j], float(widths[j]), numeric_epsilon, data.lows[j], data.highs[j],
                rng, changing=1)
            sensitivities.append({"statistic": f"each record's '{name}'",
                                  "mechanism": "Laplace",
                                  "formula": f"b_i - a_i (per attribute; {calibration} "
                                             "calibration)",
                                  **info.as_dict()})
    concepts = np.empty((data.n, len(data.categorical)), dtype=np.int64)
    for j, (name, metric) in enumerate(zip(data.categorical, data.part.metrics, strict=True)):
        diameter = category_sensitivity(metric)
        quality = -metric.distances[data.part.codes[:, j]]
        concepts[:, j] = exponential_mechanism(quality, diameter, category_epsilon[name], rng)
        sensitivities.append({"statistic": f"each record's '{name}'",
                              "mechanism": "exponential", "formula": "diameter D",
                              "sensitivity": diameter, "epsilon": category_epsilon[name]})
    warnings = calibration_warnings(calibration, m, budget.epsilon)
    report = privacy_report(
        method=f"plain Laplace / exponential mechanism on every record ({calibration} "
               "calibration)",
        epsilon=budget.epsilon, ledger=budget.ledger, k=None, groups=None,
        sensitivities=sensitivities, data=data, warnings=warnings, seed=seed,
        multiplier=m if calibration == "paper" else 1)
    return Release(frame=released_frame(data, numeric_values, concepts),
                   labels=np.arange(data.n, dtype=np.int64), report=report)
