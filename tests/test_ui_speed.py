"""What the app computes and how long it takes: a SUDA2 search states its cost before it
begins and can be stopped (microagg/risk/suda.py, ui/session.py, ui/risk_tab.py)."""

from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

pytest.importorskip("shiny", reason="the web app needs the extra ui (shiny)")

from shiny import reactive

from microagg.risk.suda import search_cost


def test_the_stated_cost_names_its_search_and_grows_with_keys_and_records():
    for records, keys in ((1000, 1), (1000, 5), (32_561, 9), (32_561, 14), (50, 30)):
        cost = search_cost(records, keys)
        assert cost.steps == (records if cost.search == "records" else 2**keys - 1)
        assert cost.searched(7) == f"7 of up to {cost.steps:,} {cost.unit} searched"
    assert search_cost(32_561, 9).search == "subsets"
    assert search_cost(32_561, 14).search == "records"
    assert search_cost(50, 30).search == "nodes"  # 2^30 bits per record: too many to keep
    assert search_cost(1000, 10).seconds < search_cost(1000, 11).seconds
    assert search_cost(1000, 10).seconds < search_cost(2000, 10).seconds
    said = search_cost(32_561, 14).describe()
    assert "14 keys" in said and "32,561 records" in said and "16,384 subsets" in said
    said = search_cost(32_561, 9).describe()
    assert "9 keys" in said and "511 subsets" in said and "32,561 records" in said


def test_adults_keys_are_searched_at_once_a_costlier_search_when_asked():
    from microagg.ui.risk_tab import ASKED_SECONDS

    assert search_cost(32_561, 9).seconds < ASKED_SECONDS
    assert search_cost(32_561, 14).seconds < ASKED_SECONDS  # the record search: 2 s of CPU
    assert search_cost(150_000, 10).seconds > ASKED_SECONDS  # the browser test's search


def test_a_stopped_measure_ends_at_its_next_check_and_begins_again_when_asked():
    from microagg.ui.session import Cancelled, Pending, State

    state = State.new()
    frame = pd.DataFrame({"a": [1, 2, 3]})
    began = threading.Semaphore(0)

    def endless(check):
        began.release()
        while True:
            check()
            time.sleep(0.01)

    try:
        with reactive.isolate():
            assert isinstance(state.remembered(frame, ("suda",), endless), Pending)
        assert began.acquire(timeout=10)
        first = state.memory[(id(frame), "suda")].future
        assert state.running(frame, ("suda",))
        state.stop(frame, ("suda",))
        with pytest.raises(Cancelled):
            first.result(timeout=10)
        assert not state.has(frame, ("suda",)) and not state.running(frame, ("suda",))
        assert not state.jobs.stop.is_set()  # the session goes on
        with reactive.isolate():
            assert isinstance(state.remembered(frame, ("suda",), endless), Pending)
        assert began.acquire(timeout=10)
        assert state.memory[(id(frame), "suda")].future is not first
    finally:
        state.close()


def test_a_running_comparison_offers_its_stop_and_a_stopped_one_says_so():
    from microagg.ui.compare_tab import comparison_view

    running = str(comparison_view(None, running=True, stopped=False))
    assert 'id="stop_compare"' in running
    stopped = str(comparison_view(None, running=False, stopped=True))
    assert 'id="compare-stopped"' in stopped and "stop_compare" not in stopped
    idle = str(comparison_view(None, running=False, stopped=False))
    assert "compare-stopped" not in idle and "stop_compare" not in idle


def test_a_search_writes_how_far_it_is_and_stops_when_its_check_raises():
    import numpy as np

    from microagg.core.frequencies import matching_counts
    from microagg.risk import suda2
    from microagg.ui.risk_tab import _counted
    from microagg.ui.session import Cancelled

    codes = np.random.default_rng(0).integers(0, 4, (300, 6))
    searched: dict = {}
    suda2(codes, progress=_counted(lambda: None, searched, ("t",)))
    assert 0 < searched[("t",)] <= search_cost(300, 6).steps

    def check():
        if searched[("u",)] > 0:
            raise Cancelled

    codes = np.random.default_rng(0).integers(0, 4, (12_000, 14))  # 0.5 s or more of searching
    searched[("u",)] = 0
    with pytest.raises(Cancelled):
        suda2(codes, progress=_counted(check, searched, ("u",)))
    uniques = int((matching_counts(codes, "matches-any") == 1).sum())
    assert 0 < searched[("u",)] < uniques  # stopped before its end


def test_the_cost_of_thousands_of_keys_saturates_and_is_said_in_one_short_line():
    import math

    from microagg.ui.risk_tab import ASKED_SECONDS

    wide = search_cost(300, 2000)  # 2^2000 subsets: more than a float holds
    assert math.isinf(wide.seconds) and wide.seconds > ASKED_SECONDS
    assert wide.steps == 2**2000 - 1
    for said in (wide.describe(), wide.searched(3)):
        assert "\n" not in said and len(said) < 200 and "10^602" in said
    assert "more than a year" in wide.describe()
    assert search_cost(300, 60).seconds < wide.seconds  # still ordered below saturation


def test_an_effect_that_fails_shows_one_line_beside_its_field_and_returns(monkeypatch):
    from shiny.types import SilentException

    from microagg.errors import InputError
    from microagg.ui import session

    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(session, "show_error", lambda name, error: shown.append(
        (name, str(error))))

    def bug() -> None:
        raise OverflowError("int too large to convert to float\nsecond line")

    def refusal() -> None:
        raise InputError("keys: too many")

    def silent() -> None:
        raise SilentException

    session.safely("upload")(bug)()
    session.safely("roles")(refusal)()
    assert shown == [("upload", "could not complete this: int too large to convert to float"),
                     ("roles", "keys: too many")]
    with pytest.raises(SilentException):  # req(): Shiny's own, passed on
        session.safely("upload")(silent)()


def test_a_wide_table_whose_every_column_is_a_key_says_to_choose_them():
    from microagg.data.schema import Schema
    from microagg.ui.data_tab import MANY_KEYS, many_keys_note
    from microagg.ui.state import ColumnEdit, build_schema

    def schema(columns: int, edits=None):
        frame = pd.DataFrame({f"c{i}": [1, 2] for i in range(columns)})
        return build_schema(Schema.infer(frame, strict=False), edits or {})

    assert many_keys_note(schema(MANY_KEYS)) is None
    said = str(many_keys_note(schema(2000)))
    assert "2,000 columns are quasi-identifiers" in said and "SUDA2" in said
    fewer = {f"c{i}": ColumnEdit(role="other") for i in range(MANY_KEYS, 2000)}
    assert many_keys_note(schema(2000, fewer)) is None  # the keys chosen: nothing to say
