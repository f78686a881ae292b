"""The compiled record-by-record SUDA2 search (:mod:`microagg.risk.suda`).

For a sample unique r, another row j *agrees* with r on the keys where the two match (under
``matches-any`` also where either is missing): r is unique on a set S of keys exactly when
no row agrees with it on all of S, so the sets r shares with some row are the subsets of its
agreement sets, and its MSUs are the smallest sets outside them. Both are bit sets over the
2^M subsets of the keys, one 64-bit word for 64 subsets: a subset of a shared set is shared
(a closure over the keys, one pass a key), and a set is an MSU when it is not shared and
every set one key smaller is. The cost is O(n M) per sample unique for the agreement sets
and O(2^M M / 64) for the closure.
"""

from __future__ import annotations

import numba
import numpy as np

ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@numba.njit(cache=True, nogil=True)
def record_search(rows: np.ndarray, missing_code: np.ndarray, candidates: np.ndarray,
                  weight: np.ndarray, agree: np.ndarray, state: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The MSUs of every candidate: scores, contributions (candidates × keys) and the MSUs
    by size.

    ``rows`` (M, n) holds the codes of the distinct rows a candidate may match, key by key;
    ``missing_code[k]`` key k's code for a missing value that matches any value (−1: none);
    ``candidates`` the rows of the sample uniques; ``weight[s]`` the score of an MSU of s
    keys; ``agree`` room for a bit per key and row (uint16 up to 16 keys, else uint32).
    ``state[0]`` counts the candidates done as it goes; a nonzero ``state[1]`` (set
    by another thread) stops the search before the next one.
    """
    m, n = rows.shape
    full = 1 << m
    words = max(1, full >> 6)
    n_cand = candidates.size
    score = np.zeros(n_cand)
    contribution = np.zeros((n_cand, m))
    by_size = np.zeros(m, dtype=np.int64)
    shared = np.zeros(words, dtype=np.uint64)
    minimal = np.zeros(words, dtype=np.uint64)
    holding = _holding()
    one = np.uint64(1)
    valid = ALL if full >= 64 else (one << np.uint64(full)) - one
    for at in range(n_cand):
        if state[1]:
            return score, contribution, by_size
        state[0] = at
        r = candidates[at]
        _agreement(rows, missing_code, r, agree)
        shared[:] = 0
        for j in range(n):
            if j != r:
                a = np.int64(agree[j])
                shared[a >> 6] |= one << np.uint64(a & 63)
        _close_downward(shared, holding, m)
        _minimal_outside(shared, minimal, holding, m)
        minimal[words - 1] &= valid
        minimal[0] &= ~one  # the empty set
        _score(minimal, weight, at, score, contribution, by_size)
    state[0] = n_cand
    return score, contribution, by_size


@numba.njit(cache=True, nogil=True)
def _holding() -> np.ndarray:
    """For k < 6, the positions in a 64-bit word of the subsets holding key k."""
    out = np.zeros(6, dtype=np.uint64)
    for k in range(6):
        for s in range(64):
            if (s >> k) & 1:
                out[k] |= np.uint64(1) << np.uint64(s)
    return out


@numba.njit(cache=True, nogil=True)
def _agreement(rows: np.ndarray, missing_code: np.ndarray, r: int, agree: np.ndarray) -> None:
    """The keys on which each row agrees with row ``r``, as bits (``agree``'s integers as
    narrow as the keys allow: the passes over every row are most of the search)."""
    m, n = rows.shape
    nothing = agree.dtype.type(0)
    agree[:] = nothing
    for k in range(m):
        bit = agree.dtype.type(1 << k)
        value = rows[k, r]
        column = rows[k]
        missing = missing_code[k]
        if missing >= 0 and value == missing:
            for j in range(n):
                agree[j] |= bit
        elif missing >= 0:
            for j in range(n):
                agree[j] |= bit if (column[j] == value) | (column[j] == missing) else nothing
        else:
            for j in range(n):
                agree[j] |= bit if column[j] == value else nothing


@numba.njit(cache=True, nogil=True)
def _close_downward(sets: np.ndarray, holding: np.ndarray, m: int) -> None:
    """Add to the bit set ``sets`` (of subsets of m keys) every subset of its members."""
    for k in range(min(m, 6)):
        shift = np.uint64(1 << k)
        for w in range(sets.size):
            sets[w] |= (sets[w] & holding[k]) >> shift
    for k in range(6, m):
        step = 1 << (k - 6)
        for base in range(0, sets.size, 2 * step):
            for w in range(base, base + step):
                sets[w] |= sets[w + step]


@numba.njit(cache=True, nogil=True)
def _minimal_outside(shared: np.ndarray, minimal: np.ndarray, holding: np.ndarray,
                     m: int) -> None:
    """The sets outside ``shared`` (closed downward) whose every subset one key smaller is
    in it, into ``minimal``."""
    for w in range(shared.size):
        minimal[w] = ~shared[w]
    for k in range(min(m, 6)):
        shift = np.uint64(1 << k)
        for w in range(shared.size):
            minimal[w] &= ((shared[w] << shift) & holding[k]) | ~holding[k]
    for k in range(6, m):
        step = 1 << (k - 6)
        for base in range(0, shared.size, 2 * step):
            for w in range(base, base + step):
                minimal[w + step] &= shared[w]


@numba.njit(cache=True, nogil=True)
def _score(minimal: np.ndarray, weight: np.ndarray, at: int, score: np.ndarray,
           contribution: np.ndarray, by_size: np.ndarray) -> None:
    """Add the MSUs in the bit set ``minimal`` to candidate ``at``'s score and
    contributions and to the counts by size."""
    m = contribution.shape[1]
    one = np.uint64(1)
    for w in range(minimal.size):
        bits = minimal[w]
        while bits:
            lowest = bits & (~bits + one)
            bits ^= lowest
            s = w << 6
            while lowest > one:
                lowest >>= one
                s += 1
            size = 0
            for k in range(m):
                size += (s >> k) & 1
            score[at] += weight[size]
            for k in range(m):
                if (s >> k) & 1:
                    contribution[at, k] += weight[size]
            by_size[size - 1] += 1
