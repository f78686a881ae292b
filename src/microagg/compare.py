"""Compare anonymization methods at equal risk, or at equal utility (paper 003 §3).

For a target risk r, every candidate method's parameter is calibrated so that its release has
risk r (003 §5.1); the methods are then ranked by the utility they keep at that risk (003
§5.2). The dual fixes a utility level and ranks by risk. Risk is the rank-based record-linkage
risk of 003 eq. 2 (:func:`microagg.metrics.risk.rank_risk`, larger = safer) and utility the
EMD of eq. 1 (:func:`microagg.metrics.utility.emd`, smaller = better).

Calibration (docs/algorithms.md): a method's parameter moves along a documented range in the
direction of more protection; a coarse grid of :data:`GRID_POINTS` values brackets the target
and bisection (on the logarithm of the parameter when the range spans decades, over the
integers for a cluster size k) closes in. A randomized method's measure at one value is the
mean over seeds with a Student-t 95 % confidence interval; a value is matched only when that
interval lies within the tolerance band around the target. When the interval straddles the band
the seeds are doubled (up to 4×) before the search moves on. A method whose range cannot reach
the target, or whose search ends without an interval inside the band, is reported *not
matched*, with the closest value found.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from microagg.aggregate import replace_by_means
from microagg.errors import InputError, PrivacyLeakWarning
from microagg.masking import correlated_noise, multiplicative_noise, rank_swap
from microagg.metrics.evaluate import attribute_domains, evaluation_columns
from microagg.metrics.risk import rank_risk
from microagg.metrics.utility import emd, jsd, sse_percent
from microagg.options import CompareMethod, RankScale, RiskAggregate, Target, parse
from microagg.partition.mdav import mdav
from microagg.partition.univariate import individual_ranking
from microagg.schema import Schema

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
"""The scatter of every evaluated release measures its EMD with at most this many clusters per
data set (fast); the table at the matched values uses the exact EMD up to
:data:`~microagg.metrics.utility.EMD_EXACT_LIMIT` records."""

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
    from microagg.release.dp import dp_release

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


@dataclass(frozen=True)
class Evaluation:
    """The measure calibrated on (risk, or EMD for the dual) at one parameter value, over
    seeds: its mean and 95 % confidence interval; ``risk`` and ``emd`` of the first seed's
    release, for the risk-utility scatter (EMD with at most :data:`SCATTER_EMD_POINTS`
    clusters)."""

    value: float
    measures: tuple[float, ...]
    mean: float
    ci: tuple[float, float]
    risk: float
    emd: float


@dataclass(frozen=True)
class Utility:
    """Utility of the release at the matched value (first seed): the EMD of 003 eq. 1 (exact,
    or within ``emd_bound`` when clustered), SSE/SST % (aligned releases only) and the mean
    JSD over attributes."""

    emd: float
    emd_exact: bool
    emd_bound: float
    sse_percent: float | None
    jsd: float


@dataclass(frozen=True)
class MethodResult:
    method: CompareMethod
    parameter: str
    value: float
    risk: float
    risk_ci: tuple[float, float]
    utility: Utility
    matched: bool
    reason: str
    evaluations: tuple[Evaluation, ...]
    log_axis: bool = False  # the parameter's range spans decades: plot it on a log axis
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        u = self.utility
        return {"method": self.method.value, "parameter": self.parameter,
                "value": self.value, "risk": self.risk, "risk_ci": list(self.risk_ci),
                "utility": {"emd": u.emd, "emd_exact": u.emd_exact, "emd_bound": u.emd_bound,
                            "sse_percent": u.sse_percent, "jsd": u.jsd},
                "matched": self.matched, "reason": self.reason, "note": self.note,
                "evaluations": [{"value": e.value, "mean": e.mean, "ci": list(e.ci),
                                 "seeds": len(e.measures), "risk": e.risk, "emd": e.emd}
                                for e in self.evaluations]}


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`: the target, one :class:`MethodResult` per method, and
    the ranking of the matched methods, best first (least EMD at equal risk, or most risk —
    i.e. safest — at equal utility)."""

    target: Target
    target_value: float
    target_source: str
    tolerance: float
    seeds: int
    risk_definition: dict[str, str]
    data: dict[str, Any]
    methods: tuple[MethodResult, ...]
    ranking: tuple[CompareMethod, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        key = "target_risk" if self.target is Target.RISK else "target_utility"
        return {key: self.target_value, "target_source": self.target_source,
                "tolerance": self.tolerance, "seeds": self.seeds,
                "risk_definition": self.risk_definition, "data": self.data,
                "methods": [m.to_dict() for m in self.methods],
                "ranking": [m.value for m in self.ranking],
                "recommendation": self.recommendation()}

    def recommendation(self) -> str:
        """One paragraph in plain words."""
        at = ("the same disclosure risk" if self.target is Target.RISK
              else "the same utility loss")
        unmatched = [m.method.value for m in self.methods if not m.matched]
        tail = (f" {', '.join(unmatched)} could not be brought to this level within "
                "its parameter range, so it is left out of the ranking." if unmatched else "")
        if not self.ranking:
            return ("No method could be calibrated to the target within its parameter range: "
                    f"choose another target.{tail}")
        by = {m.method: m for m in self.methods}
        best = by[self.ranking[0]]
        what = (f"the least utility loss (EMD {best.utility.emd:.3g})"
                if self.target is Target.RISK else
                f"the lowest disclosure risk (risk {best.risk:.4g}; larger is safer)")
        text = (f"At {at}, {best.method.value} with {best.parameter} = {best.value:.4g} gives "
                f"{what}.")
        if len(self.ranking) > 1:
            rest = ", then ".join(f"{by[m].method.value} ({by[m].parameter} = "
                                  f"{by[m].value:.4g})" for m in self.ranking[1:])
            text += f" It is followed by {rest}."
        return (text + tail + " The ranking holds for this data set and these attributes only "
                "(003 §5): repeat the comparison on your own data before choosing.")


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
            measures.append(self.risk(Y) if self.target is Target.RISK else
                            emd(self.X, Y, self.lows, self.highs).value)
            if run == 0:  # the first seed's release stands for the value in the scatter
                risk = measures[0] if self.target is Target.RISK else self.risk(Y)
                scatter = emd(self.X, Y, self.lows, self.highs,
                              max_points=SCATTER_EMD_POINTS).value
        if known is not None:
            risk, scatter = known.risk, known.emd
        values = np.asarray(measures)
        mean = float(values.mean())
        if values.size > 1:
            half = float(stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1)
                         / math.sqrt(values.size))
        else:
            half = 0.0
        return Evaluation(value, tuple(measures), mean, (mean - half, mean + half), risk,
                          scatter)

    def utility(self, c: Candidate, value: float) -> Utility:
        Y = self.release(c, value, 0)
        distance = emd(self.X, Y, self.lows, self.highs)
        return Utility(distance.value, distance.exact, distance.bound,
                       sse_percent(self.X, Y) if c.aligned else None,
                       float(np.mean(jsd(self.X, Y, self.lows, self.highs))))


def _position(c: Candidate, value: float) -> float:
    """Where ``value`` lies on the search axis, increasing with protection."""
    u = math.log(value) if c.logarithmic else value
    return u if c.increasing else -u


def _value(c: Candidate, position: float) -> float:
    u = position if c.increasing else -position
    return c.clip(math.exp(u) if c.logarithmic else u)


def _calibrate(cal: _Calibrator, c: Candidate, target: float, tolerance: float
               ) -> MethodResult:
    band = (target - tolerance, target + tolerance)
    seen: dict[float, Evaluation] = {}

    def at(value: float, runs: int) -> Evaluation:
        if value not in seen or len(seen[value].measures) < runs:
            seen[value] = cal.evaluate(c, value, runs, seen.get(value))
        return seen[value]

    def distance(e: Evaluation) -> float:
        return abs(e.mean - target)

    def inside(e: Evaluation) -> bool:
        return band[0] <= e.ci[0] and e.ci[1] <= band[1]

    def settle(e: Evaluation) -> Evaluation:
        """More seeds while the mean is in the band but its interval straddles it."""
        runs = len(e.measures)
        while (c.randomized and not inside(e) and band[0] <= e.mean <= band[1]
               and runs < 4 * cal.seeds):
            runs *= 2
            e = at(e.value, runs)
        return e

    first, last = _position(c, c.low), _position(c, c.high)
    span = abs(last - first)
    axis = np.linspace(min(first, last), max(first, last), GRID_POINTS)
    points = [at(v, cal.seeds) for v in dict.fromkeys(_value(c, p) for p in axis)]
    bracket = next(((a, b) for a, b in pairwise(points)
                    if (a.mean - target) * (b.mean - target) <= 0), None)
    if bracket is not None:
        lo, hi = bracket
        for _ in range(MAX_STEPS):
            near = settle(min((lo, hi), key=distance))
            if inside(near):
                break
            middle = _value(c, (_position(c, lo.value) + _position(c, hi.value)) / 2)
            if middle in (lo.value, hi.value):
                break
            m = at(middle, cal.seeds)
            if (lo.mean - target) * (m.mean - target) <= 0:
                hi = m
            else:
                lo = m
            if abs(_position(c, hi.value) - _position(c, lo.value)) < RESOLUTION * span:
                break
    pool = [e for e in seen.values() if inside(e)] or list(seen.values())
    best = settle(min(pool, key=distance))
    matched = inside(best)
    reason = ""
    if not matched and bracket is None:
        means = [e.mean for e in points]
        reason = (f"out of reach: over {c.parameter} in [{c.low:g}, {c.high:g}] the "
                  f"{cal.target.value} goes from {min(means):.4g} to {max(means):.4g}")
    elif not matched:
        reason = f"the closest {cal.target.value} found is {best.mean:.4g}"
        if c.randomized and best.ci[1] - best.ci[0] > 2 * tolerance:
            reason += (f", with a 95 % interval [{best.ci[0]:.4g}, {best.ci[1]:.4g}] wider than "
                       "the band: use more --seeds or a larger --tolerance")
        elif c.integer:
            reason += f" ({c.parameter} is an integer)"
    evaluations = tuple(sorted(seen.values(), key=lambda e: _position(c, e.value)))
    return MethodResult(c.method, c.parameter, best.value,
                        best.mean if cal.target is Target.RISK else best.risk,
                        best.ci if cal.target is Target.RISK else (best.risk, best.risk),
                        cal.utility(c, best.value), matched, reason, evaluations,
                        c.high / c.low >= 100, c.note)


def compare(frame: pd.DataFrame, *, target_risk: str | float | None = None,
            target_utility: str | float | None = None,
            methods: Sequence[CompareMethod | str] | None = None,
            columns: Sequence[str] | None = None, schema: Schema | None = None,
            seeds: int = 10, tolerance: float = 0.0025, seed: int = 0,
            scale: RankScale | str = RankScale.RANKS,
            aggregate: RiskAggregate | str = RiskAggregate.MEAN_OF_LOGS,
            progress: Callable[[str], None] | None = None) -> Comparison:
    """Calibrate every method of ``methods`` (default: 003's four) to the target and rank them
    (003 §3). Give exactly one of ``target_risk`` (rank risk of eq. 2, larger = safer) and
    ``target_utility`` (EMD of eq. 1); each is a number or ``METHOD=VALUE``, the level that
    method reaches with that parameter value. ``tolerance`` is relative: a value is matched
    when its 95 % interval lies within target · (1 ± tolerance). ``seed`` fixes every random
    draw; ``progress`` is called with a description before each evaluation."""
    if (target_risk is None) == (target_utility is None):
        raise InputError("give exactly one of --target-risk and --target-utility")
    target = Target.RISK if target_risk is not None else Target.UTILITY
    spec = parse_target(target_risk if target_risk is not None else target_utility)
    if isinstance(seeds, bool) or not isinstance(seeds, int | np.integer) or seeds < 1:
        raise InputError(f"--seeds must be a positive integer, got {seeds}")
    if not (0 < tolerance < 1):
        raise InputError(f"--tolerance is relative and must lie in (0, 1), got {tolerance}")
    chosen = [parse(CompareMethod, m, "method") for m in (methods or DEFAULT_METHODS)]
    if not chosen:
        raise InputError("--methods names no method")
    if len(set(chosen)) != len(chosen):
        raise InputError("--methods names a method twice")
    names = evaluation_columns(frame, frame, schema, columns)
    base = schema.complete(frame) if schema is not None else Schema.infer(frame)
    selected = base.select(names)
    text = [a.name for a in selected if not a.is_numeric]
    if text:
        raise InputError(f"column '{text[0]}' is not numeric; the compared methods mask numeric "
                         "attributes only (choose others with --columns)")
    X = frame[names].to_numpy(dtype=np.float64)
    if not np.isfinite(X).all():
        raise InputError("the compared columns have missing or infinite values")
    if X.shape[0] < 4:
        raise InputError(f"the comparison needs at least 4 records, got {X.shape[0]}")
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
        source = f"{method.value} with {c.parameter} = {value:g}"
    else:
        target_value, source = spec, "given"
    if not math.isfinite(target_value):
        raise InputError(f"the target must be a finite number, got {target_value}")
    band = abs(target_value) * tolerance
    results = tuple(_calibrate(cal, table[m], target_value, band) for m in chosen)
    if all(r.reason.startswith("out of reach") for r in results):
        reach = [e.mean for r in results for e in r.evaluations]
        raise InputError(f"the target {target.value} {target_value:.4g} is out of reach of every "
                         f"method: they reach {min(reach):.4g} to {max(reach):.4g} on this data")
    matched = [r for r in results if r.matched]
    if target is Target.RISK:
        matched.sort(key=lambda r: r.utility.emd)
    else:
        matched.sort(key=lambda r: -r.risk)
    return Comparison(
        target, float(target_value), source, band, int(seeds),
        {"measure": "rank-based record-linkage risk, 003 eq. 2 (larger = safer)",
         "scale": cal.scale.value, "aggregate": cal.aggregate.value},
        {"rows": int(X.shape[0]), "columns": names,
         "domains": {n: {"low": float(lo), "high": float(hi), "source": s}
                     for n, lo, hi, s in zip(names, lows, highs, sources, strict=True)}},
        results, tuple(r.method for r in matched))
