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

1. **Greedy, a set of keys at a time.** For a record i below k and a set S of its keys, the
   conflict set D_ij of a record j is the set of keys where both have a value and the values
   differ; j matches i once the keys D_ij of i are suppressed, so f_i(S) = #{j : D_ij ⊆ S}
   is i's f once S is suppressed in it. The sets S are visited the fewest keys first, among
   sets of a size the one whose most important key is least important first (then the next
   …: the order of ``importance``); each *sweep* visits the records still below k that have
   the keys S, the most at risk first (in increasing f, as sdcMicro's ``localSuppression``
   orders them by individual risk, ties by row), and suppresses S in each one whose
   f_i(S) >= k on the table as it is then. So a record gets the smallest set that brings it
   to k at the first sweep that can, by the fewest keys, the least important. After a sweep
   of two or more keys that suppressed some value, the sweeps of one key run again: the
   records just suppressed now match more records, and one key may be enough for others
   (without this, records that could have shared a record's wildcards pay two keys each).
   f_i(S) is counted over the records grouped by their values on the keys i keeps
   (:mod:`microagg.core.suppression_groups`): a few look-ups per record, not a pass over the
   table; the frequencies of the records that now match i are raised by one (or, when i is
   left blank, those of the records with every key that matched it lowered by one). When
   the records still below k are no more than the sets of the next size, they are done a
   record at a time instead: for each, the histogram of its conflict sets summed over
   subsets (a zeta transform over the 2^q subsets of the keys) gives f_i(S) for every S at
   once, and the same choice is made, in i and in every record equal to i on the keys.
   Unlike sdcMicro, which moves a record one key towards its nearest neighbours and checks
   again after a full pass, the set chosen makes the record k-anonymous at once, by the
   fewest suppressions given the table as it is.
2. **Restoring.** Every suppressed value is tried in turn, the most important keys first,
   then the records with more keys first (then by their keys, then by row): it is put back
   when every record keeps f >= k (putting back the value v of key l in record j removes the
   matches between j and the records that have another value than v at l and match j
   elsewhere; only their frequencies and j's fall, and j's also by the blank records when j
   then has every key; a blank j, once it has a value, counts for the records with every
   key that agree with it). A greedy choice made early is often no longer needed once later
   records were suppressed. The records that match j are found in its group on the keys it
   has (their values there do not change while the values of key l are put back); fewer
   than eight values of one key and one set of keys are done by a pass over the table each.

With ``constraints`` (sdcMicro's and μ-ARGUS's combinations of keys), each constraint is a
set of keys and its own k, and blank means blank on its keys: the greedy pass runs for each
in turn (conflicts counted on its keys only), and again for every constraint a later pass
left a record below k in (by leaving a record blank on its keys), and a value is restored
only when every constraint holding its key still has f >= k.

Cost: one hashed pass over the table per sweep (the records numbered by their values on
the keys kept) plus, per record below k, a look-up per pattern of missing values on those
keys; the sweeps are at most the 2^q sets of keys (for 7 keys, 7 + 21 for most tables),
each followed by the q sweeps of one key. Pass 2 is a hashed pass per key and set of keys
present among the values suppressed, plus a look-up per value. So the cost grows with n as
the hashed passes do, not as n² (docs/benchmarks.md: 10^6 mostly unique records in minutes,
where the record at a time passes took 108 s for 10^5). The frequencies the passes start from are
those of :mod:`microagg.core.frequencies`, which the caller also uses to verify the table as
written (the passes keep theirs up to date by their own conflict counts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from microagg.core.suppression_groups import (
    missing_patterns,
    patterns,
    projection_groups,
    restore_key,
    sweep,
)
from microagg.errors import InputError

__all__ = ["MAX_KEYS", "Constraint", "Suppression", "default_importance",
           "local_suppression"]

MAX_KEYS = 16
"""The most keys one constraint may hold (the greedy pass visits its 2^q sets of keys)."""

_FEW = 8
"""Pass 2 puts back fewer values of one key and one set of keys present a value at a time."""


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
    return _passes(X0, chosen, rank, "auto")


def _passes(X0: np.ndarray, chosen: Sequence[Constraint], rank: np.ndarray,
            mode: str) -> Suppression:
    """The two passes on the (n, q) codes ``X0``; ``mode`` says how: ``"sweeps"`` a set of
    keys at a time over the records grouped by their values (module docstring),
    ``"records"`` a record at a time, ``"auto"`` sweeps while they cost less."""
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
                _greedy_pass(X, f, constraint, order, cost, mode)
                below = True
    greedy = int(((X.T < 0) & (X0 >= 0)).sum())
    restored = _restore_all(X, X0.T.copy(), chosen, rank, mode)
    return Suppression((X.T < 0) & (X0 >= 0), greedy, restored)


def _sets_in_order(mask: int, cost: np.ndarray) -> list[int]:
    """The non-empty sets of keys of ``mask``, the fewest keys first, then the least
    important (the order in which pass 1 prefers them)."""
    def weight(s: int) -> int:
        return sum(int(cost[c]) for c in range(cost.size) if (s >> c) & 1)

    sets = [s for s in range(1, mask + 1) if s & ~mask == 0]
    return sorted(sets, key=lambda s: (s.bit_count(), weight(s)))


def _sweep_one(X: np.ndarray, f: np.ndarray, k: int, mask: int, S: int,
               pending: np.ndarray) -> int:
    """One sweep of pass 1: the keys ``S`` suppressed where that brings a record of
    ``pending`` still below ``k`` to k. Returns the values suppressed."""
    pending = pending[f[pending] < k]
    held = patterns(X, mask)
    of_pending = held[pending]
    chosen = (of_pending & S) == S
    if not chosen.any():
        return 0
    rows, keys = pending[chosen], of_pending[chosen]
    distinct = np.flatnonzero(np.bincount(held, minlength=mask + 1))
    done = 0
    for p in np.unique(keys):
        these = rows[keys == p]
        kept = int(p) & ~S
        start, members, query, groups = projection_groups(
            X, kept, these, missing_patterns(kept, distinct))
        done += sweep(X, f, k, S, mask, these, start, members, query, groups)
    return done


def _greedy_pass(X: np.ndarray, f: np.ndarray, constraint: Constraint, order: np.ndarray,
                 cost: np.ndarray, mode: str) -> None:
    """Pass 1 for one constraint on the records ``order`` (below k, the most at risk first).
    A sweep per set of keys (module docstring); in ``"auto"`` mode the records still below k
    when a size of sets begins are done a record at a time once they are no more than the
    sets of that size (each sweep and each record cost one pass over the table)."""
    k, mask = constraint.k, constraint.mask()
    sets = _sets_in_order(mask, cost)
    singles = [S for S in sets if S.bit_count() == 1]
    pending = order
    for S in ([] if mode == "records" else sets):
        pending = pending[f[pending] < k]
        if not pending.size:
            return
        if mode == "auto" and pending.size <= math.comb(len(constraint.columns), S.bit_count()):
            break
        if _sweep_one(X, f, k, mask, S, pending) and S.bit_count() > 1:
            for single in singles:  # its records now match more: one key may be enough
                _sweep_one(X, f, k, mask, single, pending[f[pending] < k])
    pending = pending[f[pending] < k]
    if pending.size:
        _greedy(X, f, k, mask, pending, cost)


def _restore_all(X: np.ndarray, X0: np.ndarray, constraints: Sequence[Constraint],
                 rank: np.ndarray, mode: str) -> int:
    """Pass 2 on the transposed matrices ``X`` (suppressed) and ``X0`` (the input): the keys
    from the most important, and the values of a key by the keys their record has, then by
    row (module docstring). In ``"auto"`` mode a set of fewer than :data:`_FEW` values is
    done a value at a time (each look-up of groups costs a pass over the table)."""
    masks = np.array([c.mask() for c in constraints], dtype=np.int64)
    ks = np.array([c.k for c in constraints], dtype=np.int64)
    everything = (1 << X.shape[0]) - 1
    total, raised = 0, True
    while raised:  # a blank record was given a value back: try the values refused again
        raised = False
        F = np.stack([_frequencies(X.T, c.columns) for c in constraints])
        for c in sorted(range(X.shape[0]), key=lambda c: -rank[c]):
            rows = np.flatnonzero((X[c] < 0) & (X0[c] >= 0))
            held = np.flatnonzero((masks >> c) & 1)
            if not rows.size or not held.size:
                continue
            keys = patterns(X, everything)
            distinct = np.flatnonzero(np.bincount(keys, minlength=everything + 1))
            # records with more keys first (then by their keys, then by row)
            of_rows = keys[rows]
            rows = rows[np.lexsort((rows, -of_rows, -_key_counts(of_rows)))]
            for p in dict.fromkeys(keys[rows].tolist()):
                these = rows[keys[rows] == p]
                if mode == "records" or (mode == "auto" and these.size < _FEW):
                    done, blank = _restore(X, X0, F, ks, masks, these,
                                           np.full(these.size, c, dtype=np.int64))
                else:
                    done, blank = _restore_groups(X, X0, F, ks, masks, c, these, int(p),
                                                  held, distinct)
                total += int(done)
                raised |= bool(blank)
    return total


def _key_counts(held: np.ndarray) -> np.ndarray:
    """The number of keys in each bitmask of ``held``."""
    counts = np.zeros(held.size, dtype=np.int64)
    for c in range(MAX_KEYS):
        counts += (held >> c) & 1
    return counts


def _restore_groups(X: np.ndarray, X0: np.ndarray, F: np.ndarray, ks: np.ndarray,
                    masks: np.ndarray, c: int, rows: np.ndarray, keys: int,
                    held: np.ndarray, distinct: np.ndarray) -> tuple[int, bool]:
    """Pass 2 for the values of key ``c`` in ``rows``, records that have the keys ``keys``
    (:func:`microagg.core.suppression_groups.restore_key` on their groups under every
    constraint ``held``)."""
    n = X.shape[1]
    found = [projection_groups(X, keys & int(masks[a]), rows,
                               missing_patterns(keys & int(masks[a]), distinct)) for a in held]
    widest = max(len(start) for start, _, _, _ in found)
    most_patterns = max(query.shape[0] for _, _, query, _ in found)
    start = np.zeros((held.size, widest), dtype=np.int64)
    members = np.empty((held.size, n), dtype=np.int64)
    query = np.full((held.size, most_patterns, rows.size), np.iinfo(np.int64).max, dtype=np.int64)
    groups = np.empty(held.size, dtype=np.int64)
    for a, (s, m, qr, g) in enumerate(found):
        start[a, :s.size], members[a], query[a, :qr.shape[0]], groups[a] = s, m, qr, g
    present = patterns(X, (1 << X.shape[0]) - 1)
    blanks = np.array([int(((present & masks[a]) == 0).sum()) for a in held], dtype=np.int64)
    return restore_key(X, X0, F, ks, masks, c, rows, held, start, members, query, groups,
                       blanks)


def _frequencies(codes: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    """f of every record over the key ``columns`` of the (n, q) ``codes``, a missing value
    matching any value (:func:`microagg.core.frequencies.matching_counts`)."""
    from microagg.core.frequencies import matching_counts

    return matching_counts(np.ascontiguousarray(codes[:, list(columns)]))


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
