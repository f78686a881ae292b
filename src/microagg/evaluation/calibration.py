"""Calibration of one method's parameter to a target risk or utility (paper 003 §5.1).

:func:`calibrate` searches a :class:`Candidate`'s range as the module docstring of
:mod:`microagg.evaluation.compare` describes: a coarse grid of :data:`GRID_POINTS` values
brackets the target, bisection closes in, and a randomized method's measure is the mean over
seeds with its Student-t 95 % interval, which must lie within the tolerance band. A
:class:`Calibrator` measures the releases (risk, EMD, utility) of every search on numeric
attributes; :class:`~microagg.evaluation.key_compare.KeyCalibrator` those of methods for
categorical keys. Both are a :class:`Measurer`, all the search needs.

A measurer with ``ceiling`` set matches a value whose 95 % interval lies on the safe side of
the band's far edge (at most target · (1 + tolerance) for a risk where smaller is safer), and
of the values that do, the search keeps the least protective: the grid is evaluated up to its
first value that meets the target, and the bisection closes in on the edge of the region that
meets it rather than on the target itself. It is meant for measures that move by steps
(counts of records, integer parameters), where a value inside a narrow band may not exist.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, Protocol

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
           "Calibrator", "Candidate", "Mask", "Measurer", "Point", "calibrate", "interval",
           "summarize"]

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
    ``aligned``: the release keeps the input's rows in order (SSE is then defined).
    ``log``: search on the logarithm of the parameter (integers are rounded); None: when a
    real range spans two decades or more."""

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
    log: bool | None = None

    @property
    def logarithmic(self) -> bool:
        """Whether the search runs on the logarithm of the parameter."""
        if self.log is not None:
            return self.log
        return not self.integer and self.high / self.low >= 100

    @property
    def log_plot(self) -> bool:
        """Whether the parameter's range spans decades (its plot has a log axis)."""
        return self.logarithmic or (self.low > 0 and self.high / self.low >= 100)

    def clip(self, value: float) -> float:
        value = min(max(value, self.low), self.high)
        return float(round(value)) if self.integer else float(value)


class Point(Protocol):
    """The utility loss of one release, with its certified bound (0 when exact)."""

    @property
    def value(self) -> float: ...

    @property
    def bound(self) -> float: ...


class Measurer(Protocol):
    """What :func:`calibrate` needs: the measure held (``target``), its direction
    (``better_above``: a larger value is safer, or more useful), the match (``ceiling``),
    the runs per value, the measure at a value, and the utility at the value chosen."""

    target: Target
    seeds: int

    @property
    def better_above(self) -> bool: ...

    @property
    def ceiling(self) -> bool: ...

    def evaluate(self, c: Candidate, value: float, runs: int,
                 known: Evaluation | None = None) -> Evaluation: ...

    def utility(self, c: Candidate, value: float) -> tuple[Any, Point]: ...


class Calibrator:
    """Measures releases and searches one candidate's parameter (003: rank risk and EMD of
    numeric attributes)."""

    ceiling = False

    def __init__(self, X: np.ndarray, lows: np.ndarray, highs: np.ndarray, *, target: Target,
                 seeds: int, seed: int, scale: RankScale, aggregate: RiskAggregate,
                 progress: Callable[[str], None] | None) -> None:
        self.X, self.lows, self.highs = X, lows, highs
        self.target, self.seeds, self.seed = target, seeds, seed
        self.scale, self.aggregate = scale, aggregate
        self.progress = progress

    @property
    def better_above(self) -> bool:
        """A larger rank risk is safer; a smaller EMD is more useful."""
        return self.target is Target.RISK

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
        if known is not None:
            return summarize(value, measures, known.risk, known.loss, known.loss_bound)
        return summarize(value, measures, risk, scatter.value, scatter.bound)

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
        low, high = interval(values)
        spread = (high - low) / 2
        certified = max(d.bound for d in distances)
        utility = Utility(float(values.mean()), all(d.exact for d in distances),
                          certified + spread, sse_percent(self.X, first) if c.aligned else None,
                          float(np.mean(jsd(self.X, first, self.lows, self.highs))),
                          seeds=runs, emd_certified=certified, emd_spread=spread)
        return utility, distances[0]


def summarize(value: float, measures: list[float], risk: float, loss: float,
              loss_bound: float) -> Evaluation:
    """The evaluation at ``value`` of the measures of its runs, with the risk and the utility
    loss of its first run's release."""
    values = np.asarray(measures, dtype=np.float64)
    return Evaluation(value, tuple(measures), float(values.mean()), interval(values), risk,
                      loss, loss_bound)


def interval(values: np.ndarray) -> tuple[float, float]:
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

    def __init__(self, cal: Measurer, c: Candidate, target: float, tolerance: float) -> None:
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
        """Whether ``e``'s 95 % interval meets the target: inside the band, or with a
        ceiling on the safe side of its far edge."""
        if self.cal.ceiling:
            return e.ci[0] >= self.band[0] if self.cal.better_above else e.ci[1] <= self.band[1]
        return self.band[0] <= e.ci[0] and e.ci[1] <= self.band[1]

    def hopeful(self, e: Evaluation) -> bool:
        """Whether ``e``'s mean meets the target (its interval may not yet)."""
        if self.cal.ceiling:
            return e.mean >= self.band[0] if self.cal.better_above else e.mean <= self.band[1]
        return self.band[0] <= e.mean <= self.band[1]

    def settle(self, e: Evaluation) -> Evaluation:
        """More seeds while the mean meets the target but its interval straddles the band."""
        runs = len(e.measures)
        while (self.c.randomized and not self.inside(e) and self.hopeful(e)
               and runs < 4 * self.cal.seeds):
            runs *= 2
            e = self.at(e.value, runs)
        return e

    def grid_values(self) -> list[float]:
        """The values of the coarse grid over the whole range, in the direction of more
        protection."""
        c = self.c
        first, last = _position(c, c.low), _position(c, c.high)
        axis = np.linspace(min(first, last), max(first, last), GRID_POINTS)
        return list(dict.fromkeys(_value(c, p) for p in axis))

    def grid(self) -> list[Evaluation]:
        """The coarse grid, evaluated."""
        return [self.at(v, self.cal.seeds) for v in self.grid_values()]

    def _middle(self, lo: Evaluation, hi: Evaluation, span: float) -> float | None:
        """The value halfway between ``lo`` and ``hi`` on the search axis; None when the
        bracket cannot be split (neighbouring integers, or closer than the resolution)."""
        c = self.c
        if abs(_position(c, hi.value) - _position(c, lo.value)) < RESOLUTION * span:
            return None
        middle = _value(c, (_position(c, lo.value) + _position(c, hi.value)) / 2)
        return None if middle in (lo.value, hi.value) else middle

    def bisect(self, lo: Evaluation, hi: Evaluation) -> None:
        """Close in on the target between two evaluations on either side of it."""
        c = self.c
        span = abs(_position(c, c.high) - _position(c, c.low))
        for _ in range(MAX_STEPS):
            if self.inside(self.settle(min((lo, hi), key=self.distance))):
                return
            middle = self._middle(lo, hi, 0.0)
            if middle is None:
                return
            m = self.at(middle, self.cal.seeds)
            if (lo.mean - self.target) * (m.mean - self.target) <= 0:
                hi = m
            else:
                lo = m
            if abs(_position(c, hi.value) - _position(c, lo.value)) < RESOLUTION * span:
                return

    def edge(self, lo: Evaluation, hi: Evaluation) -> None:
        """With a ceiling: close in on the least protective value that meets the target,
        between ``lo`` (does not) and ``hi`` (does, and protects more)."""
        c = self.c
        span = abs(_position(c, c.high) - _position(c, c.low))
        for _ in range(MAX_STEPS):
            middle = self._middle(lo, hi, span)
            if middle is None:
                return
            m = self.settle(self.at(middle, self.cal.seeds))
            if self.inside(m):
                hi = m
            else:
                lo = m

    def better(self, e: Evaluation) -> bool:
        """Whether ``e`` lies on the good side of the target: safer when holding risk, more
        useful when holding utility."""
        return e.mean > self.target if self.cal.better_above else e.mean < self.target

    def span(self) -> str:
        """The measure's reach over the values evaluated, in words."""
        c, means = self.c, [e.mean for e in self.seen.values()]
        return (f"over {c.parameter} in [{c.low:g}, {c.high:g}] the {self.cal.target.value} "
                f"goes from {min(means):.4g} to {max(means):.4g}")

    def band_run(self) -> tuple[Evaluation, MatchStatus, str]:
        """The search for a value inside the band (003): the value chosen and the outcome."""
        points = self.grid()
        bracket = next(((a, b) for a, b in pairwise(points)
                        if (a.mean - self.target) * (b.mean - self.target) <= 0), None)
        if bracket is not None:
            self.bisect(*bracket)
        pool = [e for e in self.seen.values() if self.inside(e)] or list(self.seen.values())
        best = self.settle(min(pool, key=self.distance))
        return (best, *_outcome(self, best, bracket is not None))

    def ceiling_run(self) -> tuple[Evaluation, MatchStatus, str]:
        """The search for the least protective value that meets a ceiling (module
        docstring): the value chosen and the outcome."""
        c = self.c
        points: list[Evaluation] = []
        for value in self.grid_values():  # up to the first value that meets the target
            points.append(self.settle(self.at(value, self.cal.seeds)))
            if self.inside(points[-1]):
                break
        bracket = next(((a, b) for a, b in pairwise(points)
                        if not self.inside(a) and self.inside(b)), None)
        if bracket is not None:
            self.edge(*bracket)
        meeting = [e for e in self.seen.values() if self.inside(e)]
        if meeting:
            best = min(meeting, key=lambda e: _position(c, e.value))
            if bracket is not None:
                return best, MatchStatus.MATCHED, ""
            return best, MatchStatus.EXCEEDS, (
                f"meets the target already at its least protective value: "
                f"{self.cal.target.value} {best.mean:.4g} at {c.parameter} = "
                f"{best.value:.4g}, where it is compared")
        best = min(self.seen.values(), key=self.distance)
        if not any(self.hopeful(e) for e in self.seen.values()):
            return best, MatchStatus.SHORT, f"out of reach: {self.span()}"
        near = min((e for e in self.seen.values() if self.hopeful(e)),
                   key=lambda e: _position(c, e.value))
        return near, MatchStatus.UNSETTLED, (
            f"the mean {self.cal.target.value} meets the target at {c.parameter} = "
            f"{near.value:.4g} ({near.mean:.4g}) but its 95 % interval [{near.ci[0]:.4g}, "
            f"{near.ci[1]:.4g}] does not: use more `seeds` or a larger `tolerance`")


def _outcome(search: _Search, best: Evaluation, bracketed: bool
             ) -> tuple[MatchStatus, str]:
    """The status of a search that ended at ``best``, and why it is not matched."""
    c, what = search.c, search.cal.target.value
    if search.inside(best):
        return MatchStatus.MATCHED, ""
    if not bracketed:
        if search.better(best):
            side = ("safer" if search.cal.target is Target.RISK else "more useful")
            return MatchStatus.EXCEEDS, (f"{side} than the target over its whole range "
                                         f"({search.span()}); compared at {c.parameter} = "
                                         f"{best.value:.4g}, the closest")
        return MatchStatus.SHORT, f"out of reach: {search.span()}"
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


def calibrate(cal: Measurer, c: Candidate, target: float, tolerance: float
              ) -> MethodResult:
    """Search ``c``'s parameter for the value whose measure is ``target`` ± ``tolerance``
    (absolute; with ``cal.ceiling``, the least protective value on the safe side of that
    band's far edge), and the result of ``c`` at the value chosen (module docstring)."""
    search = _Search(cal, c, target, tolerance)
    best, status, reason = search.ceiling_run() if cal.ceiling else search.band_run()
    utility, first = cal.utility(c, best.value)
    # one utility measure per release: the first seed's release at the chosen value is
    # measured once
    evaluations = tuple(sorted(
        (replace(e, loss=first.value, loss_bound=first.bound) if e.value == best.value else e
         for e in search.seen.values()), key=lambda e: _position(c, e.value)))
    risk_target = cal.target is Target.RISK
    return MethodResult(c.method, c.parameter, best.value,
                        best.mean if risk_target else best.risk,
                        best.ci if risk_target else (best.risk, best.risk),
                        utility, status, reason, evaluations, c.log_plot, c.note,
                        _meaningless(c, best.value))
