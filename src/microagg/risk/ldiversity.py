"""l-diversity of a sensitive attribute, per record (Machanavajjhala et al. 2007).

The records that share a record's key values (its f_k records, :mod:`microagg.core.frequencies`)
hold a multiset of sensitive values with counts r_1 ≥ r_2 ≥ … ≥ r_d. Three measures, as
sdcMicro's ``ldiversity`` computes them:

* distinct l-diversity: d, the number of distinct sensitive values;
* entropy l-diversity: exp(−Σ p_i log p_i), p_i = r_i / f_k (§4.2 Def. 4.1 reads a class as
  entropy l-diverse when this is at least l);
* recursive (c, l)-diversity: the largest l with r_1 < c · (r_l + r_{l+1} + … + r_d)
  (§4.2 Def. 4.2), and 1 when no l ≥ 2 satisfies it; c = 2 by default.

A missing sensitive value is a value of its own: what a class reveals when its records miss
the attribute (sdcMicro reads each missing value as a different value, docs/algorithms.md).
Under ``matches-any`` a record's class is every record that matches it, so classes overlap
(a record whose keys are all missing is in the class of no record that has every key, as
its f_k counts it).

Reference: Machanavajjhala, A., Kifer, D., Gehrke, J., Venkitasubramaniam, M. (2007).
l-Diversity: Privacy beyond k-anonymity. ACM TKDD 1(1), article 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microagg.core.frequencies import combination_ids, counts_for
from microagg.errors import InputError
from microagg.options import LDiversityKind, MissingValues, parse

__all__ = ["LDiversity", "l_diversity"]


@dataclass(frozen=True)
class LDiversity:
    """The l-diversity of the sensitive ``attribute`` in every record's class."""

    attribute: str
    c: float
    distinct: np.ndarray
    entropy: np.ndarray
    recursive: np.ndarray
    records: np.ndarray | None = None  # the records each entry stands for (None: one each)

    def values(self, kind: LDiversityKind | str) -> np.ndarray:
        """The per-record measure ``kind`` (distinct, entropy or recursive)."""
        chosen = parse(LDiversityKind, kind, "`l_kind`")
        return {LDiversityKind.DISTINCT: self.distinct, LDiversityKind.ENTROPY: self.entropy,
                LDiversityKind.RECURSIVE: self.recursive}[chosen]

    def smallest(self, kind: LDiversityKind | str) -> float:
        """The smallest l over the records (0 for an empty table)."""
        values = self.values(kind)
        return float(values.min()) if values.size else 0.0

    def to_dict(self) -> dict[str, object]:
        return {"attribute": self.attribute, "c": self.c,
                "smallest_distinct": self.smallest(LDiversityKind.DISTINCT),
                "smallest_entropy": self.smallest(LDiversityKind.ENTROPY),
                "smallest_recursive": self.smallest(LDiversityKind.RECURSIVE)}


def l_diversity(codes: np.ndarray, sensitive: np.ndarray,
                missing: MissingValues | str = MissingValues.MATCHES_ANY, *, c: float = 2.0,
                attribute: str = "", records: np.ndarray | None = None) -> LDiversity:
    """Distinct, entropy and recursive (c, l)-diversity of ``sensitive`` in each record's class.

    Parameters
    ----------
    codes
        (n, q) int64 key codes, -1 where missing (:func:`microagg.core.frequencies.key_codes`).
    sensitive
        n int64 codes of the sensitive attribute, -1 where missing.
    missing
        What a missing key matches: ``matches-any`` (default) or ``category``.
    c
        The constant of recursive (c, l)-diversity (positive; sdcMicro's default 2).
    attribute
        The sensitive attribute's name, for the result.
    records
        The records each row stands for (default one): a row is then a combination of key
        and sensitive values with its count, as a group-by of the table gives them
        (:mod:`microagg.at_scale.check`); the figures are those of the table it counts.

    Returns
    -------
    LDiversity
        One value of each measure per row (per record without ``records``).

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0], [0], [0], [0], [1], [1]])
    >>> result = l_diversity(codes, np.array([0, 0, 1, 2, 2, 2]))
    >>> result.distinct.tolist(), result.recursive.tolist()
    ([3, 3, 3, 3, 1, 1], [2, 2, 2, 2, 1, 1])
    >>> [round(float(v), 4) for v in result.entropy]
    [2.8284, 2.8284, 2.8284, 2.8284, 1.0, 1.0]
    """
    if not c > 0:
        raise InputError(f"`l_c` must be positive, got {c}")
    missing = parse(MissingValues, missing, "missing")
    values = np.asarray(sensitive, dtype=np.int64)
    slots = int(values.max(initial=-1)) + 2  # the last slot holds the missing values
    slot = np.where(values < 0, slots - 1, values)
    weight = (np.ones(values.size, dtype=np.int64) if records is None
              else np.asarray(records, dtype=np.int64))
    group, g, counts = _value_counts(np.asarray(codes, dtype=np.int64), slot, slots, missing,
                                     weight)
    distinct, entropy, recursive = _measures(g, counts, c, int(group.max(initial=-1)) + 1)
    return LDiversity(attribute, float(c), distinct[group], entropy[group], recursive[group],
                      None if records is None else weight)


def _counted(keys: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``keys``, sorted, and the summed ``weight`` of each."""
    found, inverse = np.unique(keys, return_inverse=True)
    return found, np.bincount(inverse.reshape(-1), weights=weight).astype(np.int64)


def _value_counts(codes: np.ndarray, slot: np.ndarray, slots: int, missing: MissingValues,
                  weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The combination of every row, and one (combination, count) pair per sensitive
    value of the records matching it (a row counting ``weight`` records), sorted by
    combination."""
    if codes.shape[0] == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    group = combination_ids(codes, range(codes.shape[1]))
    if missing is MissingValues.CATEGORY or not (codes < 0).any():
        keys, counts = _counted(group * slots + slot, weight)
        return group, keys // slots, counts
    _, first = np.unique(group, return_index=True)
    owners, found, counts = _matching_values(codes, codes[first], slot, slots, weight)
    keys, inverse = np.unique(owners * slots + found, return_inverse=True)
    totals = np.bincount(inverse, weights=counts).astype(np.int64)
    return group, keys // slots, totals


def _matching_values(codes: np.ndarray, combos: np.ndarray, slot: np.ndarray, slots: int,
                     weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Under ``matches-any``: for each combination (a row of ``combos``), the sensitive slots
    and their counts among the records that match it, pattern pair by pattern pair as
    :mod:`microagg.core.frequencies` counts f_k (sparse: one triple per value present)."""
    q = codes.shape[1]
    bits = 1 << np.arange(q, dtype=np.int64)
    row_pattern = (codes >= 0).astype(np.int64) @ bits
    combo_pattern = (combos >= 0).astype(np.int64) @ bits
    complete = (1 << q) - 1
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for p in np.unique(combo_pattern):
        owners = np.flatnonzero(combo_pattern == p)
        for r in np.unique(row_pattern):
            if not counts_for(int(r), int(p), complete):
                continue  # a record without any key is not in a complete record's class
            rows = np.flatnonzero(row_pattern == r)
            common = [j for j in range(q) if (p >> j) & 1 and (r >> j) & 1]
            if common:
                ids = combination_ids(np.concatenate([codes[rows], combos[owners]]), common)
                row_ids, owner_ids = ids[:rows.size], ids[rows.size:]
            else:
                row_ids, owner_ids = np.zeros(rows.size, np.int64), np.zeros(owners.size, np.int64)
            keys, counts = _counted(row_ids * slots + slot[rows], weight[rows])
            key_group = keys // slots
            starts = np.searchsorted(key_group, owner_ids, "left")
            lengths = np.searchsorted(key_group, owner_ids, "right") - starts
            at = _ranges(starts, lengths)
            pieces.append((np.repeat(owners, lengths), keys[at] % slots, counts[at]))
    return tuple(np.concatenate(part) for part in zip(*pieces, strict=True))  # type: ignore[return-value]


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices starts[i], …, starts[i] + lengths[i] − 1, for every i, concatenated."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.arange(total) - np.repeat(offsets - starts, lengths)


def _measures(g: np.ndarray, counts: np.ndarray, c: float, groups: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct, entropy and recursive l-diversity of every combination from the counts of
    its sensitive values (``g``: the combination of each count, sorted)."""
    distinct = np.bincount(g, minlength=groups)
    size = np.bincount(g, weights=counts, minlength=groups)
    share = counts / size[g]
    entropy = np.exp(-np.bincount(g, weights=share * np.log(share), minlength=groups))
    # recursive: within each combination, the counts in decreasing order r_1 ≥ r_2 ≥ …
    order = np.lexsort((-counts, g))
    g, counts = g[order], counts[order]
    start = np.searchsorted(g, g, "left")
    before = np.cumsum(counts) - counts  # the counts ahead of this one, in any combination
    tail = size[g] - (before - before[start])  # r_j + r_{j+1} + … within the combination
    beyond = (np.arange(g.size) > start) & (c * tail > counts[start])
    recursive = 1 + np.bincount(g[beyond], minlength=groups)
    return distinct.astype(np.int64), entropy, recursive.astype(np.int64)
