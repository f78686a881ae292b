"""Correlated noise (003 §5)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from microagg.release.families.masking import MaskingMethod
from microagg.release.methods.base import release_method
from microagg.release.params import Interval, param

__all__ = ["CorrelatedNoise"]


@release_method
class CorrelatedNoise(MaskingMethod):
    """Correlated noise (003 §5): Y = X + N(0, γΣ), Σ the sample covariance of the masked
    columns, drawn through its eigen-decomposition (a singular Σ is handled, and exact linear
    relations between attributes survive). No ex-ante guarantee: measure the risk.

    References
    ----------
    Paper 003 §5; Hundepool et al. (2012) §3.4.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> release = CorrelatedNoise(gamma=0.1).release(data.frame, schema=data.schema, rng=1)
    >>> release.report.parameter, release.report.value
    ('gamma', 0.1)
    """

    name: ClassVar[str] = "correlated-noise"
    summary: ClassVar[str] = "correlated noise: X + N(0, gamma Sigma)"
    parameter: ClassVar[str] = "gamma"

    gamma: float = param(Interval(float, 0, closed="neither"),
                         help="The noise's covariance as a multiple of the data's (> 0).")

    def at_scale_refusal(self) -> str | None:
        """``None``: the noise's covariance is the data set's, found by a map-reduce, and
        every partition draws its noise (:mod:`microagg.at_scale.mask`)."""
        return None

    def mask(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from microagg.core.masking import correlated_noise

        return correlated_noise(values, self.gamma, rng=rng)
