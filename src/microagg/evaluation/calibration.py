"""Calibration of one method's parameter to a target risk or utility (paper 003 §5.1).

:func:`calibrate` searches a :class:`Candidate`'s range as the module docstring of
:mod:`microagg.evaluation.compare` describes: a coarse grid of :data:`GRID_POINTS` values
brackets the target, bisection closes in, and a randomized method's measure is the mean over
seeds with its Student-t 95 % interval, which must lie within the tolerance band. A
:class:`Calibrator` measures the releases (risk, EMD, utility) of every search.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np
from scipy import stats

from microagg.evaluation.comparison import (
    EPSILON_MEANINGLESS,
    Evaluation,
    MethodResult,
    Utility,
)
from microagg.evaluation.risk import rank_risk
from microagg.evaluation.utility import EMD_EXACT_LIMIT, EarthMovers, emd, jsd, sse_percent
from microagg.options import CompareMethod, MatchStatus, RankScale, RiskAggregate, Target

__all__ = ["GRID_POINTS", "MAX_STEPS", "RESOLUTION", "SCATTER_EMD_POINTS", "UTILITY_SEEDS",
           "Calibrator", "Candidate", "Mask", "calibrate"]

GRID_POINTS = 6
MAX_STEPS = 40
RESOLUTION = 1e-4
"""Bisection stops when the bracket is this fraction of the searched range (on the search
axis: the logarithm of the parameter when it spans decades)."""
SCATTER_EMD_POINTS = 1000
"""The scatter measures the EMD of every evaluated release with groups of at most this many
distinct records per data set (fast; each EMD carries its certified bound); the chosen values
use :data:`~microagg.evaluation.utility.EMD_EXACT_LIMIT`, and the release shared by both is
measured once."""
UTILITY_SEEDS = 3
"""Releases of a randomized method whose EMDs make its utility at the chosen value."""

Mask = Callable[[np.ndarray, float, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class Candidate:
    """A method and the range its parameter is searched over.

    ``increasing``: a larger value protects more (k, γ, s, the swap window) or less (ε).
    ``aligned``: the release keeps the input's rows in order (SSE is then defined)."""

    method: CompareMethod
    parameter: str
    low: float
    high: float
    integer: bool
    randomized: bool
    increasing: bool
    aligned: bool
    mask: Mask
    note: str = ""

    @property
    def logarithmic(self) -> bool:
        return not self.integer and self.high / self.low >= 100

    def clip(self, value: float) -> float:
        value = min(max(value, self.low), self.high)
        return float(round(value)) if self.integer else float(value)


class Calibrator:
    """Measures releases and searches one candidate's parameter."""

    def __init__(self, X: np.ndarray, lows: np.ndarray, highs: np.ndarray, *, target: Target,
                 seeds: int, seed: int, scale: RankScale, aggregate: RiskAggregate,
                 progress: Callable[[str], None] | None) -> None:
        self.X, self.lows, self.highs = X, lows, highs
        self.target, self.seeds, self.seed = target, seeds, seed
        self.scale, self.aggregate = scale, aggregate
        self.progress = progress

    def risk(self, Y: np.ndarray) -> float:
        return rank_risk(self.X, Y, scale=self.scale, aggregate=self.aggregate)

    def release(self, c: Candidate, value: float, run: int) -> np.ndarray:
        return c.mask(self.X, value, np.random.default_rng((self.seed, run)))

    def emd(self, Y: np.ndarray, max_points: int = EMD_EXACT_LIMIT) -> EarthMovers:
        return emd(self.X, Y, self.lows, self.highs, max_points=max_points)

    def evaluate(self, c: Candidate, value: float, runs: int,
                 known: Evaluation | None = None) -> Evaluation:
        """The measure at ``value`` over ``runs`` seeds; the runs of ``known`` (an earlier
        evaluation at the same value with fewer seeds) are kept, not redone."""
        runs = runs if c.randomized else 1
        if self.progress is not None:
            self.progress(f"{c.method.value}: {c.parameter} = {value:.4g} ({runs} runs)")
        measures = list(known.measures) if known is not None else []
        for run in range(len(measures), runs):
            Y = self.release(c, value, run)
            if self.target is Target.RISK:
                measures.append(self.risk(Y))
            else:
                distance = self.emd(Y)
                measures.append(distance.value)
            if run == 0:  # the first seed's release stands for the value in the scatter
                risk = measures[0] if self.target is Target.RISK else self.risk(Y)
                if self.target is Target.RISK:
                    distance = self.emd(Y, SCATTER_EMD_POINTS)
                scatter = distance
        values = np.asarray(measures)
        mean = float(values.mean())
        low, high = _interval(values)
        if known is not None:
            return Evaluation(value, tuple(measures), mean, (low, high), known.risk,
                              known.emd, known.emd_bound)
        return Evaluation(value, tuple(measures), mean, (low, high), risk, scatter.value,
                          scatter.bound)

    def utility(self, c: Candidate, value: float) -> tuple[Utility, EarthMovers]:
        """The utility at ``value`` over up to :data:`UTILITY_SEEDS` releases, and the EMD of
        the first seed's release (which stands for it in the scatter)."""
        runs = min(self.seeds, UTILITY_SEEDS) if c.randomized else 1
        distances, first = [], None
        for run in range(runs):
            Y = self.release(c, value, run)
            distances.append(self.emd(Y))
            if run == 0:
                first = Y
        assert first is not None
        values = np.array([d.value for d in distances])
        low, high = _interval(values)
        spread = (high - low) / 2
        certified = max(d.bound for d in distances)
        utility = Utility(float(values.mean()), all(d.exact for d in distances),
                          certified + spread, sse_percent(self.X, first) if c.aligned else None,
                          float(np.mean(jsd(self.X, first, self.lows, self.highs))),
                          seeds=runs, emd_certified=certified, emd_spread=spread)
        return utility, distances[0]


def _interval(values: np.ndarray) -> tuple[float, float]:
    """The Student-t 95 % confidence interval of the mean of ``values`` (a point for one)."""
    mean = float(values.mean())
    if values.size < 2:
        return mean, mean
    half = float(stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1)
                 / math.sqrt(values.size))
    return mean - half, mean + half


def _position(c: Candidate, value: float) -> float:
    """Where ``value`` lies on the search axis, increasing with protection."""
    u = math.log(value) if c.logarithmic else value
    return u if c.increasing else -u


def _value(c: Candidate, position: float) -> float:
    u = position if c.increasing else -position
    return c.clip(math.exp(u) if c.logarithmic else u)


class _Search:
    """The search of one candidate's parameter for a target: every evaluation made, by value."""

    def __init__(self, cal: Calibrator, c: Candidate, target: float, tolerance: float) -> None:
        self.cal, self.c, self.target = cal, c, target
        self.band = (target - tolerance, target + tolerance)
        self.seen: dict[float, Evaluation] = {}

    def at(self, value: float, runs: int) -> Evaluation:
        if value not in self.seen or len(self.seen[value].measures) < runs:
            self.seen[value] = self.cal.evaluate(self.c, value, runs, self.seen.get(value))
        return self.seen[value]

    def distance(self, e: Evaluation) -> float:
        return abs(e.mean - self.target)

    def inside(self, e: Evaluation) -> bool:
        return self.band[0] <= e.ci[0] and e.ci[1] <= self.band[1]

    def settle(self, e: Evaluation) -> Evaluation:
        """More seeds while the mean is in the band but its interval straddles it."""
        runs = len(e.measures)
        while (self.c.randomized and not self.inside(e)
               and self.band[0] <= e.mean <= self.band[1] and runs < 4 * self.cal.seeds):
            runs *= 2
            e = self.at(e.value, runs)
        return e

    def grid(self) -> list[Evaluation]:
        """The coarse grid over the whole range, in the direction of more protection."""
        c = self.c
        first, last = _position(c, c.low), _position(c, c.high)
        axis = np.linspace(min(first, last), max(first, last), GRID_POINTS)
        return [self.at(v, self.cal.seeds) for v in dict.fromkeys(_value(c, p) for p in axis)]

    def bisect(self, lo: Evaluation, hi: Evaluation) -> None:
        """Close in on the target between two evaluations on either side of it."""
        c = self.c
        span = abs(_position(c, c.high) - _position(c, c.low))
        for _ in range(MAX_STEPS):
            if self.inside(self.settle(min((lo, hi), key=self.distance))):
                return
            middle = _value(c, (_position(c, lo.value) + _position(c, hi.value)) / 2)
            if middle in (lo.value, hi.value):
                return
            m = self.at(middle, self.cal.seeds)
            if (lo.mean - self.target) * (m.mean - self.target) <= 0:
                hi = m
            else:
                lo = m
            if abs(_position(c, hi.value) - _position(c, lo.value)) < RESOLUTION * span:
                return

    def better(self, e: Evaluation) -> bool:
        """Whether ``e`` lies on the good side of the target: safer (risk above it) when
        holding risk, more useful (EMD below it) when holding utility."""
        return e.mean > self.target if self.cal.target is Target.RISK else e.mean < self.target


def _outcome(search: _Search, best: Evaluation, bracketed: bool
             ) -> tuple[MatchStatus, str]:
    """The status of a search that ended at ``best``, and why it is not matched."""
    c, what = search.c, search.cal.target.value
    if search.inside(best):
        return MatchStatus.MATCHED, ""
    if not bracketed:
        means = [e.mean for e in search.seen.values()]
        span = (f"over {c.parameter} in [{c.low:g}, {c.high:g}] the {what} goes from "
                f"{min(means):.4g} to {max(means):.4g}")
        if search.better(best):
            side = ("safer" if search.cal.target is Target.RISK else "more useful")
            return MatchStatus.EXCEEDS, (f"{side} than the target over its whole range ({span});"
                                         f" compared at {c.parameter} = {best.value:.4g}, the "
                                         "closest")
        return MatchStatus.SHORT, f"out of reach: {span}"
    reason = f"the closest {what} found is {best.mean:.4g}"
    if c.randomized and best.ci[1] - best.ci[0] > search.band[1] - search.band[0]:
        reason += (f", with a 95 % interval [{best.ci[0]:.4g}, {best.ci[1]:.4g}] wider than "
                   "the band: use more `seeds` or a larger `tolerance`")
    elif c.integer:
        reason += f" ({c.parameter} is an integer)"
    return MatchStatus.UNSETTLED, reason


def _meaningless(c: Candidate, value: float) -> str:
    """The warning of a differentially private candidate at an ε that protects nothing."""
    if c.parameter != "epsilon" or value <= EPSILON_MEANINGLESS:
        return ""
    return (f"epsilon = {value:.4g} gives no meaningful guarantee (it lets the odds of any "
            f"inference about a person grow by e^{value:.4g}); such a release is not a "
            "differentially private one in any useful sense")


def calibrate(cal: Calibrator, c: Candidate, target: float, tolerance: float
              ) -> MethodResult:
    """Search ``c``'s parameter for the value whose measure is ``target`` ± ``tolerance``
    (absolute), and the result of ``c`` at the value chosen (module docstring)."""
    search = _Search(cal, c, target, tolerance)
    points = search.grid()
    bracket = next(((a, b) for a, b in pairwise(points)
                    if (a.mean - target) * (b.mean - target) <= 0), None)
    if bracket is not None:
        search.bisect(*bracket)
    pool = ([e for e in search.seen.values() if search.inside(e)]
            or list(search.seen.values()))
    best = search.settle(min(pool, key=search.distance))
    status, reason = _outcome(search, best, bracket is not None)
    utility, first = cal.utility(c, best.value)
    # one EMD per release: the first seed's release at the chosen value is measured once
    evaluations = tuple(sorted(
        (replace(e, emd=first.value, emd_bound=first.bound) if e.value == best.value else e
         for e in search.seen.values()), key=lambda e: _position(c, e.value)))
    risk_target = cal.target is Target.RISK
    return MethodResult(c.method, c.parameter, best.value,
                        best.mean if risk_target else best.risk,
                        best.ci if risk_target else (best.risk, best.risk),
                        utility, status, reason, evaluations, c.high / c.low >= 100, c.note,
                        _meaningless(c, best.value))

