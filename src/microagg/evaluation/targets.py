"""What a comparison at equal risk is asked and what it concludes, whichever measures it
holds (003 on numeric attributes, :mod:`microagg.evaluation.compare`; categorical keys,
:mod:`microagg.evaluation.key_compare`): the target (a number, or ``METHOD=VALUE``: the
level that method reaches with that parameter value), the search's settings, the methods
named, a target no method reaches, and the ranking.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from microagg.errors import InputError
from microagg.evaluation.calibration import Candidate, Measurer
from microagg.evaluation.comparison import MethodResult
from microagg.options import CompareMethod, MatchStatus, Target, parse

__all__ = ["MAX_SEEDS", "check_search", "chosen_methods", "is_integer", "parse_target",
           "ranking", "require_reach", "target_level"]

MAX_SEEDS = 1000
"""The most runs per value a comparison accepts (each run is a full release and a measure)."""


def parse_target(text: str | float) -> float | tuple[CompareMethod, float]:
    """A target given as a number, or as ``METHOD=VALUE`` (the level that method has with that
    parameter value on the data).

    Examples
    --------
    >>> parse_target("mdav=5"), parse_target(0.5)
    ((<CompareMethod.MDAV: 'mdav'>, 5.0), 0.5)
    """
    if isinstance(text, int | float):
        return _level(float(text))
    text = str(text).strip()
    if "=" in text:
        name, _, value = text.partition("=")
        method = parse(CompareMethod, name, "target method")
        try:
            return method, float(value)
        except ValueError:
            raise InputError(f"the target '{text}' needs a number after '='") from None
    try:
        level = float(text)
    except ValueError:
        raise InputError(f"the target '{text}' is neither a number nor METHOD=VALUE "
                         "(e.g. mdav=5)") from None
    return _level(level)


def _level(value: float) -> float:
    """A target level, refused when negative: every risk and utility compared (a rank
    distance, an EMD, a count or a probability) is at least 0, so that no method could
    reach it."""
    if value < 0:
        raise InputError(f"the target {value:g} is negative: every risk and utility "
                         "compared is at least 0")
    return value


def is_integer(value: object) -> bool:
    """Whether ``value`` is an integer (a bool is not one)."""
    return not isinstance(value, bool) and isinstance(value, int | np.integer)


def check_search(seeds: int, tolerance: float, seed: int) -> None:
    """Refuse a number of runs per value, a tolerance or a seed that no search can use."""
    if not is_integer(seeds) or not 1 <= seeds <= MAX_SEEDS:
        raise InputError(f"`seeds` must be an integer from 1 to {MAX_SEEDS}, got {seeds}")
    if not (0 < tolerance < 1):
        raise InputError(f"`tolerance` is relative and must lie in (0, 1), got {tolerance}")
    if not is_integer(seed) or seed < 0:
        raise InputError(f"`seed` must be a non-negative integer, got {seed}")


def chosen_methods(methods: Sequence[CompareMethod | str] | None,
                   defaults: Sequence[CompareMethod], offered: Mapping[CompareMethod, str],
                   elsewhere: str) -> list[CompareMethod]:
    """The methods to compare (default: ``defaults``), each named once and each one this
    comparison offers (``offered``: method → why it is, or "" when it is); ``elsewhere``
    says where the others are compared."""
    chosen = [parse(CompareMethod, m, "method") for m in (methods or defaults)]
    if not chosen:
        raise InputError("`methods` names no method")
    twice = next((m for i, m in enumerate(chosen) if m in chosen[:i]), None)
    if twice is not None:
        raise InputError(f"`methods` names {twice.value} twice")
    for m in chosen:
        if m not in offered:
            raise InputError(f"`methods`: {m.value} is not compared here ({elsewhere})")
        if offered[m]:
            raise InputError(f"`methods`: {m.value} cannot be compared on this data: "
                             f"{offered[m]}")
    return chosen


def target_level(cal: Measurer, table: Mapping[CompareMethod, Candidate],
                 spec: float | tuple[CompareMethod, float]) -> tuple[float, str]:
    """The target's value, measured on the data when it is given as ``METHOD=VALUE``, and
    where it comes from."""
    if isinstance(spec, tuple):
        method, value = spec
        if method not in table:
            raise InputError(f"the target {method.value}={value:g} names a method this "
                             f"comparison does not offer (it offers: "
                             f"{', '.join(m.value for m in table)})")
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
    return target_value, target_source


def require_reach(results: Sequence[MethodResult], target: Target, target_value: float
                  ) -> None:
    """Refuse a target that every method misses over its whole range."""
    if all(r.status is MatchStatus.SHORT for r in results):
        reach = [e.mean for r in results for e in r.evaluations]
        raise InputError(f"the target {target.value} {target_value:.4g} is out of reach of every "
                         f"method: they reach {min(reach):.4g} to {max(reach):.4g} on this data")


def ranking(results: Sequence[MethodResult], target: Target) -> tuple[CompareMethod, ...]:
    """The ranked methods, best first: by utility loss at equal risk, by risk (larger =
    safer, 003) at equal utility."""
    ranked = [r for r in results if r.ranked]
    if target is Target.RISK:
        ranked.sort(key=lambda r: r.utility.loss)
    else:
        ranked.sort(key=lambda r: -r.risk)
    return tuple(r.method for r in ranked)
