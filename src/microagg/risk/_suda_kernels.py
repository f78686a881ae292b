"""The compiled steps of the SUDA2 search (:mod:`microagg.risk.suda`).

A node of the search holds the records it looks at (``real``: indices into the table of
records), the virtual rows of its active candidates (``owner``: the candidate, ``zero``: the
keys the row has missing, all inside the node's keys), and ``ids``: the combination of every
row on the node's keys, records first, numbered 0 … top − 1.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def extend(real: np.ndarray, owner: np.ndarray, zero: np.ndarray, ids: np.ndarray,
           column: np.ndarray, candidate_row: np.ndarray, radix: int, bit: int,
           zero_sets: np.ndarray, chosen: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows of the child that adds key ``bit`` (its codes ``column``): the virtual rows
    of the ``chosen`` candidates with the candidate's value of the key, and, for each of
    these whose missing keys plus this one are a zero set (sorted ``zero_sets``), one more
    with the key missing (code radix − 1); the records that share a combination with one
    of them on the node's keys (no other can match one on the child's). Returns the
    records, the virtual rows' owners and missing keys, and every row's combination packed
    with the key (id · radix + code), records first."""
    n_real = real.size
    spawn = np.zeros(owner.size, dtype=np.bool_)
    top = 0
    for i in range(ids.size):
        top = max(top, ids[i] + 1)
    wanted = np.zeros(top, dtype=np.bool_)  # by combination id (kept from before pruning)
    size = 0
    for k in range(owner.size):
        if chosen[owner[k]]:
            size += 1
            wanted[ids[n_real + k]] = True
            wider = zero[k] | bit
            at = np.searchsorted(zero_sets, wider)
            if wider != zero[k] and at < zero_sets.size and zero_sets[at] == wider:
                spawn[k] = True
                size += 1
    n_kept = 0
    for i in range(n_real):
        if wanted[ids[i]]:
            n_kept += 1
    out_real = np.empty(n_kept, dtype=np.int64)
    out_owner = np.empty(size, dtype=np.int64)
    out_zero = np.empty(size, dtype=np.int64)
    keys = np.empty(n_kept + size, dtype=np.int64)
    at = 0
    for i in range(n_real):
        if wanted[ids[i]]:
            out_real[at] = real[i]
            keys[at] = ids[i] * radix + column[real[i]]
            at += 1
    at = 0
    for k in range(owner.size):
        if chosen[owner[k]]:
            base = ids[n_real + k] * radix
            out_owner[at] = owner[k]
            out_zero[at] = zero[k]
            keys[n_kept + at] = base + column[candidate_row[owner[k]]]
            at += 1
            if spawn[k]:
                out_owner[at] = owner[k]
                out_zero[at] = zero[k] | bit
                keys[n_kept + at] = base + radix - 1
                at += 1
    return out_real, out_owner, out_zero, keys


@numba.njit(cache=True, nogil=True)
def compact(keys: np.ndarray, scratch: np.ndarray) -> tuple[np.ndarray, int]:
    """Ids 0, 1, … in order of first appearance for ``keys`` (each below ``scratch.size``;
    ``scratch`` holds −1 everywhere, and again on return)."""
    out = np.empty(keys.size, dtype=np.int64)
    top = 0
    for i in range(keys.size):
        found = scratch[keys[i]]
        if found < 0:
            found = top
            scratch[keys[i]] = top
            top += 1
        out[i] = found
    for i in range(keys.size):
        scratch[keys[i]] = -1
    return out, top


@numba.njit(cache=True, nogil=True)
def matches(n_real: int, owner: np.ndarray, ids: np.ndarray, top: int, slot: np.ndarray,
            n_active: int) -> tuple[np.ndarray, np.ndarray]:
    """The records of each combination (``counts``), and for each active candidate (at
    ``slot[candidate]``) the records that match it: the sum over its virtual rows."""
    counts = np.zeros(top, dtype=np.int64)
    for i in range(n_real):
        counts[ids[i]] += 1
    found = np.zeros(n_active, dtype=np.int64)
    for k in range(owner.size):
        found[slot[owner[k]]] += counts[ids[n_real + k]]
    return counts, found


@numba.njit(cache=True, nogil=True)
def prune(real: np.ndarray, owner: np.ndarray, zero: np.ndarray, ids: np.ndarray,
          counts: np.ndarray, still: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows a node passes to its children: the virtual rows of the ``still`` active
    candidates that some record matches (one no record matches on the node's keys matches
    none on more keys), and the records that share a combination with one of them."""
    n_real = real.size
    wanted = np.zeros(counts.size, dtype=np.bool_)
    keep = np.zeros(owner.size, dtype=np.bool_)
    n_virtual = 0
    for k in range(owner.size):
        row_id = ids[n_real + k]
        if still[owner[k]] and counts[row_id] > 0:
            keep[k] = True
            wanted[row_id] = True
            n_virtual += 1
    n_kept = 0
    for i in range(n_real):
        if wanted[ids[i]]:
            n_kept += 1
    out_real = np.empty(n_kept, dtype=np.int64)
    out_owner = np.empty(n_virtual, dtype=np.int64)
    out_zero = np.empty(n_virtual, dtype=np.int64)
    out_ids = np.empty(n_kept + n_virtual, dtype=np.int64)
    at = 0
    for i in range(n_real):
        if wanted[ids[i]]:
            out_real[at] = real[i]
            out_ids[at] = ids[i]
            at += 1
    for k in range(owner.size):
        if keep[k]:
            out_owner[at - n_kept] = owner[k]
            out_zero[at - n_kept] = zero[k]
            out_ids[at] = ids[n_real + k]
            at += 1
    return out_real, out_owner, out_zero, out_ids


@numba.njit(cache=True, nogil=True)
def compact_sorted(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """Ids 0, 1, … for ``keys`` in the order of their values: :func:`compact` for keys too
    large for its table."""
    order = np.argsort(keys, kind="mergesort")
    out = np.empty(keys.size, dtype=np.int64)
    top = 0
    for k in range(order.size):
        if k > 0 and keys[order[k]] != keys[order[k - 1]]:
            top += 1
        out[order[k]] = top
    return out, top + 1 if keys.size else 0


@numba.njit(cache=True, nogil=True)
def _has(live: np.ndarray, mask: int, candidate: int) -> bool:
    return (live[mask, candidate >> 6] >> np.uint64(candidate & 63)) & np.uint64(1) != 0


@numba.njit(cache=True, nogil=True)
def search(table: np.ndarray, radix: np.ndarray, candidate_row: np.ndarray,
           present: np.ndarray, zero_sets: np.ndarray, weight: np.ndarray,
           scratch: np.ndarray, state: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The whole search (:mod:`microagg.risk.suda`): each candidate's score and
    contributions, and the MSUs by size. ``state[0]`` counts the subsets visited as it goes
    and a nonzero ``state[1]`` (set by another thread) stops it before the next one.

    The nodes on the path from the root are a stack, one level per key of the node: its
    mask, the next key to add, its rows and the candidates live on it. ``live[S]`` holds
    (as bits) the candidates active on S and not unique there: a candidate is active on a
    child S ∪ {v} of S when it is live on S and on every S ∪ {v} minus one key of S."""
    n_real, m = table.shape
    n_cand = present.size
    score = np.zeros(n_cand)
    contribution = np.zeros((n_cand, m))
    by_size = np.zeros(m, dtype=np.int64)
    if n_cand == 0 or n_real <= 1:
        return score, contribution, by_size
    live = np.zeros((1 << m, (n_cand + 63) >> 6), dtype=np.uint64)
    for c in range(n_cand):
        live[0, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
    masks = np.zeros(m + 1, dtype=np.int64)
    next_key = np.zeros(m + 1, dtype=np.int64)
    ends = np.zeros(m + 1, dtype=np.int64)  # the keys a level may add: those below its lowest
    tops = np.zeros(m + 1, dtype=np.int64)  # the largest combination id of its rows
    real = [np.arange(n_real)]
    owner = [np.arange(n_cand)]
    zero = [np.zeros(n_cand, dtype=np.int64)]
    ids = [np.zeros(n_real + n_cand, dtype=np.int64)]
    still = [np.arange(n_cand)]
    ends[0] = m
    chosen = np.zeros(n_cand, dtype=np.bool_)
    slot = np.zeros(n_cand, dtype=np.int64)
    depth = 0
    while depth >= 0:
        if next_key[depth] >= ends[depth]:
            depth -= 1
            continue
        if state[1]:
            break
        state[0] += 1
        mask, v = masks[depth], next_key[depth]
        next_key[depth] += 1
        child = mask | (1 << v)
        active = _active(still[depth], present, live, mask, v)
        if active.size == 0:
            continue
        chosen[:] = False
        for k in range(active.size):
            chosen[active[k]] = True
            slot[active[k]] = k
        child_real, child_owner, child_zero, keys = extend(
            real[depth], owner[depth], zero[depth], ids[depth], table[:, v], candidate_row,
            radix[v], 1 << v, zero_sets, chosen)
        if (tops[depth] + 1) * radix[v] > scratch.size:
            child_ids, top = compact_sorted(keys)
        else:
            child_ids, top = compact(keys, scratch)
        counts, found = matches(child_real.size, child_owner, child_ids, top, slot,
                                active.size)
        below = _record(active, found, child, weight, live, score, contribution, by_size)
        if below.size == 0 or v == 0:
            continue
        chosen[:] = False
        chosen[below] = True
        rows = prune(child_real, child_owner, child_zero, child_ids, counts, chosen)
        depth += 1
        masks[depth], next_key[depth], ends[depth] = child, 0, v
        tops[depth] = rows[3].max() if rows[3].size else 0
        if len(real) <= depth:
            real.append(rows[0])
            owner.append(rows[1])
            zero.append(rows[2])
            ids.append(rows[3])
            still.append(below)
        else:
            real[depth], owner[depth], zero[depth], ids[depth] = rows
            still[depth] = below
    return score, contribution, by_size


@numba.njit(cache=True, nogil=True)
def _active(still: np.ndarray, present: np.ndarray, live: np.ndarray, mask: int, v: int
            ) -> np.ndarray:
    """The candidates of ``still`` (live on ``mask``) active on ``mask`` ∪ {v}: with key v
    and live on the child minus each key of ``mask``."""
    child = mask | (1 << v)
    active = np.empty(still.size, dtype=np.int64)
    n_active = 0
    for c in still:
        if not (present[c] >> v) & 1:
            continue
        ok = True
        rest = mask
        while rest and ok:
            u = rest & -rest
            rest ^= u
            ok = _has(live, child ^ u, c)
        if ok:
            active[n_active] = c
            n_active += 1
    return active[:n_active]


@numba.njit(cache=True, nogil=True)
def _record(active: np.ndarray, found: np.ndarray, child: int, weight: np.ndarray,
            live: np.ndarray, score: np.ndarray, contribution: np.ndarray,
            by_size: np.ndarray) -> np.ndarray:
    """Score the ``active`` candidates unique on ``child`` (``found`` one match: an MSU),
    mark the others live on it and return them."""
    m = contribution.shape[1]
    size = 0
    for j in range(m):
        size += (child >> j) & 1
    below = np.empty(active.size, dtype=np.int64)
    n_below = 0
    for k in range(active.size):
        c = active[k]
        if found[k] == 1:
            score[c] += weight[size]
            for j in range(m):
                if (child >> j) & 1:
                    contribution[c, j] += weight[size]
            by_size[size - 1] += 1
        else:
            live[child, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
            below[n_below] = c
            n_below += 1
    return below[:n_below]
