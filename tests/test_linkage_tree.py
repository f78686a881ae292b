"""Record linkage's k-d tree search against the scan of every original, and the distinct
records against numpy's ``unique``."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.evaluation import risk


def _scan(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    first, ids = risk.distinct_rows(x)
    count = np.bincount(ids).astype(float)
    m = y.shape[0]
    return risk._nearest_originals(
        np.ascontiguousarray(x[first]), np.empty((first.size, 0), np.int64), count,
        np.ascontiguousarray(y), np.empty((m, 0), np.int64), np.zeros((0, 1, 1)), False)


def _tree(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    first, ids = risk.distinct_rows(x)
    by_row = np.zeros(x.shape[0])
    by_row[first] = np.bincount(ids)
    return risk._nearest_in_tree(risk.build(np.ascontiguousarray(x), first.astype(np.int64)),
                                 by_row, np.ascontiguousarray(y))


@pytest.mark.parametrize("seed", range(40))
def test_tree_finds_the_scans_distance_and_every_tie(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(1, 400)), int(rng.integers(1, 6))
    if seed % 2:  # few values: many ties and duplicate originals
        x = rng.integers(0, 3, (n, p)).astype(float)
    else:
        x = rng.normal(size=(n, p)).round(int(rng.integers(0, 3)))
    y = {0: x + rng.integers(-1, 2, x.shape), 1: np.repeat(x[::3], 3, axis=0)[:n],
         2: rng.permutation(x)}[seed % 3]
    best, tied = _tree(x, y)
    scan_best, scan_tied = _scan(x, y)
    np.testing.assert_array_equal(best, scan_best)
    np.testing.assert_array_equal(tied, scan_tied)
    assert np.all(tied >= 1)


def test_record_linkage_agrees_with_a_direct_count() -> None:
    """RL by definition: each masked record links to its nearest originals, right with
    probability 1/|G| when its own original is among them."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (300, 3)).astype(float)
    y = x + rng.integers(-1, 2, x.shape)
    d = ((x[None, :, :] - y[:, None, :]) ** 2).sum(axis=2)  # d[j, i]: masked j, original i
    nearest = d == d.min(axis=1, keepdims=True)
    expected = 100.0 * np.mean(np.where(nearest[np.arange(300), np.arange(300)],
                                        1.0 / nearest.sum(axis=1), 0.0))
    assert risk.record_linkage(x, y) == pytest.approx(expected, rel=1e-12)


def test_distinct_rows_number_records_as_unique_does() -> None:
    rng = np.random.default_rng(5)
    low = rng.integers(0, 3, (500, 2))
    high = rng.integers(0, 2, (500, 2)).astype(float)
    first, ids = risk.distinct_rows(low, high)
    table = np.hstack([low, high])
    assert np.unique(table, axis=0).shape[0] == first.size
    np.testing.assert_array_equal(ids[first], np.arange(first.size))
    for i in range(500):  # equal records share a number, different ones never do
        same = (table == table[i]).all(axis=1)
        np.testing.assert_array_equal(ids == ids[i], same)
