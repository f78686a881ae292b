"""Local suppression of key values to k-anonymity, a missing value matching any value.

The keys are coded as an ``(n, q)`` int64 matrix, -1 where a value is missing (suppressed
or missing from the start). Record j *matches* record i when they agree on every key both
have (sdcMicro's ``alpha = 1``, :mod:`microagg.core.frequencies`); f_i is the number of
records matching i, itself included; the table is k-anonymous when every f_i >= k. A record
whose keys are all missing (*blank*) is counted apart, as sdcMicro's ``freqCalc`` counts
it: its f is n, and it counts for no record that has every key. Suppressing a value never
lowers any f (a missing value matches more records, never fewer), except when it leaves a
record blank: the records with every key that matched it lose it. The greedy pass keeps
every f exact through that too, and runs again over the records it left below k until
there are none (each run suppresses at least one value, so this ends).

The method (:func:`local_suppression`) has two passes:

1. **Greedy, a class at a time.** The records below k are visited in increasing f (the most
   at risk first, as sdcMicro's ``localSuppression`` orders them by individual risk), ties
   by row. For a record i still below k, the conflict set D_ij of every record j is the set
   of keys where both have a value and the values differ; j matches i once the keys D_ij
   of i are suppressed. The histogram of the conflict sets, summed over subsets (a zeta
   transform over the 2^q subsets of the keys), gives f_i(S) = #{j : D_ij ⊆ S} for every
   set S of keys of i at once. The set chosen is the smallest S with f_i(S) >= k; among
   sets of that size, the one whose most important key is least important (then the next
   …): the order of ``importance``. S is suppressed in i and in every record equal to i
   on the keys (they have the same f and the same conflicts), so a class needing one
   suppression costs one per record; the frequencies of the records that now match are
   raised by the class's size (or, when the class is left blank, the records with every key
   that matched it lowered by its size). Unlike sdcMicro, which moves a record one key towards its
   nearest neighbours and checks again after a full pass, the set chosen makes the record
   k-anonymous at once, by the fewest suppressions given the table as it is.
2. **Restoring.** Every suppressed value is tried in turn, the most important keys first
   (then by row): it is put back when every record keeps f >= k (putting back the value v
   of key l in record j removes the matches between j and the records that have another
   value than v at l and match j elsewhere; only their frequencies and j's fall, and j's
   also by the blank records when j then has every key; a blank j, once it has a value,
   counts for the records with every key that agree with it). A greedy choice made early is
   often no longer needed once later records were suppressed.

With ``constraints`` (sdcMicro's and μ-ARGUS's combinations of keys), each constraint is a
set of keys and its own k, and blank means blank on its keys: the greedy pass runs for each
in turn (conflicts counted on its keys only), and again for every constraint a later pass
left a record below k in (by leaving a record blank on its keys), and a value is restored
only when every constraint holding its key still has f >= k.

Cost: O(n q) per class visited in the greedy pass plus O(q 2^q) for its subsets, and O(n q)
per suppressed value in the second pass (numba kernels); on UCI Adult (32,561 records,
7 keys, k = 5) about two seconds (docs/benchmarks.md). The frequencies the passes start
from are those of :mod:`microagg.core.frequencies`, which the caller also uses to verify the
table as written (the passes keep theirs up to date by their own conflict counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from microagg.errors import InputError

__all__ = ["MAX_KEYS", "Constraint", "Suppression", "default_importance",
           "local_suppression"]

MAX_KEYS = 16
"""The most keys one constraint may hold (the greedy pass visits its 2^q sets of keys)."""


@dataclass(frozen=True)
class Constraint:
    """k-anonymity on the key columns ``columns`` (indices into the code matrix)."""

    columns: tuple[int, ...]
    k: int

    def mask(self) -> int:
        return sum(1 << c for c in self.columns)


@dataclass(frozen=True)
class Suppression:
    """The cells suppressed by :func:`local_suppression` (values present in the input that
    are missing in the result), how many the greedy pass suppressed and how many of those
    the second pass put back."""

    suppressed: np.ndarray  # (n, q) bool
    greedy: int
    restored: int

    @property
    def total(self) -> int:
        return int(self.suppressed.sum())


def default_importance(codes: np.ndarray) -> np.ndarray:
    """sdcMicro's default order of importance: a key with more categories is less
    important (suppressed first); between keys with as many, the later one. Returns each
    key's rank, 0 for the least important."""
    counts = [np.unique(column[column >= 0]).size for column in codes.T]
    # most important first: fewest categories, then earliest key
    order = sorted(range(codes.shape[1]), key=lambda j: (counts[j], j))
    rank = np.empty(codes.shape[1], dtype=np.int64)
    for position, j in enumerate(order):
        rank[j] = codes.shape[1] - 1 - position
    return rank


def local_suppression(codes: np.ndarray, k: int, *, importance: np.ndarray | None = None,
                      constraints: Sequence[Constraint] | None = None) -> Suppression:
    """Suppress the fewest key values the two passes of the module docstring find, so that
    every record of ``codes`` has f >= ``k`` (or each constraint's own k).

    ``codes`` is the ``(n, q)`` int64 key matrix, -1 for a missing value (at most
    :data:`MAX_KEYS` keys: the greedy pass visits their 2^q sets);
    ``importance`` gives each key's rank, 0 for the least important (default:
    :func:`default_importance`); ``constraints`` default to k-anonymity on all the keys.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [1, 1]])
    >>> done = local_suppression(codes, 2)
    >>> done.total, done.suppressed[2].tolist()
    (1, [False, True])
    """
    X0 = np.ascontiguousarray(codes, dtype=np.int64)
    n, q = X0.shape
    if q > MAX_KEYS:
        raise InputError(f"local suppression takes at most {MAX_KEYS} keys (it visits every "
                         f"set of keys), got {q}")
    rank = default_importance(X0) if importance is None else np.asarray(importance, np.int64)
    chosen = list(constraints) if constraints else [Constraint(tuple(range(q)), k)]
    for constraint in chosen:
        if n < constraint.k:
            raise InputError(f"k = {constraint.k} is larger than the {n} records: no table of "
                             "them is k-anonymous")
    cost = (1 << rank).astype(np.int64)
    X = X0.T.copy()  # one row per key, the kernels' layout (a copy: X0 stays the input)
    below = True
    while below:  # again while a pass left some record below k (module docstring)
        below = False
        for constraint in chosen:
            f = _frequencies(X.T, constraint.columns)
            order = np.argsort(f, kind="stable")
            order = order[f[order] < constraint.k]
            if order.size:
                _greedy(X, f, constraint.k, constraint.mask(), order, cost)
                below = True
    greedy = int(((X.T < 0) & (X0 >= 0)).sum())
    restored = _restore_all(X, X0.T.copy(), chosen, rank)
    return Suppression((X.T < 0) & (X0 >= 0), greedy, restored)


def _restore_all(X: np.ndarray, X0: np.ndarray, constraints: Sequence[Constraint],
                 rank: np.ndarray) -> int:
    """Pass 2 on the transposed matrices ``X`` (suppressed) and ``X0`` (the input)."""
    masks = np.array([c.mask() for c in constraints], dtype=np.int64)
    ks = np.array([c.k for c in constraints], dtype=np.int64)
    total, raised = 0, True
    while raised:  # a blank record was given a value back: try the values refused again
        keys, rows = np.nonzero((X < 0) & (X0 >= 0))
        if rows.size == 0:
            break
        order = np.lexsort((rows, -rank[keys]))  # the most important keys first, then by row
        F = np.stack([_frequencies(X.T, c.columns) for c in constraints])
        restored, raised = _restore(X, X0, F, ks, masks, rows[order], keys[order])
        total += int(restored)
    return total


def _frequencies(codes: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    """f of every record over the key ``columns`` of the (n, q) ``codes``, a missing value
    matching any value (:func:`microagg.core.frequencies.sample_frequencies`)."""
    import pandas as pd

    from microagg.core.frequencies import sample_frequencies

    frame = pd.DataFrame({j: pd.array(codes[:, j], dtype="Int64") for j in columns})
    frame = frame.mask(frame < 0)
    return sample_frequencies(frame, list(frame.columns))


@numba.njit(cache=True)
def _conflicts(X: np.ndarray, i: int, mask: int, out: np.ndarray) -> None:
    """out[j]: the keys (of ``mask``) where records i and j both have a value and differ.
    ``X`` is the key matrix transposed (one row per key), so each key is one pass the
    compiler vectorizes."""
    q, n = X.shape
    out[:] = 0
    for c in range(q):
        a = X[c, i]
        if not (mask >> c) & 1 or a < 0:
            continue
        bit = np.int64(1) << c
        column = X[c]
        for j in range(n):
            b = column[j]
            out[j] |= bit * ((b >= 0) & (b != a))


@numba.njit(cache=True)
def _present(X: np.ndarray, j: int, mask: int) -> int:
    """The keys of ``mask`` that record ``j`` has (a bit per key)."""
    present = 0
    for c in range(X.shape[0]):
        if (mask >> c) & 1 and X[c, j] >= 0:
            present |= 1 << c
    return present


@numba.njit(cache=True)
def _popcount(m: int) -> int:
    count = 0
    while m:
        m &= m - 1
        count += 1
    return count


# C901 waived: a numba kernel; its branches share the loop's local state, and a split
# into functions would pass that state through calls in the innermost loop.
@numba.njit(cache=True)
def _greedy(X: np.ndarray, f: np.ndarray, k: int, mask: int, order: np.ndarray,  # noqa: C901
            cost: np.ndarray) -> None:
    """Pass 1 for one constraint (module docstring); ``f`` holds its frequencies."""
    q, n = X.shape
    full = 1 << q
    size = np.zeros(full, dtype=np.int64)
    weight = np.zeros(full, dtype=np.int64)
    for s in range(full):
        size[s] = _popcount(s)
        for c in range(q):
            if (s >> c) & 1:
                weight[s] += cost[c]
    D = np.empty(n, dtype=np.int64)
    g = np.empty(full, dtype=np.int64)
    copies = np.empty(n, dtype=np.int64)
    for i in order:
        if f[i] >= k:
            continue
        _conflicts(X, i, mask, D)
        g[:] = 0
        m = 0
        for j in range(n):
            g[D[j]] += 1
            if D[j] == 0:
                same = True
                for c in range(q):
                    if (mask >> c) & 1 and X[c, i] != X[c, j]:
                        same = False
                        break
                if same:
                    copies[m] = j
                    m += 1
        for c in range(q):  # zeta transform: g[S] = #{j : D_ij ⊆ S}
            bit = 1 << c
            for s in range(full):
                if s & bit:
                    g[s] += g[s ^ bit]
        present = _present(X, i, mask)
        best = present  # suppressing every key of the constraint reaches n >= k
        for s in range(1, full):
            if (s & ~present) != 0 or g[s] < k:
                continue
            if size[s] < size[best] or (size[s] == size[best] and weight[s] < weight[best]):
                best = s
        blank = best == present  # the class keeps no key: complete records lose it
        for j in range(n):
            if blank and _present(X, j, mask) == mask:
                if D[j] == 0:
                    f[j] -= m  # (i's copies among them: set below)
            elif D[j] != 0 and (D[j] & ~best) == 0:
                f[j] += m
        for t in range(m):
            j = copies[t]
            f[j] = g[best]
            for c in range(q):
                if (best >> c) & 1:
                    X[c, j] = -1


# C901 waived: a numba kernel; its branches share the loop's local state, and a split
# into functions would pass that state through calls in the innermost loop.
@numba.njit(cache=True)
def _restore(X: np.ndarray, X0: np.ndarray, F: np.ndarray, ks: np.ndarray,  # noqa: C901
             masks: np.ndarray, rows: np.ndarray, keys: np.ndarray) -> tuple[int, bool]:
    """Pass 2 (module docstring): put back each suppressed value (rows[t], keys[t]) whose
    restoration keeps every constraint holding its key k-anonymous; ``F`` holds every
    constraint's frequencies and is kept up to date. Returns the values put back and
    whether one was put back into a record blank on some constraint's keys (which raises
    frequencies, now or once another record is given its last value back: a value refused
    before may then fit)."""
    q, n = X.shape
    full = 1 << q
    everything = full - 1
    D = np.empty(n, dtype=np.int64)
    start = np.empty(full + 1, dtype=np.int64)
    filled = np.empty(full, dtype=np.int64)
    bucket = np.empty(n, dtype=np.int64)
    lost = np.zeros(masks.size, dtype=np.int64)
    P = np.empty(n, dtype=np.int64)  # the keys each record has
    for r in range(n):
        P[r] = _present(X, r, everything)
    blanks = np.zeros(masks.size, dtype=np.int64)  # records with no key of each constraint
    for a in range(masks.size):
        for r in range(n):
            if (P[r] & masks[a]) == 0:
                blanks[a] += 1
    restored = 0
    raised = False
    for t in range(rows.size):
        j = rows[t]
        c = keys[t]
        v = X0[c, j]
        _conflicts(X, j, everything, D)
        # the records that lose their match with j: another value than v at key c; grouped
        # by their conflicts with j elsewhere (a constraint loses those without conflict
        # on its keys)
        start[:] = 0
        for r in range(n):
            if r != j and X[c, r] >= 0 and X[c, r] != v:
                start[D[r] + 1] += 1
        for d in range(full):
            start[d + 1] += start[d]
        filled[:] = start[:full]
        for r in range(n):
            if r != j and X[c, r] >= 0 and X[c, r] != v:
                bucket[filled[D[r]]] = r
                filled[D[r]] += 1
        after = P[j] | (1 << c)
        ok = True
        for a in range(masks.size):
            lost[a] = 0
            if not (masks[a] >> c) & 1:
                continue
            was_blank = (P[j] & masks[a]) == 0  # complete records did not count j
            for d in range(full):
                if (d & masks[a]) != 0:
                    continue
                for s in range(start[d], start[d + 1]):
                    lost[a] += 1
                    r = bucket[s]
                    if was_blank and (P[r] & masks[a]) == masks[a]:
                        continue
                    if F[a, r] - 1 < ks[a]:
                        ok = False
            if (after & masks[a]) == masks[a]:  # j has every key: the blanks leave it
                lost[a] += blanks[a] - (1 if was_blank else 0)
            if F[a, j] - lost[a] < ks[a]:
                ok = False
            if not ok:
                break
        if not ok:
            continue
        for a in range(masks.size):
            if not (masks[a] >> c) & 1:
                continue
            was_blank = (P[j] & masks[a]) == 0
            for d in range(full):
                if (d & masks[a]) != 0:
                    continue
                for s in range(start[d], start[d + 1]):
                    r = bucket[s]
                    if not (was_blank and (P[r] & masks[a]) == masks[a]):
                        F[a, r] -= 1
            F[a, j] -= lost[a]
            if was_blank:  # j has a value now: complete records that agree count it (and
                blanks[a] -= 1  # so would a record given its last value back: try again)
                raised = True
                for r in range(n):
                    if r != j and (P[r] & masks[a]) == masks[a] and X[c, r] == v:
                        F[a, r] += 1
        X[c, j] = v
        P[j] = after
        restored += 1
    return restored, raised
