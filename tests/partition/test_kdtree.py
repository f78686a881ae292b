"""The k-d tree of Alg. 1's merging: exact nearest live point, by (distance, row), through
removals and re-insertions at moved coordinates, against a direct scan."""

import numpy as np
import pytest

from microagg.partition import _kdtree


def direct_nearest(X: np.ndarray, alive: np.ndarray, q: np.ndarray) -> int:
    best, best_d = -1, np.inf
    for row in np.flatnonzero(alive):
        dist = 0.0
        for j in range(X.shape[1]):  # column order, as the tree sums
            diff = X[row, j] - q[j]
            dist += diff * diff
        if dist < best_d:
            best, best_d = row, dist
    return best


@pytest.mark.parametrize("seed", range(6))
def test_nearest_through_removals_and_moves(seed):
    rng = np.random.default_rng(seed)
    n, d = 300, 1 + seed % 4
    # Small integers: many equal distances, so the row tie-break is exercised.
    X = rng.integers(0, 6, size=(n, d)).astype(float)
    tree = _kdtree.build(X, np.arange(n))
    stack = _kdtree.stack_buffers()
    alive = np.ones(n, dtype=bool)
    for _ in range(250):
        live = np.flatnonzero(alive)
        a, b = rng.choice(live, size=2, replace=False)
        _kdtree.remove(tree, a)
        alive[a] = False
        q = X[a] if rng.random() < 0.5 else rng.uniform(-2, 8, size=d)
        assert _kdtree.nearest(tree, q, stack) == direct_nearest(X, alive, q)
        # merge a into b: b moves to a point between them (a merged centroid) or far away
        _kdtree.remove(tree, b)
        w = rng.random()
        X[b] = w * X[a] + (1 - w) * X[b] if rng.random() < 0.8 else rng.uniform(-5, 10, d)
        _kdtree.reinsert(tree, b, X[b])
        q = rng.uniform(-2, 8, size=d)
        assert _kdtree.nearest(tree, q, stack) == direct_nearest(X, alive, q)
    assert tree[10][0] == alive.sum()  # the root's live count


def test_empty_tree_has_no_nearest():
    X = np.arange(6, dtype=float).reshape(3, 2)
    tree = _kdtree.build(X, np.arange(3))
    for row in range(3):
        _kdtree.remove(tree, row)
    assert _kdtree.nearest(tree, X[0], _kdtree.stack_buffers()) == -1
    _kdtree.reinsert(tree, 1, X[1])
    assert _kdtree.nearest(tree, X[0], _kdtree.stack_buffers()) == 1


def test_a_tree_over_some_rows_answers_from_those_alone():
    X = np.random.default_rng(7).standard_normal((200, 3))
    rows = np.arange(0, 200, 3)
    tree = _kdtree.build(X, rows)
    alive = np.zeros(200, dtype=bool)
    alive[rows] = True
    for q in np.random.default_rng(8).standard_normal((50, 3)):
        assert _kdtree.nearest(tree, q, _kdtree.stack_buffers()) == direct_nearest(X, alive, q)
    assert _kdtree.nearest(_kdtree.build(X, rows[:0]), X[0], _kdtree.stack_buffers()) == -1
