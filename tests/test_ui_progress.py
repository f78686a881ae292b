"""The progress of a step or a comparison as the web app shows it (microagg/ui/progress.py):
the share reported by a worker thread, read on the event loop, never going back, and the
bar closed however the work ends. No browser and no Shiny needed: the bar is a recorder."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from microagg.evaluation.calibration import GRID_POINTS
from microagg.ui.progress import Calibration, Feed, follow


class Bar:
    """Records what a ``ui.Progress`` would be told."""

    def __init__(self) -> None:
        self.said: list[tuple[float | None, str, str]] = []
        self.closed = 0
        self.thread = None

    def set(self, value=None, message=None, detail=None):
        self.thread = threading.current_thread()
        self.said.append((value, message, detail))

    def close(self):
        self.closed += 1


def test_records_are_a_share_of_the_table_that_never_goes_back():
    feed = Feed("step 1")
    report = feed.records(200)
    report(50)
    assert feed.read() == (0.25, "step 1", "50 of 200 records")
    report(20)  # a stratum or a pass starting over: the share stays
    assert feed.read()[0] == 0.25
    report(200)
    assert feed.read()[0] == 1.0


def test_a_comparison_is_the_share_of_its_methods_calibrated():
    """Three methods; the target measured first; the second skipped by the data: each
    method's evaluations move the share inside its third, e / (e + grid points)."""
    feed = Feed("comparing")
    progress = Calibration(feed, ["a", "b", "c"], target_first=True)
    progress("c: k = 5 (1 runs)")  # the target, whatever its method
    assert feed.read()[:2] == (0.0, "measuring the target")
    shares = []
    for text in ["a: k = 2 (1 runs)", "a: k = 9 (1 runs)", "c: k = 2 (3 runs)"]:
        progress(text)
        shares.append(feed.read()[0])
    assert shares[0] == pytest.approx((0 + 1 / (1 + GRID_POINTS)) / 3)
    assert shares[1] == pytest.approx((0 + 2 / (2 + GRID_POINTS)) / 3)
    assert shares[2] == pytest.approx((2 + 1 / (1 + GRID_POINTS)) / 3)
    _, message, detail = feed.read()
    assert message == "calibrating c (method 3 of 3)" and "c: k = 2 (3 runs)" in detail
    assert all(0 <= s < 1 for s in shares)


def test_the_bar_follows_the_worker_on_the_loop_and_closes():
    feed, bar = Feed("step 1"), Bar()
    report = feed.records(4)

    def work():
        for done in range(1, 5):
            time.sleep(0.15)
            report(done)
        return "done"

    async def main():
        return threading.current_thread(), await follow(bar, feed, work)

    loop_thread, result = asyncio.run(main())
    assert result == "done" and bar.closed == 1
    assert bar.thread is loop_thread  # the bar is told only on the event loop
    values = [value for value, _, _ in bar.said]
    assert values == sorted(values) and values[-1] == 1.0
    assert bar.said[-1][1] == "step 1: 100 %" and "4 of 4 records" in bar.said[-1][2]


def test_a_failed_work_closes_the_bar_and_raises():
    bar = Bar()

    def work():
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        asyncio.run(follow(bar, Feed("step"), work))
    assert bar.closed == 1


def test_work_that_says_nothing_shows_its_time():
    bar = Bar()
    assert asyncio.run(follow(bar, Feed("local suppression"),
                              lambda: time.sleep(0.3) or 7)) == 7
    value, message, detail = bar.said[-1]
    assert value is None and message == "local suppression"
    assert "does not report its progress" in detail
