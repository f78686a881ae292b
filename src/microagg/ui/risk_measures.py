"""The risk tab's panels of the measures shown from their declaration
(:func:`microagg.risk.registry.computed`): one panel each, built from the declaration — a
numeric field per parameter (its help the label, its error beside it), the table-level
figures with their labels and, if the measure declares one, its figure — computed in one of
the session's workers (:meth:`~microagg.ui.session.State.remembered`) over the current table,
its keys, the schema's weight and household and the sensitive attribute chosen on the
l-diversity panel."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

import pandas as pd
from shiny import Inputs, render, ui

from microagg.data.schema import Role
from microagg.errors import MicroaggError
from microagg.recipe.risk import risk_weight
from microagg.risk.registry import Measured, Need, RiskMeasure, computed, function
from microagg.ui.session import Pending, State, clear_error, show_error

__all__ = ["field_id", "measure_panels", "measures_server", "said"]


def said(result: Pending | str) -> Any:
    """What a view shows while its measure is computed, or why it has none."""
    if isinstance(result, Pending):
        return ui.p(result.what, class_="text-muted pending")
    return ui.p(result)


def field_id(measure: RiskMeasure, parameter: str) -> str:
    """The input id of ``parameter``'s field on ``measure``'s panel."""
    return f"measure_{measure.name}_{parameter}"


def measure_panels() -> list[Any]:
    """The panels of the risk tab's measures shown from their declaration, in order."""
    panels = []
    for measure in computed():
        fields = [ui.div(ui.input_numeric(field_id(measure, p.name), p.help, value=p.default),
                         ui.div(id=f"err-{field_id(measure, p.name)}",
                                class_="field-error-slot"))
                  for p in measure.parameters]
        panels.append(ui.nav_panel(
            measure.title, *fields, ui.output_ui(f"measure_{measure.name}"),
            *([ui.output_plot(f"measure_{measure.name}_plot", height="260px")]
              if measure.plot else []),
            value=f"measure_{measure.name}"))
    return panels


def measures_server(input: Inputs, state: State,
                    keyed: Callable[[], tuple[pd.DataFrame, list[str]] | None]) -> None:
    """Register the outputs of every panel of :func:`measure_panels`."""
    for measure in computed():
        _panel(input, state, keyed, measure)


def _panel(input: Inputs, state: State,
           keyed: Callable[[], tuple[pd.DataFrame, list[str]] | None],
           measure: RiskMeasure) -> None:
    def now() -> Measured | Pending | str | None:
        found = keyed()
        if found is None:
            return None
        frame, keys = found
        if not keys:
            return "No key variable: declare quasi-identifiers on the Data tab."
        return _measure(input, state, frame, keys, measure)

    def figures() -> Any:
        result = now()
        if not isinstance(result, Measured):
            return said(result if result is not None else "Load a table first.")
        rows = "".join(f"<tr><th>{escape(f.label)}</th>"
                       f"<td>{escape(f.text(result.figures[f.key]))}</td></tr>"
                       for f in measure.figures)
        return ui.HTML(f'<table class="table table-sm" id="figures-{measure.name}">{rows}'
                       "</table>")

    render.ui(_named(figures, f"measure_{measure.name}"))
    if measure.plot:
        plot = function(measure.plot)

        def drawn() -> Any:
            result = now()
            return plot(result) if isinstance(result, Measured) else None

        render.plot(alt=measure.title)(_named(drawn, f"measure_{measure.name}_plot"))


def _named(view: Callable[[], Any], name: str) -> Callable[[], Any]:
    """``view`` under the output id ``name`` (Shiny names an output after its function)."""
    view.__name__ = name
    return view


def _measure(input: Inputs, state: State, frame: pd.DataFrame, keys: list[str],
             measure: RiskMeasure) -> Measured | Pending | str:
    """``measure`` of the current table with the panel's parameters, or what stops it."""
    from microagg.risk.categorical import declared_measures

    schema = state.usable_schema()
    chosen = {p.name: input[field_id(measure, p.name)]() for p in measure.parameters}
    households = [a.name for a in schema or () if a.role is Role.HOUSEHOLD
                  and a.name in frame.columns]
    sensitive = input.sensitive() if Need.SENSITIVE in measure.needs else None
    weight = risk_weight(schema, frame)
    missing = input.missing_semantics()

    def compute(_: Callable[..., None]) -> Measured | str:
        found = declared_measures(frame, keys, missing=missing, weight=weight,
                                  household=households[0] if len(households) == 1 else None,
                                  sensitive=sensitive or None, parameters=chosen,
                                  only=[measure.name])
        return found.get(measure.name, f"{measure.title} needs: "
                         + ", ".join(sorted(n.value for n in measure.needs)))

    try:
        result = state.remembered(frame, ("measure", measure.name, tuple(keys), missing,
                                          weight, sensitive, tuple(households),
                                          tuple(chosen.items())),
                                  compute, what=f"Measuring the {measure.title}…")
    except MicroaggError as exc:
        named = [p for p in measure.parameters if f"`{p.name}`" in str(exc)]
        for p in named or measure.parameters:
            show_error(field_id(measure, p.name), exc)
        return f"Set the parameters of the {measure.title}."
    for p in measure.parameters:
        clear_error(field_id(measure, p.name))
    return result
