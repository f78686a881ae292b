"""Coded passes over records with missing values: exact nearest and farthest candidates under
the distance over the attributes both records have (:mod:`._missing`).

The present values are coded on one common grid (:mod:`._missing_set`: x^ = low + c * step,
c in 0..254, code 255 for a missing value). For a query q with attributes O_q, a pass
computes for each row x

    D = sum_{j in O_x ∩ O_q} (c_j - cq_j)^2      and      n = |O_x ∩ O_q|,

both exact integers, in one vectorized pass: the code 255 zeroes the missing terms, and n is
the row's stored |O_x| less its attributes among those q lacks. On the attributes
O = O_x ∩ O_q the triangle inequality of the Euclidean norm gives

    | ||x_O - q_O|| - step * sqrt(D) |  <=  ||x_O - x^_O|| + ||q_O - q^_O||  <=  delta + delta_q

where delta bounds ||x - x^|| over the present values of every coded row and delta_q is the
coding error of q's present values (a norm over a subset of attributes is at most the norm
over all of them). The distance is d = sqrt(p / n) * ||x_O - q_O||, and the factor sqrt(p / n)
is known exactly per row, so

    sqrt(p/n) * (step sqrt(D) - slack)  <=  d  <=  sqrt(p/n) * (step sqrt(D) + slack)

with slack = delta + delta_q, widened by a relative 10^-12 for the float64 arithmetic (and
d = +inf, both bounds included, when n = 0). With these per-row bounds each chunk keeps, as
in :mod:`._coded`, every row whose interval could place it among the ``near`` nearest (its
lower bound does not exceed the near-th smallest upper bound so far) or make it the farthest
(its upper bound reaches the largest lower bound so far); running thresholds only tighten,
so the candidates are supersets, and they are re-ranked with the exact distance of the
definition (:func:`._missing.missing_distance`): the answers, ties included, are those of a full
pass.

The bounds are monotone in D for each n, so the thresholds become tables over n: a row can
be a near candidate only if D <= (A sqrt(n) + B)^2 and a far candidate only if
D >= (A' sqrt(n) - B)^2 (A = limit / (sqrt(p) step), A' = lmax / (sqrt(p) step),
B = slack / step, with the rounding margins; :func:`near_cuts`, :func:`far_cuts`). Whole
blocks of 256 rows are skipped by integer tests that vectorize: expanding the squares, the
only term not linear in n is +-2AB sqrt(n), and sqrt(n) lies below its tangent at n = |O_q|,
so D - a n <= b (near) and D - a' n >= b' (far), with a, b, a', b' the linear bounds rounded
outwards, hold for every row that passes the tables; a block none of whose rows passes them
is skipped whole.

A chunk whose candidate buffer overflows (massive ties), a query with no attribute present
(every distance is +inf) or a query whose coded sums could overflow int32 falls back to the
exact float64 pass.
"""

from __future__ import annotations

import numba
import numpy as np

from microagg.partition._distances import BLOCK, farther
from microagg.partition._heap import bound_push, bound_replace_top, heap_offer
from microagg.partition._missing import missing_distance
from microagg.partition._missing_set import MISSING, PRESENT_LEVELS

# Relative slack for the float64 square roots and products turning (D, n) into bounds.
_ROUNDING = 1e-12
# Relative slack of the thresholds on D turned from the bounds.
_RATIO_SLACK = 1e-9
# Queries for more nearest rows than this make two coded passes (see :func:`missing_query`).
TWO_PASS_NEAR = 32


@numba.njit(cache=True)
def code_missing_query(q: np.ndarray, low: np.ndarray, step: float, cq: np.ndarray,
                       attrs: np.ndarray) -> tuple[float, int, int]:
    """Code the present values of q into cq (int32) on the rows' grid, extended beyond
    0..254 when q lies outside the rows' range, and list q's present attributes in
    ``attrs`` (its missing ones after them). Returns (an upper bound on ||q - q^|| over them,
    how many, the largest D a coded row can have), the bound -1 when the block tests of
    :func:`missing_block` could overflow int32 (the caller then uses the exact pass)."""
    total = 0.0
    worst = 0.0
    count = 0
    absent = q.shape[0]
    for j in range(q.shape[0]):
        if np.isnan(q[j]):
            absent -= 1
            attrs[absent] = j
            continue
        c = np.rint((q[j] - low[j]) / step)
        if abs(c) > 2.0**20:
            return -1.0, count, 0
        cq[j] = np.int32(c)
        attrs[count] = j
        count += 1
        diff = q[j] - (low[j] + c * step)
        total += diff * diff
        worst += max(c * c, (PRESENT_LEVELS - c) ** 2)
    if (worst + 2.0) * (count + 2.0) >= 2.0**30:
        return -1.0, count, 0
    return np.sqrt(total) * (1 + 1e-9) + 1e-300, count, int(worst)


@numba.njit(cache=True, inline="always")
def missing_block(codes: np.ndarray, present: np.ndarray, cq: np.ndarray, attrs: np.ndarray,
                  count: int, start: int, length: int, block: np.ndarray, both: np.ndarray,
                  roof: int, near_a: int, far_a: int) -> tuple[np.int32, np.int32]:
    """block[t] = D and both[t] = n (module docstring) of column start + t of ``codes`` to
    the coded query, over its ``count`` attributes attrs[:count]; n is the row's number of
    attributes present less those among the query's missing ones, attrs[count:] (counting
    every common attribute instead costs a store per attribute). Returns the least of
    D - near_a * n and the greatest of D - far_a * n, each plus roof + 1 where n = 0, for
    the block tests of :func:`near_cuts` and :func:`far_cuts` (integer arithmetic, which
    vectorizes where float reductions do not). ``count`` must be at least 1."""
    counts = present[start:start + length]
    for t in range(length):
        both[t] = counts[t]
    for a in range(count, attrs.shape[0]):
        column = codes[attrs[a], start:start + length]
        for t in range(length):
            both[t] -= column[t] != MISSING
    # The first attribute sets D, the last one adds its term and reads the keys in the same
    # loop (one pass less over the block); int32 throughout, since numba's int64 widening
    # vectorizes less well.
    column = codes[attrs[0], start:start + length]
    qj = cq[attrs[0]]
    for t in range(length):
        c = np.int32(column[t])
        diff = c - qj
        block[t] = diff * diff if c != MISSING and count > 1 else 0
    for a in range(1, count - 1):
        column = codes[attrs[a], start:start + length]
        qj = cq[attrs[a]]
        for t in range(length):
            c = np.int32(column[t])
            diff = c - qj
            block[t] += diff * diff if c != MISSING else 0
    least = np.int32(2**31 - 1)
    greatest = np.int32(-2**31)
    past = np.int32(roof + 1)
    zero = np.int32(0)
    column = codes[attrs[count - 1], start:start + length]
    qj = cq[attrs[count - 1]]
    for t in range(length):
        c = np.int32(column[t])
        diff = c - qj
        coded_sq = np.int32(block[t] + (diff * diff if c != MISSING else 0))
        block[t] = coded_sq
        n = both[t]
        base = np.int32(coded_sq + (past if n == 0 else zero))
        near_key = np.int32(base - np.int32(near_a * n))
        far_key = np.int32(base - np.int32(far_a * n))
        least = near_key if near_key < least else least
        greatest = far_key if far_key > greatest else greatest
    return least, greatest


@numba.njit(cache=True, inline="always")
def missing_bounds(coded_sq: int, both: int, p: int, step: float,
                   slack: float) -> tuple[float, float]:
    """(lower, upper) bounds on the distance of a row at coded sum D over n common
    attributes (module docstring)."""
    if both == 0:
        return np.inf, np.inf
    w = np.sqrt(p / both)
    norm = step * np.sqrt(np.float64(coded_sq))
    lower = max(norm * (1.0 - _ROUNDING) - slack, 0.0) * w * (1.0 - _ROUNDING)
    return lower, (norm * (1.0 + _ROUNDING) + slack) * w * (1.0 + _ROUNDING)


@numba.njit(cache=True, inline="always")
def _cut(value: float, roof: int, count: int, up: bool) -> np.int32:
    """ceil (``up``) or floor of ``value`` as an int32 clamped to [-roof (count + 1), roof]:
    the keys of :func:`missing_block` stay within that range once the cuts do, and clamping
    keeps every test conservative (see the callers)."""
    cut = np.ceil(value) if up else np.floor(value)
    return np.int32(min(max(cut, -float(roof) * (count + 1)), float(roof)))


@numba.njit(cache=True)
def near_cuts(limit: float, count: int, p: int, step: float, slack: float, roof: int,
              table: np.ndarray) -> tuple[np.int32, np.int32]:
    """Fill table[n], n = 1..count, with the largest D whose lower bound over n common
    attributes can still be <= ``limit``, and return (a, b) such that every such row has
    D - a n <= b (n = 0 rows are +inf: included only when ``limit`` is +inf).

    The table is D <= (A sqrt(n) + B)^2 with A = limit / (sqrt(p) step), B = slack / step
    (times the rounding margins); its term 2AB sqrt(n) lies below the tangent of sqrt at
    n = count, which makes the cut linear in n."""
    if limit == np.inf:
        for n in range(1, count + 1):
            table[n] = np.inf
        return np.int32(0), np.int32(2 * roof + 1)
    big_a = limit / (np.sqrt(np.float64(p)) * step * (1.0 - _ROUNDING) ** 2)
    big_b = slack / (step * (1.0 - _ROUNDING))
    for n in range(1, count + 1):
        r = big_a * np.sqrt(np.float64(n)) + big_b
        table[n] = r * r * (1.0 + _RATIO_SLACK)
    root = np.sqrt(np.float64(count))
    alpha = (big_a * big_a + big_a * big_b / root) * (1.0 + _RATIO_SLACK)
    beta = (big_a * big_b * root + big_b * big_b) * (1.0 + _RATIO_SLACK)
    if alpha >= roof or beta >= roof:  # every row with a common attribute
        return np.int32(0), np.int32(roof)
    return _cut(alpha, roof, count, True), _cut(beta, roof, count, False)


@numba.njit(cache=True)
def far_cuts(lmax: float, count: int, p: int, step: float, slack: float, roof: int,
             table: np.ndarray) -> tuple[np.int32, np.int32]:
    """Fill table[n], n = 1..count, with the smallest D whose upper bound over n common
    attributes can still reach ``lmax`` (-1: any), and return (a, b) such that every such
    row has D - a n >= b (n = 0 rows, at +inf, always qualify).

    The table is D >= (A sqrt(n) - B)^2 with A = lmax / (sqrt(p) step), B = slack / step
    when A > B (else every row qualifies); its term -2AB sqrt(n) lies above minus the
    tangent of sqrt at n = count, which makes the cut linear in n."""
    if lmax == np.inf:
        for n in range(1, count + 1):
            table[n] = np.inf
        return np.int32(roof), np.int32(roof)
    big_a = lmax / (np.sqrt(np.float64(p)) * step * (1.0 + _ROUNDING) ** 2)
    big_b = slack / (step * (1.0 + _ROUNDING))
    if not big_a > big_b:
        for n in range(1, count + 1):
            table[n] = -1.0
        return np.int32(0), np.int32(0)
    for n in range(1, count + 1):
        r = big_a * np.sqrt(np.float64(n)) - big_b
        table[n] = r * r * (1.0 - _RATIO_SLACK)
    root = np.sqrt(np.float64(count))
    alpha = big_a * big_a - big_a * big_b / root
    beta = big_b * big_b - big_a * big_b * root
    margin = _RATIO_SLACK * (big_a * big_a * count + 2.0 * big_a * big_b * root
                             + big_b * big_b + 1.0)
    return _cut(alpha, roof, count, False), _cut(beta - margin, roof, count, True)


@numba.njit(cache=True)
def _scan_chunk(codes, present, cq, attrs, count, roof, p, step, slack, idx, start, stop,
                skip, near, want_far, fixed_limit, collect, heap_u, near_rows, far_rows):
    """The coded pass over remaining rows start..stop-1 (see :func:`scan_missing`). Returns
    (near candidates, or the number of upper bounds left in ``heap_u`` when not
    ``collect``ing; far candidates; whether a candidate buffer overflowed)."""
    cap = near_rows.shape[0]
    block = np.empty(BLOCK, dtype=np.int32)
    both = np.empty(BLOCK, dtype=np.int32)
    near_table = np.empty(count + 1)
    far_table = np.empty(count + 1)
    fixed = fixed_limit < np.inf
    size_u = near if fixed else 0
    limit = fixed_limit  # near-th smallest upper bound so far, or the fixed limit
    lmax = -np.inf  # largest lower bound so far
    near_a, near_b = near_cuts(limit, count, p, step, slack, roof, near_table)
    far_a, far_b = far_cuts(lmax, count, p, step, slack, roof, far_table)
    nc = 0
    fc = 0
    over = False
    for b0 in range(start, stop, BLOCK):
        length = min(stop, b0 + BLOCK) - b0
        least, greatest = missing_block(codes, present, cq, attrs, count, b0, length, block, both,
                                        roof, near_a, far_a)
        check_near = near > 0 and (size_u < near or least <= near_b)
        check_far = want_far and greatest >= far_b
        if not (check_near or check_far):
            continue
        for t in range(length):
            n = both[t]
            coded_sq = block[t]
            hit_near = check_near and (size_u < near or (coded_sq <= near_table[n] if n > 0
                                                         else limit == np.inf))
            hit_far = check_far and (n == 0 or coded_sq >= far_table[n])
            if not (hit_near or hit_far):
                continue
            row = idx[b0 + t]
            if row == skip:
                continue
            lo, up = missing_bounds(coded_sq, n, p, step, slack)
            if hit_near:
                if size_u < near:  # max-heap of the smallest upper bounds
                    size_u = bound_push(heap_u, size_u, up)
                    if size_u == near:
                        limit = heap_u[0]
                        near_a, near_b = near_cuts(limit, count, p, step, slack, roof,
                                                   near_table)
                elif up < limit and not fixed:
                    bound_replace_top(heap_u, size_u, up)
                    limit = heap_u[0]
                    near_a, near_b = near_cuts(limit, count, p, step, slack, roof, near_table)
                if collect and lo <= limit:
                    if nc < cap:
                        near_rows[nc] = row
                        nc += 1
                    else:
                        over = True
            if hit_far:
                if lo > lmax:
                    lmax = lo
                    far_a, far_b = far_cuts(lmax, count, p, step, slack, roof, far_table)
                if up >= lmax:
                    if fc < cap:
                        far_rows[fc] = row
                        fc += 1
                    else:
                        over = True
    return (nc if collect else min(size_u, near)), fc, over


@numba.njit(cache=True, parallel=True)
def _scan_parallel(codes, present, cq, attrs, count, roof, p, step, slack, idx, m, skip,
                   near, want_far, chunks, fixed_limit, collect, bounds, near_rows,
                   near_count, far_rows, far_count, overflow):
    per_chunk = (m + chunks - 1) // chunks
    for c in numba.prange(chunks):
        start = c * per_chunk
        near_count[c], far_count[c], overflow[c] = _scan_chunk(
            codes, present, cq, attrs, count, roof, p, step, slack, idx, start,
            min(m, start + per_chunk), skip, near, want_far, fixed_limit, collect, bounds[c],
            near_rows[c], far_rows[c])


@numba.njit(cache=True)
def scan_missing(codes, present, cq, attrs, count, roof, p, step, slack, idx, m, skip, near,
                 want_far, chunks, fixed_limit, collect, work):
    """Candidate rows for the ``near`` nearest and for the farthest row from the coded query
    (cq over its ``count`` attributes ``attrs``; p attributes in all; ``roof`` exceeds the
    D of every row), per chunk of the :class:`._kernels.QueryWork` ``work``, as
    :func:`._coded.scan_coded` does for complete rows (``fixed_limit`` and ``collect``
    likewise). One chunk runs on the calling thread."""
    if chunks == 1:
        work.near_count[0], work.far_count[0], work.overflow[0] = _scan_chunk(
            codes, present, cq, attrs, count, roof, p, step, slack, idx, np.int64(0), m, skip,
            near, want_far, fixed_limit, collect, work.heap_dist[0], work.near_candidates[0],
            work.far_candidates[0])
    else:
        _scan_parallel(codes, present, cq, attrs, count, roof, p, step, slack, idx, m, skip,
                       near, want_far, chunks, fixed_limit, collect, work.heap_dist,
                       work.near_candidates, work.near_count, work.far_candidates,
                       work.far_count, work.overflow)


@numba.njit(cache=True)
def _exact_missing_pass(rest, m, q, skip, near, out_d, out_near):
    """The nearest and farthest rows by a full pass of exact distances (the fallback)."""
    rows, no_concepts, no_tables = rest.row_values, rest.concepts, rest.squared
    qc = np.empty(0, dtype=np.int64)
    no_ties = np.empty((0, 0))
    size = np.int64(0)
    far = -1
    far_dist = -1.0
    for t in range(m):
        row = rest.row_of[t]
        if row == skip:
            continue
        dist = missing_distance(rows, no_concepts, no_tables, row, q, qc)
        size = heap_offer(out_d, out_near, size, near, dist, row, no_ties)
        if far < 0 or farther(dist, row, far_dist, far):
            far = row
            far_dist = dist
    return size, far


@numba.njit(cache=True)
def missing_query(rest, coded, work, m, q, skip, near, want_far, out_d, out_near, parallel_min):
    """The ``near`` nearest remaining rows to the point q (NaN: missing; into
    out_d/out_near, unordered) and, if ``want_far``, the farthest one, excluding original
    row ``skip``, under the distance over the attributes both have. Exact: nearest by
    (distance, row), farthest by (distance, lowest row). ``rest`` is a
    :class:`._missing_set.MissingSet` of m rows coded on the :class:`._kernels.Grid`
    ``coded``; ``work`` a :class:`._kernels.QueryWork`. Returns (number of nearest found,
    farthest row or -1)."""
    p = q.shape[0]
    chunks = max(1, min(work.far_dist.shape[0], m // parallel_min))
    cq = np.empty(p, dtype=np.int32)
    attrs = np.empty(p, dtype=np.int64)
    step = coded.step
    slack, count, worst = code_missing_query(q, coded.low, step, cq, attrs)
    roof = worst + 1
    if slack < 0.0 or count == 0:
        return _exact_missing_pass(rest, m, q, skip, near, out_d, out_near)
    slack += coded.delta
    no_ties = np.empty((0, 0))
    limit = np.inf
    if near > TWO_PASS_NEAR:
        # First pass: the near-th smallest upper bound over all chunks, a fixed limit for the
        # second pass (a running limit would collect ~near * log(m / near) rows).
        scan_missing(rest.codes, rest.present, cq, attrs, count, roof, p, step, slack, rest.row_of,
                     m, skip, near, np.bool_(False), chunks, np.inf, np.bool_(False), work)
        merged = np.empty(near)
        merged_rows = np.empty(near, dtype=np.int64)
        size = np.int64(0)
        for c in range(chunks):
            for t in range(work.near_count[c]):
                size = heap_offer(merged, merged_rows, size, near, work.heap_dist[c, t], t,
                                  no_ties)
        if size == near:
            limit = merged[0]
    scan_missing(rest.codes, rest.present, cq, attrs, count, roof, p, step, slack, rest.row_of, m,
                 skip, near, want_far, chunks, limit, np.bool_(True), work)
    for c in range(chunks):
        if work.overflow[c]:
            return _exact_missing_pass(rest, m, q, skip, near, out_d, out_near)
    rows, no_concepts, no_tables = rest.row_values, rest.concepts, rest.squared
    qc = np.empty(0, dtype=np.int64)
    size = np.int64(0)
    far = -1
    far_dist = -1.0
    for c in range(chunks):
        for t in range(work.near_count[c]):
            row = work.near_candidates[c, t]
            size = heap_offer(out_d, out_near, size, near,
                              missing_distance(rows, no_concepts, no_tables, row, q, qc), row,
                              no_ties)
        for t in range(work.far_count[c]):
            row = work.far_candidates[c, t]
            dist = missing_distance(rows, no_concepts, no_tables, row, q, qc)
            if far < 0 or farther(dist, row, far_dist, far):
                far = row
                far_dist = dist
    return size, far

