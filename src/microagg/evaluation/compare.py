"""Compare anonymization methods at equal risk, or at equal utility (paper 003 §3).

For a target risk r, every candidate method's parameter is calibrated so that its release has
risk r (003 §5.1); the methods are then ranked by the utility they keep at that risk (003
§5.2). The dual fixes a utility level and ranks by risk. Risk is the rank-based record-linkage
risk of 003 eq. 2 (:func:`microagg.evaluation.risk.rank_risk`, larger = safer) and utility the
EMD of eq. 1 (:func:`microagg.evaluation.utility.emd`, smaller = better).

Calibration (docs/algorithms.md): a method's parameter moves along a documented range in the
direction of more protection; a coarse grid of :data:`GRID_POINTS` values brackets the target
and bisection (on the logarithm of the parameter when the range spans decades, over the
integers for a cluster size k) closes in. A randomized method's measure at one value is the
mean over seeds with a Student-t 95 % confidence interval; a value is matched only when that
interval lies within the tolerance band around the target. When the interval straddles the band
the seeds are doubled (up to 4×) before the search moves on. A method that is better than the
target over its whole range (safer at equal risk, more useful at equal utility) is ranked at
its value closest to the target (``MatchStatus.EXCEEDS``); one that is worse over its whole
range (``SHORT``), or whose search ends without an interval inside the band (``UNSETTLED``),
is left out of the ranking, with the reason and the closest value found. Methods whose
measures cannot be told apart (overlapping uncertainty intervals) are reported as tied.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from microagg import __version__
from microagg.core.aggregate import replace_by_means
from microagg.core.masking import correlated_noise, multiplicative_noise, rank_swap
from microagg.data.schema import Schema
from microagg.data.table import encode
from microagg.errors import InputError, PrivacyLeakWarning
from microagg.evaluation.comparison import (
    EPSILON_MEANINGLESS,
    Comparison,
    Evaluation,
    MethodResult,
    Utility,
)
from microagg.evaluation.evaluate import attribute_domains, evaluation_columns
from microagg.evaluation.risk import rank_risk
from microagg.evaluation.utility import EMD_EXACT_LIMIT, EarthMovers, emd, jsd, sse_percent
from microagg.options import (
    CompareMethod,
    MatchStatus,
    RankScale,
    RankTies,
    RiskAggregate,
    Target,
    parse,
)
from microagg.partition.mdav import mdav
from microagg.partition.univariate import individual_ranking

__all__ = ["DEFAULT_METHODS", "DP_RANKING_K", "Candidate", "Comparison", "Evaluation",
           "MethodResult", "Utility", "candidates", "compare", "parse_target"]

DEFAULT_METHODS = (CompareMethod.MDAV, CompareMethod.CORRELATED_NOISE,
                   CompareMethod.MULTIPLICATIVE_NOISE, CompareMethod.RANK_SWAP)
"""The four methods of 003 §5."""

DP_RANKING_K = 10
"""Cluster size of the ``dp-individual-ranking`` candidate, whose calibrated parameter is ε."""

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


def _standardized(X: np.ndarray) -> np.ndarray:
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def _dp_release(method: str, X: np.ndarray, epsilon: float, rng: np.random.Generator,
                lows: np.ndarray, highs: np.ndarray, declared: bool, **options: Any
                ) -> np.ndarray:
    from microagg.release.functions import dp_release

    names = [f"a{j}" for j in range(X.shape[1])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        release = dp_release(pd.DataFrame(X, columns=names), method=method, epsilon=epsilon,
                             bounds={c: (float(lo), float(hi)) for c, lo, hi in
                                     zip(names, lows, highs, strict=True)},
                             bounds_from_data=not declared, rng=rng, **options)
    return release.frame[names].to_numpy(dtype=np.float64)


def candidates(X: np.ndarray, lows: np.ndarray, highs: np.ndarray, *,
               declared: bool = False) -> dict[CompareMethod, Candidate]:
    """Every method that :func:`compare` can calibrate on the matrix ``X`` (domains
    [lows, highs]; ``declared``: they come from a schema, not from the data)."""
    n = X.shape[0]
    z = _standardized(X)
    top_k = max(2, n // 2)

    def by_mdav(_x: np.ndarray, k: float, _rng: np.random.Generator) -> np.ndarray:
        return replace_by_means(X, mdav(z, int(k)))

    def by_ranking(_x: np.ndarray, k: float, _rng: np.random.Generator) -> np.ndarray:
        labels = individual_ranking(X, int(k))
        return np.column_stack([replace_by_means(X[:, [j]], labels[:, j])[:, 0]
                                for j in range(X.shape[1])])

    bounds_note = ("" if declared else "domain bounds from the data: the ε-DP guarantee does not "
                   "hold; only its empirical risk is compared")
    table = [
        Candidate(CompareMethod.MDAV, "k", 2, top_k, True, False, True, True, by_mdav),
        Candidate(CompareMethod.INDIVIDUAL_RANKING, "k", 2, top_k, True, False, True, True,
                  by_ranking),
        Candidate(CompareMethod.CORRELATED_NOISE, "gamma", 1e-4, 1e2, False, True, True, True,
                  lambda x, v, r: correlated_noise(x, v, rng=r)),
        Candidate(CompareMethod.MULTIPLICATIVE_NOISE, "s", 1e-3, 3.0, False, True, True, True,
                  lambda x, v, r: multiplicative_noise(x, v, rng=r)),
        Candidate(CompareMethod.RANK_SWAP, "fraction", 1e-3, 1.0, False, True, True, True,
                  lambda x, v, r: rank_swap(x, v, rng=r)),
        Candidate(CompareMethod.DP_LAPLACE, "epsilon", 1e-2, 1e4, False, True, False, False,
                  lambda x, v, r: _dp_release("laplace", x, v, r, lows, highs, declared),
                  bounds_note),
        Candidate(CompareMethod.DP_INDIVIDUAL_RANKING, "epsilon", 1e-2, 1e4, False, True,
                  False, False,
                  lambda x, v, r: _dp_release("individual-ranking", x, v, r, lows, highs,
                                              declared, k=min(DP_RANKING_K, n)),
                  f"k = {min(DP_RANKING_K, n)}; columns released unlinked"
                  + (f"; {bounds_note}" if bounds_note else "")),
    ]
    return {c.method: c for c in table}


def parse_target(text: str | float) -> float | tuple[CompareMethod, float]:
    """A target given as a number, or as ``METHOD=VALUE`` (the level that method has with that
    parameter value on the data)."""
    if isinstance(text, int | float):
        return float(text)
    text = str(text).strip()
    if "=" in text:
        name, _, value = text.partition("=")
        method = parse(CompareMethod, name, "target method")
        try:
            return method, float(value)
        except ValueError:
            raise InputError(f"the target '{text}' needs a number after '='") from None
    try:
        return float(text)
    except ValueError:
        raise InputError(f"the target '{text}' is neither a number nor METHOD=VALUE "
                         "(e.g. mdav=5)") from None


class _Calibrator:
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

    def __init__(self, cal: _Calibrator, c: Candidate, target: float, tolerance: float) -> None:
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


def _calibrate(cal: _Calibrator, c: Candidate, target: float, tolerance: float
               ) -> MethodResult:
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


MAX_SEEDS = 1000
"""The most runs per value a comparison accepts (each run is a full release and a measure)."""


def _matrix(frame: pd.DataFrame, schema: Schema | None, columns: Sequence[str] | None
            ) -> tuple[list[str], Schema, np.ndarray]:
    """The compared columns, their schema and their values (numeric, complete, finite and of
    a magnitude whose squares do not overflow), checked as every release checks its input."""
    names = evaluation_columns(frame, frame, schema, columns)
    base = schema.complete(frame) if schema is not None else Schema.infer(frame)
    selected = base.select(names)
    text = [a.name for a in selected if not a.is_numeric]
    if text:
        raise InputError(f"column '{text[0]}' is not numeric; the compared methods mask numeric "
                         "attributes only (choose others with `columns`)")
    undeclared = Schema(tuple(replace(a, domain=None) for a in selected))
    X = encode(frame[names], undeclared).numeric_matrix(names)
    if X.shape[0] < 4:
        raise InputError(f"the comparison needs at least 4 records, got {X.shape[0]}")
    return names, selected, X


def _domains(names: Sequence[str], lows: np.ndarray, highs: np.ndarray,
             sources: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The domains as the result states them: declared bounds are given; bounds read off the
    data are the raw extremes, for the owner's eyes only, so they are named and not given."""
    out: dict[str, dict[str, Any]] = {}
    for name, low, high, source in zip(names, lows, highs, sources, strict=True):
        if source == "schema":
            out[name] = {"low": float(low), "high": float(high), "source": "schema"}
        else:
            out[name] = {"source": "data: the range of the original values (not shown)"}
    return out


def compare(frame: pd.DataFrame, *, target_risk: str | float | None = None,
            target_utility: str | float | None = None,
            methods: Sequence[CompareMethod | str] | None = None,
            columns: Sequence[str] | None = None, schema: Schema | None = None,
            seeds: int = 10, tolerance: float = 0.0025, seed: int = 0,
            scale: RankScale | str = RankScale.RANKS,
            aggregate: RiskAggregate | str = RiskAggregate.MEAN_OF_LOGS,
            progress: Callable[[str], None] | None = None,
            source: str | None = None) -> Comparison:
    """Calibrate every method of ``methods`` (default: 003's four) to the target and rank them
    (003 §3). Give exactly one of ``target_risk`` (rank risk of eq. 2, larger = safer) and
    ``target_utility`` (EMD of eq. 1); each is a number or ``METHOD=VALUE``, the level that
    method reaches with that parameter value. ``tolerance`` is relative: a value is matched
    when its 95 % interval lies within target · (1 ± tolerance). A method that is better than
    the target over its whole range (always safer at equal risk, always more useful at equal
    utility) is ranked at its value closest to the target, and the recommendation says so.
    ``seed`` fixes every random draw; ``progress`` is called with a description before each
    evaluation; ``source`` names the input in the result's provenance."""
    if (target_risk is None) == (target_utility is None):
        raise InputError("give exactly one of `target_risk` and `target_utility`")
    target = Target.RISK if target_risk is not None else Target.UTILITY
    spec = parse_target(target_risk if target_risk is not None else target_utility)
    if (isinstance(seeds, bool) or not isinstance(seeds, int | np.integer)
            or not 1 <= seeds <= MAX_SEEDS):
        raise InputError(f"`seeds` must be an integer from 1 to {MAX_SEEDS}, got {seeds}")
    if not (0 < tolerance < 1):
        raise InputError(f"`tolerance` is relative and must lie in (0, 1), got {tolerance}")
    chosen = [parse(CompareMethod, m, "method") for m in (methods or DEFAULT_METHODS)]
    if not chosen:
        raise InputError("`methods` names no method")
    twice = next((m for i, m in enumerate(chosen) if m in chosen[:i]), None)
    if twice is not None:
        raise InputError(f"`methods` names {twice.value} twice")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"`seed` must be a non-negative integer, got {seed}")
    names, selected, X = _matrix(frame, schema, columns)
    lows, highs, sources = attribute_domains(selected, X)
    table = candidates(X, lows, highs, declared=all(s == "schema" for s in sources))
    cal = _Calibrator(X, lows, highs, target=target, seeds=int(seeds), seed=seed,
                      scale=parse(RankScale, scale, "rank scale"),
                      aggregate=parse(RiskAggregate, aggregate, "risk aggregate"),
                      progress=progress)
    if isinstance(spec, tuple):
        method, value = spec
        c = table[method]
        if not c.low <= value <= c.high or (c.integer and value != round(value)):
            raise InputError(f"the target {method.value}={value:g} is outside its range "
                             f"{c.parameter} in [{c.low:g}, {c.high:g}]"
                             + (" (an integer)" if c.integer else ""))
        target_value = cal.evaluate(c, value, cal.seeds).mean
        target_source = f"{method.value} with {c.parameter} = {value:g}"
    else:
        target_value, target_source = spec, "given"
    if not math.isfinite(target_value):
        raise InputError(f"the target must be a finite number, got {target_value}")
    band = abs(target_value) * tolerance
    results = tuple(_calibrate(cal, table[m], target_value, band) for m in chosen)
    if all(r.status is MatchStatus.SHORT for r in results):
        reach = [e.mean for r in results for e in r.evaluations]
        raise InputError(f"the target {target.value} {target_value:.4g} is out of reach of every "
                         f"method: they reach {min(reach):.4g} to {max(reach):.4g} on this data")
    ranked = [r for r in results if r.ranked]
    if target is Target.RISK:
        ranked.sort(key=lambda r: r.utility.emd)
    else:
        ranked.sort(key=lambda r: -r.risk)
    return Comparison(
        target, float(target_value), target_source, band, int(seeds),
        {"measure": "rank-based record-linkage risk, 003 eq. 2 (larger = safer)",
         "scale": cal.scale.value, "aggregate": cal.aggregate.value,
         "ties": RankTies.INTERVALS.value},
        {"rows": int(X.shape[0]), "columns": names,
         "domains": _domains(names, lows, highs, sources)},
        results, tuple(r.method for r in ranked),
        {"input": source, "created": datetime.now(UTC).isoformat(timespec="seconds"),
         "microagg": __version__,
         "columns_left_out": [str(c) for c in frame.columns if c not in names]})
