"""The remaining set of the multivariate partitioners (MDAV, V-MDAV, insensitive
microaggregation) and its exact nearest- and farthest-row queries.

* The *remaining set* (:class:`RemainingSet`): the rows not yet clustered, kept compact in a
  column-major copy with their 8-bit codes, original row numbers and the inverse map
  (swap-remove: O(d) per removal; passes stream through contiguous memory).
* Exact queries for the nearest and the farthest remaining rows of a point (:func:`query`):
  a coded pass (:mod:`._coded`) finds candidates whose distance bounds could place them among
  the answers, and exact float64 distances (:mod:`._distances`) rank the candidates; an exact
  float64 pass (:func:`scan`) is the fallback. Passes are split in chunks that run in
  parallel.
* :func:`run_batches`, the driver that forms clusters in timed batches between which the
  remaining rows are coded afresh.

Nearest rows are kept in bounded heaps (:mod:`._heap`) ordered by (distance, tie-break
values, row number); "farthest" means largest (distance, -row).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numba
import numpy as np

from microagg.core.threads import ThreadChooser, numba_threads
from microagg.partition._coded import code_query, quantize, scan_coded
from microagg.partition._distances import BLOCK, block_distances, exact_distance, farther
from microagg.partition._heap import heap_offer

# A pass is split in chunks of at least this many rows, one per thread (smaller chunks cost
# more in thread start-up and barriers than they save). Passing a larger value to the kernels
# makes every pass run on the calling thread.
PARALLEL_MIN_ROWS = 16_384
# Queries for more nearest rows than this make two coded passes (see :func:`query`).
TWO_PASS_NEAR = 32


class RemainingSet(NamedTuple):
    """The rows not yet clustered, with everything the queries read.

    The compact part is rearranged in place as rows leave: column p of ``values``, ``codes``
    and ``concept_columns`` holds original row ``row_of[p]``, and the first m columns are the
    m remaining rows. The row-major copies hold every row, for exact distances of single rows.

    Attributes
    ----------
    values : ndarray of float64, shape (d, n)
        Numeric values, column-major, compact.
    codes : ndarray of uint8, shape (d, n)
        Their codes on the grid of a :class:`Grid`, compact.
    row_of : ndarray of int64, shape (n,)
        The original row at each column.
    column_of : ndarray of int64, shape (n,)
        The column of each original row, -1 once it has left.
    row_values : ndarray of float64, shape (n, d)
        Numeric values of all rows, row-major.
    concept_columns : ndarray of int64, shape (q, n)
        Concepts of the categorical attributes, column-major, compact.
    concepts : ndarray of int64, shape (n, q)
        Concepts of all rows, row-major.
    squared : ndarray of float64, shape (q, K, K)
        Squared categorical contributions: ``squared[j, a, b]`` between concepts a and b of
        attribute j.
    """

    values: np.ndarray
    codes: np.ndarray
    row_of: np.ndarray
    column_of: np.ndarray
    row_values: np.ndarray
    concept_columns: np.ndarray
    concepts: np.ndarray
    squared: np.ndarray


class Grid(NamedTuple):
    """The common grid on which the remaining rows are coded: x^ = low + c * step.

    Attributes
    ----------
    low : ndarray of float64, shape (d,)
        The grid's origin per attribute.
    step : float
        Its step, the same for every attribute.
    delta : float
        An upper bound on ||x - x^|| over the coded rows.
    """

    low: np.ndarray
    step: float
    delta: float


class QueryWork(NamedTuple):
    """Per-chunk buffers of one kind of query (:func:`work_buffers`), one row a chunk.

    Attributes
    ----------
    heap_dist, heap_row : ndarray, shape (threads, near)
        Each chunk's max-heap of its nearest rows (exact pass), or the smallest upper bounds
        of a coded pass in ``heap_dist``.
    heap_size : ndarray of int64, shape (threads,)
        The size of each chunk's heap after the exact pass.
    far_dist, far_row : ndarray, shape (threads,)
        Each chunk's farthest row and its distance (exact pass).
    near_candidates, far_candidates : ndarray of int64, shape (threads, candidates)
        Rows a coded pass keeps as candidates for the nearest and for the farthest.
    near_count, far_count : ndarray of int64, shape (threads,)
        How many candidates each chunk kept.
    overflow : ndarray of bool, shape (threads,)
        Whether a chunk ran out of room for candidates.
    """

    heap_dist: np.ndarray
    heap_row: np.ndarray
    heap_size: np.ndarray
    far_dist: np.ndarray
    far_row: np.ndarray
    near_candidates: np.ndarray
    near_count: np.ndarray
    far_candidates: np.ndarray
    far_count: np.ndarray
    overflow: np.ndarray


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


@numba.njit(cache=True, inline="always")
def remove_remaining(rest: RemainingSet, m: int, row: int) -> int:
    """Remove original row ``row`` from the remaining set.

    Parameters
    ----------
    rest : RemainingSet
        The remaining set, of m rows.
    m : int
        Its size.
    row : int
        The original row number of a remaining row.

    Returns
    -------
    int
        The new size, m - 1.
    """
    return remove_row(rest.values, rest.codes, rest.concept_columns, rest.row_of,
                      rest.column_of, m, row)


# -- the exact pass ---------------------------------------------------------------------------

@numba.njit(cache=True)
def _scan_chunk(Y: np.ndarray, C: np.ndarray, S: np.ndarray, idx: np.ndarray,
                start: int | np.int64, stop: int, q: np.ndarray, qc: np.ndarray, skip: int,
                near: int, hd: np.ndarray, hi: np.ndarray, tiebreak: np.ndarray
                ) -> tuple[int | np.int64, float, int]:
    """Exact pass over remaining rows start..stop-1: the ``near`` nearest rows to the point
    (q, qc) into the max-heap (hd, hi), and the farthest row, excluding original row ``skip``
    (-1: none). Returns (heap size, farthest distance, farthest row or -1)."""
    block = np.empty(BLOCK)
    size: int | np.int64 = np.int64(0)
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



# -- the remaining set with its codes ---------------------------------------------------------

def remaining_set(X: np.ndarray, concepts: np.ndarray | None = None,
                  squared_tables: np.ndarray | None = None) -> tuple[RemainingSet, Grid]:
    """The remaining set of all rows (numeric values X, n x p, and categorical ``concepts``,
    n x q) with its grid; ``squared_tables`` (q, K, K) are the categorical contributions."""
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
    rest = RemainingSet(values=Y, codes=codes, row_of=np.arange(n, dtype=np.int64),
                        column_of=np.arange(n, dtype=np.int64),
                        row_values=np.ascontiguousarray(X, dtype=np.float64),
                        concept_columns=np.array(concepts.T, dtype=np.int64, order="C",
                                                 copy=True),
                        concepts=np.ascontiguousarray(concepts, dtype=np.int64),
                        squared=np.ascontiguousarray(squared_tables))
    return rest, Grid(low, step, delta)


def recode(rest: RemainingSet, coded: Grid, m: int) -> Grid:
    """Codes for the first m remaining rows on a grid fitted to them alone (the grid's
    ``low`` is refilled in place)."""
    step, delta = quantize(rest.values, m, rest.codes, coded.low)
    return Grid(coded.low, step, delta)


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
def work_buffers(threads: int, near: int, candidates: int) -> QueryWork:
    """Per-chunk buffers for queries of ``near`` nearest rows on up to ``threads`` chunks,
    each chunk keeping up to ``candidates`` candidates in a coded pass."""
    near = max(near, 1)
    return QueryWork(np.empty((threads, near)), np.empty((threads, near), dtype=np.int64),
                     np.empty(threads, dtype=np.int64), np.empty(threads),
                     np.empty(threads, dtype=np.int64),
                     np.empty((threads, candidates), dtype=np.int64),
                     np.empty(threads, dtype=np.int64),
                     np.empty((threads, candidates), dtype=np.int64),
                     np.empty(threads, dtype=np.int64), np.empty(threads, dtype=np.bool_))


@numba.njit(cache=True)
def query(rest, coded, work, m, q, qc, skip, near, want_far, out_d, out_near, parallel_min,
          tiebreak):
    """The ``near`` nearest remaining rows to the point (q, qc) (into out_d/out_near,
    unordered) and, if ``want_far``, the farthest one, excluding original row ``skip``.
    Exact: nearest by (distance, tiebreak row, row), farthest by (distance, lowest row).
    Purely numeric data go through the coded passes; categorical attributes take the exact
    pass. ``rest`` is a :class:`RemainingSet` of m rows coded on the :class:`Grid`
    ``coded``; ``work`` a :class:`QueryWork`. Returns (number of nearest found, farthest
    row or -1)."""
    rows, concepts, S = rest.row_values, rest.concepts, rest.squared
    heap_dist, near_rows, near_count = work.heap_dist, work.near_candidates, work.near_count
    far_rows, far_count = work.far_candidates, work.far_count
    chunks = max(1, min(work.far_dist.shape[0], m // parallel_min))
    no_ties = np.empty((0, 0))
    cq = np.empty(q.shape[0], dtype=np.int32)
    step = coded.step
    slack = code_query(q, coded.low, step, cq) if rest.concept_columns.shape[0] == 0 else -1.0
    coded_ok = slack >= 0.0
    if coded_ok:
        slack += coded.delta
        limit = np.inf
        if near > TWO_PASS_NEAR:
            # First pass: the near-th smallest upper bound over all chunks, a fixed limit for
            # the second pass (a running limit would collect ~near * log(m / near) rows).
            scan_coded(rest.codes, cq, step, slack, rest.row_of, m, skip, near, np.bool_(False),
                       chunks, np.inf, np.bool_(False), heap_dist, near_rows, near_count,
                       far_rows, far_count, work.overflow)
            merged = np.empty(near)
            merged_rows = np.empty(near, dtype=np.int64)
            count = np.int64(0)
            for c in range(chunks):
                for t in range(near_count[c]):
                    count = heap_offer(merged, merged_rows, count, near, heap_dist[c, t], t,
                                       no_ties)
            if count == near:
                limit = merged[0]
        scan_coded(rest.codes, cq, step, slack, rest.row_of, m, skip, near, want_far, chunks,
                   limit, np.bool_(True), heap_dist, near_rows, near_count, far_rows,
                   far_count, work.overflow)
        for c in range(chunks):
            coded_ok = coded_ok and not work.overflow[c]
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
    scan(rest.values, rest.concept_columns, S, rest.row_of, m, q, qc, skip, near, chunks,
         heap_dist, work.heap_row, work.far_dist, work.far_row, work.heap_size, tiebreak)
    for c in range(chunks):
        far_row = work.far_row[c]
        if far_row >= 0 and (far < 0 or farther(work.far_dist[c], far_row, far_dist, far)):
            far = far_row
            far_dist = work.far_dist[c]
        for t in range(work.heap_size[c]):
            size = heap_offer(out_d, out_near, size, near, heap_dist[c, t], work.heap_row[c, t],
                              tiebreak)
    return size, far
