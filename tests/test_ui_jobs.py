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


def test_a_view_that_has_its_result_is_not_drawn_again_when_another_measure_ends():
    state = State.new()
    frame = pd.DataFrame({"a": [1, 2, 3]})
    release = threading.Event()
    drawn = {"done": 0, "waiting": 0}
    try:
        with reactive.isolate():
            state.remembered(frame, ("quick",), lambda _: 1)
        state.memory[(id(frame), "quick")].future.result(timeout=10)

        @reactive.effect
        def _done() -> None:
            drawn["done"] += 1
            assert state.remembered(frame, ("quick",), lambda _: 1) == 1

        @reactive.effect
        def _waiting() -> None:
            drawn["waiting"] += 1
            state.remembered(frame, ("slow",), lambda _: release.wait(30))

        asyncio.run(reactive.flush())
        assert drawn == {"done": 1, "waiting": 1}
        release.set()
        assert state.memory[(id(frame), "slow")].future.result(timeout=10)
        with reactive.isolate():  # what the session's workers do when one ends
            state.jobs.tick.set(state.jobs.tick() + 1)
        asyncio.run(reactive.flush())
        assert drawn == {"done": 1, "waiting": 2}
        _done.destroy()
        _waiting.destroy()
    finally:
        release.set()
        state.close()


def test_a_measure_begun_ahead_starts_once_the_measures_running_end():
    state = State.new()
    frame = pd.DataFrame({"a": [1, 2, 3]})
    began, release = threading.Semaphore(0), threading.Event()
    started = threading.Event()

    def ahead(_check):
        started.set()
        return "ahead"

    try:
        with reactive.isolate():
            state.remembered(frame, ("risk",), _blocking(began, release))
        assert began.acquire(timeout=10)
        state.begin(frame, ("suda",), ahead)
        assert not started.wait(0.3)  # the view shown has the processor
        release.set()
        assert state.memory[(id(frame), "suda")].future.result(timeout=10) == "ahead"
        state.begin(frame, ("other",), _endless(began))  # nothing runs: it starts at once
        assert began.acquire(timeout=10)
    finally:
        release.set()
        state.close()


def test_a_measure_waiting_to_begin_stops_when_asked():
    state = State.new()
    frame = pd.DataFrame({"a": [1, 2, 3]})
    began, release = threading.Semaphore(0), threading.Event()
    started = threading.Event()
    try:
        with reactive.isolate():
            state.remembered(frame, ("risk",), _blocking(began, release))
        assert began.acquire(timeout=10)
        state.begin(frame, ("suda",), lambda _: started.set())
        waiting = state.memory[(id(frame), "suda")].future
        state.stop(frame, ("suda",))
        with pytest.raises(Cancelled):
            waiting.result(timeout=10)
        assert not started.is_set()
    finally:
        release.set()
        state.close()


def test_key_codes_are_computed_once_per_table_and_keys_and_serve_every_measure():
    import numpy as np

    from microagg.core.frequencies import key_codes
    from microagg.recipe.risk import measure_risk
    from microagg.risk import l_diversity, suda2

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.choice(["x", "y", None], 300),
                          "b": rng.integers(0, 4, 300), "c": rng.choice(list("pqrs"), 300)})
    state = State.new()
    try:
        codes = state.key_codes(frame, ["a", "b"])
        assert state.key_codes(frame, ["a", "b"]) is codes  # once per table and key set
        assert state.key_codes(frame, ["b", "a"]) is not codes
        assert state.key_codes(frame.copy(), ["a", "b"]) is not codes
        assert np.array_equal(codes, key_codes(frame, ["a", "b"]))
        assert not codes.flags.writeable
        sensitive = state.key_codes(frame, ["c"])[:, 0]
        frame["w"] = rng.uniform(1, 50, 300)
        for missing in ("matches-any", "category"):  # the measures only read them
            for weight in (None, "w"):
                shared_risk = measure_risk(frame, ["a", "b"], missing=missing, weight=weight,
                                           codes=codes)
                fresh_risk = measure_risk(frame, ["a", "b"], missing=missing, weight=weight)
                assert shared_risk.classes == fresh_risk.classes
                assert np.array_equal(shared_risk.fk, fresh_risk.fk)
                assert np.array_equal(shared_risk.record_risk, fresh_risk.record_risk)
            shared = suda2(codes, ["a", "b"], missing)
            fresh = suda2(key_codes(frame, ["a", "b"]), ["a", "b"], missing)
            assert np.array_equal(shared.scores, fresh.scores)
            assert np.array_equal(
                l_diversity(codes, sensitive, missing).distinct,
                l_diversity(key_codes(frame, ["a", "b"]), key_codes(frame, ["c"])[:, 0],
                            missing).distinct)
        state.retire()  # a new table: the codes of the old one are let go
        assert not state.coded
    finally:
        state.close()
