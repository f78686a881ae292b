"""A compared method as a recipe step: the method a comparison at equal rank risk
(:func:`~microagg.evaluation.compare.compare`) calibrated, with its calibrated value and the
columns compared, as the mapping a recipe step is made from
(:meth:`~microagg.recipe.model.Step.of`), so that the step releases what the comparison
measured (the same partition, the same mask given the same random stream).

A differentially private candidate is a step only when the domains of its columns are
declared: the comparison took undeclared domains from the data, and a step doing so would
not be differentially private."""

from __future__ import annotations

from typing import Any

from microagg.errors import InputError
from microagg.evaluation.compare import DP_RANKING_K
from microagg.evaluation.comparison import Comparison, MethodResult
from microagg.options import CompareMethod, RiskKind

__all__ = ["step_spec"]

_STEPS: dict[CompareMethod, tuple[str, str]] = {
    CompareMethod.MDAV: ("microaggregate", "mdav"),
    CompareMethod.INDIVIDUAL_RANKING: ("microaggregate", "individual-ranking"),
    CompareMethod.CORRELATED_NOISE: ("mask", "correlated-noise"),
    CompareMethod.MULTIPLICATIVE_NOISE: ("mask", "multiplicative-noise"),
    CompareMethod.RANK_SWAP: ("mask", "rank-swap"),
    CompareMethod.DP_LAPLACE: ("dp", "laplace"),
    CompareMethod.DP_INDIVIDUAL_RANKING: ("dp", "individual-ranking"),
}
"""The family and method of the step that releases as each compared candidate does."""


def _result(result: Comparison, method: CompareMethod | str) -> MethodResult:
    for m in result.methods:
        if m.method.value == str(method):
            return m
    raise InputError(f"'{method}' was not compared (compared: "
                     f"{', '.join(m.method.value for m in result.methods)})")


def step_spec(result: Comparison, method: CompareMethod | str) -> dict[str, Any]:
    """The recipe step (a mapping for :meth:`~microagg.recipe.model.Step.of`) that applies
    ``method`` as ``result`` calibrated it: its parameter at the chosen value, over the
    columns compared.

    Parameters
    ----------
    result
        A comparison at equal rank risk.
    method
        One of the methods it compared.

    Returns
    -------
    dict
        ``family``, ``method``, the calibrated parameter and ``columns``.

    Raises
    ------
    InputError
        The method was not compared, the comparison is of categorical keys, or a
        differentially private method's domains were read off the data.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from microagg.evaluation.compare import compare
    >>> frame = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 2)), columns=["a", "b"])
    >>> done = compare(frame, target_risk="mdav=4", methods=["mdav"], seeds=2)
    >>> step_spec(done, "mdav")
    {'family': 'microaggregate', 'method': 'mdav', 'k': 4, 'columns': ['a', 'b']}
    """
    if result.risk_kind is not RiskKind.RANK:
        raise InputError("only a comparison at equal rank risk can be applied as a step; "
                         "apply a method for categorical keys from the Steps tab")
    chosen = _result(result, method)
    family, name = _STEPS[chosen.method]
    columns = [str(c) for c in result.data["columns"]]
    value: float | int = int(chosen.value) if chosen.parameter == "k" else float(chosen.value)
    spec: dict[str, Any] = {"family": family, "method": name, chosen.parameter: value}
    if family == "dp":
        domains = result.data.get("domains", {})
        if any(domains.get(c, {}).get("source") != "schema" for c in columns):
            raise InputError(f"{chosen.method.value} was compared on domains read off the "
                             "data: declare the domains of the columns (Data tab) to apply "
                             "it as a differentially private step")
        if chosen.method is CompareMethod.DP_INDIVIDUAL_RANKING:
            spec["k"] = min(DP_RANKING_K, int(result.data["rows"]))
    spec["columns"] = columns
    return spec
