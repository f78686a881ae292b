"""The plain baseline: noise on every record (paper 000 §5)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from microagg.options import Calibration
from microagg.release.dp.categorical import category_sensitivity
from microagg.release.dp.mechanisms import Budget, attribute_budgets, exponential_mechanism
from microagg.release.dp.numeric import private_numeric
from microagg.release.families.dp import DPMethod, DPStep, Progress
from microagg.release.inputs import DPInput
from microagg.release.methods.base import release_method
from microagg.release.methods.dp_insensitive import CALIBRATION_HELP
from microagg.release.params import Choice, param
from microagg.release.reports.report import NoiseLevel, categorical_noise

__all__ = ["DPLaplace"]


@release_method
class DPLaplace(DPMethod):
    """The plain baseline of paper 000 §5: every record's numeric values released by the
    Laplace mechanism (sensitivity one record's width, parallel composition over records),
    its categories by the exponential mechanism. Microaggregation divides the noise by k;
    this is what it is compared with, and the command warns that the noise swamps the data.

    References
    ----------
    Paper 000 §5 (the baseline of its experiments); Dwork et al. (2006).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": [30.0, 40.0, 50.0, 60.0]})
    >>> release = DPLaplace(epsilon=1.0).release(frame, bounds={"age": (0, 120)})
    >>> release.report.noise["age"]["fraction_of_width"] > 1
    True
    """

    name: ClassVar[str] = "laplace"
    summary: ClassVar[str] = "plain Laplace noise on every record (the baseline)"

    calibration: Calibration = param(Choice(Calibration), default=Calibration.CORRECT,
                                     help=CALIBRATION_HELP)

    def step(self, data: DPInput, budget: Budget, rng: np.random.Generator, *,
             threads: int | None, progress: Progress | None) -> DPStep:
        numeric_epsilon, category_epsilon = attribute_budgets(
            budget, data.numeric, data.categorical, self.calibration,
            "sequential composition over the attributes of a record; parallel over records")
        sensitivities: list[dict[str, Any]] = []
        noise: dict[str, NoiseLevel] = {}
        numeric_values = data.X
        if data.numeric:
            numeric_values, entries, noise = private_numeric(
                data.X, data=data, factor=1.0, epsilon=numeric_epsilon,
                calibration=self.calibration, rng=rng,
                statistic="each record's numeric values", formula="1",
                changing=len(data.numeric))
            sensitivities += entries
        concepts = np.empty((data.n, len(data.categorical)), dtype=np.int64)
        for j, (name, metric) in enumerate(zip(data.categorical, data.part.metrics,
                                               strict=True)):
            diameter = category_sensitivity(metric)
            concepts[:, j], info = exponential_mechanism(
                -metric.distances[data.part.codes[:, j]], sensitivity=diameter,
                epsilon=category_epsilon[name], rng=rng)
            sensitivities.append({"statistic": f"each record's '{name}'",
                                  "mechanism": "exponential", "formula": "diameter D",
                                  "sensitivity": diameter, "epsilon": category_epsilon[name],
                                  "exact_sampling": info.as_dict()})
            noise[name] = categorical_noise(info.epsilon, 1, metric.n_concepts)
        return DPStep(
            numeric_values=numeric_values, concepts=concepts,
            labels=np.arange(data.n, dtype=np.int64),
            description=f"plain Laplace / exponential mechanism on every record "
                        f"({self.calibration.value} calibration)",
            groups=None, sensitivities=sensitivities, noise=noise,
            calibration=self.calibration)
