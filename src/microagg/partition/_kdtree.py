"""Exact nearest live point: a k-d tree (or forest) with deletion and re-insertion.

Alg. 1 of paper 002 merges the class farthest from t-closeness with the class whose centroid
is nearest to its own; the merged class moves to its new centroid. The centroids live in this
tree: a merge removes both classes and re-inserts the merged one at its new position.

A forest holds one k-d tree per group (rows of group g are ``perm[start:end]`` of its tree's
nodes). Trees split at the median of their widest coordinate down to leaves of at most
``LEAF`` rows. A removal decrements the live counts on the path to the root and shrinks the
bounding boxes to the rows still alive, so pruning stays tight as the tree empties; a
re-insertion (of a row whose coordinates may have changed) increments them and widens the
boxes on its path to contain the row, so every box always bounds its live rows.

Queries are exact and break ties like a scan in row order: the nearest row is the least by
(squared distance, row). Distances are sums of squared coordinate differences in column order,
bit-identical to a direct scan; the box bounds are computed with the same monotone operations,
so they never exclude a row they bound.
"""

from __future__ import annotations

import numba
import numpy as np

LEAF = 12
# Entries of the traversal stack :func:`nearest` needs: two per level of a tree (median
# splits of up to 2**63 rows).
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
def _box(X, perm, alive, start, end, lo, hi, node):
    d = X.shape[1]
    for j in range(d):
        lo[node, j] = np.inf
        hi[node, j] = -np.inf
    for i in range(start, end):
        row = perm[i]
        if alive[row]:
            for j in range(d):
                v = X[row, j]
                if v < lo[node, j]:
                    lo[node, j] = v
                if v > hi[node, j]:
                    hi[node, j] = v


@numba.njit(cache=True)
def build(X, group, n_groups):
    """The forest of ``X`` (n, d) over groups 0..n_groups-1 given per row by ``group``."""
    n, d = X.shape
    capacity = 2 * (n // LEAF + 1) * 2 + 2 * n_groups + 4
    start = np.empty(capacity, dtype=np.int64)
    end = np.empty(capacity, dtype=np.int64)
    left = np.full(capacity, -1, dtype=np.int64)
    right = np.full(capacity, -1, dtype=np.int64)
    parent = np.full(capacity, -1, dtype=np.int64)
    count = np.zeros(capacity, dtype=np.int64)
    lo = np.empty((capacity, d))
    hi = np.empty((capacity, d))
    alive = np.ones(n, dtype=np.bool_)
    leaf_of = np.empty(n, dtype=np.int64)
    perm = np.argsort(group, kind="mergesort").astype(np.int64)
    roots = np.full(n_groups, -1, dtype=np.int64)
    keys = np.empty(n)
    nodes = 0
    stack = np.empty(capacity, dtype=np.int64)
    offset = 0
    for g in range(n_groups):
        first = offset
        while offset < n and group[perm[offset]] == g:
            offset += 1
        roots[g] = nodes
        start[nodes] = first
        end[nodes] = offset
        nodes += 1
        top = 0
        stack[top] = roots[g]
        top += 1
        while top > 0:
            top -= 1
            node = stack[top]
            s = start[node]
            e = end[node]
            count[node] = e - s
            _box(X, perm, alive, s, e, lo, hi, node)
            if e - s <= LEAF:
                for i in range(s, e):
                    leaf_of[perm[i]] = node
                continue
            axis = 0
            spread = -1.0
            for j in range(d):
                if hi[node, j] - lo[node, j] > spread:
                    spread = hi[node, j] - lo[node, j]
                    axis = j
            if spread <= 0.0:  # identical rows: one leaf, however many
                for i in range(s, e):
                    leaf_of[perm[i]] = node
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
    return (perm, roots, start[:nodes], end[:nodes], left[:nodes], right[:nodes],
            parent[:nodes], count[:nodes], lo[:nodes], hi[:nodes], alive, leaf_of)


@numba.njit(cache=True)
def remove(X, forest, row):
    """Remove ``row``: live counts drop up to the root, and bounding boxes shrink to the live
    rows as far up as they change."""
    perm, _roots, start, end, left, right, parent, count, lo, hi, alive, leaf_of = forest
    alive[row] = False
    node = leaf_of[row]
    d = X.shape[1]
    changed = False
    for j in range(d):  # the row lies on its leaf's box only if it touches a face
        if X[row, j] == lo[node, j] or X[row, j] == hi[node, j]:
            changed = True
            break
    if changed:
        _box(X, perm, alive, start[node], end[node], lo, hi, node)
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
def _distance(X, row, q):
    total = 0.0
    for j in range(q.shape[0]):
        diff = X[row, j] - q[j]
        total += diff * diff
    return total


@numba.njit(cache=True)
def _near_bound(lo, hi, node, q):
    total = 0.0
    for j in range(q.shape[0]):
        if q[j] < lo[node, j]:
            diff = lo[node, j] - q[j]
            total += diff * diff
        elif q[j] > hi[node, j]:
            diff = q[j] - hi[node, j]
            total += diff * diff
    return total


@numba.njit(cache=True)
def nearest(X, forest, g, q, stack):
    """The nearest live row of group ``g`` to the point ``q`` (-1 if the group is empty)."""
    perm, roots, start, end, left, right, _parent, count, lo, hi, alive, _leaf_of = forest
    best = -1
    best_d = np.inf
    top = 0
    stack[top] = roots[g]
    top += 1
    while top > 0:
        top -= 1
        node = stack[top]
        if count[node] == 0 or _near_bound(lo, hi, node, q) > best_d:
            continue
        if left[node] < 0:
            for i in range(start[node], end[node]):
                row = perm[i]
                if alive[row]:
                    dist = _distance(X, row, q)
                    if dist < best_d or (dist == best_d and row < best):
                        best_d = dist
                        best = row
            continue
        a = left[node]
        b = right[node]
        if _near_bound(lo, hi, a, q) <= _near_bound(lo, hi, b, q):
            a, b = b, a
        stack[top] = a  # the farther child waits below the nearer one
        stack[top + 1] = b
        top += 2
    return best


@numba.njit(cache=True)
def reinsert(X, forest, row):
    """Make the removed ``row`` live again at its coordinates in X (which may have changed
    since it was built or removed): live counts rise up to the root and the boxes on its path
    widen to contain it."""
    _perm, _roots, _start, _end, _left, _right, parent, count, lo, hi, alive, leaf_of = forest
    alive[row] = True
    node = leaf_of[row]
    while node >= 0:
        count[node] += 1
        for j in range(X.shape[1]):
            if count[node] == 1:  # the box of an empty node bounds nothing: start afresh
                lo[node, j] = X[row, j]
                hi[node, j] = X[row, j]
            else:
                lo[node, j] = min(lo[node, j], X[row, j])
                hi[node, j] = max(hi[node, j], X[row, j])
        node = parent[node]
