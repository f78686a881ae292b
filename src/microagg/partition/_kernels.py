"""Compiled building blocks shared by the multivariate partitioners (MDAV, V-MDAV,
insensitive microaggregation).

* The *remaining set*: the rows not yet clustered, kept compact in a column-major copy with
  their 8-bit codes, original row numbers ``idx`` and the inverse map ``pos`` (swap-remove:
  O(d) per removal; passes stream through contiguous memory).
* Double-double running sums of the remaining rows, so that a centroid is the correctly
  rounded mean however many rows have been removed (an ordinary running sum would drift).
* Bounded heaps ordered by (distance, tie-break values, row number) and "farthest" meaning
  largest (distance, -row).
* Exact queries for the nearest and the farthest remaining rows of a point: a coded pass finds
  candidates whose distance bounds could place them among the answers, and exact float64
  distances rank the candidates (see "coded passes" below); an exact float64 pass is the
  fallback. Passes are split in chunks that run in parallel.

Exact distances are squared Euclidean, accumulated attribute by attribute in column order;
every implementation that must agree with these kernels (tests, references) sums in the same
order, so equal distances compare equal and tie rules apply bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numba
import numpy as np

from microagg.core.threads import ThreadChooser, numba_threads

# A pass is split in chunks of at least this many rows, one per thread (smaller chunks cost
# more in thread start-up and barriers than they save). Passing a larger value to the kernels
# makes every pass run on the calling thread.
PARALLEL_MIN_ROWS = 16_384


# -- double-double sums ----------------------------------------------------------------------

@numba.njit(cache=True, inline="always")
def _two_sum(a: float, b: float) -> tuple[float, float]:
    s = a + b
    bp = s - a
    return s, (a - (s - bp)) + (b - bp)


@numba.njit(cache=True)
def dd_accumulate(hi: np.ndarray, lo: np.ndarray, Y: np.ndarray, col: int, sign: float) -> None:
    """(hi, lo) += sign * Y[:, col], in double-double arithmetic."""
    for j in range(hi.shape[0]):
        s, e = _two_sum(hi[j], sign * Y[j, col])
        hi[j], lo[j] = _two_sum(s, e + lo[j])


@numba.njit(cache=True)
def dd_total(Y: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    d = Y.shape[0]
    hi = np.zeros(d)
    lo = np.zeros(d)
    for i in range(m):
        dd_accumulate(hi, lo, Y, i, 1.0)
    return hi, lo


# -- the remaining set -----------------------------------------------------------------------

@numba.njit(cache=True)
def remove_row(Y: np.ndarray, codes: np.ndarray, C: np.ndarray, idx: np.ndarray,
               pos: np.ndarray, m: int, row: int) -> int:
    """Remove original row ``row`` from the compact set of size ``m`` (numeric values, their
    8-bit codes and the categorical concepts C); return the new size."""
    p = pos[row]
    last = m - 1
    if p != last:
        for j in range(Y.shape[0]):
            Y[j, p] = Y[j, last]
            codes[j, p] = codes[j, last]
        for j in range(C.shape[0]):
            C[j, p] = C[j, last]
        moved = idx[last]
        idx[p] = moved
        pos[moved] = p
    pos[row] = -1
    return last


# -- distance passes ------------------------------------------------------------------------

@numba.njit(cache=True, inline="always")
def precedes(d1: float, r1: int, d2: float, r2: int, tiebreak: np.ndarray) -> bool:
    """(d1, tiebreak[r1], r1) < (d2, tiebreak[r2], r2): distance first, then the rows of
    ``tiebreak`` lexicographically, then the row number. A ``tiebreak`` with no columns breaks
    ties by row number alone."""
    if d1 != d2:
        return d1 < d2
    for j in range(tiebreak.shape[1]):
        a = tiebreak[r1, j]
        b = tiebreak[r2, j]
        if a != b:
            return a < b
    return r1 < r2


@numba.njit(cache=True, inline="always")
def farther(d1: float, i1: int, d2: float, i2: int) -> bool:
    """Is (d1, i1) farther than (d2, i2): larger distance, ties to the lower row number."""
    return d1 > d2 or (d1 == d2 and i1 < i2)


@numba.njit(cache=True)
def heap_sift_down(hd: np.ndarray, hr: np.ndarray, size: int, at: int,
                   tiebreak: np.ndarray) -> None:
    """Restore the max-heap order of (hd, hr) below position ``at``."""
    while True:
        left = 2 * at + 1
        if left >= size:
            return
        big = left
        if left + 1 < size and precedes(hd[left], hr[left], hd[left + 1], hr[left + 1],
                                        tiebreak):
            big = left + 1
        if precedes(hd[at], hr[at], hd[big], hr[big], tiebreak):
            hd[at], hd[big] = hd[big], hd[at]
            hr[at], hr[big] = hr[big], hr[at]
            at = big
        else:
            return


@numba.njit(cache=True)
def heap_offer(hd: np.ndarray, hr: np.ndarray, size: int, cap: int, d: float, r: int,
               tiebreak: np.ndarray) -> int:
    """Keep the ``cap`` smallest (d, r) under :func:`precedes` in the max-heap (hd, hr) of
    current ``size``; return its new size."""
    if cap == 0:
        return 0
    if size < cap:
        at = size
        hd[at] = d
        hr[at] = r
        while at > 0:
            parent = (at - 1) // 2
            if precedes(hd[parent], hr[parent], hd[at], hr[at], tiebreak):
                hd[at], hd[parent] = hd[parent], hd[at]
                hr[at], hr[parent] = hr[parent], hr[at]
                at = parent
            else:
                break
        return size + 1
    if precedes(d, r, hd[0], hr[0], tiebreak):
        hd[0] = d
        hr[0] = r
        heap_sift_down(hd, hr, size, np.int64(0), tiebreak)
    return size


# Rows whose distances are computed together (the block stays in L1 cache).
BLOCK = 256


@numba.njit(cache=True, inline="always")
def block_distances(Y: np.ndarray, C: np.ndarray, S: np.ndarray, q: np.ndarray,
                    qc: np.ndarray, b0: int, length: int, block: np.ndarray) -> None:
    """block[t] = squared distance of remaining row b0 + t to the point (q, qc): numeric
    squared differences, then the categorical lookups S[j, qc[j], concept]."""
    for t in range(length):
        block[t] = 0.0
    for j in range(Y.shape[0]):
        qj = q[j]
        # A slice view indexed from 0 lets LLVM vectorize this loop (an offset index into the
        # whole column does not); the arithmetic is unchanged.
        column = Y[j, b0:b0 + length]
        for t in range(length):
            diff = column[t] - qj
            block[t] += diff * diff
    for j in range(C.shape[0]):
        lookup = S[j, qc[j]]
        concepts = C[j, b0:b0 + length]
        for t in range(length):
            block[t] += lookup[concepts[t]]


@numba.njit(cache=True)
def _scan_chunk(Y: np.ndarray, C: np.ndarray, S: np.ndarray, idx: np.ndarray, start: int,
                stop: int, q: np.ndarray, qc: np.ndarray, skip: int, near: int, hd: np.ndarray,
                hi: np.ndarray, tiebreak: np.ndarray) -> tuple[int, float, int]:
    """Exact pass over remaining rows start..stop-1: the ``near`` nearest rows to the point
    (q, qc) into the max-heap (hd, hi), and the farthest row, excluding original row ``skip``
    (-1: none). Returns (heap size, farthest distance, farthest row or -1)."""
    block = np.empty(BLOCK)
    size = np.int64(0)
    best_d = -1.0
    best_i = -1
    for b0 in range(start, stop, BLOCK):
        length = min(stop, b0 + BLOCK) - b0
        block_distances(Y, C, S, q, qc, b0, length, block)
        for t in range(length):
            dist = block[t]
            if dist >= best_d:
                row = idx[b0 + t]
                if row != skip and (best_i < 0 or farther(dist, row, best_d, best_i)):
                    best_d = dist
                    best_i = row
            if near > 0 and (size < near or dist <= hd[0]):
                row = idx[b0 + t]
                if row != skip:
                    size = heap_offer(hd, hi, size, near, dist, row, tiebreak)
    return size, best_d, best_i


@numba.njit(cache=True, parallel=True)
def _scan_parallel(Y, C, S, idx, m, q, qc, skip, near, chunks, heap_d, heap_i, far_d, far_i,
                   sizes, tiebreak):
    step = (m + chunks - 1) // chunks
    for c in numba.prange(chunks):
        start = c * step
        sizes[c], far_d[c], far_i[c] = _scan_chunk(Y, C, S, idx, start, min(m, start + step),
                                                   q, qc, skip, near, heap_d[c], heap_i[c],
                                                   tiebreak)


@numba.njit(cache=True)
def scan(Y: np.ndarray, C: np.ndarray, S: np.ndarray, idx: np.ndarray, m: int, q: np.ndarray,
         qc: np.ndarray, skip: int, near: int, chunks: int, heap_d: np.ndarray,
         heap_i: np.ndarray, far_d: np.ndarray, far_i: np.ndarray, sizes: np.ndarray,
         tiebreak: np.ndarray) -> None:
    """One exact pass over the remaining set, split in ``chunks``: per chunk, the ``near``
    nearest rows to the point (q, qc) (a max-heap in heap_d/heap_i) and the farthest row
    (far_d/far_i), excluding original row ``skip``. ``S[j, a, b]`` is the squared contribution
    of categorical attribute j between concepts a and b. One chunk runs on the calling thread
    without opening a parallel region (a region costs a barrier, and a scheduler time slice
    whenever another process holds a core)."""
    if chunks == 1:
        sizes[0], far_d[0], far_i[0] = _scan_chunk(Y, C, S, idx, np.int64(0), m, q, qc, skip, near,
                                                   heap_d[0], heap_i[0], tiebreak)
    else:
        _scan_parallel(Y, C, S, idx, m, q, qc, skip, near, chunks, heap_d, heap_i, far_d,
                       far_i, sizes, tiebreak)


# -- coded passes: exact answers from 8-bit codes ---------------------------------------------
#
# A pass over float64 rows streams 8 bytes per value; at 10^6 rows that is memory-bound. The
# coded passes stream one byte per value instead. Every attribute is coded on one common grid,
# x^ = low + c * step with c in 0..255, and the query q is coded the same way. Then
# ||x^ - q^|| = step * sqrt(D) with D = sum_j (c_j - cq_j)^2 an exact integer, and by the
# triangle inequality ||x - q|| lies within delta + delta_q of it, where delta bounds
# ||x - x^|| over all rows and delta_q = ||q - q^||. Each chunk keeps every row whose interval
# could place it among the ``near`` nearest (its lower bound does not exceed the current near-th
# smallest upper bound) or make it the farthest (its upper bound reaches the current largest
# lower bound). Running thresholds only tighten, so these are supersets of the answers; the
# candidates are then ranked with exact float64 distances and the usual tie rules. A chunk whose
# candidate buffer overflows (massive ties in the codes) reports it, and the caller falls back to
# the exact float64 pass. The bounds are monotone in D, so whole blocks are skipped by comparing
# their smallest and largest D with the thresholds translated to D.

CODE_LEVELS = 255
# Queries for more nearest rows than this make two coded passes (see :func:`query`).
TWO_PASS_NEAR = 32
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
                      idx: np.ndarray, start: int, stop: int, skip: int, near: int,
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
                    at = size_u
                    heap_u[at] = up
                    size_u += 1
                    while at > 0 and heap_u[(at - 1) // 2] < heap_u[at]:
                        parent = (at - 1) // 2
                        heap_u[at], heap_u[parent] = heap_u[parent], heap_u[at]
                        at = parent
                    if size_u == near:
                        limit = heap_u[0]
                        near_code = near_limit_code(limit, step, slack)
                elif up < limit and not fixed:
                    heap_u[0] = up
                    at = 0
                    while True:
                        left = 2 * at + 1
                        if left >= size_u:
                            break
                        big = left
                        if left + 1 < size_u and heap_u[left + 1] > heap_u[left]:
                            big = left + 1
                        if heap_u[big] > heap_u[at]:
                            heap_u[at], heap_u[big] = heap_u[big], heap_u[at]
                            at = big
                        else:
                            break
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
    cq, per chunk; ``slack`` = delta + delta_q (see the section comment). One chunk runs on
    the calling thread (no parallel region; see :func:`scan`).

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


# -- the remaining set with its codes ---------------------------------------------------------
#
# ``rest = (Y, codes, idx, pos, rows)``: the column-major float64 values and 8-bit codes of the
# remaining rows (compact: column p holds row idx[p]; pos is the inverse map), and the row-major
# values of all rows (for exact distances of single rows). ``coded = (low, [step, delta])``.
# ``work`` holds the per-chunk buffers of one kind of query.


def remaining_set(X: np.ndarray, concepts: np.ndarray | None = None,
                  squared_tables: np.ndarray | None = None) -> tuple[tuple, tuple]:
    """The remaining set of all rows (numeric values X, n x p, and categorical ``concepts``,
    n x q) with its codes; ``squared_tables`` (q, K, K) are the categorical contributions."""
    n = X.shape[0]
    if concepts is None:
        concepts = np.empty((n, 0), dtype=np.int64)
    if squared_tables is None:
        squared_tables = np.zeros((0, 1, 1))
    # Copies: the compact set is rearranged in place (X.T of a one-column X is a view).
    Y = np.array(X.T, order="C", copy=True)
    codes = np.empty(Y.shape, dtype=np.uint8)
    low = np.empty(Y.shape[0])
    step, delta = quantize(Y, n, codes, low)
    rest = (Y, codes, np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64),
            np.ascontiguousarray(X, dtype=np.float64),
            np.array(concepts.T, dtype=np.int64, order="C", copy=True),
            np.ascontiguousarray(concepts, dtype=np.int64))
    return rest, (low, np.array([step, delta]), np.ascontiguousarray(squared_tables))


def recode(rest: tuple, coded: tuple, m: int) -> tuple:
    """Codes for the first m remaining rows on a grid fitted to them alone."""
    low = coded[0]
    step, delta = quantize(rest[0], m, rest[1], low)
    return (low, np.array([step, delta]), coded[2])


# The remaining rows are coded afresh each time this fraction of them has been clustered: the
# partitioners take the periphery first, so the span of what remains shrinks and the grid gets
# finer.
RECODE_FRACTION = 0.8


def run_batches(chooser: ThreadChooser, batch: Callable[[int, int, int], tuple[int, int]],
                n: int, minimum: int, recode_rows: Callable[[int], None],
                progress: Callable[[int], None] | None) -> None:
    """Drive a sequential partitioner over its n rows while at least ``minimum`` remain.

    ``batch(budget, stop_below, parallel_min)`` forms up to ``budget`` clusters, stopping
    once at most ``stop_below`` rows remain, and returns (rows left, clusters formed). The
    chooser sets the budget (batches of a few hundredths of a second) and whether the passes
    of the batch are split between threads (:mod:`microagg.core.threads`). ``recode_rows(m)``
    codes the m remaining rows afresh; ``progress`` gets the number of rows clustered."""
    remaining = coded = n
    with numba_threads(chooser.width):
        while remaining >= minimum:
            stop_below = int(coded * RECODE_FRACTION)
            parallel_min, budget = chooser.plan(remaining)
            start = time.perf_counter()
            left, formed = batch(budget, stop_below, parallel_min)
            chooser.done(formed, (remaining + left) // 2, time.perf_counter() - start)
            remaining = left
            if remaining and remaining <= stop_below:
                recode_rows(remaining)
                coded = remaining
            if progress is not None:
                progress(n - remaining)


@numba.njit(cache=True)
def work_buffers(threads: int, near: int, candidates: int):
    """Per-chunk buffers for queries of ``near`` nearest rows on up to ``threads`` chunks."""
    near = max(near, 1)
    return (np.empty((threads, near)), np.empty((threads, near), dtype=np.int64),
            np.empty(threads), np.empty(threads, dtype=np.int64),
            np.empty(threads, dtype=np.int64),
            np.empty((threads, candidates), dtype=np.int64), np.empty(threads, dtype=np.int64),
            np.empty((threads, candidates), dtype=np.int64), np.empty(threads, dtype=np.int64),
            np.empty(threads, dtype=np.bool_))


@numba.njit(cache=True, inline="always")
def exact_distance(rows: np.ndarray, concepts: np.ndarray, S: np.ndarray, row: int,
                   q: np.ndarray, qc: np.ndarray) -> float:
    """Squared distance of original row ``row`` to the point (q, qc): the numeric attributes
    in column order, then the categorical ones."""
    total = 0.0
    for j in range(q.shape[0]):
        diff = rows[row, j] - q[j]
        total += diff * diff
    for j in range(qc.shape[0]):
        total += S[j, qc[j], concepts[row, j]]
    return total


@numba.njit(cache=True)
def query(rest, coded, work, m, q, qc, skip, near, want_far, out_d, out_near, parallel_min,
          tiebreak):
    """The ``near`` nearest remaining rows to the point (q, qc) (into out_d/out_near,
    unordered) and, if ``want_far``, the farthest one, excluding original row ``skip``.
    Exact: nearest by (distance, tiebreak row, row), farthest by (distance, lowest row).
    Purely numeric data go through the coded passes; categorical attributes take the exact
    pass. Returns (number of nearest found, farthest row or -1)."""
    Y, codes, idx, _, rows, C, concepts = rest
    low, params, S = coded
    heap_d, heap_i, far_d, far_i, sizes, near_rows, near_count, far_rows, far_count, over = work
    chunks = max(1, min(far_d.shape[0], m // parallel_min))
    no_ties = np.empty((0, 0))
    cq = np.empty(q.shape[0], dtype=np.int32)
    slack = code_query(q, low, params[0], cq) if C.shape[0] == 0 else -1.0
    coded_ok = slack >= 0.0
    if coded_ok:
        slack += params[1]
        limit = np.inf
        if near > TWO_PASS_NEAR:
            # First pass: the near-th smallest upper bound over all chunks, a fixed limit for
            # the second pass (a running limit would collect ~near * log(m / near) rows).
            scan_coded(codes, cq, params[0], slack, idx, m, skip, near, np.bool_(False), chunks,
                       np.inf, np.bool_(False), heap_d, near_rows, near_count, far_rows,
                       far_count, over)
            merged = np.empty(near)
            merged_rows = np.empty(near, dtype=np.int64)
            count = np.int64(0)
            for c in range(chunks):
                for t in range(near_count[c]):
                    count = heap_offer(merged, merged_rows, count, near, heap_d[c, t], t,
                                       no_ties)
            if count == near:
                limit = merged[0]
        scan_coded(codes, cq, params[0], slack, idx, m, skip, near, want_far, chunks, limit,
                   np.bool_(True), heap_d, near_rows, near_count, far_rows, far_count, over)
        for c in range(chunks):
            coded_ok = coded_ok and not over[c]
    size = np.int64(0)
    far = -1
    far_dist = -1.0
    if coded_ok:
        for c in range(chunks):
            for t in range(near_count[c]):
                row = near_rows[c, t]
                size = heap_offer(out_d, out_near, size, near,
                                  exact_distance(rows, concepts, S, row, q, qc), row, tiebreak)
            for t in range(far_count[c]):
                row = far_rows[c, t]
                dist = exact_distance(rows, concepts, S, row, q, qc)
                if far < 0 or farther(dist, row, far_dist, far):
                    far = row
                    far_dist = dist
        return size, far
    # Categorical attributes, or too many candidates (massive ties in the codes): the exact
    # float64 pass.
    scan(Y, C, S, idx, m, q, qc, skip, near, chunks, heap_d, heap_i, far_d, far_i, sizes,
         tiebreak)
    for c in range(chunks):
        if far_i[c] >= 0 and (far < 0 or farther(far_d[c], far_i[c], far_dist, far)):
            far = far_i[c]
            far_dist = far_d[c]
        for t in range(sizes[c]):
            size = heap_offer(out_d, out_near, size, near, heap_d[c, t], heap_i[c, t],
                              tiebreak)
    return size, far
