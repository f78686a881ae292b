"""Compiled building blocks shared by the multivariate partitioners.

* A *remaining set*: the rows not yet clustered, kept compact in a column-major copy
  ``Y[d, capacity]`` with their original row numbers ``idx`` and the inverse map ``pos``
  (swap-remove: O(d) per removal, passes stream through contiguous memory).
* Double-double running sums of the remaining rows, so that the centroid is the correctly
  rounded mean however many rows have been removed (an ordinary running sum would drift).
* Distance passes over the remaining set, split in chunks that run in parallel, with exact
  tie-breaking on the original row number: "farthest" means largest (distance, -row) and
  "nearest" smallest (distance, row).

Distances are squared Euclidean, accumulated attribute by attribute in column order; every
implementation that must agree with these kernels (tests, references) sums in the same order.
"""

from __future__ import annotations

import numba
import numpy as np

# Below this many remaining rows a pass runs on one thread (thread start-up costs more).
PARALLEL_MIN_ROWS = 32_768


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
def remove_row(Y: np.ndarray, idx: np.ndarray, pos: np.ndarray, m: int, row: int) -> int:
    """Remove original row ``row`` from the compact set of size ``m``; return the new size."""
    p = pos[row]
    last = m - 1
    if p != last:
        for j in range(Y.shape[0]):
            Y[j, p] = Y[j, last]
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
def _farther(d1: float, i1: int, d2: float, i2: int) -> bool:
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
        heap_sift_down(hd, hr, size, 0, tiebreak)
    return size


# Rows whose distances are computed together (the block stays in L1 cache).
BLOCK = 256


@numba.njit(cache=True, parallel=True)
def scan(Y: np.ndarray, idx: np.ndarray, m: int, q: np.ndarray, skip: int, near: int,
         chunks: int, heap_d: np.ndarray, heap_i: np.ndarray, far_d: np.ndarray,
         far_i: np.ndarray, sizes: np.ndarray, tiebreak: np.ndarray) -> None:
    """One pass over the remaining set: per chunk, the ``near`` nearest rows to ``q`` (a
    max-heap in heap_d/heap_i) and the farthest row (far_d/far_i), excluding original row
    ``skip`` (-1: none)."""
    d = Y.shape[0]
    step = (m + chunks - 1) // chunks
    for c in numba.prange(chunks):
        start = c * step
        stop = min(m, start + step)
        block = np.empty(BLOCK)
        hd = heap_d[c]
        hi = heap_i[c]
        size = 0
        best_d = -1.0
        best_i = -1
        for b0 in range(start, stop, BLOCK):
            length = min(stop, b0 + BLOCK) - b0
            for t in range(length):
                block[t] = 0.0
            for j in range(d):
                qj = q[j]
                column = Y[j]
                for t in range(length):
                    diff = column[b0 + t] - qj
                    block[t] += diff * diff
            for t in range(length):
                dist = block[t]
                if dist >= best_d:
                    row = idx[b0 + t]
                    if row != skip and (best_i < 0 or _farther(dist, row, best_d, best_i)):
                        best_d = dist
                        best_i = row
                if near > 0 and (size < near or dist <= hd[0]):
                    row = idx[b0 + t]
                    if row != skip:
                        size = heap_offer(hd, hi, size, near, dist, row, tiebreak)
        far_d[c] = best_d
        far_i[c] = best_i
        sizes[c] = size
