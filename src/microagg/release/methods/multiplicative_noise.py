"""Multiplicative noise, Höhne's variant (003 §5)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from microagg.release.families.masking import MaskingMethod
from microagg.release.methods.base import release_method
from microagg.release.params import Interval, param

__all__ = ["MultiplicativeNoise"]


@release_method
class MultiplicativeNoise(MaskingMethod):
    """Multiplicative noise, Höhne's variant (003 §5): every value multiplied by
    ``1 + b_i |e_ij|``, e_ij ~ N(0, s²), one random sign per record, then the means and the
    covariance matrix of the data restored exactly. No ex-ante guarantee: measure the risk.

    References
    ----------
    Paper 003 §5; Hundepool et al. (2012) §3.4.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> MultiplicativeNoise(s=0.1).release(data.frame, schema=data.schema, rng=1).report.value
    0.1
    """

    name: ClassVar[str] = "multiplicative-noise"
    summary: ClassVar[str] = "multiplicative noise: x (1 +- N(0, s)), moments restored"
    parameter: ClassVar[str] = "s"

    s: float = param(Interval(float, 0, closed="neither"),
                     help="Standard deviation of the random factor 1 +- N(0, s) (> 0).")

    def at_scale_refusal(self) -> str | None:
        """``None``: every partition multiplies its values by its draws, and the moments
        restored are the data set's, found by a map-reduce (:mod:`microagg.at_scale.mask`)."""
        return None

    def mask(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from microagg.core.masking import multiplicative_noise

        return multiplicative_noise(values, self.s, rng=rng)
