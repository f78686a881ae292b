"""A compared method as a recipe step: the method a comparison at equal rank risk
(:func:`~microagg.evaluation.compare.compare`) or at a categorical risk
(:func:`~microagg.evaluation.key_compare.compare_keys`) calibrated, with its calibrated
value and the columns (or keys) compared, as the mapping a recipe step is made from
(:meth:`~microagg.recipe.model.Step.of`), so that the step releases what the comparison
measured (the same partition, suppression or mask given the same random stream).

A differentially private candidate is never a step: the comparison chose its epsilon by
measuring releases against the records (their rank risk), so that epsilon is a figure of the
data, which one record can move, and a DP step with it would publish it in its recipe and
privacy report (and the search itself spent the records' privacy many times over). The
owner chooses epsilon without the data, on the Steps tab. Global recoding, alone or before
local suppression, is compared at a level of every recoded key at once (taxonomies and
interval widths), which no single step says: it is set on the Steps tab."""

from __future__ import annotations

from typing import Any

from microagg.errors import InputError
from microagg.evaluation.compared_methods import COMPARED, Compared, compared
from microagg.evaluation.comparison import Comparison, MethodResult
from microagg.evaluation.key_compare import DEFAULT_KEY_METHODS
from microagg.options import CompareMethod
from microagg.release.methods import Family

__all__ = ["applicable", "step_spec"]


def _steps(result: Comparison) -> dict[CompareMethod, Compared]:
    """The compared methods of ``result``'s kind of risk that a step releases as measured,
    each with its class in the registry (its family and name are the step's)."""
    if result.risk_kind.on_numeric:
        return {c.name: c for c in COMPARED if c.step and not c.name.keys_only
                and c.family is not Family.DIFFERENTIAL_PRIVACY}
    return {c.name: c for c in COMPARED if c.step and c.name in DEFAULT_KEY_METHODS}


def applicable(result: Comparison, method: CompareMethod) -> bool:
    """Whether :func:`step_spec` makes a step of ``method`` as ``result`` compared it (never
    for a differentially private method: its epsilon was calibrated on the records)."""
    return method in _steps(result)


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
        ``family``, ``method``, the calibrated parameter and ``columns`` (``keys`` for the
        keys family).

    Raises
    ------
    InputError
        The method was not compared, is a recoding, or is differentially private (its
        epsilon was calibrated on the records).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from microagg.evaluation.compare import compare
    >>> frame = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 2)), columns=["a", "b"])
    >>> done = compare(frame, target_risk="mdav=4", methods=["mdav"], seeds=2)
    >>> step_spec(done, "mdav")
    {'family': 'microaggregate', 'method': 'mdav', 'k': 4, 'columns': ['a', 'b']}
    """
    chosen = _result(result, method)
    columns = [str(c) for c in result.data["columns"]]
    value: float | int = int(chosen.value) if chosen.parameter == "k" else float(chosen.value)
    steps = _steps(result)
    if compared(chosen.method).family is Family.DIFFERENTIAL_PRIVACY:
        raise InputError(f"{chosen.method.value}'s epsilon was calibrated on the records (the "
                         "risk of its releases against them), so it is a figure of the data "
                         "and a step with it would not be differentially private: choose "
                         "epsilon without looking at the data and add the step on the Steps "
                         "tab")
    if chosen.method not in steps:
        raise InputError(f"{chosen.method.value} is compared at a level of every recoded "
                         "key at once: set the recoding on the Steps tab (family keys)")
    entry = steps[chosen.method]
    family, name = entry.family.value, entry.method.name
    if not result.risk_kind.on_numeric:
        option = "keys" if entry.family is Family.KEYS else "columns"
        return {"family": family, "method": name, chosen.parameter: value, option: columns}
    return {"family": family, "method": name, chosen.parameter: value, "columns": columns}
