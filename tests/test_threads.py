"""The thread policy: argument checks and the chooser's decisions on simulated timings (real
speed is measured in benchmarks/bench_busy.py, never in tests)."""

import numpy as np
import pytest

from microagg.core import threads as threads_module
from microagg.core.threads import SERIAL, ThreadChooser, check_threads
from microagg.errors import InputError
from microagg.partition.mdav import mdav

SPLIT_MIN = 16_384
ROWS = 100_000
SERIAL_COST = 1e-9  # seconds per cluster-row


def _simulate(chooser, split_cost, batches=400, startup=1e-3):
    """Run ``batches`` batches with fixed per-cluster-row costs; the first split batch also
    pays the thread pool's start-up. Returns (seconds, clusters, batches that split)."""
    seconds = clusters = splits = 0
    started = False
    for _ in range(batches):
        limit, budget = chooser.plan(ROWS)
        split = limit != SERIAL
        took = budget * ROWS * (split_cost if split else SERIAL_COST)
        if split and not started:
            took, started = took + startup, True
        chooser.done(budget, ROWS, took)
        seconds, clusters, splits = seconds + took, clusters + budget, splits + split
    return seconds, clusters, splits


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(threads_module, "available_threads", lambda: 2)


def test_idle_machine_settles_on_split_passes(two_cores):
    chooser = ThreadChooser(SPLIT_MIN)
    seconds, clusters, splits = _simulate(chooser, split_cost=0.7 * SERIAL_COST)
    assert splits > 0.9 * 400
    assert seconds < 0.75 * clusters * ROWS * SERIAL_COST  # most of the 30 % gain is kept


@pytest.mark.parametrize("slowdown", [2.5, 100.0])
def test_busy_machine_stays_within_a_few_percent_of_one_thread(two_cores, slowdown):
    chooser = ThreadChooser(SPLIT_MIN)
    seconds, clusters, _ = _simulate(chooser, split_cost=slowdown * SERIAL_COST)
    assert seconds < 1.05 * clusters * ROWS * SERIAL_COST


def test_a_change_of_load_is_followed(two_cores):
    chooser = ThreadChooser(SPLIT_MIN)
    _simulate(chooser, split_cost=100 * SERIAL_COST)
    limit, _ = chooser.plan(ROWS)
    assert limit == SERIAL
    _, _, splits = _simulate(chooser, split_cost=0.7 * SERIAL_COST, startup=0.0)
    assert splits > 0.5 * 400  # the machine became idle: split passes win again


def test_fixed_threads_and_small_tables(two_cores):
    assert ThreadChooser(SPLIT_MIN, threads=1).plan(ROWS)[0] == SPLIT_MIN  # one chunk anyway
    assert ThreadChooser(SPLIT_MIN, threads=1).width == 1
    fixed = ThreadChooser(SPLIT_MIN, threads=2)
    assert all(fixed.plan(ROWS)[0] == SPLIT_MIN for _ in range(50))
    auto = ThreadChooser(SPLIT_MIN)
    assert auto.plan(2 * SPLIT_MIN - 1)[0] == SPLIT_MIN  # too few rows to split: no timing


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2", 10_000])
def test_bad_threads(bad):
    with pytest.raises(InputError, match="threads must be"):
        check_threads(bad)


def test_thread_counts_give_the_same_partition():
    X = np.random.default_rng(0).standard_normal((40_000, 3))
    np.testing.assert_array_equal(mdav(X, 7, threads=1), mdav(X, 7))
