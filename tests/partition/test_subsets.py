"""The blocked subsets of t-closeness-first: exact nearest record of a subset and farthest
record of all, through removals and fresh layouts, against a direct scan."""

import numba
import numpy as np
import pytest

from microagg.partition import _subsets
from tests import reference


def _direct(X, live, q, far):
    rows = np.flatnonzero(live)
    if rows.size == 0:
        return -1
    return reference.farthest(X, rows, q) if far else reference.nearest(X, rows, q, 1, -1)[0]


@pytest.mark.parametrize("seed", range(5))
def test_queries_through_removals_and_layouts(seed):
    rng = np.random.default_rng(seed)
    n, d, size = 500, 1 + seed % 4, 1 + seed % 3 * 2
    # Small integers: many equal distances, so the row tie-breaks are exercised.
    X = rng.integers(0, 7, size=(n, d)).astype(float)
    subset = rng.integers(0, size, size=n)
    concepts = np.empty((n, 0), dtype=np.int64)
    S = np.zeros((0, 1, 1))
    sets = _subsets.build(X, concepts, np.arange(n), subset, size, block_rows=4)
    threads = numba.config.NUMBA_NUM_THREADS
    work = _subsets.work_buffers(sets, threads)
    live = np.ones(n, dtype=bool)
    no_concepts = np.empty(0, dtype=np.int64)
    for step in range(n):
        if step % 97 == 96:  # as after a fifth of the rows: laid out afresh
            sets = _subsets.rebuild(X, concepts, sets)
            work = _subsets.work_buffers(sets, threads)
            assert sorted(_subsets.live_rows(sets)) == list(np.flatnonzero(live))
        elif step % 41 == 40:  # as after a fifth: a grid and boxes fitted to the live rows
            _subsets.recode(sets)
        # points inside the grid, on it, and far outside it (a domain corner)
        q = rng.uniform(-1, 8, d) if step % 3 else (X[rng.integers(n)] if step % 2 else
                                                   rng.uniform(-40, 50, d))
        split = step % 2 == 1  # the subsets shared between the threads
        assert _subsets.farthest(X, concepts, S, sets, q, no_concepts, work, split) == \
            _direct(X, live, q, True)
        picks = np.empty(size, dtype=np.int64)
        _subsets.nearest_each(X, concepts, S, sets, q, no_concepts, work, split, picks)
        for g in range(size):
            assert picks[g] == _direct(X, live & (subset == g), q, False)
        row = int(rng.choice(np.flatnonzero(live)))
        _subsets.remove(sets, subset[row], row)
        live[row] = False
    assert _subsets.farthest(X, concepts, S, sets, X[0], no_concepts, work, False) == -1
    assert _subsets.farthest(X, concepts, S, sets, X[0], no_concepts, work, True) == -1
    assert _subsets.nearest(X, concepts, S, sets, 0, X[0], no_concepts,
                            _subsets.thread_work(work, 0)) == -1


def test_boxes_bound_their_live_codes_after_removals():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    sets = _subsets.build(X, np.empty((300, 0), dtype=np.int64), np.arange(300),
                          rng.integers(0, 2, 300), 2, block_rows=16)
    for row in rng.permutation(300)[:200]:
        _subsets.remove(sets, int(np.flatnonzero(sets[2] == row)[0] // sets[2].shape[1]), row)
    codes, fill, box_lo, box_hi, width = sets[1], sets[7], sets[8], sets[9], int(sets[11])
    tight = 0
    for g, b in zip(*np.nonzero(fill), strict=True):
        block = codes[g, :, b * width:b * width + fill[g, b]].astype(int)
        assert (box_lo[g, :, b] <= block.min(axis=1)).all()
        assert (box_hi[g, :, b] >= block.max(axis=1)).all()
        tight += (box_lo[g, :, b] == block.min(axis=1)).all()
    assert tight == np.count_nonzero(fill)  # a removal on a face refits the box
