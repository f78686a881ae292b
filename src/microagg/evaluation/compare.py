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

import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.aggregate import replace_by_means
from microagg.core.masking import correlated_noise, multiplicative_noise, rank_swap
from microagg.data.schema import Schema
from microagg.data.table import encode, missing_mask
from microagg.errors import InputError, PrivacyLeakWarning

# The search itself lives in calibration; its names stay importable from here.
from microagg.evaluation.calibration import (
    GRID_POINTS,
    MAX_STEPS,
    RESOLUTION,
    SCATTER_EMD_POINTS,
    UTILITY_SEEDS,
    Calibrator,
    Candidate,
    Mask,
    calibrate,
)
from microagg.evaluation.calibration import _position as _position
from microagg.evaluation.calibration import _value as _value
from microagg.evaluation.compared_methods import candidate
from microagg.evaluation.comparison import (
    Comparison,
    Evaluation,
    MethodResult,
    Utility,
)
from microagg.evaluation.evaluate import attribute_domains, evaluation_columns
from microagg.evaluation.targets import (
    MAX_SEEDS,
    check_search,
    chosen_methods,
    parse_target,
    ranking,
    require_reach,
    target_level,
)
from microagg.options import (
    CompareMethod,
    RankScale,
    RankTies,
    RiskAggregate,
    Target,
    parse,
)
from microagg.partition.mdav import mdav
from microagg.partition.univariate import individual_ranking
from microagg.release.methods import DPIndividualRanking, DPLaplace
from microagg.version import installed_version

__all__ = ["DEFAULT_METHODS", "DP_RANKING_K", "GRID_POINTS", "MAX_SEEDS", "MAX_STEPS",
           "RESOLUTION", "SCATTER_EMD_POINTS", "UTILITY_SEEDS", "Candidate", "Comparison",
           "Evaluation", "Mask", "MethodResult", "Utility", "candidates", "compare",
           "compared_matrix", "parse_target", "stated_domains"]

DEFAULT_METHODS = (CompareMethod.MDAV, CompareMethod.CORRELATED_NOISE,
                   CompareMethod.MULTIPLICATIVE_NOISE, CompareMethod.RANK_SWAP)
"""The four methods compared by Domingo-Ferrer, Ricci and Soria-Comas (2016), §5."""

DP_RANKING_K = 10
"""Cluster size of the ``dp-individual-ranking`` candidate, whose calibrated parameter is ε."""


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
        candidate(CompareMethod.MDAV, 2, top_k, by_mdav),
        candidate(CompareMethod.INDIVIDUAL_RANKING, 2, top_k, by_ranking),
        candidate(CompareMethod.CORRELATED_NOISE, 1e-4, 1e2,
                  lambda x, v, r: correlated_noise(x, v, rng=r)),
        candidate(CompareMethod.MULTIPLICATIVE_NOISE, 1e-3, 3.0,
                  lambda x, v, r: multiplicative_noise(x, v, rng=r)),
        candidate(CompareMethod.RANK_SWAP, 1e-3, 1.0, lambda x, v, r: rank_swap(x, v, rng=r)),
        candidate(CompareMethod.DP_LAPLACE, 1e-2, 1e4,
                  lambda x, v, r: _dp_release(DPLaplace.name, x, v, r, lows, highs,
                                              declared),
                  bounds_note),
        candidate(CompareMethod.DP_INDIVIDUAL_RANKING, 1e-2, 1e4,
                  lambda x, v, r: _dp_release(DPIndividualRanking.name, x, v, r, lows, highs,
                                              declared, k=min(DP_RANKING_K, n)),
                  f"k = {min(DP_RANKING_K, n)}; columns released unlinked"
                  + (f"; {bounds_note}" if bounds_note else "")),
    ]
    return {c.method: c for c in table}


def compared_matrix(frame: pd.DataFrame, schema: Schema | None, columns: Sequence[str] | None
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
    for name in names:  # no option of a comparison drops incomplete rows: say what to do
        missing = np.flatnonzero(missing_mask(frame[name]))
        if missing.size:
            raise InputError(f"column '{name}' has a missing value in row {missing[0] + 1}; the "
                             "compared methods take complete records: fill it, or leave the "
                             "incomplete rows out of the table")
    undeclared = Schema(tuple(replace(a, domain=None) for a in selected))
    X = encode(frame[names], undeclared).numeric_matrix(names)
    if X.shape[0] < 4:
        raise InputError(f"the comparison needs at least 4 records, got {X.shape[0]}")
    return names, selected, X


def stated_domains(names: Sequence[str], lows: np.ndarray, highs: np.ndarray,
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


def _target(target_risk: str | float | None, target_utility: str | float | None
            ) -> tuple[Target, float | tuple[CompareMethod, float]]:
    """The measure held fixed, and its level as :func:`parse_target` reads it."""
    if (target_risk is None) == (target_utility is None):
        raise InputError("give exactly one of `target_risk` and `target_utility`")
    if target_risk is not None:
        return Target.RISK, parse_target(target_risk)
    assert target_utility is not None  # exactly one is given (checked above)
    return Target.UTILITY, parse_target(target_utility)


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
    target, spec = _target(target_risk, target_utility)
    check_search(seeds, tolerance, seed)
    offered = {m: "" for m in CompareMethod if not m.keys_only}
    chosen = chosen_methods(methods, DEFAULT_METHODS, offered,
                            "it protects categorical keys: compare_keys compares it at a "
                            "categorical `risk_kind`")
    names, selected, X = compared_matrix(frame, schema, columns)
    lows, highs, sources = attribute_domains(selected, X)
    table = candidates(X, lows, highs, declared=all(s == "schema" for s in sources))
    cal = Calibrator(X, lows, highs, target=target, seeds=int(seeds), seed=seed,
                     scale=parse(RankScale, scale, "rank scale"),
                     aggregate=parse(RiskAggregate, aggregate, "risk aggregate"),
                     progress=progress)
    target_value, target_source = target_level(cal, table, spec)
    band = abs(target_value) * tolerance
    results = tuple(calibrate(cal, table[m], target_value, band) for m in chosen)
    require_reach(results, target, target_value)
    return Comparison(
        target, float(target_value), target_source, band, int(seeds),
        {"measure": "rank-based record-linkage risk (larger = safer)",
         "label": "rank risk", "scale": cal.scale.value, "aggregate": cal.aggregate.value,
         "ties": RankTies.INTERVALS.value},
        {"rows": int(X.shape[0]), "columns": names,
         "domains": stated_domains(names, lows, highs, sources)},
        results, ranking(results, target),
        {"input": source, "created": datetime.now(UTC).isoformat(timespec="seconds"),
         "microagg": installed_version(),
         "columns_left_out": [str(c) for c in frame.columns if c not in names]})
