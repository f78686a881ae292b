"""Targeted record swapping of households within a geographic hierarchy: the pairing of
households with donors, on arrays (ONS's and Eurostat's targeted record swapping; sdcMicro's
``recordSwap``).

The households are numbered 0..H-1; the geography is ``areas[l, h]``, the area of household
h at level l (level 0 the coarsest), each level's codes numbering its areas (an area of a
finer level lies in one area of every coarser level). ``risk[l, h]`` is the risk of household
h at level l: in the k-anonymity rule, the largest 1 / count over its members, counting the
persons who share the member's risk variables within the member's area of level l
(:func:`household_risk`). A household is *at risk* from the first level whose risk exceeds
the threshold (1 / k: some member is one of fewer than k persons with its risk variables in
its area at that level); it is swapped across that level, i.e. with a donor from another
area of that level.

:func:`pair_households` goes down the levels from the coarsest; at each level it visits the
areas in the order of their codes and, in each, gives a donor to every household at risk
from that level not yet swapped. At the finest level it also draws, in each area, further
households at random (weighted by their risk at that level, without replacement) until the
area's quota is met: the quota of an area is its share of the households times the number of
swaps, ⌊H · rate / 2⌋ or ⌈H · rate / 2⌉ with equal chance (each swap moves two households),
rounded up or down at random so that the quotas add up to it, and households of the area
already swapped for risk at a coarser level count towards it. A donor is drawn from the
households not yet swapped in *another* area of the level that share the household's
similarity profile, the first profile with such a household, weighted by their risk at the
level (the donors at most risk first). A household that finds no donor keeps its place and
is reported; it may still be taken as a donor later, which moves it. Every household is
swapped at most once, and a swap exchanges the whole geography of the two households, so the
number of households in every area at every level is kept exactly.

The weighted draws without replacement use one key per household, w / E with E ~ Exp(1),
taken in decreasing order (Efraimidis and Spirakis 2006), as sdcMicro does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SWAPPED_AS", "Pairing", "area_codes", "household_risk", "pair_households",
           "quotas"]

SWAPPED_AS = ("not swapped", "at risk", "at random", "donor")
"""What ``Pairing.role`` codes 0..3 mean."""


@dataclass(frozen=True, eq=False)
class Pairing:
    """The households paired by :func:`pair_households`.

    ``partner[h]`` is the household h swapped with (-1: not swapped), ``level[h]`` the level
    across which it was swapped (-1), ``role[h]`` why (:data:`SWAPPED_AS`), ``at_risk[h]``
    the first level at which it is at risk (the number of levels when at none), ``no_donor[h]``
    whether it was drawn (at risk or at random) and found no donor, ``quota`` the swaps due in
    each area of the finest level and ``swaps`` their sum."""

    partner: np.ndarray
    level: np.ndarray
    role: np.ndarray
    at_risk: np.ndarray
    no_donor: np.ndarray
    quota: np.ndarray
    swaps: int


def area_codes(geography: np.ndarray) -> np.ndarray:
    """The area of every row at each level: ``geography[l]`` holds the codes of level l
    (coarsest first); the area of level l is the combination of levels 0..l, numbered in
    the order of those codes (so a finer area never spans two coarser ones).

    Examples
    --------
    >>> area_codes(np.array([[1, 1, 2, 2], [1, 2, 1, 1]])).tolist()
    [[0, 0, 1, 1], [0, 1, 2, 2]]
    """
    geography = np.asarray(geography, dtype=np.int64)
    out = np.empty_like(geography)
    combined = np.zeros(geography.shape[1], dtype=np.int64)
    for level, codes in enumerate(geography):
        _, codes = np.unique(codes, return_inverse=True)
        _, combined = np.unique(combined * (int(codes.max(initial=0)) + 1) + codes,
                                return_inverse=True)
        out[level] = combined
    return out


def household_risk(areas: np.ndarray, keys: np.ndarray, household: np.ndarray,
                   households: int) -> np.ndarray:
    """The risk of each household at each level in the k-anonymity rule: the largest
    1 / count over its persons, the count the persons who share the person's ``keys`` (one
    code per combination of the risk variables) in the person's area of the level.
    ``areas[l, i]`` is person i's area at level l, ``household[i]`` its household.

    Examples
    --------
    >>> areas = np.array([[0, 0, 0, 1]])
    >>> household_risk(areas, np.array([5, 5, 6, 5]), np.array([0, 0, 1, 2]), 3).tolist()
    [[0.5, 1.0, 1.0]]
    """
    out = np.zeros((areas.shape[0], households))
    keys = np.asarray(keys, dtype=np.int64)
    span = int(keys.max(initial=0)) + 1
    for level, area in enumerate(areas):
        _, cell, counts = np.unique(area.astype(np.int64) * span + keys,
                                    return_inverse=True, return_counts=True)
        np.maximum.at(out[level], household, 1.0 / counts[cell])
    return out


def quotas(sizes: np.ndarray, swap_rate: float, rng: np.random.Generator
           ) -> tuple[np.ndarray, int]:
    """The swaps due in each area of the finest level (``sizes``: its households) and their
    total: ⌊H · rate / 2⌋ or ⌈H · rate / 2⌉ with equal chance, shared in proportion to the
    sizes, each share rounded down and the remainder given one by one to areas drawn with
    probability proportional to their fractional parts.

    Examples
    --------
    >>> due, total = quotas(np.array([50, 30, 20]), 0.2, np.random.default_rng(0))
    >>> int(due.sum()) == total == 10, due.tolist()
    (True, [5, 3, 2])
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    exact = sizes.sum() * swap_rate / 2
    total = int(np.floor(exact) if rng.random() < 0.5 else np.ceil(exact))
    share = sizes / max(int(sizes.sum()), 1) * total
    due = np.floor(share).astype(np.int64)
    fraction = share - due
    left = total - int(due.sum())
    if left > 0:
        keys = np.where(fraction > 0, fraction / rng.exponential(size=fraction.size), -1.0)
        due[np.argsort(-keys, kind="stable")[:left]] += 1
    return due, total


def pair_households(areas: np.ndarray, risk: np.ndarray, threshold: float,
                    profiles: np.ndarray, swap_rate: float, rng: np.random.Generator
                    ) -> Pairing:
    """Pair households with donors (the module docstring says how).

    Parameters
    ----------
    areas : int array (L, H)
        The area of each household at each level (:func:`area_codes`), coarsest first.
    risk : float array (L, H)
        The risk of each household at each level; a household of risk 0 at a level is never
        drawn at random nor taken as a donor at that level.
    threshold : float
        A household is at risk from the first level whose risk exceeds it.
    profiles : int array (P, H)
        The similarity profiles, tried in order: profile p's code of each household.
    swap_rate : float
        The share of households to swap, in [0, 1].
    rng : numpy.random.Generator
        Every draw.

    Returns
    -------
    Pairing

    Examples
    --------
    >>> areas = np.array([[0, 0, 0, 1, 1, 1]])
    >>> risk = np.array([[1.0, 0.5, 0.5, 0.5, 0.5, 0.5]])
    >>> pairing = pair_households(areas, risk, 1 / 2, np.zeros((1, 6), dtype=np.int64),
    ...                           0.0, np.random.default_rng(1))
    >>> int(pairing.role[0]), int(areas[0, pairing.partner[0]])
    (1, 1)
    """
    from microagg.core._swap_kernels import pair

    areas = np.ascontiguousarray(areas, dtype=np.int64)
    risk = np.ascontiguousarray(risk, dtype=np.float64)
    profiles = np.ascontiguousarray(profiles, dtype=np.int64)
    n_levels, n = areas.shape
    exceeds = risk > threshold
    at_risk = np.where(exceeds.any(axis=0), exceeds.argmax(axis=0), n_levels).astype(np.int64)
    finest = areas[-1]
    quota, swaps = quotas(np.bincount(finest, minlength=int(finest.max(initial=-1)) + 1),
                          swap_rate, rng)
    # one key per household and level: the donors' order; and one for the random draws
    keys = risk / rng.exponential(size=risk.shape)
    drawn = risk[-1] / rng.exponential(size=n)
    orders = np.empty((n_levels, profiles.shape[0], n), dtype=np.int64)
    width = int(profiles.max(initial=0)) + 2
    bounds = np.empty((profiles.shape[0], width), dtype=np.int64)
    for p, codes in enumerate(profiles):
        bounds[p] = np.searchsorted(np.sort(codes), np.arange(width))
        for level in range(n_levels):
            orders[level, p] = np.lexsort((-keys[level], codes))
    by_area = np.stack([np.lexsort((-keys[level], areas[level]))
                        for level in range(n_levels)])
    partner, levels, role, no_donor = pair(areas, at_risk, keys > 0, orders, bounds,
                                          profiles, by_area, drawn, quota)
    return Pairing(partner, levels, role, at_risk, no_donor, quota, swaps)
