"""Domains clipped at differentially private quantiles, before a DP release.

The noise of a DP release grows with the declared widths Λ_i: Λ_i / k for a mean (004
Prop. 5), Λ_i Λ_j / k for a covariance (Prop. 6). On heavy-tailed attributes a domain that is
safe to declare is much wider than where the records lie (Census INTVAL: [0, 1.5 max] is 20
standard deviations wide), and the noise on a covariance then exceeds the covariance itself.
Clamping every value into a narrower domain [a, b] divides the noise by Λ / (b − a) per
attribute, at the cost of a bias on the clipped tail. The narrower bounds must not come from
the data (docs/design.md), so each is chosen by the exponential mechanism with a share of ε.

**Upper bound at quantile q** (a private quantile in the manner of Smith, "Privacy-preserving
statistical estimation with optimal convergence rates", STOC 2011, on a fixed grid instead of
the data's gaps). Candidates c_j = a + Λ·2^(−j/64), j = 0, …, 1023: 64 per octave over the 16
octaves above the declared lower bound a (j = 0 is the declared upper bound b itself: no
clipping). The grid does not depend on the data. Its spacing is at most 1.1 % of Λ, and 1.1 %
of the distance from a below that: finest where a right-skewed column's records lie, coarsest
in the empty stretch between the largest record and b, whose candidates all score alike and
would otherwise draw the choice up. Quality u(c) = −|#{x ≤ c} − q n|. Replacing one record
changes each count by at most 1, so Δu = 1 and the choice is ε_b-DP (McSherry and Talwar 2007),
sampled exactly (:func:`~microagg.release.dp.mechanisms.exponential_mechanism`).

**Lower bound at quantile p**, when asked for: the same grid on [a, b'], b' the upper bound
just released, with a itself (no clipping) in place of b'; quality u(c) = −|#{x < c} − p n|.
Here the empty stretch is [a, smallest record), where the grid is finest: with little ε the
choice then leans towards a, i.e. towards clipping less, the safe side. (A grid mirrored
towards b' was tried first: its candidates crowd just below b', and on Census with ε = 0.0125
per bound it once chose a lower bound 10 units below INTVAL's upper bound.)

**Too little ε.** The chosen bound is within (2/ε)(ln 1024 + ln 10) ranks of the quantile
with probability 0.9. When that exceeds the records the bound is meant to clip, the report
warns that the bound may land far from its quantile.

**Privacy.** The bounds are ε_clip-DP. Given them, clamping is a map applied to each record
alone, so neighbouring data sets stay neighbours and the release that follows, with
ε − ε_clip, keeps its guarantee. By adaptive sequential composition the whole is ε-DP (with
respect to whatever the release protects). The bounds are public (privacy report); how many
values were clamped is data, for the owner only.

**Accuracy.** With little ε per bound the mechanism leans towards the top of a heavy tail: the
many candidates between the target quantile and the maximum all score nearly as well as the
quantile itself. The chosen bound then clips less than asked, never more than the
mechanism's noise allows (docs/algorithms.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from microagg.errors import InputError
from microagg.release.dp.mechanisms import Budget, exponential_mechanism
from microagg.release.inputs import DPInput

__all__ = ["DEFAULT_SHARE", "Clipping", "bound_quality", "candidate_bounds", "clip_domains",
           "private_bound", "rank_error"]

# The share of ε spent on the bounds when the user names none.
DEFAULT_SHARE = 0.1
_PER_OCTAVE = 64
_OCTAVES = 16


@dataclass(frozen=True)
class Clipping:
    """Clip the protected numeric columns at their DP ``low`` and ``high`` quantiles (0 and 1:
    keep the declared bound), spending ``share`` of ε on finding them."""

    low: float = 0.0
    high: float = 1.0
    share: float = DEFAULT_SHARE

    def __post_init__(self) -> None:
        if not (0.0 <= self.low < self.high <= 1.0):
            raise InputError(f"`clip`: quantiles must satisfy 0 <= low < high <= 1, got "
                             f"{self.low:g}, {self.high:g}")
        if self.low == 0.0 and self.high == 1.0:
            raise InputError("`clip`: quantiles 0 and 1 keep the declared domain; name a "
                             "quantile to clip at, e.g. `clip` 0.95")
        if not (0.0 < self.share < 1.0):
            raise InputError(f"`clip_share` must lie strictly between 0 and 1, got "
                             f"{self.share:g}")

    @classmethod
    def parse(cls, text: str, share: float | None = None) -> Clipping:
        """``Q`` clips the upper end at quantile Q; ``P,Q`` clips both ends."""
        try:
            values = [float(v) for v in text.split(",")]
        except ValueError:
            raise InputError(f"`clip` takes Q or P,Q (quantiles), got '{text}'") from None
        if len(values) not in (1, 2):
            raise InputError(f"`clip` takes Q or P,Q (quantiles), got '{text}'")
        low, high = (0.0, values[0]) if len(values) == 1 else (values[0], values[1])
        return cls(low, high, DEFAULT_SHARE if share is None else share)

    @property
    def sides(self) -> list[tuple[str, float]]:
        """The bounds to choose, upper first: (side, quantile)."""
        return ([("upper", self.high)] if self.high < 1 else []) + \
               ([("lower", self.low)] if self.low > 0 else [])

    def as_dict(self) -> dict[str, Any]:
        return {"lower_quantile": self.low, "upper_quantile": self.high,
                "share_of_epsilon": self.share}


def candidate_bounds(low: float, high: float, *, upper: bool) -> np.ndarray:
    """The fixed grid of candidate bounds on [low, high] (module docstring): low + w 2^(−j/64),
    j = 0, …, 1023. For an upper bound j = 0 is high itself (no clipping); for a lower bound
    (below an upper bound ``high`` already chosen) low itself takes its place."""
    candidates = low + (high - low) * 2.0 ** (-np.arange(_PER_OCTAVE * _OCTAVES) / _PER_OCTAVE)
    if not upper:
        candidates[0] = low
    return candidates


def rank_error(epsilon: float, candidates: int = _PER_OCTAVE * _OCTAVES,
               failure: float = 0.1) -> float:
    """How far in rank the chosen bound may be from the quantile with probability 1 −
    ``failure``: the exponential mechanism's utility bound (2/ε)(ln C + ln(1/failure))
    (McSherry and Talwar 2007, Theorem 8, for a quality of sensitivity 1)."""
    return 2.0 / epsilon * (math.log(candidates) + math.log(1.0 / failure))


def bound_quality(sorted_values: np.ndarray, quantile: float, candidates: np.ndarray, *,
                  upper: bool) -> np.ndarray:
    """The exponential mechanism's quality of each candidate bound: −|#{x ≤ c} − q n| for an
    upper bound, −|#{x < c} − q n| for a lower one (sensitivity 1)."""
    counts = np.searchsorted(sorted_values, candidates, side="right" if upper else "left")
    return -np.abs(counts - quantile * sorted_values.size)


def private_bound(sorted_values: np.ndarray, quantile: float, *, low: float, high: float,
                  upper: bool, epsilon: float, rng: np.random.Generator
                  ) -> tuple[float, dict[str, Any]]:
    """The ε-DP upper (or lower) bound at ``quantile`` of ``sorted_values`` (which lie in
    [low, high]), and its privacy-report entry."""
    candidates = candidate_bounds(low, high, upper=upper)
    quality = bound_quality(sorted_values, quantile, candidates, upper=upper)
    chosen, info = exponential_mechanism(quality, sensitivity=1.0, epsilon=epsilon, rng=rng)
    count = "#{x <= c}" if upper else "#{x < c}"
    grid = ("a + w 2^(-j/64), w = b - a (j = 0: b)" if upper
            else "a + w 2^(-j/64), w = b' - a, b' the upper bound (j = 0: a)")
    return float(candidates[chosen[0]]), {
        "mechanism": "exponential",
        "formula": f"quality -|{count} - {quantile:g} n| over the {candidates.size} "
                   f"candidates {grid}; one replaced record changes a count by at most 1",
        **info.as_dict()}


def clip_domains(data: DPInput, clipping: Clipping | None, budget: Budget,
                 rng: np.random.Generator) -> tuple[DPInput, list[dict[str, Any]]]:
    """``data`` with every numeric domain clipped at DP quantiles and its values clamped into
    it, and the report entries (``data`` itself and none without ``clipping``). Sets aside
    ``clipping.share`` of the budget, split equally over the bounds."""
    if clipping is None:
        return data, []
    if not data.numeric:
        raise InputError("`clip` applies to numeric columns; the release protects none")
    parts = {(name, side): f"domain clipping: {side} bound of {name}"
             for name in data.numeric for side, _ in clipping.sides}
    shares = budget.set_aside(
        {part: 1.0 for part in parts.values()}, clipping.share * budget.epsilon,
        "the clipped domains, chosen by the exponential mechanism before the release")
    lows, highs = data.lows.copy(), data.highs.copy()
    entries = []
    weak = []
    for j, name in enumerate(data.numeric):
        values = np.sort(data.X[:, j])
        for side, quantile in clipping.sides:
            upper = side == "upper"
            epsilon = shares[parts[name, side]]
            bound, entry = private_bound(values, quantile, low=float(lows[j]),
                                         high=float(highs[j]), upper=upper, epsilon=epsilon,
                                         rng=rng)
            if upper:
                highs[j] = bound
            else:
                lows[j] = bound
            entries.append({"statistic": f"{side} bound of '{name}' (quantile {quantile:g})",
                            "value": bound, **entry})
            meant = data.n * (1.0 - quantile if upper else quantile)
            reach = rank_error(epsilon)
            if reach > meant:
                weak.append(
                    f"the {side} bound of '{name}' was chosen with epsilon {epsilon:.3g} on "
                    f"{data.n:,} records: the exponential mechanism places it within "
                    f"{reach:,.0f} ranks of quantile {quantile:g} only (90 %), "
                    f"more than the {meant:,.0f} records it is meant to clip, so it may land "
                    "far from that quantile (a larger --clip-share or data set makes it "
                    "reliable)")
    X = np.clip(data.X, lows, highs)
    domains = dict(data.domains)
    for j, name in enumerate(data.numeric):
        declared = domains[name]
        domains[name] = {**declared, "low": float(lows[j]), "high": float(highs[j]),
                         "declared": [declared["low"], declared["high"]],
                         "clipped": "low and high chosen by the exponential mechanism at "
                                    "the quantiles " + ", ".join(
                                        f"{q:g} ({side})" for side, q in clipping.sides)
                                    + " with the epsilon of 'domain clipping' in "
                                      "epsilon_split; values clamped into them; neighbours "
                                      "differ within the declared domain"}
    clipped = {name: int(np.count_nonzero(X[:, j] != data.X[:, j]))
               for j, name in enumerate(data.numeric)}
    return replace(data, X=X, lows=lows, highs=highs, domains=domains, clipped=clipped,
                   warnings=tuple(weak)), entries
