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
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of the child that adds key ``bit`` (its codes ``column``): every record; the
    virtual rows of the ``chosen`` candidates with the candidate's value of the key; and, for
    each of these whose missing keys plus this one are a zero set (sorted ``zero_sets``), one
    more with the key missing (code radix − 1). Returns the virtual rows' owners and missing
    keys, and every row's combination packed with the key (id · radix + code)."""
    n_real = real.size
    spawn = np.zeros(owner.size, dtype=np.bool_)
    size = 0
    for k in range(owner.size):
        if chosen[owner[k]]:
            size += 1
            wider = zero[k] | bit
            at = np.searchsorted(zero_sets, wider)
            if wider != zero[k] and at < zero_sets.size and zero_sets[at] == wider:
                spawn[k] = True
                size += 1
    out_owner = np.empty(size, dtype=np.int64)
    out_zero = np.empty(size, dtype=np.int64)
    keys = np.empty(n_real + size, dtype=np.int64)
    for i in range(n_real):
        keys[i] = ids[i] * radix + column[real[i]]
    at = 0
    for k in range(owner.size):
        if chosen[owner[k]]:
            base = ids[n_real + k] * radix
            out_owner[at] = owner[k]
            out_zero[at] = zero[k]
            keys[n_real + at] = base + column[candidate_row[owner[k]]]
            at += 1
            if spawn[k]:
                out_owner[at] = owner[k]
                out_zero[at] = zero[k] | bit
                keys[n_real + at] = base + radix - 1
                at += 1
    return out_owner, out_zero, keys


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
