"""The compiled steps of the SUDA2 search (:mod:`microagg.risk.suda`).

A node of the search holds the rows it looks at (``rows``: indices into the row table, the
records first, ``n_real`` of them, then virtual rows), and ``ids``: each row's combination on
the node's keys, numbered 0 … top − 1. ``owner[g]`` is the candidate a virtual row g belongs
to (−1 for a record), ``zeroed[g]`` the keys it has missing.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def extend(rows: np.ndarray, n_real: int, ids: np.ndarray, column: np.ndarray, radix: int,
           owner: np.ndarray, chosen: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """The rows of a child that adds the key ``column``: every record of the node and the
    virtual rows of the ``chosen`` candidates; and their combinations packed with the key
    (id · radix + code)."""
    size = n_real
    for k in range(n_real, rows.size):
        if chosen[owner[rows[k]]]:
            size += 1
    out_rows = np.empty(size, dtype=np.int64)
    keys = np.empty(size, dtype=np.int64)
    at = 0
    for k in range(rows.size):
        row = rows[k]
        if k < n_real or chosen[owner[row]]:
            out_rows[at] = row
            keys[at] = ids[k] * radix + column[row]
            at += 1
    return out_rows, n_real, keys


@numba.njit(cache=True)
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


@numba.njit(cache=True)
def matches(rows: np.ndarray, n_real: int, ids: np.ndarray, top: int, owner: np.ndarray,
            zeroed: np.ndarray, mask: int, slot: np.ndarray, n_active: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """The records of each combination (``counts``), and for each active candidate the
    records matching it on ``mask``: the sum over its virtual rows with their missing keys
    inside ``mask``."""
    counts = np.zeros(top, dtype=np.int64)
    for k in range(n_real):
        counts[ids[k]] += 1
    found = np.zeros(n_active, dtype=np.int64)
    for k in range(n_real, rows.size):
        row = rows[k]
        if zeroed[row] & ~mask == 0:
            found[slot[owner[row]]] += counts[ids[k]]
    return counts, found


@numba.njit(cache=True)
def prune(rows: np.ndarray, n_real: int, ids: np.ndarray, top: int, owner: np.ndarray,
          still: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """The rows a node passes to its children: the virtual rows of the ``still`` active
    candidates and the records that share a combination with one of them."""
    wanted = np.zeros(top, dtype=np.bool_)
    size = 0
    for k in range(n_real, rows.size):
        if still[owner[rows[k]]]:
            wanted[ids[k]] = True
            size += 1
    for k in range(n_real):
        if wanted[ids[k]]:
            size += 1
    out_rows = np.empty(size, dtype=np.int64)
    out_ids = np.empty(size, dtype=np.int64)
    at = 0
    for k in range(n_real):
        if wanted[ids[k]]:
            out_rows[at] = rows[k]
            out_ids[at] = ids[k]
            at += 1
    kept_real = at
    for k in range(n_real, rows.size):
        if still[owner[rows[k]]]:
            out_rows[at] = rows[k]
            out_ids[at] = ids[k]
            at += 1
    return out_rows, kept_real, out_ids
