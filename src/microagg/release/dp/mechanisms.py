"""Differential-privacy mechanisms: Laplace (sampled safely), exponential, and the budget.

**Laplace.** Adding floating-point Laplace noise drawn by the inverse CDF leaks the input
through the low bits of the output (Mironov, "On significance of the least significant bits for
differential privacy", CCS 2012). microagg never does that. A vector query f with L1
sensitivity Δ, released with ε, is

1. snapped to a grid: every component is rounded to an integer number of steps γ above its
   domain's lower bound, with γ a power of two far below the noise scale Δ/ε;
2. perturbed by *discrete* Laplace noise Z, ``P(Z = z) ∝ exp(−|z| / t)``, on that grid. The integer
   query has L1 sensitivity at most Δ_int = ⌈Δ/γ⌉ + (number of components), since rounding
   moves each component by less than one step more than f itself; and t = ⌈Δ_int / ε⌉ ≥
   Δ_int/ε, so the integer release is ε-DP;
3. mapped back (low + γ (r + Z)), then clamped to the domain (post-processing).

Z is drawn *exactly* with the rejection sampler of Canonne, Kamath and Steinke ("The discrete
Gaussian for differential privacy", NeurIPS 2020, Algorithms 1-2): only integer comparisons
against uniform integers, each made from a 62-bit word of the caller's numpy Generator by
mask-and-reject (exactly uniform). Outputs lie on the grid whatever the input, so no bit of
the output depends on the input except through the released integer. The noise scale exceeds
Δ/ε by a relative (components + 2) γ / Δ + 1/t at most; the privacy report gives the exact
scale.

**Exponential mechanism** (McSherry & Talwar 2007), sampled exactly. Floating-point weights
exp(ε q / (2Δ)) underflow: a candidate of weight e^-37.5 would get probability 0 while its
neighbour's e^-36.5 gets 2^-53, an infinite privacy loss. So, like the Laplace release,

1. qualities are snapped down to a power-of-two grid γ ≤ Δ / 2^20: u = ⌊q/γ⌋, an integer
   quality of sensitivity Δ_int = ⌈Δ/γ⌉ + 1;
2. with the integer t = ⌈2 Δ_int / ε⌉, candidate i is chosen with probability
   ∝ exp(−(u_max − u_i) / t), which is the exponential mechanism for ε' = 2 Δ_int / t ≤ ε;
3. the choice is drawn by rejection: a uniform candidate i is accepted with probability
   exp(−(u_max − u_i) / t), a Bernoulli drawn exactly with integer comparisons (Canonne, Kamath
   and Steinke 2020, Algorithm 1, one Bernoulli(e^-1) per whole unit of the exponent). Every
   round accepts the best candidate surely, so a choice among C candidates takes at most C
   rounds on average.

**Budget.** Every split of ε (attributes, statistics, groups) is made by a :class:`Budget`
(:mod:`microagg.release.dp.budget`), which records it for the privacy report and never hands out
more than the total. The exact samplers are in :mod:`microagg.release.dp.samplers`, imported when a
mechanism runs; this module re-exports the budget's names and :func:`make_rng`
(:mod:`microagg.core.rng`), so ``from microagg.release.dp.mechanisms import Budget`` still works.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from microagg.core.rng import make_rng
from microagg.errors import InputError, PrivacyError
from microagg.release.dp.budget import MAX_EPSILON, Budget, attribute_budgets, check_epsilon

__all__ = [
    "MAX_EPSILON",
    "Budget",
    "ExponentialRelease",
    "LaplaceRelease",
    "attribute_budgets",
    "exponential_mechanism",
    "laplace_mechanism",
    "make_rng",
]

# Rounding to the grid may move a component by one step; steps are this much finer than the
# sensitivity divided by the number of components (so the cost is below 2^-20 of the noise).
_GRID_BITS = 20

# The samplers' integer scales stay below this (products of two stay inside int64).
_MAX_SCALE = 2**46


def _too_small(epsilon: float, integer_sensitivity: int, what: str) -> PrivacyError:
    smallest = integer_sensitivity / _MAX_SCALE
    return PrivacyError(
        f"epsilon = {epsilon:.3g} is too small for {what}: the noise would span more than "
        f"2^46 grid steps; the smallest usable epsilon here is {smallest:.3g} (any release "
        "near it is pure noise)")


@dataclass(frozen=True)
class LaplaceRelease:
    """What a Laplace release did, for the privacy report."""

    sensitivity: float
    epsilon: float
    grid_step: float
    integer_scale: int
    components: int

    @property
    def scale(self) -> float:
        """The effective Laplace scale in the query's units (>= sensitivity / epsilon)."""
        return self.grid_step * self.integer_scale

    @property
    def standard_deviation(self) -> float:
        """Standard deviation of the noise of one component: discrete Laplace of integer scale
        t has variance 2q / (1 − q)² with q = e^(−1/t), times the grid step squared."""
        q = math.exp(-1.0 / self.integer_scale)
        return self.grid_step * math.sqrt(2.0 * q) / -math.expm1(-1.0 / self.integer_scale)

    def as_dict(self) -> dict[str, Any]:
        return {"sensitivity": self.sensitivity, "epsilon": self.epsilon,
                "scale": self.scale, "standard_deviation": self.standard_deviation,
                "grid_step": self.grid_step, "integer_scale": self.integer_scale,
                "components": self.components}


def _grid(sensitivity: float, parts: int, epsilon: float) -> float:
    """A power-of-two grid step 2^bits finer than sensitivity / parts, with bits as large as
    keeps the integer scale below the samplers' 2^46 (8 <= bits <= 20)."""
    room = 45 - math.log2(parts) - max(0.0, -math.log2(epsilon))  # 1 / a subnormal ε is inf
    bits = max(8, min(_GRID_BITS, math.floor(room)))
    return 2.0 ** math.floor(math.log2(sensitivity / (parts * 2**bits)))


def _check_sensitivity(sensitivity: float) -> float:
    sensitivity = float(sensitivity)
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise InputError(f"sensitivity must be a positive number, got {sensitivity}")
    return sensitivity


def laplace_mechanism(values: np.ndarray, *, sensitivity: float, epsilon: float,
                      lows: np.ndarray | float, highs: np.ndarray | float,
                      rng: np.random.Generator | int | None,
                      changing: int | None = None) -> tuple[np.ndarray, LaplaceRelease]:
    """Release ``values`` (any shape; the whole array is one query of L1 ``sensitivity``) with
    ε-DP by grid-snapped discrete Laplace noise, then clamp component-wise to [lows, highs]
    (broadcast against values). ``changing`` bounds how many components can differ between
    neighbouring data sets (default: all); each may round one grid step further apart. See the
    module docstring for the construction.

    Values are first clipped into their domain: a mean of values at the upper bound may exceed
    it by an ulp, and clipping is 1-Lipschitz, so it cannot raise the sensitivity (whether a
    release succeeds must not depend on the data)."""

    from microagg.release.dp.samplers import discrete_laplace

    epsilon = check_epsilon(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    values = np.asarray(values, dtype=np.float64)
    lows = np.broadcast_to(np.asarray(lows, dtype=np.float64), values.shape)
    highs = np.broadcast_to(np.asarray(highs, dtype=np.float64), values.shape)
    if not np.all(np.isfinite(values)):
        raise InputError("the values to release must be finite numbers")
    values = np.clip(values, lows, highs)
    components = max(values.size if changing is None else int(changing), 1)
    grid = _grid(sensitivity, components, epsilon)
    integer_sensitivity = math.ceil(sensitivity / grid) + components
    if integer_sensitivity / epsilon > _MAX_SCALE:
        raise _too_small(epsilon, integer_sensitivity, "this Laplace release")
    integer_scale = math.ceil(integer_sensitivity / epsilon)
    if np.any((highs - lows) / grid >= 2.0**52):
        raise InputError("domain too wide for the noise scale (over 2^52 grid steps)")
    steps = np.rint((values - lows) / grid).astype(np.int64)
    noise = discrete_laplace(integer_scale, values.size, rng).reshape(values.shape)
    released = np.clip(lows + grid * (steps + noise).astype(np.float64), lows, highs)
    return released, LaplaceRelease(sensitivity, epsilon, grid, integer_scale, components)


# -- the exponential mechanism ---------------------------------------------------------------

@dataclass(frozen=True)
class ExponentialRelease:
    """What an exponential-mechanism choice did, for the privacy report."""

    sensitivity: float
    epsilon: float  # ε' = 2 Δ_int / t <= the ε asked for
    grid_step: float
    integer_scale: int

    def as_dict(self) -> dict[str, Any]:
        return {"sensitivity": self.sensitivity, "epsilon": self.epsilon,
                "grid_step": self.grid_step, "integer_scale": self.integer_scale}


def exponential_mechanism(quality: np.ndarray, *, sensitivity: float, epsilon: float,
                          rng: np.random.Generator | int | None
                          ) -> tuple[np.ndarray, ExponentialRelease]:
    """One choice per row of ``quality`` (rows: independent selections; columns: candidates),
    with P(t) ∝ exp(ε' q(t) / (2 Δq)), ε' <= ε, sampled exactly (module docstring). Returns
    the chosen column indices and what was done."""

    from microagg.release.dp.samplers import exponential_choices

    epsilon = check_epsilon(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    quality = np.atleast_2d(np.asarray(quality, dtype=np.float64))
    if not np.all(np.isfinite(quality)):
        raise InputError("qualities must be finite numbers")
    grid = _grid(sensitivity, 1, epsilon)
    integer_sensitivity = math.ceil(sensitivity / grid) + 1
    if 2 * integer_sensitivity / epsilon > _MAX_SCALE:
        raise _too_small(epsilon, 2 * integer_sensitivity, "this exponential mechanism")
    integer_scale = math.ceil(2 * integer_sensitivity / epsilon)
    snapped = np.floor(quality / grid)
    if np.abs(snapped).max() >= 2.0**61:
        raise InputError("qualities too large for the exponential mechanism's grid")
    units = snapped.astype(np.int64)
    gaps = np.ascontiguousarray(units.max(axis=1, keepdims=True) - units)
    out = np.empty(quality.shape[0], dtype=np.int64)
    exponential_choices(make_rng(rng), gaps, integer_scale, out)
    return out, ExponentialRelease(sensitivity, 2 * integer_sensitivity / integer_scale, grid,
                                   integer_scale)
