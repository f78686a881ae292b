"""The subsets of t-closeness-first (002 Alg. 3) as blocks of nearby records, for exact
nearest- and farthest-record queries that read few of them.

Alg. 3 cuts the records into k subsets by confidential rank; every cluster takes from each
subset the record nearest its seed, and the next seed is the record farthest from the first
one. Each subset is stored here as blocks of at most ``block_rows`` records cut by recursive
median splits along the widest numeric quasi-identifier (k-d order), so that the records of a
block lie close together. Values are kept column-major with their 8-bit codes on one grid per
subset (the "coded passes" of :mod:`._kernels`), and every block keeps the box of its codes.
A query codes its point, bounds per block the coded squared distance to any code of the box,
and reads only the blocks that can hold a candidate for the nearest record (the box's least
distance within the running limit) or for the farthest one (its greatest distance reaching
the running largest lower bound). Inside a block the coded pass and the exact ranking of the
candidates are those of :func:`._kernels.query`, so the answers are exact: the nearest by
(squared distance, row), the farthest by (squared distance, lowest row). With categorical
quasi-identifiers (no codes) every live record is read with exact distances.

The farthest record is sought over all subsets at once with one running bound, so that the
subsets read after the first are pruned by the greatest distance found anywhere.

A removed record's column in its block is taken by the block's last live record, so the live
records of block b are its first ``fill[b]`` columns, and a box whose face the record touched
shrinks to the records left. Each time a fifth of the remaining records has been clustered
the grid and the boxes are refitted to the live records; when half of the records of the last
layout have gone, the live records are laid out afresh in full blocks (a layout costs as much
as 12 refits).
"""

from __future__ import annotations

import numba
import numpy as np

from microagg.partition._kdtree import _select
from microagg.partition._kernels import (
    BLOCK,
    block_distances,
    code_columns,
    code_error_bound,
    code_query,
    coded_block,
    coded_bounds,
    exact_distance,
    far_limit_code,
    farther,
    grid_step,
    near_limit_code,
    remove_row,
)

# Records per block (at most _kernels.BLOCK, the length of a pass's distance buffer). Read
# at run time: tests lower it to exercise many blocks on small data.
BLOCK_ROWS = 256
# Relative slack of a square root of an exact squared distance summed in float64, as a bound
# of the real distance (far wider than its rounding).
_EXACT_SLACK = 1e-12
# Candidates a query may keep for the nearest and for the farthest record before it falls
# back to reading every live record with exact distances (massive ties in the codes).
CANDIDATES = 4096


@numba.njit(cache=True)
def _layout(X, rows, subset, size, block_rows):
    """(order, subset_of, column): ``rows`` grouped by their ``subset``, each subset in k-d
    order (median splits by position, ties by row, along the widest numeric attribute, down
    to leaves of at most ``block_rows``), and for each the subset and column it takes: leaf i
    of a subset fills columns i * block_rows onwards."""
    n = rows.shape[0]
    first = np.zeros(size + 1, dtype=np.int64)
    for i in range(n):
        first[subset[i] + 1] += 1
    for g in range(size):
        first[g + 1] += first[g]
    order = np.empty(n, dtype=np.int64)
    fill = first[:size].copy()
    for i in range(n):
        order[fill[subset[i]]] = rows[i]
        fill[subset[i]] += 1
    subset_of = np.empty(n, dtype=np.int64)
    column = np.empty(n, dtype=np.int64)
    keys = np.empty(X.shape[0])
    stack = np.empty((2 * 64 + 2, 2), dtype=np.int64)
    for g in range(size):
        leaf = 0
        stack[0, 0] = first[g]
        stack[0, 1] = first[g + 1]
        top = 1
        while top > 0:
            top -= 1
            s = stack[top, 0]
            e = stack[top, 1]
            if e - s <= block_rows:
                for i in range(s, e):
                    subset_of[i] = g
                    column[i] = leaf * block_rows + i - s
                leaf += 1
                continue
            axis = -1
            spread = -1.0
            for j in range(X.shape[1]):
                lo = np.inf
                hi = -np.inf
                for i in range(s, e):
                    lo = min(lo, X[order[i], j])
                    hi = max(hi, X[order[i], j])
                if hi - lo > spread:
                    spread = hi - lo
                    axis = j
            for i in range(s, e):
                keys[order[i]] = X[order[i], axis] if axis >= 0 else 0.0
            middle = s + (e - s) // 2
            _select(order, keys, s, e, middle)
            # the right half waits below the left one: leaves come out left to right
            stack[top, 0] = middle
            stack[top, 1] = e
            stack[top + 1, 0] = s
            stack[top + 1, 1] = middle
            top += 2
    return order, subset_of, column


def build(X: np.ndarray, concepts: np.ndarray, rows: np.ndarray, subset: np.ndarray,
          size: int, block_rows: int | None = None) -> tuple:
    """Subsets 0..size-1 of the rows ``rows`` of X (``subset`` per row) as coded blocks."""
    block_rows = BLOCK_ROWS if block_rows is None else block_rows
    if not 1 <= block_rows <= BLOCK:
        raise ValueError(f"block_rows must lie in 1..{BLOCK}")
    n, d = X.shape
    order, subset_of, column = _layout(X, rows, subset, size, block_rows)
    blocks = int(column.max()) // block_rows + 1 if order.size else 1
    cap = blocks * block_rows
    Y = np.zeros((size, d, cap))
    Y[subset_of, :, column] = X[order]
    C = np.zeros((size, concepts.shape[1], cap), dtype=np.int64)
    C[subset_of, :, column] = concepts[order]
    idx = np.full((size, cap), -1, dtype=np.int64)
    idx[subset_of, column] = order
    pos = np.full(n, -1, dtype=np.int64)
    pos[order] = column
    fill = np.bincount(subset_of * blocks + column // block_rows,
                       minlength=size * blocks).reshape(size, blocks).astype(np.int64)
    sets = (Y, np.zeros((size, d, cap), dtype=np.uint8), idx, pos, C, np.zeros((size, d)),
            np.ones((size, 2)), fill, np.zeros((size, d, blocks), dtype=np.int32),
            np.zeros((size, d, blocks), dtype=np.int32),
            np.bincount(subset, minlength=size).astype(np.int64), np.int64(block_rows))
    recode(sets)
    return sets


def rebuild(X: np.ndarray, concepts: np.ndarray, sets: tuple) -> tuple:
    """The live records of ``sets`` laid out afresh: full blocks, grid and boxes refitted."""
    idx, fill, width = sets[2], sets[7], int(sets[11])
    size, blocks = fill.shape
    live = np.arange(width)[None, None, :] < fill[:, :, None]  # (size, blocks, width)
    columns = idx.reshape(size, blocks, width)
    rows = columns[live]
    subset = np.broadcast_to(np.arange(size)[:, None, None], live.shape)[live]
    return build(X, concepts, rows, subset, size, width)


@numba.njit(cache=True)
def _refit_box(codes, box_lo, box_hi, g, b, start, stop):
    """The box of block b of subset g: least and greatest code of its live records."""
    for j in range(codes.shape[1]):
        lo = 255
        hi = 0
        for p in range(start, stop):
            lo = min(lo, np.int32(codes[g, j, p]))
            hi = max(hi, np.int32(codes[g, j, p]))
        box_lo[g, j, b] = lo
        box_hi[g, j, b] = hi


@numba.njit(cache=True)
def recode(sets):
    """Code the live records of every subset on a grid fitted to them; refit the boxes."""
    Y, codes, _, _, _, low, params, fill, box_lo, box_hi, _, width = sets
    d = Y.shape[1]
    high = np.empty(d)
    for g in range(Y.shape[0]):
        for j in range(d):
            low[g, j] = np.inf
            high[j] = -np.inf
        for b in range(fill.shape[1]):
            for j in range(d):
                for p in range(b * width, b * width + fill[g, b]):
                    low[g, j] = min(low[g, j], Y[g, j, p])
                    high[j] = max(high[j], Y[g, j, p])
        for j in range(d):
            if high[j] < low[g, j]:  # an empty subset
                low[g, j] = 0.0
                high[j] = 0.0
        step = grid_step(low[g], high)
        worst = 0.0
        for b in range(fill.shape[1]):
            start = b * width
            stop = start + fill[g, b]
            worst = max(worst, code_columns(Y[g], start, stop, low[g], step, codes[g]))
            _refit_box(codes, box_lo, box_hi, g, b, start, stop)
        params[g, 0] = step
        params[g, 1] = code_error_bound(worst)


@numba.njit(cache=True)
def remove(sets, g, row):
    """Take ``row`` out of subset g; its block's box shrinks if the row lay on a face."""
    Y, codes, idx, pos, C, _, _, fill, box_lo, box_hi, live, width = sets
    p = pos[row]
    b = p // width
    face = False
    for j in range(codes.shape[1]):
        code = np.int32(codes[g, j, p])
        if code == box_lo[g, j, b] or code == box_hi[g, j, b]:
            face = True
            break
    remove_row(Y[g], codes[g], C[g], idx[g], pos, b * width + fill[g, b], row)
    fill[g, b] -= 1
    live[g] -= 1
    if face:
        _refit_box(codes, box_lo, box_hi, g, b, b * width, b * width + fill[g, b])


@numba.njit(cache=True)
def live_rows(sets):
    """The rows still in some subset."""
    idx, fill, live, width = sets[2], sets[7], sets[10], sets[11]
    out = np.empty(live.sum(), dtype=np.int64)
    at = 0
    for g in range(fill.shape[0]):
        for b in range(fill.shape[1]):
            start = b * width
            out[at:at + fill[g, b]] = idx[g, start:start + fill[g, b]]
            at += fill[g, b]
    return out


@numba.njit(cache=True)
def _box_codes(box_lo, box_hi, g, cq, greatest, out):
    """out[b]: the least (or, if ``greatest``, the greatest) coded squared distance from cq
    to any code in the box of block b of subset g. Attribute by attribute over all blocks, so
    that it vectorizes; int32 holds it, as :func:`._kernels.code_query` refuses points whose
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


def work_buffers(sets: tuple, threads: int = 1) -> tuple:
    """The scratch arrays of :func:`nearest` (one thread's slice) and of
    :func:`nearest_each` and :func:`farthest` (one slice per thread) for ``sets``."""
    blocks, d = sets[7].shape[1], sets[0].shape[1]
    return (np.empty((threads, CANDIDATES), dtype=np.int64), np.empty((threads, CANDIDATES)),
            np.empty((threads, blocks), dtype=np.int32), np.empty((threads, BLOCK), dtype=np.int32),
            np.empty((threads, d), dtype=np.int32), np.empty((threads, BLOCK)))


@numba.njit(cache=True)
def _exact(X, concepts, S, sets, first, last, q, qc, far, buffer):
    """The live record of subsets first..last-1 nearest to (q, qc) (or, if ``far``, the
    farthest), by exact distances, every one read."""
    Y, _, idx, _, C, _, _, fill, _, _, _, width = sets
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
    Y, codes, idx, _, C, low, params, fill, box_lo, box_hi, live, width = sets
    found, found_bound, least, coded, cq, buffer = work
    if live[g] == 0:
        return -1
    if C.shape[1] or Y.shape[1] == 0:
        return _exact(X, concepts, S, sets, g, g + 1, q, qc, False, buffer)
    step = params[g, 0]
    slack = code_query(q, low[g], step, cq)
    if slack < 0.0:
        return _exact(X, concepts, S, sets, g, g + 1, q, qc, False, buffer)
    slack += params[g, 1]
    _box_codes(box_lo, box_hi, g, cq, False, least)
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
    Y, codes, idx, _, C, low, params, fill, box_lo, box_hi, live, width = sets
    found, found_bound, greatest, coded, cq, buffer = work
    if live[first_g:last_g].sum() == 0:
        return -1
    if C.shape[1] or Y.shape[1] == 0:
        return _exact(X, concepts, S, sets, first_g, last_g, q, qc, True, buffer)
    lmax = -np.inf
    count = 0
    for g in range(first_g, last_g):
        if live[g] == 0:
            continue
        step = params[g, 0]
        slack = code_query(q, low[g], step, cq)
        if slack < 0.0:
            return _exact(X, concepts, S, sets, first_g, last_g, q, qc, True, buffer)
        slack += params[g, 1]
        far_code = far_limit_code(lmax, step, slack)
        _box_codes(box_lo, box_hi, g, cq, True, greatest)
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
    size = sets[7].shape[0]
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
        return _farthest_in(X, concepts, S, sets, 0, sets[7].shape[0], q, qc,
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
    found, found_bound, bounds, coded, cq, buffer = works
    return (found[thread], found_bound[thread], bounds[thread], coded[thread], cq[thread],
            buffer[thread])


@numba.njit(cache=True, inline="always")
def _thread_work(works):
    """The scratch arrays of the calling thread."""
    return thread_work(works, numba.get_thread_id())
