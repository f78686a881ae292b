"""One session's reactive state and the helpers every tab's server uses: the table, the
schema the user edits, the recipe run, the measures remembered for the last few tables, and
errors shown beside the field at fault.

No computation runs on the server's event loop, which every session shares: reading an
upload, the measures, the steps, the comparisons and the downloads' files run in the
session's worker threads (:class:`Jobs`); an upload is read in a lane of its own, so that it
never waits behind a measure, and once a new upload is being read the measures of the
tables it replaces stop and none begins until it is read (:meth:`State.retire`). A view
whose measure is not done yet shows :class:`Pending`, and is drawn again when it is. A long
computation checks :meth:`Jobs.check` as it goes (a method's progress callback, SUDA2's):
when the session ends it stops there, and the session's tables and measures are let go."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from shiny import reactive, ui

from microagg.data.schema import Role, Schema
from microagg.recipe.risk import RiskSummary, measure_risk, risk_keys, risk_weight
from microagg.recipe.runner import RecipeRun
from microagg.release.flags import labelled
from microagg.ui.limits import DEFAULT, Limits
from microagg.ui.state import ColumnEdit, Workspace, build_schema

__all__ = ["Cancelled", "Jobs", "Pending", "State", "Upload", "clear_error", "clear_errors",
           "guarded", "one_line", "safely", "scrub", "show_error"]

T = TypeVar("T")
REMEMBERED = 8
"""Measures kept per session (the oldest is forgotten first)."""
WORKERS = 2
"""Worker threads per session (a slow measure does not hold up a quick one)."""
_POLL = 0.05
"""Seconds between the checks of a measure begun ahead that waits for others to end."""


class Cancelled(BaseException):
    """Raised in a worker by :meth:`Jobs.check` once its session has ended or its result
    is no longer wanted."""


@dataclass(frozen=True)
class Pending:
    """A measure not done yet: what the view says while it waits."""

    what: str = "Computing…"


def scrub(text: str) -> str:
    """``text`` with every path in the temporary folder cut to the file's name: the page
    never shows where the server keeps a session's files."""
    roots = {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())}
    for root in sorted(roots, key=len, reverse=True):
        text = re.sub(re.escape(root.rstrip("/\\")) + r"[/\\][^\s'\"]*[/\\]", "", text)
    return text


def show_error(name: str, error: Exception | str) -> None:
    """Show ``error`` in one line beside field ``name``, the library's parameter names said
    as the app's fields (not the command line's flags)."""
    text = scrub(" ".join(labelled(str(error)).split()))
    ui.remove_ui(selector=f"#err-{name} .field-error", multiple=True, immediate=True)
    ui.insert_ui(ui.div(text, class_="field-error"), selector=f"#err-{name}",
                 where="beforeEnd", immediate=True)


def clear_errors() -> None:
    ui.remove_ui(selector=".field-error", multiple=True, immediate=True)


def clear_error(name: str) -> None:
    """Remove the error shown beside field ``name`` (the field now holds a valid value)."""
    ui.remove_ui(selector=f"#err-{name} .field-error", multiple=True, immediate=True)


class Jobs:
    """The worker threads of one session, and the reactive tick that wakes its views when a
    computation ends (like Shiny's extended tasks: the event loop only waits)."""

    def __init__(self, workers: int = WORKERS) -> None:
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="microagg-session")
        self.reader = ThreadPoolExecutor(1, thread_name_prefix="microagg-read")
        self.tick: reactive.Value[int] = reactive.value(0)
        self.stop = threading.Event()
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # made outside the server (a test): nothing to wake
            self._loop = None
        self._waking: set[asyncio.Task[None]] = set()

    def check(self) -> None:
        """Raise :class:`Cancelled` once the session has ended (called by the workers)."""
        if self.stop.is_set():
            raise Cancelled

    def submit(self, work: Callable[[], T]) -> Future[T]:
        """``work()`` in a worker; the views that wait for it are drawn again when it ends."""
        future = self.pool.submit(work)
        future.add_done_callback(self._ended)
        return future

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` in a worker, awaited (for an extended task)."""
        return await asyncio.wrap_future(self.pool.submit(work))

    async def read(self, work: Callable[[], T]) -> T:
        """``work()`` (reading an upload) in the reading lane, awaited: it begins at once,
        whatever the measures and steps in the workers."""
        return await asyncio.wrap_future(self.reader.submit(work))

    def _ended(self, future: Future[Any]) -> None:
        if self._loop is not None and not self.stop.is_set() and not future.cancelled():
            with contextlib.suppress(RuntimeError):  # the loop closed: the server stops
                self._loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        task = asyncio.ensure_future(self._flush())
        self._waking.add(task)
        task.add_done_callback(self._waking.discard)

    async def _flush(self) -> None:
        async with reactive.lock():
            with reactive.isolate():
                self.tick.set(self.tick() + 1)
            await reactive.flush()

    def close(self) -> None:
        """Stop: queued work is dropped, running work stops at its next check."""
        self.stop.set()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.reader.shutdown(wait=False, cancel_futures=True)


@dataclass(frozen=True)
class Upload:
    """What the data tab shows of the uploaded table, computed when it is read."""

    name: str
    records: int
    columns: int
    missing_cells: int
    samples: dict[str, str] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)  # missing cells by column


@dataclass
class _Entry:
    frame: Any  # held so that its id is not reused while the measure is remembered
    future: Future[Any]
    stop: threading.Event


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
    memory: dict[tuple[Any, ...], _Entry]
    jobs: Jobs
    reading: reactive.Value[list[str]]  # what the columns' values say about how they were read
    upload: reactive.Value[Upload | None]
    limits: Limits = DEFAULT
    closed: bool = False
    retiring: bool = False  # a new upload is being read: no measure begins
    generation: int = 0  # the table and step list a result must have been computed on
    coded: dict[tuple[Any, ...], tuple[Any, np.ndarray]] = field(default_factory=dict)
    coding: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def new(cls, limits: Limits = DEFAULT) -> State:
        return cls(Workspace(), reactive.value(None), reactive.value(None),
                   reactive.value(None), reactive.value({}), reactive.value({}),
                   reactive.value(None), {}, Jobs(), reactive.value([]),
                   reactive.value(None), limits)

    def close(self) -> None:
        """The session ended: running computations stop at their next check, those not
        begun are dropped, the measures and tables are let go and the folder is removed."""
        self.closed = True
        for entry in self.memory.values():
            entry.stop.set()
        self.memory.clear()
        self.coded.clear()
        self.jobs.close()
        self.space.close()

    def retire(self) -> None:
        """A new upload is being read: every measure (of the tables it replaces) stops at
        its next check and is forgotten, those not begun are dropped, and none begins until
        :meth:`resume` (a view meanwhile says it is pending)."""
        self.retiring = True
        self.advance()  # a step or preview of the tables it replaces is dropped when done
        for entry in self.memory.values():
            entry.stop.set()
            entry.future.cancel()
        self.memory.clear()
        self.coded.clear()

    def resume(self) -> None:
        """The upload is read (or refused): measures begin again when the views ask, and
        the views are drawn again."""
        self.retiring = False
        with reactive.isolate():
            self.jobs.tick.set(self.jobs.tick() + 1)

    def advance(self) -> int:
        """The table or the step list changed (a new upload, a step set or undone, a
        recipe run again): a result computed before is dropped when it arrives
        (:meth:`fresh`). Returns the new generation."""
        self.generation += 1
        return self.generation

    def fresh(self, generation: int) -> bool:
        """Whether a result computed on ``generation`` (read when its computation began)
        was computed on the table and step list the session holds now.

        Examples
        --------
        >>> state = State.new()
        >>> began = state.generation
        >>> state.fresh(began), state.fresh(began - 1)
        (True, False)
        >>> state.close()
        """
        return generation == self.generation

    def set_run(self, run: RecipeRun | None) -> None:
        """Set the session's run (the step list changed): results begun on the steps
        before are dropped when they arrive."""
        self.advance()
        self.run.set(run)

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

    def checker(self, stop: threading.Event | None = None) -> Callable[..., None]:
        """A progress callback for a worker: it raises :class:`Cancelled` once the session
        has ended (or ``stop`` is set)."""
        def check(*_: Any) -> None:
            if stop is not None and stop.is_set():
                raise Cancelled
            self.jobs.check()
        return check

    def key_codes(self, frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
        """:func:`~microagg.core.frequencies.key_codes` of ``frame`` over ``keys``, computed
        once for the last few tables and key sets (the SUDA2 and l-diversity measures of one
        table share them; a worker may ask). Read-only: a measure that wrote into them
        would change another's input."""
        from microagg.core.frequencies import key_codes

        found = (id(frame), *keys)
        with self.coding:
            held = self.coded.get(found)
        if held is not None:
            return held[1]
        codes = key_codes(frame, keys)
        codes.flags.writeable = False
        with self.coding:
            if len(self.coded) >= REMEMBERED:
                self.coded.pop(next(iter(self.coded)))
            self.coded[found] = (frame, codes)  # the frame held: its id is not reused
        return codes

    def remembered(self, frame: Any, key: tuple[Any, ...],
                   measure: Callable[[Callable[..., None]], T], *,
                   what: str = "Computing…", exclusive: bool = False) -> T | Pending:
        """``measure(check)`` of ``frame`` under ``key``, computed in a worker and
        remembered for the last few tables and settings (a role change that keeps the keys
        costs nothing); :class:`Pending` (saying ``what``) until it is done, and the views
        that read it are drawn again then. ``check`` is the progress callback that stops
        it. An error is raised here each time it is asked for (the same settings give the
        same error); a measure stopped is begun again when asked for. ``exclusive``: a
        measure of the same kind (``key[0]``) still running for other settings is stopped
        (a search no one waits for). Only a view still waiting is drawn again when a
        computation ends: one that has its result keeps it (drawing a plot again for
        another view's measure cost as much as the measure)."""
        entry = self.memory.get((id(frame), *key))
        if entry is None and self.retiring:
            return self._waiting(what)  # the table is being replaced
        if entry is None:
            if exclusive:
                self._stop_others(key)
            entry = self._start(frame, key, measure)
        if not entry.future.done():
            return self._waiting(what)
        try:
            return entry.future.result()
        except (Cancelled, CancelledError):
            self.memory.pop((id(frame), *key), None)  # stopped: asked again, it begins again
            return self._waiting(what)

    def _waiting(self, what: str) -> Pending:
        """:class:`Pending` saying ``what``; the view that reads it is drawn again when a
        computation ends."""
        self.jobs.tick()
        return Pending(what)

    def has(self, frame: Any, key: tuple[Any, ...]) -> bool:
        """Whether a measure of ``frame`` under ``key`` is remembered (or begun)."""
        return (id(frame), *key) in self.memory

    def running(self, frame: Any, key: tuple[Any, ...]) -> bool:
        """Whether a measure of ``frame`` under ``key`` is begun and not done."""
        entry = self.memory.get((id(frame), *key))
        return entry is not None and not entry.future.done()

    def stop(self, frame: Any, key: tuple[Any, ...]) -> None:
        """Stop the measure of ``frame`` under ``key`` (at its next check) and forget it:
        asked for again, it begins again."""
        entry = self.memory.pop((id(frame), *key), None)
        if entry is not None:
            entry.stop.set()
            entry.future.cancel()

    def begin(self, frame: Any, key: tuple[Any, ...],
              measure: Callable[[Callable[..., None]], Any]) -> None:
        """Begin ``measure(check)`` of ``frame`` in a worker (a view the user is likely to
        open next), remembered under ``key`` like :meth:`remembered`; measures begun
        earlier and not started yet are dropped. It starts once the measures running now
        are done: the views shown get the processor first."""
        if self.closed or self.retiring or (id(frame), *key) in self.memory:
            return
        for stale in [k for k, e in self.memory.items() if e.future.cancel()]:
            del self.memory[stale]
        ahead = [e.future for e in self.memory.values() if e.future.running()]

        def after(check: Callable[..., None]) -> Any:
            while wait(ahead, timeout=_POLL).not_done:
                check()
            return measure(check)

        self._start(frame, key, after if ahead else measure)

    def _start(self, frame: Any, key: tuple[Any, ...],
               measure: Callable[[Callable[..., None]], Any]) -> _Entry:
        stop = threading.Event()
        check = self.checker(stop)
        entry = _Entry(frame, self.jobs.submit(lambda: measure(check)), stop)
        if len(self.memory) >= REMEMBERED:
            oldest = self.memory.pop(next(iter(self.memory)))
            oldest.stop.set()
        self.memory[(id(frame), *key)] = entry
        return entry

    def _stop_others(self, key: tuple[Any, ...]) -> None:
        for other in [k for k, e in self.memory.items()
                      if k[1] == key[0] and not e.future.done()]:
            self.memory.pop(other).stop.set()

    def risk(self, frame: pd.DataFrame, schema: Schema | None,
             missing: str) -> RiskSummary | Pending:
        """The risk of ``frame`` over the schema's quasi-identifiers (remembered)."""
        keys = tuple(risk_keys(schema, frame))
        weight = risk_weight(schema, frame)
        return self.remembered(frame, ("risk", keys, missing, weight), lambda _: measure_risk(
            frame, keys, missing=missing, weight=weight,
            codes=self.key_codes(frame, keys) if keys else None), what="Measuring the risk…")


def one_line(error: BaseException) -> str:
    """An unexpected error in one line: its first line, else the name of its type."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def safely(name: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Decorate an effect so that an error it raises, expected or not, is shown in one line
    beside field ``name`` instead of ending the session (Shiny closes a session whose
    effect raises). Shiny's own silent exceptions (``req``) pass through."""
    from functools import wraps

    from shiny.types import SilentCancelOutputException, SilentException

    from microagg.errors import MicroaggError

    def decorate(effect: Callable[[], None]) -> Callable[[], None]:
        @wraps(effect)
        def run() -> None:
            try:
                effect()
            except (SilentException, SilentCancelOutputException):
                raise
            except MicroaggError as exc:
                show_error(name, exc)
            except Exception as exc:  # a bug: said, and the session lives on
                show_error(name, f"could not complete this: {one_line(exc)}")
        return run
    return decorate


def guarded(name: str, action: Callable[[], Any]) -> Any:
    """Run ``action``; an error microagg raises on purpose is shown beside ``name``."""
    from microagg.errors import MicroaggError

    try:
        return action()
    except MicroaggError as exc:
        show_error(name, exc)
        return None
