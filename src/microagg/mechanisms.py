"""Differential-privacy mechanisms: Laplace (sampled safely), exponential, and the budget.

**Laplace.** Adding floating-point Laplace noise drawn by the inverse CDF leaks the input
through the low bits of the output (Mironov, "On significance of the least significant bits for
differential privacy", CCS 2012). microagg never does that. A vector query f with L1
sensitivity Δ, released with ε, is

1. snapped to a grid: every component is rounded to an integer number of steps γ above its
   domain's lower bound, with γ a power of two far below the noise scale Δ/ε;
2. perturbed by *discrete* Laplace noise Z, P(Z = z) ∝ exp(−|z| / t), on that grid. The integer
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

**Exponential mechanism** (McSherry & Talwar 2007): P(t) ∝ exp(ε q(t) / (2 Δq)), computed
stably (the maximum quality is subtracted before exponentiating) and sampled by the inverse CDF
with one uniform draw per choice. The output is one of finitely many candidates, so float
arithmetic can only perturb the probabilities, by a relative error below 1e-12, not reveal
low bits.

**Budget.** Every split of ε (attributes, statistics, groups) is made by a :class:`Budget`,
which records it for the privacy report and never hands out more than the total.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from microagg.errors import InputError, PrivacyError

__all__ = [
    "Budget",
    "discrete_laplace",
    "exponential_mechanism",
    "laplace_mechanism",
    "make_rng",
]

# Rounding to the grid may move a component by one step; steps are this much finer than the
# sensitivity divided by the number of components (so the cost is below 2^-20 of the noise).
_GRID_BITS = 20
# Shares of a split are scaled down by this factor so that their float sum never exceeds ε.
_SPLIT_SAFETY = 1 - 1e-12


def make_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A numpy Generator from a Generator, a seed, or None (fresh OS entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise InputError(f"rng must be a numpy Generator, a seed or None, got {rng!r}")


def _check_epsilon(epsilon: float) -> float:
    epsilon = float(epsilon)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be a positive number, got {epsilon}")
    return epsilon


# -- the budget ------------------------------------------------------------------------------

@dataclass
class Budget:
    """A privacy budget ε, split in named parts by sequential composition.

    ``split`` spends the whole budget on named shares proportional to the weights; the ledger
    keeps every part for the privacy report. The parts never sum to more than ε, and a spent
    budget cannot be split again.
    """

    epsilon: float
    ledger: list[dict[str, Any]] = field(default_factory=list)
    exhausted: bool = False

    def __post_init__(self) -> None:
        self.epsilon = _check_epsilon(self.epsilon)

    @property
    def spent(self) -> float:
        return math.fsum(entry["epsilon"] for entry in self.ledger)

    def split(self, weights: Mapping[str, float], reason: str = "") -> dict[str, float]:
        """Spend the budget on the named parts, proportionally to their weights."""
        if not weights:
            raise InputError("nothing to split the budget over")
        if any(not (w > 0 and math.isfinite(w)) for w in weights.values()):
            raise InputError("budget weights must be positive numbers")
        if self.exhausted:
            raise PrivacyError("the privacy budget is already spent")
        self.exhausted = True
        total = math.fsum(weights.values())
        shares = {name: self.epsilon * w / total * _SPLIT_SAFETY
                  for name, w in weights.items()}
        for name, share in shares.items():
            self.ledger.append({"part": name, "epsilon": share, "reason": reason})
        if self.spent > self.epsilon:  # cannot happen with the safety factor; checked anyway
            raise PrivacyError("budget split exceeds epsilon")
        return shares

    def reuse(self, part: str, times: int, reason: str) -> float:
        """Spend the whole ε ``times`` times over (paper 000's baseline): the privacy loss is
        then times · ε, which the ledger records. Returns ε."""
        if self.exhausted:
            raise PrivacyError("the privacy budget is already spent")
        self.exhausted = True
        self.ledger.append({"part": part, "epsilon": self.epsilon, "times": int(times),
                            "total": self.epsilon * int(times), "reason": reason})
        return self.epsilon


# -- exact discrete Laplace sampling ---------------------------------------------------------

# Uniform words: 62 random bits each, drawn from the Generator in blocks (a power-of-two range,
# so every word is exactly uniform).
_WORD = 1 << 62
_BLOCK = 4096


@numba.njit(cache=True, nogil=True)
def _discrete_laplace_fill(rng: np.random.Generator, scale: int, out: np.ndarray) -> None:
    """Discrete Laplace variables, P(z) ∝ exp(-|z| / scale), into ``out``: CKS 2020,
    Algorithm 2 with s = 1, t = scale, and Algorithm 1 for every Bernoulli(exp(-γ)).

    1. U uniform below t, sign uniform (one uniform integer below 2t: its half and its parity);
    2. accept U with probability exp(-U/t), else go back to 1;
    3. V: the number of successes of Bernoulli(exp(-1)) trials before the first failure;
    4. Z = ±(U + t V), rejecting "−0"; restart from 1 if rejected.

    Bernoulli(exp(-a/b)), 0 <= a <= b (Algorithm 1): draw A_j ~ Bernoulli(a / (b j)) for
    j = 1, 2, ... until one fails; true iff the failing j is odd (for a = b the first trial is
    certain and skipped). Bernoulli(a / c) is "a uniform integer below c is below a".

    The steps are a state machine around one draw site, so every uniform integer comes from a
    local block of words with no call overhead: a uniform integer below c takes the low bits
    of a word under the smallest all-ones mask >= c - 1 and is rejected if >= c (exactly
    uniform). The Generator refills the block.
    """
    block = np.empty(_BLOCK, dtype=np.int64)
    used = _BLOCK
    i = 0
    state = 0  # 0: draw U and the sign; 1: accept U (trial j); 2: geometric V (trial j)
    draw = u = j = v = 0
    while i < out.shape[0]:
        if state == 0:
            bound = 2 * scale
        elif state == 1:
            bound = scale * j
        else:
            bound = j
        x = 0
        if bound > 1:
            mask = bound - 1
            mask |= mask >> 1
            mask |= mask >> 2
            mask |= mask >> 4
            mask |= mask >> 8
            mask |= mask >> 16
            mask |= mask >> 32
            while True:
                if used == _BLOCK:
                    block[:] = rng.integers(0, _WORD, _BLOCK)
                    used = 0
                x = block[used] & mask
                used += 1
                if x < bound:
                    break
        if state == 0:
            draw, u, j, state = x, x // 2, 1, 1
        elif state == 1:
            if x < u:
                j += 1
            elif j % 2 == 1:  # U accepted: start V
                v, j, state = 0, 2, 2
            else:
                state = 0
        elif x < 1:  # state 2: the trial A_j of Bernoulli(exp(-1)) succeeded
            j += 1
        elif j % 2 == 1:  # Bernoulli(exp(-1)) was true: V grows
            v, j = v + 1, 2
        else:  # V is complete
            magnitude = u + scale * v
            negative = draw % 2 == 1
            if not (negative and magnitude == 0):
                out[i] = -magnitude if negative else magnitude
                i += 1
            state = 0


# Draws per thread below which one thread does all the work.
_PARALLEL_DRAWS = 200_000


def discrete_laplace(scale: int, size: int, rng: np.random.Generator | int | None) -> np.ndarray:
    """``size`` exact draws of discrete Laplace noise with P(z) ∝ exp(-|z| / scale).

    Large requests are split between threads, each drawing from its own child Generator
    spawned from ``rng`` (so a seed still fixes the result)."""
    scale = int(scale)
    if scale < 1 or scale > 2**46:
        raise InputError(f"discrete Laplace scale must lie in [1, 2^46], got {scale}")
    rng = make_rng(rng)
    out = np.empty(int(size), dtype=np.int64)
    threads = max(1, min(numba.config.NUMBA_NUM_THREADS, out.size // _PARALLEL_DRAWS))
    if threads == 1:
        _discrete_laplace_fill(rng, scale, out)
        return out
    parts = np.array_split(out, threads)
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(_discrete_laplace_fill, rng.spawn(threads), [scale] * threads, parts))
    return out


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

    def as_dict(self) -> dict[str, Any]:
        return {"sensitivity": self.sensitivity, "epsilon": self.epsilon,
                "scale": self.scale, "grid_step": self.grid_step,
                "integer_scale": self.integer_scale, "components": self.components}


def laplace_mechanism(values: np.ndarray, sensitivity: float, epsilon: float,
                      lows: np.ndarray, highs: np.ndarray,
                      rng: np.random.Generator | int | None, *,
                      changing: int | None = None) -> tuple[np.ndarray, LaplaceRelease]:
    """Release ``values`` (any shape; the whole array is one query of L1 ``sensitivity``) with
    ε-DP by grid-snapped discrete Laplace noise, then clamp component-wise to [lows, highs]
    (broadcast against values). ``changing`` bounds how many components can differ between
    neighbouring data sets (default: all); each may round one grid step further apart. See the
    module docstring for the construction."""
    epsilon = _check_epsilon(epsilon)
    values = np.asarray(values, dtype=np.float64)
    lows = np.broadcast_to(np.asarray(lows, dtype=np.float64), values.shape)
    highs = np.broadcast_to(np.asarray(highs, dtype=np.float64), values.shape)
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise InputError(f"sensitivity must be a positive number, got {sensitivity}")
    if not np.all(np.isfinite(values)) or np.any(values < lows) or np.any(values > highs):
        raise InputError("the values to release must lie in their declared domains")
    components = max(values.size if changing is None else int(changing), 1)
    # Grid steps 2^bits finer than sensitivity / components, keeping the integer scale below
    # the sampler's 2^46 (the noise overhead is (components + 2) * grid / sensitivity).
    room = 45 - math.log2(components) - max(0.0, math.log2(1 / epsilon))
    bits = max(8, min(_GRID_BITS, math.floor(room)))
    grid = 2.0 ** math.floor(math.log2(sensitivity / (components * 2**bits)))
    integer_sensitivity = math.ceil(sensitivity / grid) + components
    integer_scale = math.ceil(integer_sensitivity / epsilon)
    if np.any((highs - lows) / grid >= 2.0**52):
        raise InputError("domain too wide for the noise scale (over 2^52 grid steps)")
    steps = np.rint((values - lows) / grid).astype(np.int64)
    noise = discrete_laplace(integer_scale, values.size, rng).reshape(values.shape)
    released = np.clip(lows + grid * (steps + noise).astype(np.float64), lows, highs)
    return released, LaplaceRelease(float(sensitivity), epsilon, grid, integer_scale,
                                    components)


# -- the exponential mechanism ---------------------------------------------------------------

def exponential_mechanism(quality: np.ndarray, sensitivity: float, epsilon: float,
                          rng: np.random.Generator | int | None) -> np.ndarray:
    """One choice per row of ``quality`` (rows: independent selections; columns: candidates),
    with P(t) ∝ exp(ε q(t) / (2 Δq)). Returns the chosen column indices."""
    epsilon = _check_epsilon(epsilon)
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise InputError(f"sensitivity must be a positive number, got {sensitivity}")
    quality = np.atleast_2d(np.asarray(quality, dtype=np.float64))
    logits = epsilon * quality / (2.0 * sensitivity)
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    cumulative = np.cumsum(weights, axis=1)
    draws = make_rng(rng).random(quality.shape[0]) * cumulative[:, -1]
    choice = (cumulative <= draws[:, None]).sum(axis=1)
    return np.minimum(choice, quality.shape[1] - 1)
