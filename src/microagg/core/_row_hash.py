"""Numbering the distinct records of a table of 64-bit words, compiled: one pass with an
open-addressing hash table whose entries are compared word by word, so equal rows, and only
they, share a number (a collision of hashes costs a comparison, never a wrong id)."""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["first_appearance_ids"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_SHIFT = np.uint64(31)


@numba.njit(cache=True)
def first_appearance_ids(words: np.ndarray) -> np.ndarray:
    """Id of each column of the (p, n) uint64 array ``words`` (one row per attribute, one
    column per record): 0, 1, … in order of first appearance, equal exactly for equal
    records. O(n·p) expected.

    Examples
    --------
    >>> import numpy as np
    >>> records = np.array([[3, 2, 3, 0], [1, 2, 1, 0]], dtype=np.uint64)
    >>> first_appearance_ids(records).tolist()
    [0, 1, 0, 2]
    """
    p, n = words.shape
    size = 16
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    owner = np.full(size, -1, dtype=np.int64)  # the first row with the slot's contents
    ids = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        h = _GOLDEN
        for j in range(p):
            h = (h ^ words[j, i]) * _MIX
            h ^= h >> _SHIFT
        s = np.int64(h & mask)
        while True:
            r = owner[s]
            if r < 0:
                owner[s] = i
                ids[i] = count
                count += 1
                break
            same = True
            for j in range(p):
                if words[j, r] != words[j, i]:
                    same = False
                    break
            if same:
                ids[i] = ids[r]
                break
            s = (s + 1) & (size - 1)
    return ids
