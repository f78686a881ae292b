"""What a differentially private method's step hands the DP pipeline to publish
(:func:`microagg.release.dp.publish.publish_dp`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from microagg.options import Calibration, Linkage
from microagg.release.reports.report import NoiseLevel

__all__ = ["DPStep"]


@dataclass(frozen=True)
class DPStep:
    """What a DP method's step gives the pipeline to publish: the released numeric values
    and category concepts per record (in input row order), the partition, the report's
    entries (sensitivities, noise levels, warnings) and how the guarantee reads."""

    numeric_values: np.ndarray
    concepts: np.ndarray
    labels: np.ndarray
    description: str
    groups: int | None
    sensitivities: list[dict[str, Any]]
    noise: dict[str, NoiseLevel]
    calibration: Calibration | None = None
    reference: str | None = None
    linkage: Linkage | None = None
    column_groups: Sequence[Sequence[str]] | None = None
    parts: list[tuple[str, float]] | None = None
    microaggregated: str | None = None
    individual: str | None = None
    moments: dict[str, Any] | None = None
    statistics: pd.DataFrame | None = None
    warnings: list[str] = field(default_factory=list)
