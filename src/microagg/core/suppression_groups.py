"""The records grouped by their key values on a set of keys, for local suppression at scale.

Local suppression (:mod:`microagg.core.suppression`) asks, for a record i and a set of keys
T it keeps, how many records j *match i on T*: agree with i on every key of T that j has (a
missing value matches any value). Written as codes with -1 for a missing value, j matches i
on T exactly when j's codes on T equal i's with the keys M = T minus the keys j has set to
-1. So, with the records numbered by their codes on T taken literally (-1 a value like any
other; one hashed pass, as :mod:`microagg.core._row_hash` numbers combinations), the records
that match i on T are the union, over the sets M that occur (the *missing patterns* of T: T
minus the keys of some record), of the groups whose codes are i's with M set to -1: a few
look-ups instead of a pass over every record.

:func:`projection_groups` numbers the records and the queries together (a query not among
the records gets an id past the records' groups: an empty group) and lists each group's
records (a counting sort), O((n + queries) ``|T|``). The two kernels use them where the groups
on T cannot change while they run:

* :func:`sweep` (pass 1, one set S of keys to suppress, T = the record's keys less S):
  suppressing S in any record leaves every record's codes on T and its missing pattern on T as
  they were;
* :func:`restore_key` (pass 2, the values of one key c, T = the record's keys, c not among
  them): putting values of c back changes no code on T.

Each kernel keeps the frequencies f exact, as the record-at-a-time kernels of
:mod:`microagg.core.suppression` do, from the groups it is given.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["missing_patterns", "patterns", "projection_groups", "restore_key", "sweep"]


@numba.njit(cache=True)
def present(X: np.ndarray, j: int, mask: int) -> int:
    """The keys of ``mask`` that record ``j`` of the transposed key matrix ``X`` has (a bit
    per key)."""
    keys = 0
    for c in range(X.shape[0]):
        if (mask >> c) & 1 and X[c, j] >= 0:
            keys |= 1 << c
    return keys


@numba.njit(cache=True)
def patterns(X: np.ndarray, mask: int) -> np.ndarray:
    """The keys of ``mask`` each record has (one bitmask per column of ``X``)."""
    q, n = X.shape
    out = np.zeros(n, dtype=np.int64)
    for c in range(q):
        if not (mask >> c) & 1:
            continue
        bit = np.int64(1) << c
        column = X[c]
        for j in range(n):
            if column[j] >= 0:
                out[j] |= bit
    return out


def missing_patterns(keys: int, held: np.ndarray) -> np.ndarray:
    """The distinct sets M = ``keys`` minus a record's keys, over the key patterns ``held``
    (one per record, or the distinct ones): the sets of -1 the look-ups try."""
    return np.unique(np.int64(keys) & ~np.unique(np.asarray(held, dtype=np.int64)))


def projection_groups(X: np.ndarray, keys: int, rows: np.ndarray, missing: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Group every record of the transposed key matrix ``X`` by its codes on ``keys`` (a
    bitmask), taken literally, and find the groups of the queries: each record of ``rows``
    with the keys of each missing pattern of ``missing`` set to -1.

    Returns (start, members, query, groups): the records of group g are
    ``members[start[g]:start[g + 1]]``; ``query[u, t]`` is the group of row t with missing
    pattern u, ``groups`` when no record has those codes.
    """
    columns = np.array([c for c in range(X.shape[0]) if (keys >> c) & 1], dtype=np.int64)
    ids, query, groups = _group_ids(X, columns, np.asarray(rows, dtype=np.int64),
                                    np.asarray(missing, dtype=np.int64))
    start, members = _counting_sort(ids, groups)
    return start, members, query, groups


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)


@numba.njit(cache=True)
def _hash(X: np.ndarray, columns: np.ndarray, j: int, missing: int) -> np.uint64:
    """The hash of record j's codes on ``columns``, those of the keys ``missing`` read as -1."""
    h = _GOLDEN
    for c in columns:
        value = np.int64(-1) if (missing >> c) & 1 else X[c, j]
        h = (h ^ np.uint64(value)) * _MIX
        h ^= h >> np.uint64(31)
    return h


@numba.njit(cache=True)
def _same(X: np.ndarray, columns: np.ndarray, j: int, missing: int, r: int) -> bool:
    for c in columns:
        value = np.int64(-1) if (missing >> c) & 1 else X[c, j]
        if X[c, r] != value:
            return False
    return True


@numba.njit(cache=True)
def _group_ids(X: np.ndarray, columns: np.ndarray, rows: np.ndarray, missing: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, int]:
    """Number the records by their codes on ``columns`` (0, 1, … in order of first
    appearance; an open-addressing table whose entries are compared code by code), then
    look every query up in it (``groups``, the number of ids, when absent)."""
    n = X.shape[1]
    size = 16
    while size < 2 * n:
        size *= 2
    owner = np.full(size, -1, dtype=np.int64)  # the first record with the slot's codes
    ids = np.empty(n, dtype=np.int64)
    groups = 0
    for j in range(n):
        s = np.int64(_hash(X, columns, j, 0) & np.uint64(size - 1))
        while True:
            r = owner[s]
            if r < 0:
                owner[s] = j
                ids[j] = groups
                groups += 1
                break
            if _same(X, columns, j, 0, r):
                ids[j] = ids[r]
                break
            s = (s + 1) & (size - 1)
    query = np.empty((missing.size, rows.size), dtype=np.int64)
    for v in range(missing.size):
        for t in range(rows.size):
            i = rows[t]
            s = np.int64(_hash(X, columns, i, missing[v]) & np.uint64(size - 1))
            query[v, t] = groups
            while owner[s] >= 0:
                if _same(X, columns, i, missing[v], owner[s]):
                    query[v, t] = ids[owner[s]]
                    break
                s = (s + 1) & (size - 1)
    return ids, query, groups


@numba.njit(cache=True)
def _counting_sort(ids: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    start = np.zeros(groups + 1, dtype=np.int64)
    for g in ids:
        start[g + 1] += 1
    for g in range(groups):
        start[g + 1] += start[g]
    filled = start[:groups].copy()
    members = np.empty(ids.size, dtype=np.int64)
    for j in range(ids.size):
        members[filled[ids[j]]] = j
        filled[ids[j]] += 1
    return start, members


@numba.njit(cache=True)
def _size(start: np.ndarray, query: np.ndarray, t: int, groups: int) -> int:
    total = 0
    for v in range(query.shape[0]):
        g = query[v, t]
        if g < groups:
            total += start[g + 1] - start[g]
    return total


@numba.njit(cache=True)
def _compatible(X: np.ndarray, i: int, r: int, keys: int) -> bool:
    """Whether records i and r agree on every key of ``keys`` both have."""
    for c in range(X.shape[0]):
        if (keys >> c) & 1:
            a = X[c, i]
            b = X[c, r]
            if a >= 0 and b >= 0 and a != b:
                return False
    return True


@numba.njit(cache=True)
def sweep(X: np.ndarray, f: np.ndarray, k: int, S: int, mask: int,
          rows: np.ndarray, start: np.ndarray, members: np.ndarray, query: np.ndarray,
          groups: int) -> int:
    """Pass 1 for the keys ``S`` on the records ``rows`` (in the order given, each with the
    keys S and the same keys T of ``mask`` besides; their groups on T from
    :func:`projection_groups`): a record still below ``k`` whose matches on T reach k gets
    S suppressed. Records whose only conflicts with it lie in S now match it (f += 1); when
    it is left without a key of ``mask``, the records with every key that matched it lose
    it. Returns the values suppressed."""
    n = X.shape[1]
    done = 0
    for t in range(rows.size):
        i = rows[t]
        if f[i] >= k:
            continue
        reach = _size(start, query, t, groups)
        if reach < k:
            continue
        blank = (present(X, i, mask) & ~S) == 0  # left blank: complete records lose it
        for v in range(query.shape[0]):
            g = query[v, t]
            if g >= groups:
                continue
            for s in range(start[g], start[g + 1]):
                r = members[s]
                if r == i or _compatible(X, i, r, S):
                    continue
                if not (blank and present(X, r, mask) == mask):
                    f[r] += 1
        if blank:
            for r in range(n):
                if r != i and present(X, r, mask) == mask and _compatible(X, i, r, mask):
                    f[r] -= 1
        for c in range(X.shape[0]):
            if (S >> c) & 1:
                X[c, i] = -1
                done += 1
        f[i] = reach
    return done


# C901 waived: a numba kernel; its branches share the loop's local state.
@numba.njit(cache=True)
def restore_key(X: np.ndarray, X0: np.ndarray, F: np.ndarray, ks: np.ndarray,  # noqa: C901
                masks: np.ndarray, c: int, rows: np.ndarray, held: np.ndarray,
                start: np.ndarray, members: np.ndarray, query: np.ndarray,
                groups: np.ndarray, blanks: np.ndarray) -> tuple[int, bool]:
    """Pass 2 for the suppressed values of key ``c`` in ``rows`` (one set of keys present),
    under the constraints ``held`` (indices into ``masks``/``ks``, each holding c): the value
    is put back when the record and every record that stops matching it keep f >= k.
    ``start[a]``, ``members[a]``, ``query[a]`` and ``groups[a]`` are the groups of
    :func:`projection_groups` on the keys of constraint ``held[a]`` the records have;
    ``blanks[a]`` counts the records without its keys, and is kept up to date, as ``F``.
    Returns the values put back and whether one went to a record blank on some
    constraint's keys (module docstring of :mod:`microagg.core.suppression`)."""
    n = X.shape[1]
    lost = np.zeros(held.size, dtype=np.int64)
    restored = 0
    raised = False
    for t in range(rows.size):
        j = rows[t]
        v = X0[c, j]
        keys = present(X, j, -1)
        after = keys | (1 << c)
        ok = True
        for a in range(held.size):
            mask = masks[held[a]]
            was_blank = (keys & mask) == 0  # complete records did not count j
            lost[a] = 0
            for w in range(query.shape[1]):
                g = query[a, w, t]
                if g >= groups[a]:
                    continue
                for s in range(start[a, g], start[a, g + 1]):
                    r = members[a, s]
                    b = X[c, r]
                    if r == j or b < 0 or b == v:
                        continue
                    lost[a] += 1  # j stops counting r; r counted j unless j was blank
                    if was_blank and present(X, r, mask) == mask:
                        continue
                    if F[held[a], r] - 1 < ks[held[a]]:
                        ok = False
            if (after & mask) == mask:  # j has every key: the blanks leave it
                lost[a] += blanks[a] - (1 if was_blank else 0)
            if F[held[a], j] - lost[a] < ks[held[a]]:
                ok = False
            if not ok:
                break
        if not ok:
            continue
        for a in range(held.size):
            mask = masks[held[a]]
            was_blank = (keys & mask) == 0
            for w in range(query.shape[1]):
                g = query[a, w, t]
                if g >= groups[a]:
                    continue
                for s in range(start[a, g], start[a, g + 1]):
                    r = members[a, s]
                    b = X[c, r]
                    if r == j or b < 0 or b == v:
                        continue
                    if not (was_blank and present(X, r, mask) == mask):
                        F[held[a], r] -= 1
            F[held[a], j] -= lost[a]
            if was_blank:  # j has a value now: complete records that agree count it
                blanks[a] -= 1
                raised = True
                for r in range(n):
                    if r != j and present(X, r, mask) == mask and X[c, r] == v:
                        F[held[a], r] += 1
        X[c, j] = v
        restored += 1
    return restored, raised
