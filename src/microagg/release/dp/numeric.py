"""Laplace release of a matrix of numeric statistics (one row per group, one column per
attribute) under the calibrations of docs/algorithms.md, shared by the DP releases."""

from __future__ import annotations

from typing import Any

import numpy as np

from microagg.options import Calibration
from microagg.release.dp.mechanisms import laplace_mechanism
from microagg.release.inputs import DPInput
from microagg.release.reports.report import NoiseLevel, numeric_noise

__all__ = ["private_numeric"]


def private_numeric(values: np.ndarray, *, data: DPInput, factor: float, epsilon: float,
                    calibration: Calibration, rng: np.random.Generator, statistic: str,
                    formula: str, changing: int | None = None
                    ) -> tuple[np.ndarray, list[dict[str, Any]], dict[str, NoiseLevel]]:
    """``values`` (groups × numeric attributes, each column in its domain) with Laplace noise.

    ``factor`` times a domain width is the L1 sensitivity of one attribute's column: with
    ``correct`` calibration the whole matrix is one query of sensitivity factor · Σ_j width_j
    (000 §4) and ε; otherwise every column is a query of its own, of sensitivity
    factor · width_j and ε each (``epsilon`` is then already the per-attribute share).
    ``changing`` bounds the components that differ between neighbours, per query (see
    :func:`~microagg.release.dp.mechanisms.laplace_mechanism`). Returns the noisy matrix, the
    report's sensitivity entries and the noise level per attribute."""
    widths = data.widths
    if calibration is Calibration.CORRECT:
        noisy, info = laplace_mechanism(values, sensitivity=factor * float(widths.sum()),
                                        epsilon=epsilon, lows=data.lows, highs=data.highs,
                                        rng=rng, changing=changing)
        entries = [{"statistic": f"{statistic} ({values.shape[0]} x {values.shape[1]})",
                    "mechanism": "Laplace", "formula": f"{formula} * sum_j (b_j - a_j)",
                    **info.as_dict()}]
        noise: dict[str, NoiseLevel] = {
            name: numeric_noise(float(widths[j]), info.standard_deviation)
            for j, name in enumerate(data.numeric)}
        return noisy, entries, noise
    noisy = np.empty_like(values)
    entries, noise = [], {}
    for j, name in enumerate(data.numeric):
        noisy[:, j], info = laplace_mechanism(
            values[:, j], sensitivity=factor * float(widths[j]), epsilon=epsilon,
            lows=data.lows[j], highs=data.highs[j], rng=rng,
            changing=None if changing is None else 1)
        entries.append({"statistic": f"{statistic} of '{name}'", "mechanism": "Laplace",
                        "formula": f"{formula} * (b_j - a_j)  (per attribute; "
                                   f"{calibration.value} calibration)", **info.as_dict()})
        noise[name] = numeric_noise(float(widths[j]), info.standard_deviation)
    return noisy, entries, noise
