"""Farthest-from-the-centroid queries over records with missing values, by an anchor-sorted
scan (the :mod:`._anchor` scan, adapted to the distance over the attributes both records have,
:mod:`._missing`).

That distance is no metric (two records sharing no attribute with each other may both be near
a third), so the triangle inequality is applied on each record's own attributes. Let O_x be the
attributes of a remaining record x, c the centroid of the remaining records and a an anchor
that was the centroid of an earlier, larger remaining set (or of all records). A centroid
coordinate is missing only when no record of its set has the attribute, so O_x is contained in
both O_c and O_a, and with w(x) = sqrt(p / |O_x|)

    d(x, c) = w(x) ||x - c||_{O_x} <= w(x) (||x - a||_{O_x} + ||a - c||_{O_x})
            <= rho(x) + w(x) * shift,

where rho(x) = d(x, a) and shift = ||a - c|| over the attributes both a and c have (which
contain O_x). The records are grouped by |O_x| and each group sorted by decreasing rho; a
query reads each group in that order and stops when rho(x) + w * shift, inflated by 1 + 10^-10
for rounding, cannot reach the best squared distance found, w being the group's own factor.
Records with no attribute present are at distance +inf from every point, hence the farthest:
when one remains, the lowest-numbered of them is the answer. As in :mod:`._anchor`, the anchor
moves to the current centroid when the queries since the last sort have read more than an
eighth of the remaining records.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from microagg.partition._distances import farther
from microagg.partition._missing import missing_distance

# The stopping bound is inflated by this factor to cover the rounding of the computed
# distances.
_BOUND_SLACK = 1.0 + 1e-10


class MissingOrder(NamedTuple):
    """The records grouped by their number of attributes present, each group sorted by
    decreasing distance to an anchor.

    Attributes
    ----------
    anchor : ndarray of float64, shape (p,)
        The anchor (NaN where no record of its set had the attribute).
    rho : ndarray of float64, shape (n,)
        ``rho[row]``: the distance of the record to the anchor (not squared).
    order : ndarray of int64, shape (n,)
        Records, group by group: group g (g attributes present) is order[start[g]:start[g+1]],
        farthest from the anchor first; group 0 by row number.
    start : ndarray of int64, shape (p + 2,)
        Where each group begins.
    head : ndarray of int64, shape (p + 1,)
        Entries of group g before ``head[g]`` are all clustered.
    scanned : ndarray of int64, shape (1,)
        Records read by queries since the last sort.
    """

    anchor: np.ndarray
    rho: np.ndarray
    order: np.ndarray
    start: np.ndarray
    head: np.ndarray
    scanned: np.ndarray


def missing_order(anchor: np.ndarray, n: int) -> MissingOrder:
    """Room for the order of n records around ``anchor`` (kept, not copied), to be filled by
    :func:`missing_reanchor`."""
    p = anchor.shape[0]
    return MissingOrder(anchor, np.empty(n), np.empty(n, dtype=np.int64),
                        np.zeros(p + 2, dtype=np.int64), np.zeros(p + 1, dtype=np.int64),
                        np.zeros(1, dtype=np.int64))


@numba.njit(cache=True)
def missing_reanchor(rows, concepts, S, live, counts, sweep):
    """Group the ``live`` records (the remaining ones, with counts[t] attributes present for
    live[t]) by attributes present and sort each group by decreasing distance to the anchor;
    ``rows`` (n x p, NaN missing) and the empty ``concepts`` and ``S`` as in
    :func:`._missing.missing_distance`."""
    p = rows.shape[1]
    m = live.shape[0]
    qc = np.empty(0, dtype=np.int64)
    sizes = np.zeros(p + 1, dtype=np.int64)
    keys = np.empty(m)
    for t in range(m):
        row = live[t]
        sizes[counts[t]] += 1
        if counts[t] > 0:
            sweep.rho[row] = np.sqrt(missing_distance(rows, concepts, S, row, sweep.anchor, qc))
            keys[t] = -sweep.rho[row]
        else:
            sweep.rho[row] = np.inf
            keys[t] = row
    sweep.start[0] = 0
    for g in range(p + 1):
        sweep.start[g + 1] = sweep.start[g] + sizes[g]
        sweep.head[g] = sweep.start[g]
    # Equal keys may come in any order: a scan evaluates every record that could tie.
    fill = sweep.start[:p + 1].copy()
    for t in np.argsort(keys):
        g = counts[t]
        sweep.order[fill[g]] = live[t]
        fill[g] += 1
    sweep.scanned[0] = 0


@numba.njit(cache=True)
def missing_farthest(rows, concepts, S, labels, sweep, c):
    """The remaining record (label < 0) farthest from the centroid c (ties: lowest row),
    group by group, each scan stopped by the bound of the module docstring. Exact: every
    record that could tie or win is evaluated with :func:`._missing.missing_distance`."""
    p = rows.shape[1]
    order, rho, start, head = sweep.order, sweep.rho, sweep.start, sweep.head
    qc = np.empty(0, dtype=np.int64)
    for g in range(p + 1):
        h = head[g]
        while h < start[g + 1] and labels[order[h]] >= 0:
            h += 1
        head[g] = h
    if head[0] < start[1]:  # a record with no attribute: +inf from every point
        return order[head[0]]
    shift = 0.0
    for j in range(p):
        diff = c[j] - sweep.anchor[j]
        if not np.isnan(diff):
            shift += diff * diff
    shift = np.sqrt(shift)
    best = -1
    best_d = -1.0
    for g in range(p, 0, -1):
        extra = np.sqrt(p / g) * shift
        for at in range(head[g], start[g + 1]):
            row = order[at]
            if labels[row] >= 0:
                continue
            if best >= 0:
                bound = rho[row] + extra
                if bound * bound * _BOUND_SLACK < best_d:
                    break
            sweep.scanned[0] += 1
            total = missing_distance(rows, concepts, S, row, c, qc)
            if best < 0 or farther(total, row, best_d, best):
                best = row
                best_d = total
    return best


@numba.njit(cache=True)
def move_missing_anchor(sweep, m, c):
    """When the queries since the last sort have read more than an eighth of the m
    remaining records, move the anchor to the centroid c and say so (the caller then calls
    :func:`missing_reanchor`)."""
    if sweep.scanned[0] <= m // 8 + 64:
        return False
    for j in range(c.shape[0]):
        sweep.anchor[j] = c[j]
    return True
