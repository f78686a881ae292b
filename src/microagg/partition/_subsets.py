"""The subsets of t-closeness-first (002 Alg. 3) as blocks of nearby records.

Alg. 3 cuts the records into k subsets by confidential rank; every cluster takes from each
subset the record nearest its seed, and the next seed is the record farthest from the first
one. Each subset is stored here (:class:`Subsets`) as blocks of at most ``block_rows`` records
cut by recursive median splits along the widest numeric quasi-identifier (k-d order), so that
the records of a block lie close together. Values are kept column-major with their 8-bit codes
on one grid per subset (the "coded passes" of :mod:`._coded`), and every block keeps the box
of its codes, so that the queries of :mod:`._subset_search` (re-exported here) read only the
blocks that can hold an answer.

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

from microagg.partition._coded import code_columns, code_error_bound, grid_step
from microagg.partition._distances import BLOCK
from microagg.partition._kdtree import _select
from microagg.partition._kernels import remove_row
from microagg.partition._subset_blocks import GRID, Subsets
from microagg.partition._subset_search import (
    CANDIDATES,
    SubsetWork,
    farthest,
    nearest,
    nearest_each,
    thread_work,
    work_buffers,
)

__all__ = ["BLOCK_ROWS", "CANDIDATES", "GRID", "SubsetWork", "Subsets", "build", "farthest",
           "live_rows", "nearest", "nearest_each", "rebuild", "recode", "remove",
           "thread_work", "work_buffers"]

# Records per block (at most _distances.BLOCK, the length of a pass's distance buffer). Read
# at run time: tests lower it to exercise many blocks on small data.
BLOCK_ROWS = 256


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
          size: int, block_rows: int | None = None) -> Subsets:
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
    sets = Subsets(values=Y, codes=np.zeros((size, d, cap), dtype=np.uint8), row_of=idx,
                   column_of=pos, concept_columns=C, low=np.zeros((size, d)),
                   grid=np.ones(size, dtype=GRID), fill=fill,
                   box_lo=np.zeros((size, d, blocks), dtype=np.int32),
                   box_hi=np.zeros((size, d, blocks), dtype=np.int32),
                   live=np.bincount(subset, minlength=size).astype(np.int64),
                   width=np.int64(block_rows))
    recode(sets)
    return sets


def rebuild(X: np.ndarray, concepts: np.ndarray, sets: Subsets) -> Subsets:
    """The live records of ``sets`` laid out afresh: full blocks, grid and boxes refitted."""
    idx, fill, width = sets.row_of, sets.fill, int(sets.width)
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
    Y, codes, low, fill, width = sets.values, sets.codes, sets.low, sets.fill, sets.width
    box_lo, box_hi = sets.box_lo, sets.box_hi
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
        sets.grid[g].step = step
        sets.grid[g].delta = code_error_bound(worst)


@numba.njit(cache=True)
def remove(sets, g, row):
    """Take ``row`` out of subset g; its block's box shrinks if the row lay on a face."""
    codes, fill, box_lo, box_hi, width = (sets.codes, sets.fill, sets.box_lo, sets.box_hi,
                                          sets.width)
    p = sets.column_of[row]
    b = p // width
    face = False
    for j in range(codes.shape[1]):
        code = np.int32(codes[g, j, p])
        if code == box_lo[g, j, b] or code == box_hi[g, j, b]:
            face = True
            break
    remove_row(sets.values[g], codes[g], sets.concept_columns[g], sets.row_of[g],
               sets.column_of, b * width + fill[g, b], row)
    fill[g, b] -= 1
    sets.live[g] -= 1
    if face:
        _refit_box(codes, box_lo, box_hi, g, b, b * width, b * width + fill[g, b])


@numba.njit(cache=True)
def live_rows(sets):
    """The rows still in some subset."""
    idx, fill, live, width = sets.row_of, sets.fill, sets.live, sets.width
    out = np.empty(live.sum(), dtype=np.int64)
    at = 0
    for g in range(fill.shape[0]):
        for b in range(fill.shape[1]):
            start = b * width
            out[at:at + fill[g, b]] = idx[g, start:start + fill[g, b]]
            at += fill[g, b]
    return out


