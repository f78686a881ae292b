"""How far a step or a comparison running in a worker thread has come, shown in the page as a
progress bar with its percentage (Shiny's ``ui.Progress``).

The worker only writes a few numbers into a :class:`Feed`, under a lock: a method's
``progress(records done)`` callback (the k-anonymity, t-closeness and DP families count their
records, :meth:`~microagg.recipe.runner.RecipeRun.then`), or a comparison's
``progress(text)``, called before each evaluation of its calibration search
(:class:`Calibration`). :func:`follow` runs the work in a thread and, on the session's event
loop, reads the feed every :data:`POLL` seconds and moves the bar: no Shiny call is made from
the worker thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from microagg.evaluation.calibration import GRID_POINTS

__all__ = ["POLL", "Calibration", "Feed", "follow"]

T = TypeVar("T")
POLL = 0.25
"""Seconds between two moves of the bar."""


class Feed:
    """What the worker has reported: the share done (``None``: the work does not say), a
    message and a detail. Written by the worker thread, read by the event loop."""

    def __init__(self, message: str) -> None:
        self._lock = threading.Lock()
        self._state: tuple[float | None, str, str] = (None, message, "")

    def set(self, fraction: float | None, message: str | None = None,
            detail: str = "") -> None:
        """Report ``fraction`` done (a share never goes back)."""
        with self._lock:
            before, said, _ = self._state
            if fraction is not None and before is not None:
                fraction = max(fraction, before)
            self._state = (fraction, said if message is None else message, detail)

    def records(self, total: int) -> Callable[[int], None]:
        """A method's ``progress`` callback: ``done`` of ``total`` records."""
        def report(done: int) -> None:
            self.set(min(done / total, 1.0) if total else None,
                     detail=f"{done:,} of {total:,} records")
        return report

    def read(self) -> tuple[float | None, str, str]:
        with self._lock:
            return self._state


class Calibration:
    """A comparison's ``progress(text)`` callback, as a share of the methods calibrated.

    The comparison calibrates the methods one after the other, in the order given (or its
    default order, skipping those the data do not allow): the share is the methods before
    the one being searched, counted as done, plus a part of that one that grows with its
    evaluations, e / (e + the grid's points) (a search takes 4 to 30 evaluations). Each text
    is ``METHOD: PARAMETER = VALUE (RUNS runs)``; the first one, when the target is given
    as ``METHOD=VALUE``, measures the target before any calibration.
    """

    def __init__(self, feed: Feed, order: Sequence[str], target_first: bool) -> None:
        self.feed, self.order = feed, list(order)
        self.target_first = target_first
        self.current, self.evaluations = "", 0

    def __call__(self, text: str) -> None:
        method = text.partition(":")[0].strip()
        if self.target_first:
            self.target_first = False
            self.feed.set(0.0, "measuring the target", text)
            return
        if method != self.current:
            self.current, self.evaluations = method, 0
        self.evaluations += 1
        position = self.order.index(method) if method in self.order else 0
        part = self.evaluations / (self.evaluations + GRID_POINTS)
        self.feed.set((position + part) / max(len(self.order), 1),
                      f"calibrating {method} (method {position + 1} of "
                      f"{len(self.order)})", f"evaluation {self.evaluations}: {text}")


async def follow(bar: Any, feed: Feed, work: Callable[[], T]) -> T:
    """``work()`` run in a worker thread while ``bar`` (a ``ui.Progress`` of the session)
    shows the feed, with the percentage and the seconds elapsed; the bar is closed when the
    work ends, whether it succeeds or fails."""
    started = time.monotonic()
    task = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=POLL)
            fraction, message, detail = feed.read()
            elapsed = f"{time.monotonic() - started:.0f} s"
            if fraction is None:
                bar.set(None, message=message, detail=" · ".join(filter(None, (
                    detail, elapsed, "this method does not report its progress"))))
            else:
                bar.set(fraction, message=f"{message}: {100 * fraction:.0f} %",
                        detail=" · ".join(filter(None, (detail, elapsed))))
            if done:
                return task.result()
    finally:
        bar.close()
