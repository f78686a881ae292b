"""Exact nearest live point: a k-d tree with deletion and re-insertion at moved coordinates.

Alg. 1 of paper 002 merges the class farthest from t-closeness with the class whose centroid
is nearest to its own; the merged class moves to its new centroid. The centroids live in this
tree: a merge removes both classes and re-inserts the merged one at its new position.

The tree splits at the median of the widest coordinate down to leaves of at most ``LEAF``
points. It keeps its own copy of the coordinates in leaf order (``points``, row ``rows[i]`` of
the caller's matrix at position i), so a leaf is scanned in contiguous memory. A removal
decrements the live counts on the path to the root and shrinks the bounding boxes to the
points still alive, so pruning stays tight as the tree empties; a re-insertion (of a row whose
coordinates may have changed) increments them and widens the boxes on its path to contain
the point, so every box always bounds its live points.

Queries are exact and break ties like a scan in row order: the nearest row is the least by
(squared distance, row). Distances are sums of squared coordinate differences in column order,
bit-identical to a direct scan; the box bounds are computed with the same monotone operations,
so they never exclude a point they bound. Each waiting node carries its bound on the stack, so
it is computed once and a node is dropped as soon as the best distance passes it.
"""

from __future__ import annotations

import numba
import numpy as np

LEAF = 8
# Entries of the traversal stack :func:`nearest` needs: at most one waiting node per level of
# the tree and the node being opened (median splits of up to 2**63 points).
STACK = 160


@numba.njit(cache=True)
def _select(perm, keys, lo, hi, nth):
    """Reorder perm[lo:hi] so that perm[nth] holds the row with the nth smallest key (ties by
    row) and no row before it has a greater one (Hoare selection)."""
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        pivot_row = perm[mid]
        pivot = keys[pivot_row]
        perm[mid], perm[hi - 1] = perm[hi - 1], perm[mid]
        store = lo
        for i in range(lo, hi - 1):
            row = perm[i]
            if keys[row] < pivot or (keys[row] == pivot and row < pivot_row):
                perm[i], perm[store] = perm[store], perm[i]
                store += 1
        perm[store], perm[hi - 1] = perm[hi - 1], perm[store]
        if store == nth:
            return
        if nth < store:
            hi = store
        else:
            lo = store + 1


@numba.njit(cache=True)
def _box(points, alive, start, end, lo, hi, node):
    """Shrink the box of ``node`` to its live points at positions start..end-1."""
    d = points.shape[1]
    for j in range(d):
        lo[node, j] = np.inf
        hi[node, j] = -np.inf
    for i in range(start, end):
        if alive[i]:
            for j in range(d):
                v = points[i, j]
                if v < lo[node, j]:
                    lo[node, j] = v
                if v > hi[node, j]:
                    hi[node, j] = v


@numba.njit(cache=True)
def build(X, rows):
    """The tree of the rows ``rows`` of ``X`` (n, d); the other rows are not in it."""
    n, d = X.shape
    size = rows.shape[0]
    capacity = 2 * (size // LEAF + 1) * 2 + 4
    start = np.empty(capacity, dtype=np.int64)
    end = np.empty(capacity, dtype=np.int64)
    left = np.full(capacity, -1, dtype=np.int64)
    right = np.full(capacity, -1, dtype=np.int64)
    parent = np.full(capacity, -1, dtype=np.int64)
    count = np.zeros(capacity, dtype=np.int64)
    lo = np.empty((capacity, d))
    hi = np.empty((capacity, d))
    perm = np.sort(rows.astype(np.int64))
    keys = np.empty(n)
    stack = np.empty(capacity, dtype=np.int64)
    start[0] = 0
    end[0] = size
    nodes = 1
    leaves = np.empty(capacity, dtype=np.int64)
    n_leaves = 0
    top = 1
    stack[0] = 0
    while top > 0:
        top -= 1
        node = stack[top]
        s = start[node]
        e = end[node]
        count[node] = e - s
        for j in range(d):
            lo[node, j] = np.inf
            hi[node, j] = -np.inf
        for i in range(s, e):
            for j in range(d):
                v = X[perm[i], j]
                lo[node, j] = min(lo[node, j], v)
                hi[node, j] = max(hi[node, j], v)
        axis = 0
        spread = -1.0
        for j in range(d):
            if hi[node, j] - lo[node, j] > spread:
                spread = hi[node, j] - lo[node, j]
                axis = j
        if e - s <= LEAF or spread <= 0.0:  # a leaf (identical points: one, however many)
            leaves[n_leaves] = node
            n_leaves += 1
            continue
        for i in range(s, e):
            keys[perm[i]] = X[perm[i], axis]
        middle = s + (e - s) // 2
        _select(perm, keys, s, e, middle)
        for child in range(2):
            start[nodes] = s if child == 0 else middle
            end[nodes] = middle if child == 0 else e
            parent[nodes] = node
            if child == 0:
                left[node] = nodes
            else:
                right[node] = nodes
            stack[top] = nodes
            top += 1
            nodes += 1
    points = np.empty((size, d))
    for i in range(size):
        points[i] = X[perm[i]]
    alive = np.ones(size, dtype=np.bool_)
    leaf_of = np.empty(size, dtype=np.int64)
    for at in range(n_leaves):
        leaf = leaves[at]
        leaf_of[start[leaf]:end[leaf]] = leaf
    position = np.full(n, -1, dtype=np.int64)
    for i in range(size):
        position[perm[i]] = i
    return (points, perm, position, alive, leaf_of, start[:nodes], end[:nodes], left[:nodes],
            right[:nodes], parent[:nodes], count[:nodes], lo[:nodes], hi[:nodes])


@numba.njit(cache=True)
def remove(tree, row):
    """Remove ``row``: live counts drop up to the root, and bounding boxes shrink to the live
    points as far up as they change."""
    points, _, position, alive, leaf_of, start, end, left, right, parent, count, lo, hi = tree
    at = position[row]
    alive[at] = False
    node = leaf_of[at]
    d = points.shape[1]
    changed = False
    for j in range(d):  # the point lies on its leaf's box only if it touches a face
        if points[at, j] == lo[node, j] or points[at, j] == hi[node, j]:
            changed = True
            break
    if changed:
        _box(points, alive, start[node], end[node], lo, hi, node)
    count[node] -= 1
    node = parent[node]
    while node >= 0:
        count[node] -= 1
        if changed:
            changed = False
            a = left[node]
            b = right[node]
            for j in range(d):
                low = np.inf
                high = -np.inf
                if count[a] > 0:
                    low = lo[a, j]
                    high = hi[a, j]
                if count[b] > 0:
                    low = min(low, lo[b, j])
                    high = max(high, hi[b, j])
                if low != lo[node, j] or high != hi[node, j]:
                    changed = True
                lo[node, j] = low
                hi[node, j] = high
        node = parent[node]


@numba.njit(cache=True)
def reinsert(tree, row, coordinates):
    """Make the removed ``row`` live again at ``coordinates`` (which may differ from where it
    was): live counts rise up to the root and the boxes on its path widen to contain it."""
    points, _, position, alive, leaf_of, _, _, _, _, parent, count, lo, hi = tree
    at = position[row]
    alive[at] = True
    points[at] = coordinates
    node = leaf_of[at]
    while node >= 0:
        count[node] += 1
        for j in range(points.shape[1]):
            if count[node] == 1:  # the box of an empty node bounds nothing: start afresh
                lo[node, j] = coordinates[j]
                hi[node, j] = coordinates[j]
            else:
                lo[node, j] = min(lo[node, j], coordinates[j])
                hi[node, j] = max(hi[node, j], coordinates[j])
        node = parent[node]


@numba.njit(cache=True, inline="always")
def _near_bound(lo, hi, node, q):
    """A lower bound of the squared distance from q to any point in the box of ``node``."""
    total = 0.0
    for j in range(q.shape[0]):
        gap = max(lo[node, j] - q[j], q[j] - hi[node, j], 0.0)
        total += gap * gap
    return total


def stack_buffers() -> tuple[np.ndarray, np.ndarray]:
    """The (nodes, bounds) traversal stack :func:`nearest` needs."""
    return np.empty(STACK, dtype=np.int64), np.empty(STACK)


@numba.njit(cache=True)
def nearest(tree, q, stack):
    """The nearest live row to the point ``q`` (-1 if the tree is empty); ``stack`` as made
    by :func:`stack_buffers`."""
    points, rows, _, alive, _, start, end, left, right, _, count, lo, hi = tree
    waiting, bounds = stack
    best = -1
    best_d = np.inf
    if count[0] == 0:
        return best
    d = q.shape[0]
    waiting[0] = 0
    bounds[0] = 0.0
    top = 1
    while top > 0:
        top -= 1
        node = waiting[top]
        if bounds[top] > best_d:
            continue
        a = left[node]
        if a < 0:
            for i in range(start[node], end[node]):
                if alive[i]:
                    dist = 0.0
                    for j in range(d):
                        diff = points[i, j] - q[j]
                        dist += diff * diff
                    row = rows[i]
                    if dist < best_d or (dist == best_d and row < best):
                        best_d = dist
                        best = row
            continue
        top = push_children(lo, hi, count, left, right, node, q, waiting, bounds, top, best_d)
    return best


@numba.njit(cache=True, inline="always")
def push_children(lo, hi, count, left, right, node, q, waiting, bounds, top, best):
    """Put the children of the inner ``node`` whose bound from ``q`` is at most ``best`` on
    the traversal stack (``waiting``, ``bounds``), the farther one below the nearer one;
    return the new top. A child with no live point is never put on."""
    a = left[node]
    b = right[node]
    bound_a = _near_bound(lo, hi, a, q) if count[a] > 0 else np.inf
    bound_b = _near_bound(lo, hi, b, q) if count[b] > 0 else np.inf
    if bound_a <= bound_b:
        a, b = b, a
        bound_a, bound_b = bound_b, bound_a
    if bound_a <= best:
        waiting[top] = a
        bounds[top] = bound_a
        top += 1
    if bound_b <= best:
        waiting[top] = b
        bounds[top] = bound_b
        top += 1
    return top
