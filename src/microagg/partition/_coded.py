"""Coded passes: exact nearest and farthest candidates from 8-bit codes.

A pass over float64 rows streams 8 bytes per value; at 10^6 rows that is memory-bound. The
coded passes stream one byte per value instead. Every attribute is coded on one common grid,
x^ = low + c * step with c in 0..255, and the query q is coded the same way. Then
||x^ - q^|| = step * sqrt(D) with D = sum_j (c_j - cq_j)^2 an exact integer, and by the
triangle inequality ||x - q|| lies within delta + delta_q of it, where delta bounds
||x - x^|| over all rows and delta_q = ||q - q^||. Each chunk keeps every row whose interval
could place it among the ``near`` nearest (its lower bound does not exceed the current near-th
smallest upper bound) or make it the farthest (its upper bound reaches the current largest
lower bound). Running thresholds only tighten, so these are supersets of the answers; the
candidates are then ranked with exact float64 distances and the usual tie rules
(:func:`microagg.partition._kernels.query`). A chunk whose candidate buffer overflows
(massive ties in the codes) reports it, and the caller falls back to the exact float64 pass.
The bounds are monotone in D, so whole blocks are skipped by comparing their smallest and
largest D with the thresholds translated to D.

The subsets of t-closeness-first (:mod:`._subsets`) use the same grid, codes and bounds.
"""

from __future__ import annotations

import numba
import numpy as np

from microagg.partition._distances import BLOCK
from microagg.partition._heap import bound_push, bound_replace_top

CODE_LEVELS = 255
# Relative slack for the float64 square roots and products turning D into bounds.
_ROUNDING = 1e-12


@numba.njit(cache=True)
def grid_step(low: np.ndarray, high: np.ndarray) -> float:
    """The step of the common grid over attribute ranges [low, high] (inf/-inf: no rows)."""
    span = 0.0
    for j in range(low.shape[0]):
        if high[j] >= low[j]:
            span = max(span, high[j] - low[j])
    return span / CODE_LEVELS if span > 0 else 1.0


@numba.njit(cache=True)
def code_columns(Y: np.ndarray, start: int, stop: int, low: np.ndarray, step: float,
                 codes: np.ndarray) -> float:
    """Code columns start..stop-1 of the column-major Y (d x n) into ``codes`` on the grid
    x^ = low + c * step; returns the largest squared error ||x - x^||^2 among them."""
    d = Y.shape[0]
    worst = np.zeros(stop - start)
    for j in range(d):
        lo = low[j]
        for p in range(start, stop):
            c = min(max(np.rint((Y[j, p] - lo) / step), 0.0), float(CODE_LEVELS))
            codes[j, p] = np.uint8(c)
            error = Y[j, p] - (lo + c * step)
            worst[p - start] += error * error
    delta = 0.0
    for p in range(stop - start):
        delta = max(delta, worst[p])
    return delta


@numba.njit(cache=True, inline="always")
def code_error_bound(squared: float) -> float:
    """delta from the largest squared coding error: float64 rounding of the error itself is
    ~1e-16 relative; widen generously."""
    return np.sqrt(squared) * (1 + 1e-9) + 1e-300


@numba.njit(cache=True)
def quantize(Y: np.ndarray, m: int, codes: np.ndarray, low: np.ndarray) -> tuple[float, float]:
    """Code the first m columns of the column-major Y (d x n) into ``codes`` on one common grid
    x^ = low + c * step (``low`` is filled in). Returns (step, delta), delta an upper bound on
    ||x - x^|| over those rows."""
    d = Y.shape[0]
    high = np.empty(d)
    for j in range(d):
        lo = np.inf
        hi = -np.inf
        for p in range(m):
            lo = min(lo, Y[j, p])
            hi = max(hi, Y[j, p])
        low[j] = lo if m > 0 else 0.0
        high[j] = hi if m > 0 else 0.0
    step = grid_step(low, high)
    return step, code_error_bound(code_columns(Y, 0, m, low, step, codes))


@numba.njit(cache=True)
def code_query(q: np.ndarray, low: np.ndarray, step: float, cq: np.ndarray) -> float:
    """Code q into cq (int32) on the rows' grid, extended beyond 0..255 when q lies outside
    the rows' range (a domain corner, say). Returns an upper bound on ||q - q^||, or -1 when
    the coded squared distances could overflow int32 (the caller then uses the exact pass)."""
    total = 0.0
    worst = 0.0
    for j in range(q.shape[0]):
        c = np.rint((q[j] - low[j]) / step)
        if abs(c) > 2.0**20:
            return -1.0
        cq[j] = np.int32(c)
        diff = q[j] - (low[j] + c * step)
        total += diff * diff
        worst += max(c * c, (CODE_LEVELS - c) ** 2)
    if worst >= 2.0**31:
        return -1.0
    return np.sqrt(total) * (1 + 1e-9) + 1e-300


@numba.njit(cache=True, inline="always")
def coded_bounds(coded_sq: int, step: float, slack: float) -> tuple[float, float]:
    """(lower, upper) bounds on the distance of a row at coded squared distance D."""
    norm = step * np.sqrt(np.float64(coded_sq))
    return norm * (1.0 - _ROUNDING) - slack, norm * (1.0 + _ROUNDING) + slack


@numba.njit(cache=True, inline="always")
def near_limit_code(limit: float, step: float, slack: float) -> float:
    """Largest D whose lower bound can still be <= ``limit``."""
    root = (limit + slack) / (step * (1.0 - _ROUNDING))
    return root * root * (1.0 + _ROUNDING)


@numba.njit(cache=True, inline="always")
def far_limit_code(lmax: float, step: float, slack: float) -> float:
    """Smallest D whose upper bound can still reach ``lmax``."""
    root = (lmax - slack) / (step * (1.0 + _ROUNDING))
    return root * root * (1.0 - _ROUNDING) if root > 0.0 else -1.0


@numba.njit(cache=True, inline="always")
def coded_block(codes: np.ndarray, cq: np.ndarray, start: int, length: int,
                block: np.ndarray) -> tuple[int, int]:
    """block[t] = D, the coded squared distance of column start + t of ``codes`` (d x n) to
    the coded query cq, for t < length; returns the least and the greatest of them."""
    for t in range(length):
        block[t] = 0
    for j in range(cq.shape[0]):
        qj = cq[j]
        # A slice view indexed from 0 vectorizes (see block_distances).
        column = codes[j, start:start + length]
        for t in range(length):
            diff = np.int32(column[t]) - qj
            block[t] += diff * diff
    least = block[0]
    greatest = block[0]
    for t in range(length):
        least = min(least, block[t])
        greatest = max(greatest, block[t])
    return least, greatest


@numba.njit(cache=True)
def _scan_coded_chunk(codes: np.ndarray, cq: np.ndarray, step: float, slack: float,
                      idx: np.ndarray, start: int | np.int64, stop: int, skip: int, near: int,
                      want_far: bool, fixed_limit: float, collect: bool, heap_u: np.ndarray,
                      near_rows: np.ndarray, far_rows: np.ndarray) -> tuple[int, int, bool]:
    """The coded pass over remaining rows start..stop-1 (see :func:`scan_coded`). Returns
    (near candidates, or the number of upper bounds left in ``heap_u`` when not
    ``collect``ing; far candidates; whether a candidate buffer overflowed)."""
    cap = near_rows.shape[0]
    block = np.empty(BLOCK, dtype=np.int32)
    fixed = fixed_limit < np.inf
    size_u = near if fixed else 0
    limit = fixed_limit  # near-th smallest upper bound so far, or the fixed limit
    lmax = -np.inf  # largest lower bound so far
    near_code = near_limit_code(limit, step, slack) if fixed else np.inf
    far_code = -1.0  # smaller D cannot give far candidates
    nc = 0
    fc = 0
    over = False
    for b0 in range(start, stop, BLOCK):
        length = min(stop, b0 + BLOCK) - b0
        block_min, block_max = coded_block(codes, cq, b0, length, block)
        check_near = near > 0 and (size_u < near or block_min <= near_code)
        check_far = want_far and block_max >= far_code
        if not (check_near or check_far):
            continue
        for t in range(length):
            coded_sq = block[t]
            hit_near = check_near and (size_u < near or coded_sq <= near_code)
            hit_far = check_far and coded_sq >= far_code
            if not (hit_near or hit_far):
                continue
            row = idx[b0 + t]
            if row == skip:
                continue
            lo, up = coded_bounds(coded_sq, step, slack)
            if hit_near:
                if size_u < near:  # max-heap of the smallest upper bounds
                    size_u = bound_push(heap_u, size_u, up)
                    if size_u == near:
                        limit = heap_u[0]
                        near_code = near_limit_code(limit, step, slack)
                elif up < limit and not fixed:
                    bound_replace_top(heap_u, size_u, up)
                    limit = heap_u[0]
                    near_code = near_limit_code(limit, step, slack)
                if collect and lo <= limit:
                    if nc < cap:
                        near_rows[nc] = row
                        nc += 1
                    else:
                        over = True
            if hit_far:
                if lo > lmax:
                    lmax = lo
                    far_code = far_limit_code(lmax, step, slack)
                if up >= lmax:
                    if fc < cap:
                        far_rows[fc] = row
                        fc += 1
                    else:
                        over = True
    return (nc if collect else min(size_u, near)), fc, over


@numba.njit(cache=True, parallel=True)
def _scan_coded_parallel(codes, cq, step, slack, idx, m, skip, near, want_far, chunks,
                         fixed_limit, collect, bounds, near_rows, near_count, far_rows,
                         far_count, overflow):
    per_chunk = (m + chunks - 1) // chunks
    for c in numba.prange(chunks):
        start = c * per_chunk
        near_count[c], far_count[c], overflow[c] = _scan_coded_chunk(
            codes, cq, step, slack, idx, start, min(m, start + per_chunk), skip, near,
            want_far, fixed_limit, collect, bounds[c], near_rows[c], far_rows[c])


@numba.njit(cache=True)
def scan_coded(codes: np.ndarray, cq: np.ndarray, step: float, slack: float, idx: np.ndarray,
               m: int, skip: int, near: int, want_far: bool, chunks: int, fixed_limit: float,
               collect: bool, bounds: np.ndarray, near_rows: np.ndarray,
               near_count: np.ndarray, far_rows: np.ndarray, far_count: np.ndarray,
               overflow: np.ndarray) -> None:
    """Candidate rows for the ``near`` nearest and for the farthest row from the coded query
    cq, per chunk; ``slack`` = delta + delta_q (see the module docstring). One chunk runs on
    the calling thread (no parallel region; see :func:`._kernels.scan`).

    With ``collect`` False no candidate is kept: each chunk only leaves its ``near`` smallest
    upper bounds in ``bounds[c]`` (their number in near_count[c]). With a finite
    ``fixed_limit`` the near candidates are the rows whose lower bound is at most that limit
    (a known bound on the near-th smallest distance), instead of a running threshold."""
    if chunks == 1:
        near_count[0], far_count[0], overflow[0] = _scan_coded_chunk(
            codes, cq, step, slack, idx, np.int64(0), m, skip, near, want_far, fixed_limit,
            collect, bounds[0], near_rows[0], far_rows[0])
    else:
        _scan_coded_parallel(codes, cq, step, slack, idx, m, skip, near, want_far, chunks,
                             fixed_limit, collect, bounds, near_rows, near_count, far_rows,
                             far_count, overflow)

