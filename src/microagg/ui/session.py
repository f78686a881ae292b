"""One session's reactive state and the helpers every tab's server uses: the table, the
schema the user edits, the recipe run, the measures remembered for the last few tables, and
errors shown beside the field at fault."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
from shiny import reactive, ui

from microagg.cli.flags import render
from microagg.data.schema import Role, Schema
from microagg.recipe.risk import RiskSummary, measure_risk, risk_keys, risk_weight
from microagg.recipe.runner import RecipeRun
from microagg.ui.state import ColumnEdit, Workspace, build_schema

__all__ = ["State", "clear_error", "clear_errors", "guarded", "show_error"]

T = TypeVar("T")
REMEMBERED = 8
"""Measures kept per session (the oldest is forgotten first)."""


def show_error(name: str, error: Exception | str) -> None:
    """Show ``error`` as the command line says it, in one line beside field ``name``."""
    text = " ".join(render(str(error)).split())
    ui.remove_ui(selector=f"#err-{name} .field-error", multiple=True, immediate=True)
    ui.insert_ui(ui.div(text, class_="field-error"), selector=f"#err-{name}",
                 where="beforeEnd", immediate=True)


def clear_errors() -> None:
    ui.remove_ui(selector=".field-error", multiple=True, immediate=True)


def clear_error(name: str) -> None:
    """Remove the error shown beside field ``name`` (the field now holds a valid value)."""
    ui.remove_ui(selector=f"#err-{name} .field-error", multiple=True, immediate=True)


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
    memory: dict[tuple[Any, ...], tuple[pd.DataFrame, Future[Any]]]
    ahead: ThreadPoolExecutor  # one thread: measures computed before they are shown
    reading: reactive.Value[list[str]]  # what the columns' values say about how they were read
    closed: bool = False

    @classmethod
    def new(cls) -> State:
        return cls(Workspace(), reactive.value(None), reactive.value(None),
                   reactive.value(None), reactive.value({}), reactive.value({}),
                   reactive.value(None), {},
                   ThreadPoolExecutor(1, thread_name_prefix="microagg-ahead"),
                   reactive.value([]))

    def close(self) -> None:
        """The session ended: its folder is removed, the measures not begun are dropped."""
        self.closed = True
        self.ahead.shutdown(wait=False, cancel_futures=True)
        self.space.close()

    def schema(self) -> Schema | None:
        inferred = self.inferred()
        if inferred is None:
            return None
        return build_schema(inferred, self.edits())

    def usable_schema(self) -> Schema | None:
        """The schema as edited, or as read off the data while an edit is refused (its
        error is shown beside the field)."""
        from microagg.errors import MicroaggError

        try:
            return self.schema()
        except MicroaggError:
            return self.inferred()

    def current(self) -> pd.DataFrame | None:
        """The table as the last step left it (the input before any step)."""
        run = self.run()
        return run.frame if run is not None else self.frame()

    def remembered(self, frame: pd.DataFrame, key: tuple[Any, ...],
                   measure: Callable[[], T]) -> T:
        """``measure()`` of ``frame``, remembered under ``key`` for the last few tables and
        settings (a role change that keeps the keys costs nothing); a measure begun ahead
        (:meth:`begin`) is waited for. The table is held with the measure, so that its id
        is not reused while it is remembered."""
        entry = self.memory.get((id(frame), *key))
        if entry is not None:
            return entry[1].result()
        done: Future[Any] = Future()
        done.set_result(measure())  # an error is raised here, and not remembered
        self._keep(frame, key, done)
        return done.result()

    def has(self, frame: pd.DataFrame, key: tuple[Any, ...]) -> bool:
        """Whether a measure of ``frame`` under ``key`` is remembered (or begun)."""
        return (id(frame), *key) in self.memory

    def begin(self, frame: pd.DataFrame, key: tuple[Any, ...],
              measure: Callable[[], Any]) -> None:
        """Begin ``measure()`` of ``frame`` in the session's background thread (a view the
        user is likely to open next), remembered under ``key`` like :meth:`remembered`;
        measures begun earlier and not started yet are dropped."""
        if self.closed or (id(frame), *key) in self.memory:
            return
        for stale in [k for k, (_, future) in self.memory.items() if future.cancel()]:
            del self.memory[stale]
        self._keep(frame, key, self.ahead.submit(measure))

    def _keep(self, frame: pd.DataFrame, key: tuple[Any, ...], future: Future[Any]) -> None:
        if len(self.memory) >= REMEMBERED:
            self.memory.pop(next(iter(self.memory)))
        self.memory[(id(frame), *key)] = (frame, future)

    def risk(self, frame: pd.DataFrame, schema: Schema | None, missing: str) -> RiskSummary:
        """The risk of ``frame`` over the schema's quasi-identifiers (remembered)."""
        keys = tuple(risk_keys(schema, frame))
        weight = risk_weight(schema, frame)
        return self.remembered(frame, ("risk", keys, missing, weight), lambda: measure_risk(
            frame, keys, missing=missing, weight=weight))


def guarded(name: str, action: Callable[[], Any]) -> Any:
    """Run ``action``; an error microagg raises on purpose is shown beside ``name``."""
    from microagg.errors import MicroaggError

    try:
        return action()
    except MicroaggError as exc:
        show_error(name, exc)
        return None
