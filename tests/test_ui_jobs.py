"""A new upload never waits behind the measures of the table it replaces: it is read in a
lane of its own, and those measures stop and do not begin again while it is read."""

import asyncio
import threading
import time

import pandas as pd
import pytest
from shiny import reactive

from microagg.ui.session import WORKERS, Cancelled, Pending, State


def _blocking(began: threading.Semaphore, release: threading.Event):
    """A measure that never checks whether it is still wanted (as a numba kernel)."""
    def measure(_check):
        began.release()
        release.wait(30)
        return "done"
    return measure


def _endless(began: threading.Semaphore):
    def measure(check):
        began.release()
        while True:
            check()
            time.sleep(0.01)
    return measure


def test_an_upload_is_read_at_once_while_every_worker_measures_the_old_table():
    state = State.new()
    old = pd.DataFrame({"a": [1, 2, 3]})
    began, release = threading.Semaphore(0), threading.Event()
    try:
        with reactive.isolate():
            for n in range(WORKERS):  # every worker busy with a measure of the old table
                assert isinstance(state.remembered(old, ("slow", n),
                                                   _blocking(began, release)), Pending)
        for _ in range(WORKERS):
            assert began.acquire(timeout=10)
        state.retire()

        async def read() -> float:
            start = time.perf_counter()
            await asyncio.wait_for(state.jobs.read(lambda: None), timeout=5)
            return time.perf_counter() - start

        assert asyncio.run(read()) < 1.0  # not queued behind the measures
        # the same work through the measures' workers waits for them
        queued = state.jobs.submit(lambda: None)
        with pytest.raises(TimeoutError):
            queued.result(timeout=0.3)
        release.set()
        queued.result(timeout=10)
    finally:
        release.set()
        state.close()


def test_the_old_tables_measures_stop_and_none_begins_until_the_upload_is_read():
    state = State.new()
    old, new = pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"b": [3, 4]})
    began = threading.Semaphore(0)
    try:
        with reactive.isolate():
            state.remembered(old, ("suda",), _endless(began))
        assert began.acquire(timeout=10)
        running = state.memory[(id(old), "suda")].future
        state.retire()
        with pytest.raises(Cancelled):
            running.result(timeout=10)  # stopped at its next check
        assert not state.memory
        with reactive.isolate():  # a view of the old table asks again while reading
            assert isinstance(state.remembered(old, ("suda",), _endless(began)), Pending)
        state.begin(old, ("ahead",), _endless(began))  # nor is one begun ahead
        assert not state.memory and not began.acquire(timeout=0.2)
        state.resume()
        with reactive.isolate():
            assert isinstance(state.remembered(new, ("risk",), lambda _: 7), Pending)
        assert state.memory[(id(new), "risk")].future.result(timeout=10) == 7
    finally:
        state.close()


def test_a_result_begun_before_a_new_upload_or_step_is_dropped():
    state = State.new()
    try:
        begun = state.generation  # a step (or preview, or recipe) begins on this table
        assert state.fresh(begun)
        state.retire()  # a new upload is being read
        state.resume()
        assert not state.fresh(begun)  # the step's result arrives: dropped
        begun = state.generation  # a step begun on the new table
        assert state.fresh(begun)
        with reactive.isolate():
            state.set_run(None)  # another step set or undone meanwhile
        assert not state.fresh(begun)
        assert state.fresh(state.generation)
    finally:
        state.close()
