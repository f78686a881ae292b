"""SUDA2: special uniques of the key variables and their DIS scores (Manning et al. 2008).

A *sample unique* of a record r over a set S of key variables is its combination of values on
S when no other record shares it; it is *minimal* (an MSU) when no proper subset of S is
unique for r. Only records unique on all the keys have MSUs. The SUDA score of a record sums
over its MSUs the weight ``(M − |S|)!`` (M keys): small MSUs, the easiest to spot, weigh most
(Elliot et al. 2002; sdcMicro ``suda2(original_scores = TRUE)``, its default). A key
variable's contribution is the percentage of all the scores carried by the MSUs it is in
(sdcMicro's ``attribute_contributions``): ``100 · Σ_r Σ_{S ∋ v} (M − |S|)! / Σ_r score_r``.
Each is out of 100 on its own and they are not shares: an MSU of several keys counts for
each, so they sum to 100 times the score-weighted mean size of the MSUs (331 % on a file
whose MSUs hold 3.31 keys on average). The DIS score (Elliot 2000; sdcMicro's formula) turns the
scores into the probability that a match on the keys is correct: with U sample uniques, P
records in pairs (f_k = 2), the sampling fraction d (``dis_fraction``, 0.01 by default),
Dis = U d / (U d + P (1 − d)) and Q = 1 + (8 − M)/20,

    dis_r = 1 / (1 + (U / Dis − U) / (score_r^Q · Σ_j score_j^(−Q)))

over the records with a positive score (0 for the others).

The search (this module's own; the result is SUDA2's, the set of all MSUs) takes one of two
ways, whichever :func:`search_cost` finds cheaper for n records and M keys:

* the *record search* (:mod:`microagg.risk._suda_records`): for each sample unique, the keys
  on which every other distinct row agrees with it, as a bit set of the 2^M subsets the two
  share; closed downward, its complement's minimal members are the MSUs. O(n M + 2^M M/64)
  per sample unique: on UCI Adult's fourteen keys 1.6-2.0 s of CPU, the subset search 57 s;
* the *subset search*, for few keys on many records (or more keys than the record search's
  bit sets take). Subsets S of the keys are visited depth first in increasing order of their
  bit masks, the children of S adding a key below its lowest one, so that every subset of S
  is visited (or pruned) before S. At S the records still *active* are the sample uniques
  with no MSU inside S; an active record unique on S has S as an MSU (every proper subset is
  known not unique). Three prunings keep the search small:

  * a subset with no active record is not visited, nor anything above it in the tree (an active
    record of a superset is active on the subset);
  * the records a subtree looks at shrink with it: a record that shares no combination on S
    with an active record cannot match one on a superset of S;
  * records in classes of three or more identical ones are kept twice (a count of 1 stays 1,
    a count of 2 or more stays 2 or more), as SUDA2 does.

The compiled subset search (:func:`microagg.risk._suda_kernels.search`) keeps, for each
subset visited, a bit per sample unique live there (active and not unique): a record is
active on S when it is live on every S minus one key. Node by node from Python (more keys
than that table holds), the MSUs found so far tell it instead.
Each visited subset costs O(m + a) work for the m records still looked at and the a
active ones: the worst case, every subset visited with every record, is O(2^M · n) time, and
O(n M + number of MSUs) memory; sdcMicro's SUDA2 is exponential in M too. Missing key
values follow ``missing``: under ``category`` a missing value is a value like any other;
under ``matches-any`` it matches every value, so it never belongs to an MSU and a record
missing a key counts for every value of it. The latter is counted with one *virtual* row per
record r and set Z of keys r has that some record misses (r's values with Z missing): the
number of records matching r on S is the sum over Z ⊆ S of the records equal to r's virtual
row Z on S, missing on Z. A record whose keys are all missing counts for no record that has
every key (as in f_k, :mod:`microagg.core.frequencies`), and a record that has some keys
missing counts it; so where there is one, every sample unique has every key, and the search
leaves such records out. The record search needs no virtual rows: two rows agree on a key
where either misses it.

References
----------
Elliot, M. J., Manning, A. M., Ford, R. W. (2002). A computational algorithm for handling the
special uniques problem. International Journal of Uncertainty, Fuzziness and Knowledge-Based
Systems 10(5), 493-509.

Manning, A. M., Haglin, D. J., Keane, J. A. (2008). A recursive search algorithm for
statistical disclosure assessment. Data Mining and Knowledge Discovery 16(2), 165-196.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from microagg.core.frequencies import combination_ids, matching_counts
from microagg.errors import InputError
from microagg.options import MissingValues, parse
from microagg.risk import _suda_kernels as kernels
from microagg.risk import _suda_records as records

__all__ = ["SearchCost", "Suda", "load_kernels", "search_cost", "suda2"]

MAX_KEYS = 62
"""Subsets of the keys are int64 bit masks."""

_SCRATCH = 1 << 22
"""The largest table (entries, 32 MiB) of the dense renumbering; beyond it a hash does it."""

_POLL = 0.05
"""Seconds between two calls of a compiled search's progress callback."""

_Found = tuple[np.ndarray, np.ndarray, np.ndarray]
"""A compiled search's result: scores, contributions, MSUs by size."""

_LIVE_BYTES = 1 << 28
"""The largest table (256 MiB) of live candidates by subset of the keys the compiled search
keeps; beyond it the search runs node by node from Python."""


SECONDS_PER_VISIT = 5e-8
"""Seconds of one core per record and subset of the keys visited by the compiled subset
search (UCI Adult, 9 to 14 keys, docs/benchmarks.md); twice that node by node."""

SECONDS_PER_COMPARISON = 2.2e-10
"""Seconds of one core per pair of records and key compared by the record search (UCI
Adult, 9 and 14 keys, docs/benchmarks.md)."""

RECORD_SEARCH_KEYS = 24
"""The most keys the record search takes (its bit sets hold 2^M bits per record)."""


@dataclass(frozen=True)
class SearchCost:
    """What a SUDA2 search may cost before it begins: the ``search`` it takes, the
    ``steps`` it counts its progress in (records, or subsets of the ``keys``: prunings
    skip some), the ``records`` each step may look at, and the ``seconds`` of one core that
    takes at most, roughly (:data:`SECONDS_PER_VISIT`, :data:`SECONDS_PER_COMPARISON`)."""

    keys: int
    records: int
    search: str
    steps: int
    seconds: float

    @property
    def unit(self) -> str:
        """What a step is."""
        return "records" if self.search == "records" else "subsets of the keys"

    def describe(self) -> str:
        """The cost in one sentence, as the web app states it."""
        if self.search == "records":
            return (f"SUDA2 over {self.keys} keys compares each of up to {self.records:,} "
                    f"records with every other and looks through the {1 << self.keys:,} "
                    f"subsets of the keys for each: up to {_duration(self.seconds)} "
                    "of computing")
        return (f"SUDA2 over {self.keys} keys searches up to {_steps(self.steps)} subsets of "
                f"the keys, each over up to {self.records:,} records: up to "
                f"{_duration(self.seconds)} of computing")

    def searched(self, done: int) -> str:
        """How far a search is, as the web app states it."""
        return f"{done:,} of up to {_steps(self.steps)} {self.unit} searched"


_YEAR = 365.25 * 86_400


def _steps(count: int) -> str:
    """A count of steps: in full up to a trillion, else as a power of ten (2^2000 subsets
    of 2,000 keys have 603 digits)."""
    return f"{count:,}" if count < 10**12 else f"about 10^{len(str(count)) - 1}"


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "about a second"
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"about {seconds / 3600:.0f} h"
    if seconds < _YEAR:
        return f"about {seconds / 86_400:.0f} days"
    return "more than a year"


def _times(count: int, factor: float) -> float:
    """``count`` × ``factor`` in seconds, saturated at infinity: a count of subsets of many
    keys (2^M) passes what a float holds."""
    try:
        return count * factor
    except OverflowError:
        return math.inf


def search_cost(records: int, keys: int) -> SearchCost:
    """The cost of a SUDA2 search over ``keys`` key variables and ``records`` records, before
    it begins (an upper bound), and the search :func:`suda2` takes: the cheaper of the
    record search (every record compared with every other; its bit sets of 2^M subsets
    per record) and the subset search (every subset visited with every record; compiled
    while its table of live records fits in :data:`_LIVE_BYTES`, else node by node).

    Examples
    --------
    >>> search_cost(32_561, 14).search, search_cost(32_561, 14).steps
    ('records', 32561)
    >>> search_cost(32_561, 9).search, search_cost(32_561, 9).steps
    ('subsets', 511)
    """
    subsets = (1 << keys) - 1
    compiled = _fits(records, keys)
    subset_seconds = _times(subsets * records, SECONDS_PER_VISIT * (1 if compiled else 2))
    subset_cost = SearchCost(keys, records, "subsets" if compiled else "nodes", subsets,
                             subset_seconds)
    if keys > RECORD_SEARCH_KEYS:
        return subset_cost
    record_seconds = (records * records * keys * SECONDS_PER_COMPARISON
                      + records * (subsets // 64 + 1) * keys * 5 * SECONDS_PER_COMPARISON)
    if record_seconds < subset_seconds:
        return SearchCost(keys, records, "records", records, record_seconds)
    return subset_cost


def _fits(records: int, keys: int) -> bool:
    """Whether the compiled subset search's table of live records (a bit per record and
    subset of the keys) stays within :data:`_LIVE_BYTES`."""
    return keys <= 40 and (8 * ((records + 63) // 64)) << keys <= _LIVE_BYTES


@dataclass(frozen=True)
class Suda:
    """The SUDA2 scores of every record and the contribution of every key.

    ``scores`` and ``dis_scores`` hold one value per record; ``record_contributions`` (n, M)
    the fraction of a record's score carried by its MSUs that hold each key (sdcMicro's
    ``contributionPercent``; over the keys they sum to the record's score-weighted mean
    MSU size); ``contributions`` maps each key to the percent of all scores carried by
    the MSUs that hold it (sdcMicro's ``attribute_contributions``): each key's figure is out
    of 100, and they sum to 100 times the score-weighted mean MSU size, not to 100;
    ``msus_by_size`` counts the MSUs of 1, 2, …, M keys.
    """

    keys: list[str]
    scores: np.ndarray
    dis_scores: np.ndarray
    record_contributions: np.ndarray
    contributions: dict[str, float]
    msus_by_size: list[int]
    sample_uniques: int
    pairs: int
    dis_fraction: float
    dis: float = field(default=0.0)

    def at_fraction(self, dis_fraction: float) -> Suda:
        """The same MSUs with the DIS scores of another sampling fraction (no new search).

        Examples
        --------
        >>> codes = np.array([[0, 0], [0, 1], [1, 0], [1, 0], [2, 1]])
        >>> result = suda2(codes)
        >>> again = result.at_fraction(0.1)
        >>> again.dis_fraction, bool((again.dis_scores == suda2(codes, dis_fraction=0.1)
        ...                           .dis_scores).all())
        (0.1, True)
        """
        _check_fraction(dis_fraction)
        dis, dis_scores = _dis(self.scores, self.sample_uniques, self.pairs, dis_fraction,
                               len(self.keys))
        return replace(self, dis_scores=dis_scores, dis_fraction=float(dis_fraction), dis=dis)

    def to_dict(self) -> dict[str, object]:
        return {"msus": sum(self.msus_by_size), "msus_by_size": self.msus_by_size,
                "sample_uniques": self.sample_uniques, "pairs": self.pairs,
                "dis_fraction": self.dis_fraction, "dis": self.dis,
                "records_with_msus": int((self.scores > 0).sum()),
                "largest_score": float(self.scores.max(initial=0.0)),
                "largest_dis_score": float(self.dis_scores.max(initial=0.0))}


def suda2(codes: np.ndarray, keys: list[str] | None = None,
          missing: MissingValues | str = MissingValues.MATCHES_ANY, *,
          dis_fraction: float = 0.01, fk: np.ndarray | None = None,
          progress: Callable[[int], None] | None = None) -> Suda:
    """SUDA and DIS scores of every record over its key codes (the module docstring says how).

    Parameters
    ----------
    codes
        (n, M) int64 key codes, -1 where missing (:func:`microagg.core.frequencies.key_codes`).
    keys
        The names of the M keys (default ``key1`` …).
    missing
        What a missing key matches: ``matches-any`` (default) or ``category``.
    dis_fraction
        The sampling fraction of the DIS score, in (0, 1) (sdcMicro's ``DisFraction``).
    fk
        The records' sample frequencies over the keys under ``missing``, when known
        (:func:`microagg.core.frequencies.key_frequencies`).
    progress
        Called with the steps searched so far (records, or subsets of the keys:
        :func:`search_cost` says which): with 0 before the search, every 0.05 s while it
        runs (on the calling thread; the search runs on a thread of its own) and once at
        its end. An exception it raises stops the search before its next step and goes on
        (a caller's way to cancel it).

    Returns
    -------
    Suda
        The scores, per record and per key.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0, 0], [0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 0, 1]])
    >>> result = suda2(codes, ["a", "b", "c"])
    >>> result.scores.tolist(), result.msus_by_size  # record 2: MSUs {b} and {a, c}
    ([0.0, 0.0, 3.0, 0.0, 0.0], [1, 1, 0])
    >>> {key: round(share, 1) for key, share in result.contributions.items()}
    {'a': 33.3, 'b': 66.7, 'c': 33.3}
    """
    codes = np.asarray(codes, dtype=np.int64)
    n, m = codes.shape
    names = list(keys) if keys is not None else [f"key{j + 1}" for j in range(m)]
    _check_fraction(dis_fraction)
    if not 1 <= m <= MAX_KEYS:
        raise InputError(f"SUDA2 takes 1 to {MAX_KEYS} key variables, got {m}")
    missing = parse(MissingValues, missing, "missing")
    if fk is None:
        fk = matching_counts(codes, missing) if n else np.zeros(0, dtype=np.int64)
    uniques = np.flatnonzero(fk == 1)
    search = _Search.prepare(codes, uniques, missing)
    search.progress = progress
    plan = search_cost(n, m).search
    if plan == "records":
        search.run_records()
    elif plan == "subsets":
        search.run_compiled()
    else:
        search.run()
    scores = np.zeros(n)
    scores[uniques] = search.score
    shares = np.zeros((n, m))
    with np.errstate(invalid="ignore", divide="ignore"):
        shares[uniques] = np.where(search.score[:, None] > 0,
                                   search.contribution / search.score[:, None], 0.0)
    total = scores.sum()
    percent = (100 * search.contribution.sum(axis=0) / total if total > 0 else np.zeros(m))
    pairs = int((fk == 2).sum())
    dis, dis_scores = _dis(scores, uniques.size, pairs, dis_fraction, m)
    return Suda(names, scores, dis_scores, shares,
                {name: float(p) for name, p in zip(names, percent, strict=True)},
                search.by_size.tolist(), int(uniques.size), pairs, float(dis_fraction), dis)


def load_kernels() -> None:
    """Compile the kernels of the compiled searches, or load them from numba's cache: the
    record search with 16- and 32-bit agreement bits, and the compiled subset search (the
    web app loads them ahead, as compiling holds the interpreter's lock).

    Examples
    --------
    >>> load_kernels()
    """
    for m in (2, 17):
        codes = np.zeros((3, m), dtype=np.int64)
        codes[1, 0] = codes[2, 1] = 1
        fk = matching_counts(codes, MissingValues.MATCHES_ANY)
        for run in ("run_records", "run_compiled"):
            search = _Search.prepare(codes, np.flatnonzero(fk == 1),
                                     MissingValues.MATCHES_ANY)
            getattr(search, run)()


def _check_fraction(dis_fraction: float) -> None:
    if not 0 < dis_fraction < 1:
        raise InputError(f"`dis_fraction` must lie in (0, 1), got {dis_fraction}")


def _dis(scores: np.ndarray, uniques: int, pairs: int, fraction: float, m: int
         ) -> tuple[float, np.ndarray]:
    """The DIS probability and the DIS score of every record (module docstring)."""
    out = np.zeros_like(scores)
    scored = scores > 0
    if not scored.any():
        return 0.0, out
    dis = uniques * fraction / (uniques * fraction + pairs * (1.0 - fraction))
    q = 1.0 + (8.0 - m) / 20.0
    powered = scores[scored] ** q
    adjust = float(np.sum(1.0 / powered))
    out[scored] = 1.0 / (1.0 + (uniques / dis - uniques) / (powered * adjust))
    return float(dis), out


@dataclass
class _Search:
    """The depth-first search for the MSUs of the sample uniques (module docstring).

    ``table`` (column-major) holds the codes of the records the search keeps (a missing
    value coded as one more category of its column, ``radix`` the categories per column);
    ``candidate_row[c]`` is candidate c's row in it and ``present[c]`` the mask of the keys
    c may use. A virtual row (c, Z) stands for c's values with the keys Z missing; Z is one
    of the sorted ``zero_sets`` and lies inside the keys of the node that holds the row:
    a node adding key v gives each row (c, Z) a twin (c, Z ∪ {v}) when that is a zero set.
    """

    table: np.ndarray
    radix: np.ndarray
    candidate_row: np.ndarray
    present: np.ndarray
    zero_sets: np.ndarray
    score: np.ndarray
    contribution: np.ndarray
    by_size: np.ndarray
    weight: np.ndarray
    scratch: np.ndarray
    missing_code: np.ndarray
    progress: Callable[[int], None] | None = None
    visited: int = 0

    @classmethod
    def prepare(cls, codes: np.ndarray, uniques: np.ndarray, missing: MissingValues
                ) -> _Search:
        n, m = codes.shape
        radix = codes.max(axis=0, initial=-1) + 2 if n else np.ones(m, dtype=np.int64)
        coded = np.where(codes < 0, radix - 1, codes)
        real = _at_most_two(coded)  # sorted; every sample unique is kept
        bits = 1 << np.arange(m, dtype=np.int64)
        missing_mask = (codes < 0).astype(np.int64) @ bits
        if missing is MissingValues.MATCHES_ANY:
            # a record without any key counts for no record that has every key (f_k,
            # microagg.core.frequencies): with one, only such records are sample uniques
            blank = missing_mask[real] == (1 << m) - 1
            real = real[~blank | np.isin(real, uniques)]
        if missing is MissingValues.CATEGORY:
            present = np.full(uniques.size, (1 << m) - 1, dtype=np.int64)
            zero_sets = np.zeros(1, dtype=np.int64)
        else:
            present = ((1 << m) - 1) & ~missing_mask[uniques]
            zero_sets = _downward_closure(np.unique(missing_mask[real]))
        any_missing = ((codes < 0).any(axis=0) if missing is MissingValues.MATCHES_ANY
                       else np.zeros(m, dtype=bool))
        factorial = np.array([math.factorial(m - s) if s else 0 for s in range(m + 1)],
                             dtype=np.float64)
        return cls(np.asfortranarray(coded[real]), radix, np.searchsorted(real, uniques),
                   present, zero_sets, np.zeros(uniques.size), np.zeros((uniques.size, m)),
                   np.zeros(m, dtype=np.int64), factorial, np.zeros(0, dtype=np.int64),
                   np.where(any_missing, radix - 1, -1).astype(np.int32))

    def run_records(self) -> None:
        """The record search (:mod:`microagg.risk._suda_records`) over the distinct rows
        of the table, progress as in :meth:`run_compiled` (counting candidates)."""
        if self.present.size == 0 or self.table.shape[0] <= 1:
            return
        m = self.radix.size
        ids = combination_ids(self.table, range(m))
        _, first = np.unique(ids, return_index=True)
        position = np.zeros(int(ids.max()) + 1, dtype=np.int64)
        position[ids[first]] = np.arange(first.size)
        narrow = int(self.radix.max()) <= np.iinfo(np.int16).max  # codes up to radix − 1
        code_type = np.int16 if narrow else np.int32
        rows = np.ascontiguousarray(self.table[first].T, dtype=code_type)
        candidates = position[ids[self.candidate_row]]
        agree = np.empty(first.size, dtype=np.uint16 if m <= 16 else np.uint32)
        state = np.zeros(2, dtype=np.int64)
        arguments = (rows, self.missing_code.astype(code_type), candidates, self.weight, agree,
                     state)
        self.score, self.contribution, self.by_size = _polled(
            lambda: records.record_search(*arguments), state, self.progress or _silent)
        self.visited = int(state[0])

    def run_compiled(self) -> None:
        """The search in one compiled call (:func:`microagg.risk._suda_kernels.search`).
        With a progress callback the call runs on a thread of its own and the callback is
        called here, first with 0 and then every :data:`_POLL` seconds with the subsets
        searched so far; what it raises stops the search before its next subset."""
        bound = (self.table.shape[0] + self.present.size) * int(self.radix.max(initial=1))
        scratch = np.full(max(1, min(bound, _SCRATCH)), -1, dtype=np.int64)
        state = np.zeros(2, dtype=np.int64)  # subsets visited; nonzero: stop
        arguments = (self.table, self.radix, self.candidate_row, self.present,
                     self.zero_sets, self.weight, scratch, state)
        # on a thread of its own even without a progress callback: the caller's thread
        # waits in Python, where a signal that ends the command is handled at once
        self.score, self.contribution, self.by_size = _polled(
            lambda: kernels.search(*arguments), state, self.progress or _silent)
        self.visited = int(state[0])

    def run(self) -> None:
        """The search driven from Python, node by node (for key sets too many for the
        compiled search's table)."""
        n_real = self.table.shape[0]
        if self.present.size == 0 or n_real <= 1:
            return  # no sample unique, or one record: unique on no key at all
        candidates = np.arange(self.present.size)
        empty = np.zeros(0, dtype=np.int64)
        self._children(0, _Rows(np.arange(n_real), candidates, np.zeros_like(candidates),
                                np.zeros(n_real + candidates.size, dtype=np.int64)),
                       candidates, empty, empty)

    def _children(self, mask: int, rows: _Rows, active: np.ndarray, block_owner: np.ndarray,
                  block_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Visit the children of ``mask`` (its ``rows``); return the MSUs found below it
        (owners, masks). ``block_*`` are the MSUs found so far that may lie inside a subset
        below ``mask``."""
        lowest = (mask & -mask).bit_length() - 1 if mask else self.radix.size
        found_owner, found_mask = [block_owner], [block_mask]
        for v in range(lowest):
            child = mask | (1 << v)
            if self.progress is not None:
                self.progress(self.visited)
            self.visited += 1
            owners = np.concatenate(found_owner)
            masks = np.concatenate(found_mask)
            blocked = _members(owners[(masks & ~child) == 0], self.present.size)
            child_active = active[((self.present[active] >> v) & 1 == 1) & ~blocked[active]]
            if child_active.size == 0:
                continue
            radix = int(self.radix[v])
            real, owner, zero, keys = kernels.extend(
                rows.real, rows.owner, rows.zero, rows.ids, self.table[:, v],
                self.candidate_row, radix, 1 << v, self.zero_sets,
                _members(child_active, self.present.size))
            ids, top = self._compact(keys, (int(rows.ids.max()) + 1) * radix)
            relevant = (masks & ~(child | ((1 << v) - 1))) == 0
            new_owner, new_mask = self._visit(child, _Rows(real, owner, zero, ids), top,
                                              child_active, owners[relevant], masks[relevant])
            found_owner.append(new_owner)
            found_mask.append(new_mask)
        if len(found_owner) == 1:
            return block_owner[:0], block_mask[:0]
        return np.concatenate(found_owner[1:]), np.concatenate(found_mask[1:])

    def _visit(self, mask: int, rows: _Rows, top: int, active: np.ndarray,
               block_owner: np.ndarray, block_mask: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """Count the active candidates' matches on ``mask``, record the MSUs, and search
        below with the rows that can still match an active candidate."""
        slot = np.zeros(self.present.size, dtype=np.int64)
        slot[active] = np.arange(active.size)
        counts, found = kernels.matches(rows.real.size, rows.owner, rows.ids, top, slot,
                                        active.size)
        unique = found == 1
        new_owner = active[unique]
        new_mask = np.full(new_owner.size, mask, dtype=np.int64)
        if new_owner.size:
            self._record(mask, new_owner)
        still = active[~unique]
        if still.size == 0 or mask & 1:  # a mask holding key 0 has no child
            return new_owner, new_mask
        below = _Rows(*kernels.prune(rows.real, rows.owner, rows.zero, rows.ids, counts,
                                     _members(still, self.present.size)))
        below_owner, below_mask = self._children(
            mask, below, still, np.concatenate([block_owner, new_owner]),
            np.concatenate([block_mask, new_mask]))
        return np.concatenate([new_owner, below_owner]), np.concatenate([new_mask, below_mask])

    def _compact(self, keys: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
        """Ids 0, 1, … for ``keys`` (all below ``bound``): by a dense table while it stays
        small, else by hashing."""
        if bound > _SCRATCH:
            ids = pd.factorize(keys)[0].astype(np.int64)
            return ids, int(ids.max(initial=-1)) + 1
        if bound > self.scratch.size:
            self.scratch = np.full(min(max(bound, 2 * self.scratch.size), _SCRATCH), -1,
                                   dtype=np.int64)
        ids, top = kernels.compact(keys, self.scratch)
        return ids, int(top)

    def _record(self, mask: int, owners: np.ndarray) -> None:
        columns = np.array([j for j in range(self.radix.size) if (mask >> j) & 1])
        size = len(columns)
        weight = self.weight[size]
        self.score[owners] += weight
        self.contribution[np.ix_(owners, columns)] += weight
        self.by_size[size - 1] += owners.size


def _silent(_: int) -> None:
    """A progress callback that says nothing."""


def _polled(work: Callable[[], _Found], state: np.ndarray,
            progress: Callable[[int], None]) -> _Found:
    """``work()`` on a thread of its own, ``progress`` called on this one with
    ``state[0]`` before it begins, every :data:`_POLL` seconds while it runs and once when
    it has ended; when
    ``progress`` raises, ``state[1]`` is set (``work`` stops soon after) and the exception
    goes on once it has stopped."""
    progress(0)
    outcome: list[_Found] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(work())
        except BaseException as error:  # raised again on the caller's thread
            failure.append(error)

    worker = threading.Thread(target=target, name="suda2-search", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(_POLL)
            if worker.is_alive():
                progress(int(state[0]))
    except BaseException:
        state[1] = 1
        worker.join()
        raise
    if failure:
        raise failure[0]
    progress(int(state[0]))
    return outcome[0]


@dataclass(frozen=True)
class _Rows:
    """The rows a node of the search looks at (:mod:`microagg.risk._suda_kernels`)."""

    real: np.ndarray
    owner: np.ndarray
    zero: np.ndarray
    ids: np.ndarray


def _members(items: np.ndarray, size: int) -> np.ndarray:
    """A boolean array of ``size``, True at ``items``."""
    flags = np.zeros(size, dtype=bool)
    flags[items] = True
    return flags


def _at_most_two(coded: np.ndarray) -> np.ndarray:
    """The rows of ``coded`` kept by the search: all but the third and later copies of a
    combination (in row order)."""
    if coded.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    inverse = combination_ids(coded, range(coded.shape[1]))
    order = np.argsort(inverse, kind="stable")
    sorted_ids = inverse[order]
    start = np.searchsorted(sorted_ids, sorted_ids, "left")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size) - start
    return np.flatnonzero(rank < 2)


def _downward_closure(masks: np.ndarray) -> np.ndarray:
    """Every subset of every mask in ``masks`` (the empty one included), sorted."""
    closure = {0}
    for full in (int(x) for x in masks):
        sub = full
        while sub:
            closure.add(sub)
            sub = (sub - 1) & full
    return np.array(sorted(closure), dtype=np.int64)
