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

**Budget.** Every split of ε (attributes, statistics, groups) is made by a :class:`Budget`,
which records it for the privacy report and never hands out more than the total.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from microagg.errors import InputError, PrivacyError
from microagg.options import Calibration, parse

__all__ = [
    "Budget",
    "ExponentialRelease",
    "LaplaceRelease",
    "attribute_budgets",
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
    if isinstance(rng, (int, np.integer)) and rng < 0:
        raise InputError(f"the seed must be a non-negative integer, got {rng}")
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise InputError(f"rng must be a numpy Generator, a seed or None, got {rng!r}")


MAX_EPSILON = 1e9
"""The largest ε a budget takes: far beyond any meaningful guarantee (e^ε bounds nothing
long before), and below the point where its shares and the noise grid lose precision."""


def _check_epsilon(epsilon: float) -> float:
    epsilon = float(epsilon)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be a positive number, got {epsilon}")
    if epsilon > MAX_EPSILON:
        raise InputError(f"epsilon = {epsilon:g} is above {MAX_EPSILON:g}: a guarantee of "
                         f"e^{epsilon:g} protects nothing, and the noise computations lose "
                         "their precision")
    return epsilon


# -- the budget ------------------------------------------------------------------------------

@dataclass
class Budget:
    """A privacy budget ε, split in named parts by sequential composition.

    ``set_aside`` spends a given amount first (on a step that runs before the release, such as
    clipping the domains); ``split`` then spends all that is left on named shares proportional
    to the weights. The ledger keeps every part for the privacy report. The parts never sum to
    more than ε, and a spent budget cannot be split again.
    """

    epsilon: float
    ledger: list[dict[str, Any]] = field(default_factory=list)
    exhausted: bool = False
    aside: float = 0.0  # spent by set_aside before the split

    def __post_init__(self) -> None:
        self.epsilon = _check_epsilon(self.epsilon)

    @property
    def spent(self) -> float:
        return math.fsum(entry["epsilon"] for entry in self.ledger)

    @property
    def remaining(self) -> float:
        """What ``split`` will spend: ε less what was set aside."""
        return self.epsilon - self.aside

    def set_aside(self, weights: Mapping[str, float], amount: float, reason: str
                  ) -> dict[str, float]:
        """Spend ``amount`` (less than what remains) on the named parts, proportionally to
        their weights, before the budget is split."""
        if not weights or any(not (w > 0 and math.isfinite(w)) for w in weights.values()):
            raise InputError("budget weights must be positive numbers")
        if self.exhausted:
            raise PrivacyError("the privacy budget is already spent")
        if not (0 < amount < self.remaining):
            raise InputError(f"cannot set aside {amount:g} of a budget with "
                             f"{self.remaining:g} left")
        total = math.fsum(weights.values())
        shares = {name: amount * w / total * _SPLIT_SAFETY for name, w in weights.items()}
        for name, share in shares.items():
            self.ledger.append({"part": name, "epsilon": share, "reason": reason})
        self.aside += amount
        return shares

    def split(self, weights: Mapping[str, float], reason: str = "") -> dict[str, float]:
        """Spend what remains of the budget on the named parts, proportionally to their
        weights."""
        if not weights:
            raise InputError("nothing to split the budget over")
        if any(not (w > 0 and math.isfinite(w)) for w in weights.values()):
            raise InputError("budget weights must be positive numbers")
        if self.exhausted:
            raise PrivacyError("the privacy budget is already spent")
        self.exhausted = True
        total = math.fsum(weights.values())
        shares = {name: self.remaining * w / total * _SPLIT_SAFETY
                  for name, w in weights.items()}
        for name, share in shares.items():
            self.ledger.append({"part": name, "epsilon": share, "reason": reason})
        if self.spent > self.epsilon:  # cannot happen with the safety factor; checked anyway
            raise PrivacyError("budget split exceeds epsilon")
        return shares

    def split_part(self, part: str, weights: Mapping[str, float], reason: str
                   ) -> dict[str, float]:
        """Split the share already given to ``part`` further, proportionally to the weights
        (sequential composition inside it): its ledger entry is replaced by the sub-parts,
        named "part: name", so the ledger still sums to at most ε."""
        entries = [e for e in self.ledger if e["part"] == part and "times" not in e]
        if len(entries) != 1:
            raise PrivacyError(f"no unsplit budget part named '{part}'")
        if not weights or any(not (w > 0 and math.isfinite(w)) for w in weights.values()):
            raise InputError("budget weights must be positive numbers")
        entry = entries[0]
        position = self.ledger.index(entry)
        total = math.fsum(weights.values())
        shares = {name: entry["epsilon"] * w / total * _SPLIT_SAFETY
                  for name, w in weights.items()}
        self.ledger[position:position + 1] = [
            {"part": f"{part}: {name}", "epsilon": share, "reason": reason}
            for name, share in shares.items()]
        if self.spent > self.epsilon:  # cannot happen with the safety factor; checked anyway
            raise PrivacyError("budget split exceeds epsilon")
        return shares

    def per_group(self, part: str | None, epsilon: float, groups: int, reason: str) -> float:
        """Divide the ``epsilon`` of ledger entry ``part`` equally over ``groups`` queries
        composed sequentially (one per cluster when one changed record may change every
        cluster, 000 eq. 6) and return each one's share; the ledger entry records the
        division. ``part`` None: ``epsilon`` is not a ledger entry of its own (the paper
        calibration's full ε, recorded as reused)."""
        if groups < 1:
            raise InputError(f"cannot divide a budget over {groups} groups")
        share = epsilon / groups
        if part is not None:
            entries = [e for e in self.ledger if e["part"] == part]
            if len(entries) != 1 or not math.isclose(entries[0]["epsilon"], epsilon):
                raise PrivacyError(f"no budget part '{part}' of epsilon {epsilon:g}")
            entries[0].update({"divided_into": int(groups), "each": share,
                               "division": reason})
        return share

    def reuse(self, part: str, times: int, reason: str) -> float:
        """Spend the whole ε ``times`` times over (paper 000's baseline): the privacy loss is
        then times · ε, which the ledger records. Returns ε."""
        if self.exhausted:
            raise PrivacyError("the privacy budget is already spent")
        if self.aside:
            raise PrivacyError("the paper calibration spends the whole epsilon on every "
                               "attribute; nothing can be set aside before it")
        self.exhausted = True
        self.ledger.append({"part": part, "epsilon": self.epsilon, "times": int(times),
                            "total": self.epsilon * int(times), "reason": reason})
        return self.epsilon


def attribute_budgets(budget: Budget, numeric: Sequence[str], categorical: Sequence[str],
                      calibration: Calibration | str, reason: str
                      ) -> tuple[float, dict[str, float]]:
    """Split ``budget`` over the protected attributes of a release: the ε of the numeric block
    (``correct``) or of each numeric attribute (the others), and the ε of each categorical
    attribute.

    ``correct``: one share per attribute; the numeric block is one vector query whose L1
    sensitivity sums the attributes' (000 §4), so the release is ε-DP.
    ``per-attribute``: ε/m for every attribute, each numeric one a query of its own with its
    own width: ε-DP too, with less noise relative to its width on every attribute narrower than
    the average (see docs/algorithms.md).
    ``paper``: every attribute spends the full ε, as in paper 000's experiments (§5); the
    ledger records the reuse and the release is (m·ε)-DP for m attributes.
    """
    calibration = parse(Calibration, calibration, "calibration")
    if calibration is Calibration.PAPER:
        full = budget.reuse("every attribute, in full (paper calibration)",
                            len(numeric) + len(categorical), "paper 000's experiments")
        return full, {name: full for name in categorical}
    if calibration is Calibration.PER_ATTRIBUTE:
        shares = budget.split({name: 1.0 for name in (*numeric, *categorical)}, reason)
        return (shares[numeric[0]] if numeric else 0.0,
                {name: shares[name] for name in categorical})
    block = "numeric block (" + ", ".join(numeric) + ")"
    weights = {**({block: float(len(numeric))} if numeric else {}),
               **{name: 1.0 for name in categorical}}
    shares = budget.split(weights, reason)
    return shares.get(block, 0.0), {name: shares[name] for name in categorical}


# -- exact discrete Laplace sampling ---------------------------------------------------------

# Uniform words: 62 random bits each, drawn from the Generator in blocks (a power-of-two range,
# so every word is exactly uniform).
_WORD = 1 << 62
_BLOCK = 4096


@numba.njit(cache=True, nogil=True)
def _mask_below(bound: int) -> int:
    """The smallest all-ones bit mask >= bound - 1 (bound >= 2)."""
    mask = bound - 1
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    mask |= mask >> 32
    return mask


@numba.njit(cache=True, nogil=True)
def _uniform_below(rng: np.random.Generator, block: np.ndarray, cursor: np.ndarray,
                   bound: int) -> int:
    """A uniform integer in [0, bound): the low bits of a 62-bit word under the smallest
    all-ones mask >= bound - 1, rejected if >= bound (exactly uniform). ``block`` holds words
    from the Generator, ``cursor[0]`` the next unused one."""
    if bound <= 1:
        return 0
    mask = _mask_below(bound)
    while True:
        if cursor[0] == block.shape[0]:
            block[:] = rng.integers(0, _WORD, block.shape[0])
            cursor[0] = 0
        x = block[cursor[0]] & mask
        cursor[0] += 1
        if x < bound:
            return x


@numba.njit(cache=True, nogil=True)
def _bernoulli_exp(rng: np.random.Generator, block: np.ndarray, cursor: np.ndarray,
                   numerator: int, denominator: int) -> bool:
    """Bernoulli(exp(−numerator / denominator)) for integers numerator >= 0, denominator >= 1,
    exactly (CKS 2020, Algorithm 1): one Bernoulli(e^-1) per whole unit of the exponent, all of
    which must succeed, then Bernoulli(exp(−r/d)) for the remainder r < d: draw
    A_j ~ Bernoulli(r / (d j)) for j = 1, 2, ... until one fails; true iff that j is odd."""
    for _ in range(numerator // denominator):
        j = 1
        while _uniform_below(rng, block, cursor, j) < 1:  # A_j ~ Bernoulli(1/j)
            j += 1
        if j % 2 == 0:
            return False
    remainder = numerator % denominator
    if remainder == 0:
        return True
    j = 1
    while _uniform_below(rng, block, cursor, denominator * j) < remainder:
        j += 1
    return j % 2 == 1


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
    local block of words with no call overhead (as in :func:`_uniform_below`, 2.5 times faster
    than calling it). The Generator refills the block.
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
            mask = _mask_below(bound)
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
    room = 45 - math.log2(parts) - max(0.0, math.log2(1 / epsilon))
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
    epsilon = _check_epsilon(epsilon)
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

@numba.njit(cache=True, nogil=True)
def _exponential_choices(rng: np.random.Generator, gaps: np.ndarray, scale: int,
                         out: np.ndarray) -> None:
    """For every row r, candidate i with probability ∝ exp(−gaps[r, i] / scale), by rejection
    from uniform proposals (see the module docstring)."""
    block = np.empty(_BLOCK, dtype=np.int64)
    cursor = np.full(1, _BLOCK, dtype=np.int64)
    candidates = gaps.shape[1]
    for r in range(gaps.shape[0]):
        while True:
            i = _uniform_below(rng, block, cursor, candidates)
            if _bernoulli_exp(rng, block, cursor, gaps[r, i], scale):
                out[r] = i
                break


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
    epsilon = _check_epsilon(epsilon)
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
    _exponential_choices(make_rng(rng), gaps, np.int64(integer_scale), out)
    return out, ExponentialRelease(sensitivity, 2 * integer_sensitivity / integer_scale, grid,
                                   integer_scale)
