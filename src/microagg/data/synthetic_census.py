"""A synthetic population census: persons in households in a geography of regions, districts
and areas, with the key variables of a census and their usual skew.

The geography is 8 regions of 50 districts in all (10, 8, 7, 6, 6, 5, 4 and 4), each district
of 20 to 60 areas (about 2,000 areas), drawn once per seed whatever the size of the census.
Codes nest: a district's code is its region's times 100 plus its number in the region
(``305``), an area's is its district's times 100 plus its number in the district
(``30512``). Households are spread over the areas by skewed (log-normal) area populations and
numbered in area order; their sizes are 1 + Poisson, set to add up to the persons exactly.

Every person has ``hid`` (the household), ``person`` (1 for the reference person),
``region``, ``district``, ``area``, ``hhsize`` (the persons of the household), ``sex`` (1
male, 2 female), ``age`` (0-99), ``marital`` (1 single, 2 married, 3 widowed, 4 divorced),
``citizenship`` (``national`` or one of 60 ISO 3166 alpha-3 codes, most of them rare; shared
by the household as a rule), ``education`` (0 none, 1 primary, 2 lower secondary, 3 upper
secondary, 4 post-secondary, 5 tertiary) and ``activity`` (0 under 15, 1 employed, 2
unemployed, 3 student, 4 retired, 5 other inactive). A census counts everyone, so there is
no weight. Age follows the household's roles (a reference person, a partner, children,
other adults); marital status, education and activity follow age.

The persons are made in chunks of whole households (:func:`census_chunk`), each from random
numbers drawn per block of 65,536 persons (or households) with its own generator, so a chunk
is the same whatever chunks the census is cut into, and the whole census is never held.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microagg.errors import InputError

__all__ = ["CITIZENSHIP_CONTINENT", "COLUMNS", "Census", "census_chunk", "census_plan",
           "chunk_bounds", "synthetic_census"]

COLUMNS = ("hid", "person", "region", "district", "area", "hhsize", "sex", "age", "marital",
           "citizenship", "education", "activity")
"""The columns of the census, in order."""

_DISTRICTS = (10, 8, 7, 6, 6, 5, 4, 4)
_REGION_SHARE = np.array([0.22, 0.16, 0.14, 0.12, 0.11, 0.10, 0.08, 0.07])
_FOREIGN_SHARE = np.array([0.16, 0.10, 0.08, 0.07, 0.06, 0.05, 0.05, 0.04])
_BLOCK = 65_536

CITIZENSHIP_CONTINENT: dict[str, str] = {
    "national": "home country",
    **dict.fromkeys(("DEU", "POL", "ROU", "ITA", "FRA", "ESP", "PRT", "GBR", "NLD", "BGR",
                     "HRV", "SRB", "UKR", "HUN", "GRC", "AUT", "BEL", "CZE", "SVK", "LTU",
                     "IRL", "SWE"), "Europe"),
    **dict.fromkeys(("TUR", "SYR", "IND", "CHN", "PAK", "AFG", "IRQ", "IRN", "PHL", "VNM",
                     "BGD", "LKA", "THA", "NPL"), "Asia"),
    **dict.fromkeys(("MAR", "DZA", "NGA", "TUN", "EGY", "SEN", "ERI", "SOM", "GHA", "CMR",
                     "COD", "ETH"), "Africa"),
    **dict.fromkeys(("BRA", "USA", "COL", "VEN", "PER", "ECU", "DOM", "MEX", "CAN", "ARG"),
                    "Americas"),
    **dict.fromkeys(("AUS", "NZL"), "Oceania"),
}
"""Every citizenship category and its continent (``national`` its own group), ordered from
the most to the least frequent foreign citizenship: a taxonomy that groups rare ones (``national``
under ``home country``)."""

_CITIZENSHIPS = tuple(CITIZENSHIP_CONTINENT)
_CITIZENSHIP_TYPE = pd.CategoricalDtype(list(_CITIZENSHIPS))
_FOREIGN_P = 1.0 / np.arange(1, len(_CITIZENSHIPS)) ** 1.3
_FOREIGN_CUM = np.cumsum(_FOREIGN_P / _FOREIGN_P.sum())

# Adults' ages: a density by 5-year group from 18 to 100, inverted by interpolation.
_ADULT_AGES = np.array([18, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95,
                        100], dtype=float)
_ADULT_DENSITY = np.array([3.0, 7, 8, 8.5, 8.5, 8.5, 9, 9, 8.5, 8, 7, 6, 4.5, 3, 1.6, 0.6,
                           0.15])
_ADULT_CDF = np.concatenate([[0.0], np.cumsum(_ADULT_DENSITY) / _ADULT_DENSITY.sum()])

# Cumulative probabilities of each category, per age group (rows), for a uniform to pick.
_MARITAL_AGES = (16, 30, 60)
_MARITAL = np.cumsum([[1.0, 0, 0, 0], [0.85, 0.10, 0.0, 0.05], [0.35, 0.25, 0.05, 0.35],
                      [0.15, 0.15, 0.50, 0.20]], axis=1)
_EDUCATION_AGES = (6, 12, 16, 20, 35, 65)
_EDUCATION = np.cumsum([[1.0, 0, 0, 0, 0, 0], [0.02, 0.98, 0, 0, 0, 0],
                        [0.01, 0.30, 0.69, 0, 0, 0], [0.01, 0.05, 0.45, 0.49, 0, 0],
                        [0.01, 0.04, 0.15, 0.40, 0.12, 0.28], [0.02, 0.07, 0.20, 0.38, 0.13, 0.20],
                        [0.04, 0.20, 0.28, 0.30, 0.08, 0.10]], axis=1)
_ACTIVITY_AGES = (15, 20, 25, 55, 65)
_ACTIVITY = np.cumsum([[1.0, 0, 0, 0, 0, 0], [0, 0.12, 0.05, 0.80, 0, 0.03],
                       [0, 0.50, 0.08, 0.37, 0, 0.05], [0, 0.78, 0.06, 0.02, 0, 0.14],
                       [0, 0.55, 0.04, 0, 0.30, 0.11], [0, 0.05, 0, 0, 0.92, 0.03]], axis=1)


@dataclass(frozen=True, eq=False)
class Census:
    """The households of a synthetic census: their sizes and areas, in household order.

    Attributes
    ----------
    seed : int
        The seed every random number of the census derives from.
    size : numpy.ndarray
        The persons of each household (``int16``).
    area : numpy.ndarray
        The area code of each household (``int32``), in increasing order.
    starts : numpy.ndarray
        The index of each household's first person, and the persons in all last.
    """

    seed: int
    size: np.ndarray
    area: np.ndarray
    starts: np.ndarray

    @property
    def persons(self) -> int:
        """The persons of the census."""
        return int(self.starts[-1])

    @property
    def households(self) -> int:
        """The households of the census."""
        return int(self.size.size)


def _geography(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The area codes and each area's share of the households."""
    rng = np.random.default_rng([seed, 0])
    codes, shares = [], []
    for region, districts in enumerate(_DISTRICTS, start=1):
        counts = rng.integers(20, 61, districts)
        weight = rng.lognormal(0.0, 0.8, int(counts.sum()))
        shares.append(_REGION_SHARE[region - 1] * weight / weight.sum())
        for district, count in enumerate(counts, start=1):
            codes.append((region * 100 + district) * 100 + np.arange(1, count + 1))
    return np.concatenate(codes).astype(np.int32), np.concatenate(shares)


MAX_MEAN_SIZE = 100
"""The most persons a household holds on average (sizes are kept as 16-bit integers)."""


def census_plan(persons: int, households: int | None = None, seed: int = 0) -> Census:
    """The households of a census of ``persons`` persons: sizes and areas.

    Parameters
    ----------
    persons : int
        The persons of the census (at least 1).
    households : int, optional
        The households (between ``persons / 100`` and ``persons``: at most 100 persons in
        a household on average); default ``persons / 2.5``.
    seed : int, default 0
        The seed (at least 0).

    Returns
    -------
    Census
        The households, in area order.

    Raises
    ------
    InputError
        When ``persons`` or ``households`` is out of range.
    """
    if persons < 1:
        raise InputError(f"a census needs at least 1 person, got {persons}")
    if households is None:
        households = max(1, round(persons / 2.5))
    fewest = -(-persons // MAX_MEAN_SIZE)
    if not fewest <= households <= persons:
        raise InputError(f"a census of {persons:,} persons needs between {fewest:,} and "
                         f"{persons:,} households (at most {MAX_MEAN_SIZE} persons in a "
                         f"household on average), got {households:,}")
    if seed < 0:
        raise InputError(f"the seed must be at least 0, got {seed}")
    area_codes, shares = _geography(seed)
    rng = np.random.default_rng([seed, 1])
    area = np.repeat(area_codes, rng.multinomial(households, shares / shares.sum()))
    size = 1 + rng.poisson(persons / households - 1, households)
    gap = persons - int(size.sum())
    if gap > 0:
        np.add.at(size, rng.integers(0, households, gap), 1)
    elif gap < 0:
        extra = np.repeat(np.arange(households), size - 1)
        np.subtract.at(size, rng.choice(extra, -gap, replace=False), 1)
    starts = np.concatenate([[0], np.cumsum(size)]).astype(np.int64)
    return Census(seed=seed, size=size.astype(np.int16), area=area, starts=starts)


def chunk_bounds(census: Census, persons: int = 1_000_000) -> list[tuple[int, int]]:
    """The households ``(first, stop)`` of consecutive chunks of about ``persons`` persons
    each (whole households).

    Parameters
    ----------
    census : Census
        The census.
    persons : int, default 1,000,000
        The persons a chunk holds at most, unless one household holds more.

    Returns
    -------
    list of (int, int)
        The chunks' household ranges, covering every household once.
    """
    bounds, first = [], 0
    while first < census.households:
        stop = int(np.searchsorted(census.starts, census.starts[first] + persons,
                                   side="right")) - 1
        stop = min(max(stop, first + 1), census.households)
        bounds.append((first, stop))
        first = stop
    return bounds


def _uniforms(seed: int, stream: int, start: int, stop: int, k: int) -> np.ndarray:
    """``k`` uniforms for each of the items ``start`` to ``stop`` of a stream, the same
    whatever range they are asked in: each block of items has its own generator."""
    first, last = start // _BLOCK, (stop - 1) // _BLOCK
    blocks = [np.random.default_rng([seed, stream, b]).random((_BLOCK, k), dtype=np.float32)
              for b in range(first, last + 1)]
    return np.concatenate(blocks)[start - first * _BLOCK:stop - first * _BLOCK]


def _pick(u: np.ndarray, group: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """The category each uniform picks in its group's row of cumulative probabilities."""
    return (u[:, None] > cumulative[group, :-1]).sum(axis=1).astype(np.int8)


def census_chunk(census: Census, first: int, stop: int) -> pd.DataFrame:
    """The persons of the households ``first`` to ``stop`` (excluded), in household order.

    Parameters
    ----------
    census : Census
        The census, from :func:`census_plan`.
    first, stop : int
        The households, ``0 <= first < stop <= census.households``.

    Returns
    -------
    pandas.DataFrame
        One row per person, the columns :data:`COLUMNS`.
    """
    size = census.size[first:stop].astype(np.int64)
    p0, p1 = int(census.starts[first]), int(census.starts[stop])
    n = p1 - p0
    local = np.repeat(np.arange(stop - first), size)
    pos = np.arange(n) - np.repeat(census.starts[first:stop] - p0, size)
    hh = _uniforms(census.seed, 2, first, stop, 4)
    pu = _uniforms(census.seed, 3, p0, p1, 8)

    partnered = (size >= 2) & (hh[:, 1] < 0.75)
    head_age = np.interp(hh[:, 0], _ADULT_CDF, _ADULT_AGES).astype(np.int64)
    head_age = np.maximum(head_age, np.where(size >= 2, 20, 18))
    head, partner = pos == 0, (pos == 1) & partnered[local]
    child = ~head & ~partner & (pu[:, 0] < 0.85)
    age = np.interp(pu[:, 1], _ADULT_CDF, _ADULT_AGES).astype(np.int64)  # other adults
    age = np.where(head, head_age[local], age)
    mate = head_age[local] + np.floor((pu[:, 1] + pu[:, 2] - 1.0) * 8).astype(np.int64)
    age = np.where(partner, mate, age)
    oldest = np.clip(head_age[local] - 16, 0, 24)
    age = np.where(child, np.floor(pu[:, 1] * (oldest + 1)).astype(np.int64), age)
    age = np.clip(age, 0, 99)

    male = np.where(head, pu[:, 3] < 0.55, pu[:, 3] < 0.51)
    head_male = np.repeat(male[np.flatnonzero(head)], size)
    male = np.where(partner, (pu[:, 3] < 0.97) != head_male, male)

    couple = (head & partnered[local]) | partner
    marital = 1 + _pick(pu[:, 4], np.searchsorted(_MARITAL_AGES, age, side="right"), _MARITAL)
    marital = np.where(couple & (age >= 18), np.where(pu[:, 4] < 0.8, 2, 1), marital)

    region = census.area[first:stop] // 10_000
    foreign = hh[:, 2] < _FOREIGN_SHARE[region - 1]
    country = np.where(foreign, 1 + np.searchsorted(_FOREIGN_CUM, hh[:, 3]), 0)[local]
    own = np.where(pu[:, 5] < 0.08, 1 + np.searchsorted(_FOREIGN_CUM, pu[:, 6]), 0)
    country = np.minimum(np.where(pu[:, 7] < 0.95, country, own), len(_CITIZENSHIPS) - 1)

    education = _pick(pu[:, 6], np.searchsorted(_EDUCATION_AGES, age, side="right"),
                      _EDUCATION)
    activity = _pick(pu[:, 2], np.searchsorted(_ACTIVITY_AGES, age, side="right"), _ACTIVITY)
    area = census.area[first:stop][local]
    return pd.DataFrame({
        "hid": (np.arange(first, stop, dtype=np.int32) + 1)[local],
        "person": (pos + 1).astype(np.int16),
        "region": (area // 10_000).astype(np.int8),
        "district": (area // 100).astype(np.int16),
        "area": area,
        "hhsize": size.astype(np.int16)[local],
        "sex": np.where(male, 1, 2).astype(np.int8),
        "age": age.astype(np.int8),
        "marital": marital.astype(np.int8),
        "citizenship": pd.Categorical.from_codes(country.astype(np.int8), dtype=_CITIZENSHIP_TYPE),
        "education": education,
        "activity": activity,
    })


def synthetic_census(persons: int, households: int | None = None, seed: int = 0,
                     chunk: int = 1_000_000) -> Iterator[pd.DataFrame]:
    """A synthetic census (module docstring), in chunks of whole households.

    Parameters
    ----------
    persons : int
        The persons of the census.
    households : int, optional
        The households; default ``persons / 2.5``.
    seed : int, default 0
        The seed: the same seed gives the same census.
    chunk : int, default 1,000,000
        The persons a chunk holds at most (unless one household holds more); the census does
        not depend on it.

    Yields
    ------
    pandas.DataFrame
        The persons of consecutive households, the columns :data:`COLUMNS`.

    Examples
    --------
    >>> census = pd.concat(synthetic_census(1000, seed=1, chunk=300), ignore_index=True)
    >>> len(census), census["hid"].nunique()
    (1000, 400)
    >>> bool((census.groupby("hid")["hhsize"].first()
    ...       == census.groupby("hid").size()).all())
    True
    >>> bool((census["district"] // 100 == census["region"]).all())
    True
    """
    plan = census_plan(persons, households, seed)
    for first, stop in chunk_bounds(plan, chunk):
        yield census_chunk(plan, first, stop)
