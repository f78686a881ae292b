"""The compiled loop of Alg. 1 of paper 002 (merging until every class is t-close); the
Python side is :func:`microagg.partition.tcloseness.merge`.

While a class violates t, the class with the greatest EMD (a priority queue, :mod:`._heap`)
merges with the class whose quasi-identifier centroid is nearest to its own (a k-d tree over
the live centroids, :mod:`._kdtree`; a scan of them for mixed data). Only the merged class's
EMD is recomputed.

On records with missing values (NaN in X, concept -1) a class's centroid takes each mean over
the values present and each marginality centroid over the concepts present (missing where
none is), and the nearest class is found by a scan with the distance over the attributes both
centroids have (:mod:`._missing`); when it shares none with any, the lowest live class.
"""

from __future__ import annotations

import numba
import numpy as np

from microagg.core.emd import attribute_emd
from microagg.partition import _kdtree
from microagg.partition._concepts import centroid_concepts
from microagg.partition._distances import exact_distance
from microagg.partition._heap import priority_pop, priority_push
from microagg.partition._missing import missing_distance
from microagg.partition._tclose_kernels import TOLERANCE


@numba.njit(cache=True)
def _members(head, following, size, cluster):
    """The rows of class ``cluster``, from the linked lists (head, following)."""
    out = np.empty(size[cluster], dtype=np.int64)
    row = head[cluster]
    for i in range(out.shape[0]):
        out[i] = row
        row = following[row]
    return out


@numba.njit(cache=True)
def _class_concepts(concepts, members, cats, out):
    """The marginality centroid of the rows ``members`` into ``out`` (over the concepts
    present; -1 where every one is missing)."""
    hist = np.zeros_like(cats.counts)
    for i in range(members.shape[0]):
        for j in range(concepts.shape[1]):
            if concepts[members[i], j] >= 0:
                hist[j, concepts[members[i], j]] += 1
    centroid_concepts(hist, cats, out)


@numba.njit(cache=True)
def _merged(a, b):
    """The sorted union of the sorted arrays a and b."""
    out = np.empty(a.shape[0] + b.shape[0], dtype=a.dtype)
    i = j = 0
    for at in range(out.shape[0]):
        if j == b.shape[0] or (i < a.shape[0] and a[i] <= b[j]):
            out[at] = a[i]
            i += 1
        else:
            out[at] = b[j]
            j += 1
    return out


@numba.njit(cache=True)
def _largest_emd(codes, c, tables, scratch):
    """The largest EMD of class c over the confidential attributes; ``codes[a][c]`` holds
    the class's value codes of attribute a, sorted."""
    worst = 0.0
    for a in range(len(codes)):
        worst = max(worst, attribute_emd(a, codes[a][c], tables, scratch))
    return worst


# C901 waived: a numba kernel; its branches share the loop's local state, and a split
# into functions would pass that state through calls in the innermost loop.
@numba.njit(cache=True)
def merge_classes(X, concepts, cats, labels, classes, t, tables, scratch, stack):  # noqa: C901
    """Alg. 1's loop on the partition ``labels`` (0..classes-1, relabelled in place);
    returns the merges made. ``cats`` is a :class:`._concepts.Categories`, ``tables`` and
    ``scratch`` the EMD tables of the confidential attributes, ``stack`` the k-d tree's
    traversal stack (:func:`._kdtree.stack_buffers`)."""
    n, d = X.shape
    S = cats.squared
    any_missing = np.isnan(X).any() or (concepts < 0).any()
    head = np.full(classes, -1, dtype=np.int64)
    tail = np.full(classes, -1, dtype=np.int64)
    following = np.full(n, -1, dtype=np.int64)
    size = np.zeros(classes, dtype=np.int64)
    sums = np.zeros((classes, d))
    present = np.zeros((classes, d), dtype=np.int64)  # values present per class and column
    for row in range(n):
        c = labels[row]
        if head[c] < 0:
            head[c] = row
        else:
            following[tail[c]] = row
        tail[c] = row
        size[c] += 1
        for j in range(d):
            if not np.isnan(X[row, j]):
                sums[c, j] += X[row, j]
                present[c, j] += 1
    centre = np.empty((classes, d))
    centre_c = np.empty((classes, concepts.shape[1]), dtype=np.int64)
    emd = np.empty(classes)
    live = np.ones(classes, dtype=np.bool_)
    keys = np.empty(2 * classes + 1)
    ids = np.empty(2 * classes + 1, dtype=np.int64)
    heap = 0
    # Each class also keeps its value codes sorted per confidential attribute, so that a
    # merge costs a linear merge of two sorted arrays, not a sort (one class may absorb
    # thousands of others, each time recomputing its EMD).
    values = tables[1]
    codes = [[np.empty(0, dtype=np.int64) for _ in range(classes)]
             for _ in range(values.shape[0])]
    for c in range(classes):
        members = _members(head, following, size, c)
        for j in range(d):
            centre[c, j] = sums[c, j] / present[c, j] if present[c, j] > 0 else np.nan
        _class_concepts(concepts, members, cats, centre_c[c])
        for a in range(values.shape[0]):
            codes[a][c] = np.sort(values[a][members])
        emd[c] = _largest_emd(codes, c, tables, scratch)
        heap = priority_push(keys, ids, heap, emd[c], c)
    # Purely numeric quasi-identifiers without missing values: the nearest centroid from a k-d
    # tree over the live centroids (a merged class moves to its new centroid); otherwise a scan.
    use_tree = concepts.shape[1] == 0 and not any_missing
    tree = _kdtree.build(centre, np.arange(classes if use_tree else 0))
    alive_classes = built_for = classes
    merges = 0
    while heap > 0:
        worst = ids[0]
        value = keys[0]
        heap = priority_pop(keys, ids, heap)
        if not live[worst] or value != emd[worst]:
            continue  # stale entry
        if value <= t + TOLERANCE:
            break
        if use_tree:
            _kdtree.remove(tree, worst)
            nearest = _kdtree.nearest(tree, centre[worst], stack)
        else:
            nearest = -1
            nearest_d = np.inf
            for c in range(classes):
                if live[c] and c != worst:
                    if any_missing:
                        dist = missing_distance(centre, centre_c, S, c, centre[worst],
                                                centre_c[worst])
                    else:
                        dist = exact_distance(centre, centre_c, S, c, centre[worst],
                                              centre_c[worst])
                    if dist < nearest_d or nearest < 0:
                        nearest_d = dist
                        nearest = c
        if nearest < 0:
            break
        if use_tree:
            _kdtree.remove(tree, nearest)
        keep = min(worst, nearest)
        gone = max(worst, nearest)
        following[tail[keep]] = head[gone]
        tail[keep] = tail[gone]
        size[keep] += size[gone]
        live[gone] = False
        for j in range(d):
            sums[keep, j] += sums[gone, j]
            present[keep, j] += present[gone, j]
            centre[keep, j] = (sums[keep, j] / present[keep, j] if present[keep, j] > 0
                               else np.nan)
        if use_tree:
            _kdtree.reinsert(tree, keep, centre[keep])  # at its new centroid, in its old leaf
            alive_classes -= 1
            if alive_classes <= built_for - built_for // 4:
                # Moved centroids widen the boxes of their old leaves: start afresh.
                tree = _kdtree.build(centre, np.flatnonzero(live))
                built_for = alive_classes
        if concepts.shape[1]:
            _class_concepts(concepts, _members(head, following, size, keep), cats,
                            centre_c[keep])
        for a in range(values.shape[0]):
            codes[a][keep] = _merged(codes[a][keep], codes[a][gone])
            codes[a][gone] = codes[a][gone][:0]
        emd[keep] = _largest_emd(codes, keep, tables, scratch)
        heap = priority_push(keys, ids, heap, emd[keep], keep)
        merges += 1
    for c in range(classes):
        if live[c]:
            row = head[c]
            while row >= 0:
                labels[row] = c
                row = following[row]
    return merges
