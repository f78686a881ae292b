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
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.mechanisms import Budget, attribute_budgets, exponential_mechanism, make_rng
from microagg.data.schema import Schema
from microagg.options import Calibration, parse
from microagg.release.base import Release
from microagg.release.categorical import category_sensitivity
from microagg.release.clipping import Clipping, clip_domains
from microagg.release.inputs import prepare_dp
from microagg.release.numeric import private_numeric
from microagg.release.publish import publish_dp
from microagg.release.report import categorical_noise

__all__ = ["dp_laplace"]


def dp_laplace(frame: pd.DataFrame, *, epsilon: float, calibration: Calibration | str = "correct",
               schema: Schema | None = None, columns: Sequence[str] | None = None,
               carry: Sequence[str] = (),
               bounds: Mapping[str, tuple[float, float]] | None = None,
               bounds_from_data: bool = False, rng: np.random.Generator | int | None = None,
               drop_incomplete: bool = False, clip: Clipping | None = None) -> Release:
    """Plain Laplace (numbers) / exponential mechanism (categories) on every record; columns,
    ``carry``, ``rng`` and ``clip`` as in
    :func:`~microagg.release.dp_insensitive.dp_insensitive`."""
    calibration = parse(Calibration, calibration, "calibration")
    seeded = rng is not None and not isinstance(rng, np.random.Generator)
    rng = make_rng(rng)
    data = prepare_dp(frame, schema=schema, columns=columns, carry=carry, bounds=bounds,
                      bounds_from_data=bounds_from_data, drop_incomplete=drop_incomplete)
    budget = Budget(epsilon)
    data, clip_entries = clip_domains(data, clip, budget, rng)
    numeric_epsilon, category_epsilon = attribute_budgets(
        budget, data.numeric, data.categorical, calibration,
        "sequential composition over the attributes of a record; parallel over records")
    sensitivities: list[dict[str, Any]] = list(clip_entries)
    noise: dict[str, dict[str, Any]] = {}
    numeric_values = data.X
    if data.numeric:
        numeric_values, entries, noise = private_numeric(
            data.X, data=data, factor=1.0, epsilon=numeric_epsilon, calibration=calibration,
            rng=rng, statistic="each record's numeric values", formula="1",
            changing=len(data.numeric))
        sensitivities += entries
    concepts = np.empty((data.n, len(data.categorical)), dtype=np.int64)
    for j, (name, metric) in enumerate(zip(data.categorical, data.part.metrics, strict=True)):
        diameter = category_sensitivity(metric)
        concepts[:, j], info = exponential_mechanism(
            -metric.distances[data.part.codes[:, j]], sensitivity=diameter,
            epsilon=category_epsilon[name], rng=rng)
        sensitivities.append({"statistic": f"each record's '{name}'",
                              "mechanism": "exponential", "formula": "diameter D",
                              "sensitivity": diameter, "epsilon": category_epsilon[name],
                              "exact_sampling": info.as_dict()})
        noise[name] = categorical_noise(info.epsilon, 1, metric.n_concepts)
    return publish_dp(
        data, numeric_values=numeric_values, concepts=concepts,
        labels=np.arange(data.n, dtype=np.int64),
        method=f"plain Laplace / exponential mechanism on every record ({calibration.value} "
               "calibration)",
        budget=budget, k=None, groups=None, sensitivities=sensitivities, noise=noise, rng=rng,
        seeded=seeded, calibration=calibration)
