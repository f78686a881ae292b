"""Exact nearest- and farthest-record queries over the subsets of t-closeness-first
(:class:`._subset_blocks.Subsets`), reading few of their blocks.

A query codes its point on a subset's grid, bounds per block the coded squared distance to any
code of the block's box, and reads only the blocks that can hold a candidate for the nearest
record (the box's least distance within the running limit) or for the farthest one (its
greatest distance reaching the running largest lower bound). Inside a block the coded pass
and the exact ranking of the candidates are those of :func:`._kernels.query` (bounds from
:mod:`._coded`), so the answers are exact: the nearest by (squared distance, row), the
farthest by (squared distance, lowest row). With categorical quasi-identifiers (no codes)
every live record is read with exact distances.

The farthest record is sought over all subsets at once with one running bound, so that the
subsets read after the first are pruned by the greatest distance found anywhere.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from microagg.partition._coded import (
    code_query,
    coded_block,
    coded_bounds,
    far_limit_code,
    near_limit_code,
)
from microagg.partition._distances import BLOCK, block_distances, exact_distance, farther
from microagg.partition._subset_blocks import Subsets

# Relative slack of a square root of an exact squared distance summed in float64, as a bound
# of the real distance (far wider than its rounding).
_EXACT_SLACK = 1e-12
# Candidates a query may keep for the nearest and for the farthest record before it falls
# back to reading every live record with exact distances (massive ties in the codes).
CANDIDATES = 4096


class SubsetWork(NamedTuple):
    """Scratch arrays of the subset queries (:func:`work_buffers`): one row per thread, or
    one thread's rows (:func:`thread_work`).

    Attributes
    ----------
    found : ndarray of int64, shape ([threads,] CANDIDATES)
        Candidate records.
    found_bound : ndarray of float64, shape ([threads,] CANDIDATES)
        The bound that made each a candidate.
    bounds : ndarray of int32, shape ([threads,] blocks)
        Per block, the least or greatest coded squared distance of its box.
    coded : ndarray of int32, shape ([threads,] BLOCK)
        Coded squared distances of one block's records.
    cq : ndarray of int32, shape ([threads,] d)
        The coded query point.
    buffer : ndarray of float64, shape ([threads,] BLOCK)
        Exact distances of one block's records.
    """

    found: np.ndarray
    found_bound: np.ndarray
    bounds: np.ndarray
    coded: np.ndarray
    cq: np.ndarray
    buffer: np.ndarray


@numba.njit(cache=True)
def _box_codes(box_lo, box_hi, g, cq, greatest, out):
    """out[b]: the least (or, if ``greatest``, the greatest) coded squared distance from cq
    to any code in the box of block b of subset g. Attribute by attribute over all blocks, so
    that it vectorizes; int32 holds it, as :func:`._coded.code_query` refuses points whose
    coded distances could overflow."""
    out[:] = 0
    for j in range(cq.shape[0]):
        qj = cq[j]
        lows = box_lo[g, j]
        highs = box_hi[g, j]
        if greatest:
            for b in range(out.shape[0]):
                reach = max(abs(lows[b] - qj), abs(qj - highs[b]))
                out[b] += reach * reach
        else:
            for b in range(out.shape[0]):
                gap = max(lows[b] - qj, qj - highs[b], 0)
                out[b] += gap * gap


def work_buffers(sets: Subsets, threads: int = 1) -> SubsetWork:
    """The scratch arrays of :func:`nearest` (one thread's slice) and of
    :func:`nearest_each` and :func:`farthest` (one slice per thread) for ``sets``."""
    blocks, d = sets.fill.shape[1], sets.values.shape[1]
    return SubsetWork(found=np.empty((threads, CANDIDATES), dtype=np.int64),
                      found_bound=np.empty((threads, CANDIDATES)),
                      bounds=np.empty((threads, blocks), dtype=np.int32),
                      coded=np.empty((threads, BLOCK), dtype=np.int32),
                      cq=np.empty((threads, d), dtype=np.int32),
                      buffer=np.empty((threads, BLOCK)))


@numba.njit(cache=True)
def _exact(X, concepts, S, sets, first, last, q, qc, far, buffer):
    """The live record of subsets first..last-1 nearest to (q, qc) (or, if ``far``, the
    farthest), by exact distances, every one read."""
    Y, idx, C, fill, width = sets.values, sets.row_of, sets.concept_columns, sets.fill, sets.width
    best = -1
    best_d = -1.0 if far else np.inf
    for g in range(first, last):
        for b in range(fill.shape[1]):
            start = b * width
            block_distances(Y[g], C[g], S, q, qc, start, fill[g, b], buffer)
            for t in range(fill[g, b]):
                row = idx[g, start + t]
                dist = buffer[t]
                if far:
                    better = best < 0 or farther(dist, row, best_d, best)
                else:
                    better = dist < best_d or (dist == best_d and row < best)
                if better:
                    best = row
                    best_d = dist
    return best


@numba.njit(cache=True)
def nearest(X, concepts, S, sets, g, q, qc, work):
    """The live record of subset g nearest to the point (q, qc), least by (squared distance,
    row); -1 if the subset is empty. ``work`` from :func:`work_buffers`.

    The block whose box is nearest is read first; then every block whose box may hold a
    record within the least upper bound of a distance seen so far."""
    codes, idx, fill, width = sets.codes, sets.row_of, sets.fill, sets.width
    found, found_bound, least, coded, cq, buffer = (work.found, work.found_bound, work.bounds,
                                                    work.coded, work.cq, work.buffer)
    if sets.live[g] == 0:
        return -1
    if sets.concept_columns.shape[1] or sets.values.shape[1] == 0:
        return _exact(X, concepts, S, sets, g, g + 1, q, qc, False, buffer)
    step = sets.grid[g].step
    slack = code_query(q, sets.low[g], step, cq)
    if slack < 0.0:
        return _exact(X, concepts, S, sets, g, g + 1, q, qc, False, buffer)
    slack += sets.grid[g].delta
    _box_codes(sets.box_lo, sets.box_hi, g, cq, False, least)
    first = -1
    for b in range(fill.shape[1]):
        if fill[g, b] and (first < 0 or least[b] < least[first]):
            first = b
    limit = np.inf
    near_code = np.inf
    count = 0
    for visit in range(-1, fill.shape[1]):
        b = first if visit < 0 else visit
        if visit >= 0 and (b == first or fill[g, b] == 0 or least[b] > near_code):
            continue
        start = b * width
        length = fill[g, b]
        block_least, _ = coded_block(codes[g], cq, start, length, coded)
        if block_least > near_code:
            continue
        for t in range(length):
            if coded[t] > near_code:
                continue
            lo, up = coded_bounds(coded[t], step, slack)
            if up < limit:  # a nearer record: its exact distance bounds the nearest's
                exact = np.sqrt(exact_distance(X, concepts, S, idx[g, start + t], q, qc))
                exact *= 1.0 + _EXACT_SLACK
                limit = min(up, exact)
                near_code = near_limit_code(limit, step, slack)
            if lo <= limit:
                if count == found.shape[0]:
                    return _exact(X, concepts, S, sets, g, g + 1, q, qc, False, buffer)
                found[count] = idx[g, start + t]
                found_bound[count] = lo
                count += 1
    best = -1
    best_d = np.inf
    for i in range(count):
        if found_bound[i] > limit:  # a candidate only before the bound tightened
            continue
        row = found[i]
        dist = exact_distance(X, concepts, S, row, q, qc)
        if dist < best_d or (dist == best_d and row < best):
            best = row
            best_d = dist
    return best


@numba.njit(cache=True)
def _farthest_in(X, concepts, S, sets, first_g, last_g, q, qc, work):
    """The live record of subsets first_g..last_g-1 farthest from the point (q, qc); -1 if
    none is left. One running lower bound of the greatest distance serves every subset: in
    each subset the block whose box reaches farthest is read first, then every block whose
    box may hold a record beyond the bound."""
    codes, idx, fill, width, live = sets.codes, sets.row_of, sets.fill, sets.width, sets.live
    found, found_bound, greatest, coded, cq, buffer = (work.found, work.found_bound,
                                                       work.bounds, work.coded, work.cq,
                                                       work.buffer)
    if live[first_g:last_g].sum() == 0:
        return -1
    if sets.concept_columns.shape[1] or sets.values.shape[1] == 0:
        return _exact(X, concepts, S, sets, first_g, last_g, q, qc, True, buffer)
    lmax = -np.inf
    count = 0
    for g in range(first_g, last_g):
        if live[g] == 0:
            continue
        step = sets.grid[g].step
        slack = code_query(q, sets.low[g], step, cq)
        if slack < 0.0:
            return _exact(X, concepts, S, sets, first_g, last_g, q, qc, True, buffer)
        slack += sets.grid[g].delta
        far_code = far_limit_code(lmax, step, slack)
        _box_codes(sets.box_lo, sets.box_hi, g, cq, True, greatest)
        first = -1
        for b in range(fill.shape[1]):
            if fill[g, b] and (first < 0 or greatest[b] > greatest[first]):
                first = b
        for visit in range(-1, fill.shape[1]):
            b = first if visit < 0 else visit
            if visit >= 0 and (b == first or fill[g, b] == 0 or greatest[b] < far_code):
                continue
            start = b * width
            length = fill[g, b]
            _, block_greatest = coded_block(codes[g], cq, start, length, coded)
            if block_greatest < far_code:
                continue
            for t in range(length):
                if coded[t] < far_code:
                    continue
                lo, up = coded_bounds(coded[t], step, slack)
                if lo > lmax:  # a farther record: its exact distance bounds the farthest's
                    exact = np.sqrt(exact_distance(X, concepts, S, idx[g, start + t], q, qc))
                    exact *= 1.0 - _EXACT_SLACK
                    lmax = max(lo, exact)
                    far_code = far_limit_code(lmax, step, slack)
                if up >= lmax:
                    if count == found.shape[0]:
                        return _exact(X, concepts, S, sets, first_g, last_g, q, qc, True,
                                      buffer)
                    found[count] = idx[g, start + t]
                    found_bound[count] = up
                    count += 1
    best = -1
    best_d = -1.0
    for i in range(count):
        if found_bound[i] < lmax:  # a candidate only before the bound tightened
            continue
        row = found[i]
        dist = exact_distance(X, concepts, S, row, q, qc)
        if best < 0 or farther(dist, row, best_d, best):
            best = row
            best_d = dist
    return best


@numba.njit(cache=True, parallel=True)
def _farthest_split(X, concepts, S, sets, q, qc, works, best):
    size = sets.fill.shape[0]
    half = (size + 1) // 2
    for part in numba.prange(2):
        work = _thread_work(works)
        best[part] = _farthest_in(X, concepts, S, sets, part * half, min(size, half + part * half),
                                  q, qc, work)


@numba.njit(cache=True)
def farthest(X, concepts, S, sets, q, qc, works, split):
    """The live record of all subsets farthest from the point (q, qc), greatest by squared
    distance and then least by row; -1 if none is left. ``works`` from
    :func:`work_buffers`; with ``split`` the two halves of the subsets are searched by two
    threads."""
    if not split:
        return _farthest_in(X, concepts, S, sets, 0, sets.fill.shape[0], q, qc,
                            thread_work(works, 0))
    best = np.empty(2, dtype=np.int64)
    _farthest_split(X, concepts, S, sets, q, qc, works, best)
    if best[0] < 0 or best[1] < 0:
        return max(best[0], best[1])
    d0 = exact_distance(X, concepts, S, best[0], q, qc)
    d1 = exact_distance(X, concepts, S, best[1], q, qc)
    return best[0] if farther(d0, best[0], d1, best[1]) else best[1]


@numba.njit(cache=True, parallel=True)
def _nearest_split(X, concepts, S, sets, q, qc, works, out):
    for g in numba.prange(out.shape[0]):
        out[g] = nearest(X, concepts, S, sets, g, q, qc, _thread_work(works))


@numba.njit(cache=True)
def nearest_each(X, concepts, S, sets, q, qc, works, split, out):
    """out[g] = :func:`nearest` in every subset g; with ``split`` the subsets are shared
    between the threads."""
    if split:
        _nearest_split(X, concepts, S, sets, q, qc, works, out)
    else:
        for g in range(out.shape[0]):
            out[g] = nearest(X, concepts, S, sets, g, q, qc, thread_work(works, 0))


@numba.njit(cache=True, inline="always")
def thread_work(works, thread):
    """The scratch arrays of thread ``thread`` in ``works``."""
    return SubsetWork(works.found[thread], works.found_bound[thread], works.bounds[thread],
                      works.coded[thread], works.cq[thread], works.buffer[thread])


@numba.njit(cache=True, inline="always")
def _thread_work(works):
    """The scratch arrays of the calling thread."""
    return thread_work(works, numba.get_thread_id())
