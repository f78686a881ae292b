"""The compiled pairing of targeted record swapping (:mod:`microagg.core.swapping`)."""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["pair"]


@numba.njit(cache=True)
def _donor(s: int, level: int, areas: np.ndarray, eligible: np.ndarray,
           orders: np.ndarray, bounds: np.ndarray, heads: np.ndarray,
           profiles: np.ndarray, partner: np.ndarray) -> int:
    """The first household not yet swapped, of positive key, in another area of ``level``
    than ``s``, with ``s``'s code of the first profile that has one; -1 if none."""
    home = areas[level, s]
    for p in range(profiles.shape[0]):
        code = profiles[p, s]
        end = bounds[p, code + 1]
        start = heads[p, code]
        # households taken (or of key 0) at the head are skipped once for all
        while start < end and (partner[orders[level, p, start]] >= 0
                               or not eligible[level, orders[level, p, start]]):
            start += 1
        heads[p, code] = start
        for t in range(start, end):
            d = orders[level, p, t]
            if partner[d] < 0 and eligible[level, d] and areas[level, d] != home:
                return d
    return -1


@numba.njit(cache=True)
def pair(areas: np.ndarray, at_risk: np.ndarray, eligible: np.ndarray,
         orders: np.ndarray, bounds: np.ndarray, profiles: np.ndarray,
         by_area: np.ndarray, drawn: np.ndarray, quota: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pairing of :func:`microagg.core.swapping.pair_households` (one loop over levels,
    areas and drawn households: the donors available change with every swap)."""
    n_levels, n = areas.shape
    partner = np.full(n, -1, dtype=np.int64)
    level_of = np.full(n, -1, dtype=np.int64)
    role = np.zeros(n, dtype=np.int8)
    no_donor = np.zeros(n, dtype=np.bool_)
    heads = np.empty_like(bounds)
    chosen = np.empty(n, dtype=np.int64)
    others = np.empty(n, dtype=np.int64)
    finest = n_levels - 1
    for level in range(n_levels):
        heads[:, :] = bounds
        done = np.zeros(quota.size, dtype=np.int64)
        if level == finest:
            for h in range(n):  # swapped for risk at a coarser level: counts to the quota
                if role[h] == 1:
                    done[areas[finest, h]] += 1
        i = 0
        while i < n:
            area = areas[level, by_area[level, i]]
            j = i
            while j < n and areas[level, by_area[level, j]] == area:
                j += 1
            m = 0
            r = 0
            for t in range(i, j):
                h = by_area[level, t]
                if partner[h] >= 0 or no_donor[h]:
                    continue
                if at_risk[h] == level:
                    chosen[m] = h
                    m += 1
                elif level == finest and at_risk[h] == n_levels and drawn[h] > 0:
                    others[r] = h
                    r += 1
            if level == finest:
                rest = min(r, quota[area] - done[area] - m)
                if rest > 0:
                    order = np.argsort(-drawn[others[:r]], kind="mergesort")
                    for t in range(rest):
                        chosen[m] = others[order[t]]
                        m += 1
            for t in range(m):
                s = chosen[t]
                if partner[s] >= 0:
                    continue
                d = _donor(s, level, areas, eligible, orders, bounds, heads, profiles,
                           partner)
                if d < 0:
                    no_donor[s] = True
                    continue
                partner[s] = d
                partner[d] = s
                level_of[s] = level
                level_of[d] = level
                role[s] = 1 if at_risk[s] < n_levels else 2
                role[d] = 3
            i = j
    return partner, level_of, role, no_donor
