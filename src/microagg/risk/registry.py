"""The risk measures of categorical keys, declared once (:data:`MEASURES`): what each needs,
its parameters and their help, its per-record columns, its table-level figures with their
labels and format, whether the Dask group-by computes it, its cost, the risks a comparison
may target through it and, for the web app, its figure and the kernels to load at start.

``microagg risk`` (its options and lines), :meth:`~microagg.risk.CategoricalRisk.records` and
``to_dict``, the recipe report's risk (:mod:`microagg.recipe.risk`), the Dask path's computed
and skipped measures (:mod:`microagg.at_scale.risk`), the web app's risk-tab panels and the
comparison's categorical targets are read off this registry. A measure computed by a
function (``compute``) is shown generically everywhere; the measures of the first release
(``compute`` None: the frequencies and individual risk, the k-anonymity violations, SUDA2,
l-diversity and the household risk) are declared here and drawn by their own code, so that
what they print and write keeps its form.

This module imports nothing heavy (no pandas, no numba): the command line builds its options
from it for ``--help``. A measure's functions are named as ``"module:function"`` and loaded
when they run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["ATTACKS", "MEASURES", "Attack", "Cost", "Figure", "MeasureInput", "Measured",
           "Need", "Parameter", "RiskMeasure", "computed", "function", "percent", "register",
           "unregister"]


class Need(StrEnum):
    """What a measure reads beside the codes of the keys."""

    KEYS = "keys"
    WEIGHT = "weight"  # the sampling weights (a measure needing them is skipped without)
    HOUSEHOLD = "household"
    SENSITIVE = "sensitive"


class Cost(StrEnum):
    """How long a measure takes, so that a caller may run it ahead or on request."""

    LINEAR = "linear"  # about linear in the records: computed whenever asked
    SEARCH = "search"  # a search that may grow fast with the keys (SUDA2's)


@dataclass(frozen=True)
class Parameter:
    """A parameter of a measure: a keyword of its function, the command's option
    ``--NAME`` (underscores as dashes) and a numeric field of its app panel."""

    name: str
    default: float | int
    help: str
    kind: type = float

    @property
    def flag(self) -> str:
        """The command-line option."""
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Figure:
    """A table-level figure of a measure: its key in the measure's JSON object, its label in
    words and its format (a format specification, or ``"percent"`` for a share shown as a
    percentage)."""

    key: str
    label: str
    format: str = ".4g"

    def text(self, value: Any) -> str:
        """``value`` as the command, the reports and the app show it."""
        if value is None:
            return "n/a"
        if self.format == "percent":
            return percent(float(value))
        return format(value, self.format)


@dataclass(frozen=True)
class MeasureInput:
    """What a measure's function reads: per record (or, on the Dask path, per combination of
    key values, each standing for ``counts`` records) the key codes (``codes``, -1 missing),
    the sample frequency ``fk``, the estimated population frequency ``Fk``, the individual
    risk ``risk``; the ``weights`` (None without; on the Dask path each combination's summed
    weights), the ``household`` and ``sensitive`` codes (None when not given, and on the
    Dask path) and the missing-value semantics ``missing``."""

    keys: list[str]
    codes: Any
    fk: Any
    Fk: Any
    risk: Any
    missing: Any
    counts: Any = None
    weights: Any = None
    household: Any = None
    sensitive: Any = None

    def multiplicity(self) -> Any:
        """How many records each row stands for: ``counts``, or ones."""
        import numpy as np

        return np.ones(len(self.fk)) if self.counts is None else self.counts


@dataclass(frozen=True)
class Measured:
    """A measure's result: its per-record ``columns`` (named as declared, in row order) and
    its table-level ``figures`` (keyed as declared; numbers JSON can hold)."""

    columns: Mapping[str, Any] = field(default_factory=dict)
    figures: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RiskMeasure:
    """One risk measure of categorical keys (module docstring).

    Parameters
    ----------
    name
        Its key in the JSON forms and the reports (a Python identifier).
    title
        Its name in words (the command's line, the app's panel).
    compute
        ``"module:function"``: ``function(MeasureInput, **parameters) -> Measured``; None
        for a measure of the first release, drawn by its own code.
    needs
        What it reads beside the keys; without one of them it is not measured.
    parameters
        Its parameters, with their defaults and help.
    columns
        Its per-record columns (``records`` and ``--records-out``), in order.
    figures
        Its table-level figures, in order.
    at_scale
        Whether the Dask group-by computes it (a function of the frequencies, whose rows
        may stand for many records: :attr:`MeasureInput.counts`).
    cost
        How long it takes.
    targets
        The risks a comparison at equal risk may hold equal through this measure: pairs of
        a :class:`~microagg.options.RiskKind` value and its name in the web app's choice;
        only the measures of the first release may have them
        (:mod:`microagg.evaluation.key_measures` measures them on a release).
    plot
        ``"module:function"``: ``function(Measured, records) -> matplotlib Figure`` drawn on
        its app panel, if any.
    kernels
        ``"module:function"`` loading its compiled kernels when the app starts, if any.
    """

    name: str
    title: str
    compute: str | None = None
    needs: frozenset[Need] = frozenset({Need.KEYS})
    parameters: tuple[Parameter, ...] = ()
    columns: tuple[str, ...] = ()
    figures: tuple[Figure, ...] = ()
    at_scale: bool = False
    cost: Cost = Cost.LINEAR
    targets: tuple[tuple[str, str], ...] = ()
    plot: str | None = None
    kernels: str | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a risk measure's name must be an identifier: {self.name!r}")
        if self.targets and self.compute is not None:
            raise ValueError(f"{self.name}: a comparison measures only the targets of the "
                             "first release (evaluation/key_measures.py)")

    @property
    def generic(self) -> bool:
        """Whether it is shown from its declaration (it has a ``compute`` function)."""
        return self.compute is not None

    def figures_of(self, result: Measured | None) -> dict[str, Any] | None:
        """Its JSON object: the declared figures of ``result``, in order (None without)."""
        if result is None:
            return None
        return {f.key: result.figures[f.key] for f in self.figures}

    def measured(self, given: Mapping[str, Any], **parameters: Any) -> Measured | None:
        """Its result over ``given`` (a :class:`MeasureInput`'s fields), or None when what it
        needs is missing there."""
        if any(need is not Need.KEYS and given.get(need.value) is None for need in self.needs):
            return None
        chosen = {p.name: p.default if parameters.get(p.name) is None else parameters[p.name]
                  for p in self.parameters}
        assert self.compute is not None
        result: Measured = function(self.compute)(MeasureInput(**given), **chosen)
        return result


def percent(share: float) -> str:
    """A risk held as a fraction (as every JSON field holds ``global_risk``) written as a
    percentage, the one unit the web app, the HTML reports and the command line show it in;
    three significant digits below 1 % (a weighted individual risk is often far below); a
    no-break space before the sign keeps the two on one line in a table.

    Examples
    --------
    >>> [percent(share).replace(chr(160), " ") for share in (0.0123, 0.0000162, 1e-9, 0, 1)]
    ['1.23 %', '0.00162 %', '0.0000001 %', '0.00 %', '100.00 %']
    """
    import numpy as np

    if share == 0 or share >= 0.01:
        return f"{100 * share:.2f}\u00a0%"
    digits = np.format_float_positional(100 * share, precision=3, fractional=False, trim="-")
    return f"{digits}\u00a0%"


def function(path: str) -> Callable[..., Any]:
    """The function ``"module:function"`` names, imported now."""
    module, _, name = path.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found


_FREQUENCY_FIGURES = (
    Figure("sample_uniques", "sample uniques", ","),
    Figure("expected_reidentifications", "expected re-identifications", ",.2f"),
    Figure("global_risk", "global risk (mean)", "percent"),
    Figure("largest_risk", "largest individual risk", "percent"),
)

MEASURES: dict[str, RiskMeasure] = {m.name: m for m in (
    RiskMeasure("individual", "frequencies and individual risk", needs=frozenset({Need.KEYS}),
                columns=("fk", "Fk", "risk"), figures=_FREQUENCY_FIGURES, at_scale=True,
                targets=(("expected-reidentifications", "expected re-identifications"),
                         ("global-risk", "global risk (their mean)"))),
    RiskMeasure("violations", "k-anonymity violations",
                figures=(Figure("violations", "records in classes smaller than k", ","),),
                at_scale=True, targets=(("violations", "violations of k"),)),
    RiskMeasure("suda", "SUDA2: special uniques", columns=("suda_score", "dis_score"),
                parameters=(Parameter("dis_fraction", 0.01, "Sampling fraction of the SUDA2 "
                                      "DIS score (default 0.01, sdcMicro's)."),),
                cost=Cost.SEARCH, kernels="microagg.risk.suda:load_kernels"),
    RiskMeasure("l_diversity", "l-diversity",
                needs=frozenset({Need.KEYS, Need.SENSITIVE}),
                columns=("l_distinct", "l_entropy", "l_recursive"),
                parameters=(Parameter("l_c", 2.0, "The c of recursive (c, l)-diversity "
                                      "(default 2)."),)),
    RiskMeasure("household_risk", "household risk",
                needs=frozenset({Need.KEYS, Need.HOUSEHOLD}), columns=("household_risk",)),
)}
"""Every risk measure, in the order the reports list them (the measures of the first release
first)."""


def register(measure: RiskMeasure) -> RiskMeasure:
    """Add ``measure`` to :data:`MEASURES` (a measure's one line: ``register(RiskMeasure(…))``
    in the module holding it, named in :data:`MODULES`).

    Raises
    ------
    ValueError
        When a measure of that name, or a column, figure or parameter of that name, is
        declared already.
    """
    if measure.name in MEASURES:
        raise ValueError(f"a risk measure named {measure.name!r} is registered already")
    taken_columns = {c for m in MEASURES.values() for c in m.columns}
    taken_parameters = {p.name for m in MEASURES.values() for p in m.parameters}
    clash = (set(measure.columns) & taken_columns) | (
        {p.name for p in measure.parameters} & (taken_parameters | _COMMAND_OPTIONS))
    if clash:
        raise ValueError(f"{measure.name}: {', '.join(sorted(clash))} is declared already")
    MEASURES[measure.name] = measure
    return measure


def unregister(name: str) -> None:
    """Remove the measure ``name`` registered by :func:`register` (the first release's stay).
    """
    if not MEASURES[name].generic:
        raise ValueError(f"{name} is a measure of the first release")
    del MEASURES[name]


_COMMAND_OPTIONS = frozenset({"input", "keys", "weight", "household", "sensitive", "k",
                              "missing", "schema", "decimal", "thousands", "json_out",
                              "records_out", "engine", "scheduler", "workers",
                              "storage_option"})
"""The parameters of ``microagg risk`` that are not a measure's."""

MODULES: tuple[str, ...] = ()
"""The modules declaring a measure with :func:`register`, imported by :func:`computed`."""


def computed() -> list[RiskMeasure]:
    """The measures shown from their declaration, in order, after importing
    :data:`MODULES`."""
    for module in MODULES:
        importlib.import_module(module)
    return [m for m in MEASURES.values() if m.generic]


@dataclass(frozen=True)
class Attack:
    """An attack on a release (:mod:`microagg.risk.attacks`): its value of ``--attacks``
    (``option``), its key in the JSON ``attacks`` object (``name``), its name in words and
    ``"module:function"`` measuring it: ``function(AttackTables, AttackSettings, Generator)``
    returning its JSON-ready result."""

    option: str
    name: str
    title: str
    compute: str


ATTACKS: dict[str, Attack] = {a.option: a for a in (
    Attack("singling-out", "singling_out", "singling out (univariate and multivariate "
           "predicates)", "microagg.risk.attacks:singling_out_risks"),
    Attack("linkability", "linkability", "linkability (two column sets joined through the "
           "release)", "microagg.risk.attacks:linkability_risk"),
    Attack("inference", "inference", "inference (a secret column guessed from the others)",
           "microagg.risk.attacks:inference_risks"),
    Attack("closest-records", "closest_records", "distance to closest record and nearest-"
           "neighbour distance ratio", "microagg.risk.attacks:closest_record_distances"),
)}
"""The attacks on a release against its original and control records (Article 29 Working
Party, Opinion 05/2014: singling out, linkability, inference), in the order reported."""
