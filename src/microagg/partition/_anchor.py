"""Farthest-row queries over rows sorted by their distance to an anchor.

MDAV and t-closeness-first repeatedly need the remaining row farthest from the centroid.
The rows are sorted once by decreasing distance rho to an anchor point; a query reads them in
that order and stops when no row further down can beat the best squared distance found, since
d(x, c) <= rho(x) + d(anchor, c) (eq. 8 distances are metrics). When the queries since the
last sort have read more than an eighth of the remaining rows, the anchor moves to the current
centroid and the rows are sorted afresh.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from microagg.partition._distances import exact_distance, farther

# The stopping bound is inflated by this factor to cover the rounding of the computed
# distances.
_BOUND_SLACK = 1.0 + 1e-10


class AnchorOrder(NamedTuple):
    """The rows sorted by decreasing distance to an anchor, and how far queries read them.

    Attributes
    ----------
    anchor : ndarray of float64, shape (d,)
        The anchor's numeric coordinates.
    anchor_c : ndarray of int64, shape (q,)
        Its concepts.
    rho : ndarray of float64, shape (n,)
        ``rho[row]``: the distance of the row to the anchor (not squared).
    order : ndarray of int64, shape (n,)
        Rows, farthest from the anchor first; the first ``length[0]`` entries are set.
    head : ndarray of int64, shape (1,)
        Entries of ``order`` before ``head[0]`` are all clustered.
    length : ndarray of int64, shape (1,)
        How many rows ``order`` lists.
    scanned : ndarray of int64, shape (1,)
        Rows read by queries since the last sort.
    """

    anchor: np.ndarray
    anchor_c: np.ndarray
    rho: np.ndarray
    order: np.ndarray
    head: np.ndarray
    length: np.ndarray
    scanned: np.ndarray


def anchor_order(anchor: np.ndarray, anchor_c: np.ndarray, n: int) -> AnchorOrder:
    """Room for the order of n rows around the anchor (anchor, anchor_c), not yet sorted.

    Parameters
    ----------
    anchor, anchor_c : ndarray
        The anchor's numeric coordinates and concepts (kept, not copied).
    n : int
        The number of rows.

    Returns
    -------
    AnchorOrder
        To be filled by :func:`reanchor`.
    """
    return AnchorOrder(anchor, anchor_c, np.empty(n), np.empty(n, dtype=np.int64),
                       np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                       np.zeros(1, dtype=np.int64))


@numba.njit(cache=True)
def reanchor(rows, concepts, S, live, sweep):
    """Sort the ``live`` rows (the remaining ones) by decreasing distance to the anchor of
    the :class:`AnchorOrder` ``sweep``; ``rows``, ``concepts`` and ``S`` as in
    :func:`._distances.exact_distance`."""
    m = live.shape[0]
    keys = np.empty(m)
    for p in range(m):
        row = live[p]
        sweep.rho[row] = np.sqrt(exact_distance(rows, concepts, S, row, sweep.anchor,
                                                sweep.anchor_c))
        keys[p] = -sweep.rho[row]
    perm = np.argsort(keys)
    for p in range(m):
        sweep.order[p] = live[perm[p]]
    sweep.head[0] = 0
    sweep.length[0] = m
    sweep.scanned[0] = 0


@numba.njit(cache=True)
def farthest_from(rows, concepts, S, labels, sweep, c, cc):
    """The remaining row (label < 0) farthest from the point (c, cc) (ties: lowest row),
    scanning rows by decreasing distance to the anchor and stopping by the triangle
    inequality. Exact: every row that could tie or win is evaluated with the same
    squared-distance sum as the passes."""
    anchor, anchor_c, rho, order = sweep.anchor, sweep.anchor_c, sweep.rho, sweep.order
    shift = 0.0
    for j in range(c.shape[0]):
        diff = c[j] - anchor[j]
        shift += diff * diff
    for j in range(cc.shape[0]):
        shift += S[j, anchor_c[j], cc[j]]
    shift = np.sqrt(shift)
    head = sweep.head[0]
    length = sweep.length[0]
    while head < length and labels[order[head]] >= 0:
        head += 1
    sweep.head[0] = head
    best = -1
    best_d = -1.0
    for p in range(head, length):
        row = order[p]
        if labels[row] >= 0:
            continue
        if best >= 0:
            bound = rho[row] + shift
            if bound * bound * _BOUND_SLACK < best_d:
                break
        sweep.scanned[0] += 1
        total = exact_distance(rows, concepts, S, row, c, cc)
        if best < 0 or farther(total, row, best_d, best):
            best = row
            best_d = total
    return best


@numba.njit(cache=True)
def move_anchor(sweep, m, c, cc):
    """When the queries since the last sort have read more than an eighth of the m
    remaining rows, move the anchor to the point (c, cc) and say so (the caller then calls
    :func:`reanchor`)."""
    if sweep.scanned[0] <= m // 8 + 64:
        return False
    for j in range(c.shape[0]):
        sweep.anchor[j] = c[j]
    for j in range(cc.shape[0]):
        sweep.anchor_c[j] = cc[j]
    return True
