"""One session's reactive state and the helpers every tab's server uses: the table, the
schema the user edits, the recipe run, and errors shown beside the field at fault."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from shiny import reactive, ui

from microagg.cli.flags import render
from microagg.data.schema import Role, Schema
from microagg.recipe.risk import RiskSummary, measure_risk, risk_keys, risk_weight
from microagg.recipe.runner import RecipeRun
from microagg.ui.state import ColumnEdit, Workspace, build_schema

__all__ = ["State", "clear_errors", "show_error"]


def show_error(name: str, error: Exception | str) -> None:
    """Show ``error`` as the command line says it, in one line beside field ``name``."""
    text = " ".join(render(str(error)).split())
    ui.remove_ui(selector=f"#err-{name} .field-error", multiple=True, immediate=True)
    ui.insert_ui(ui.div(text, class_="field-error"), selector=f"#err-{name}",
                 where="beforeEnd", immediate=True)


def clear_errors() -> None:
    ui.remove_ui(selector=".field-error", multiple=True, immediate=True)


@dataclass
class State:
    """The reactive values of one session."""

    space: Workspace
    source: reactive.Value[Path | None]
    frame: reactive.Value[pd.DataFrame | None]
    inferred: reactive.Value[Schema | None]
    suggestions: reactive.Value[dict[str, tuple[Role, str]]]
    edits: reactive.Value[dict[str, ColumnEdit]]
    run: reactive.Value[RecipeRun | None]
    risk_cache: dict[tuple[Any, ...], RiskSummary]

    @classmethod
    def new(cls) -> State:
        return cls(Workspace(), reactive.value(None), reactive.value(None),
                   reactive.value(None), reactive.value({}), reactive.value({}),
                   reactive.value(None), {})

    def schema(self) -> Schema | None:
        inferred = self.inferred()
        if inferred is None:
            return None
        return build_schema(inferred, self.suggestions(), self.edits())

    def current(self) -> pd.DataFrame | None:
        """The table as the last step left it (the input before any step)."""
        run = self.run()
        return run.frame if run is not None else self.frame()

    def risk(self, frame: pd.DataFrame, schema: Schema | None, missing: str) -> RiskSummary:
        """The risk of ``frame`` over the schema's quasi-identifiers, remembered for the
        last few tables and key sets (a role change that keeps the keys costs nothing)."""
        keys = tuple(risk_keys(schema, frame))
        weight = risk_weight(schema, frame)
        key = (id(frame), keys, missing, weight)
        if key not in self.risk_cache:
            if len(self.risk_cache) > 8:
                self.risk_cache.pop(next(iter(self.risk_cache)))
            self.risk_cache[key] = measure_risk(frame, keys, missing=missing, weight=weight)
        return self.risk_cache[key]


def guarded(name: str, action: Callable[[], Any]) -> Any:
    """Run ``action``; an error microagg raises on purpose is shown beside ``name``."""
    from microagg.errors import MicroaggError

    try:
        return action()
    except MicroaggError as exc:
        show_error(name, exc)
        return None
