"""Singling out: predicates read off the release that isolate exactly one original record.

The attacker writes predicates on the release that match exactly one of its records, and
succeeds when such a predicate matches exactly one record of the original (Article 29
Working Party, Opinion 05/2014; Cohen and Nissim 2020). The attacks are Anonymeter's
(Giomi et al. 2023, PoPETs 2023(2)), on the three tables without repeated records:

- **univariate**: per column, ``is missing`` when one value is, ``<= its minimum`` and
  ``>= its maximum`` for a number, ``== v`` for every value ``v`` held once; in random order,
  those isolating one release record, each once, up to ``n_attacks``;
- **multivariate**: a random release record and ``n_cols`` random columns; per column
  ``is missing``, ``== v`` for a category, ``>= v`` above the release's median and ``<= v``
  otherwise for a number; those isolating one release record, each once, up to
  ``n_attacks`` or ``max_attempts`` tries (fewer once every pair of a record and
  ``n_cols`` columns has been drawn, when there are at most 10⁷ such pairs: no further draw
  can write another predicate);
- **baseline**: as many predicates as the attack wrote, on random columns with random values of the
  release and random operators (``==``, ``!=`` on a category; also ``<``, ``>``, ``<=``,
  ``>=`` on a number);
- **control**: the attack's predicates on the control records; their successes are scaled
  to the original's size by the model of Cohen and Nissim (the chance that a predicate of
  weight w isolates one of n records, ``n w (1 - w)^(n-1)``, integrated over w up to a
  fitted effective weight), fitted on subsamples of the control from a tenth of it (at most
  1,000 records) to all of it.

Each rate is over the predicates the attack wrote (:mod:`microagg.risk.attack_rates`), at
most ``n_attacks``: a release that offers fewer isolating predicates does not dilute the rate
with predicates never written (Anonymeter 1.1.0 divides by those asked, and so underrates
such a release), and a multivariate search
asks no more than the release can offer (a release record and ``n_cols`` columns make one
predicate). The predicates are
evaluated by a compiled kernel that stops at a predicate's second match.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import pandas as pd

from microagg.core.rng import make_rng
from microagg.risk.attack_data import AttackTables
from microagg.risk.attack_rates import AttackRisk, attack_risk, wilson

__all__ = ["Predicates", "count_matches", "singling_out"]

EQ, NE, GT, LT, GE, LE, MISSING, PRESENT = range(8)
_NUMERIC_OPS = np.array([EQ, NE, GT, LT, GE, LE])
_CATEGORY_OPS = np.array([EQ, NE])


@numba.njit(cache=True, inline="always")
def _holds(value: float, op: int, bound: float) -> bool:
    if op == MISSING:
        return np.isnan(value)
    if op == PRESENT:
        return not np.isnan(value)
    if np.isnan(value):  # a missing value satisfies no comparison
        return False
    if op == EQ:
        return value == bound
    if op == NE:
        return value != bound
    if op == GT:
        return value > bound
    if op == LT:
        return value < bound
    if op == GE:
        return value >= bound
    return value <= bound


@numba.njit(cache=True, inline="always")
def _range(keys: np.ndarray, present: int, n: int, op: int, bound: float) -> Any:
    """The positions, in a column's sorted order (missing values last), of the rows a term
    ``op bound`` can hold for; (0, -1) for a term that is not a range (``!=``, present)."""
    head = keys[:present]
    if op == EQ:
        return np.searchsorted(head, bound, "left"), np.searchsorted(head, bound, "right")
    if op == LE:
        return 0, np.searchsorted(head, bound, "right")
    if op == LT:
        return 0, np.searchsorted(head, bound, "left")
    if op == GE:
        return np.searchsorted(head, bound, "left"), present
    if op == GT:
        return np.searchsorted(head, bound, "right"), present
    if op == MISSING:
        return present, n
    return 0, -1


@numba.njit(cache=True)
def _count(data: np.ndarray, order: np.ndarray, keys: np.ndarray, present: np.ndarray,
           columns: np.ndarray, ops: np.ndarray, bounds: np.ndarray, cap: int) -> np.ndarray:
    """How many rows of ``data`` each predicate matches, up to ``cap``: the rows of its
    narrowest range term (``order``, ``keys``: each column's rows and values sorted,
    ``present`` of them not missing) checked against all its terms, else every row. One
    thread: a call is a few milliseconds, less than a parallel region costs on a busy
    machine."""
    n = data.shape[0]
    counts = np.zeros(columns.shape[0], dtype=np.int64)
    for q in range(columns.shape[0]):
        narrow, low, high = -1, 0, n
        for t in range(columns.shape[1]):
            c = columns[q, t]
            if c < 0:
                continue
            lo, hi = _range(keys[c], present[c], n, ops[q, t], bounds[q, t])
            if hi >= 0 and hi - lo < high - low:
                narrow, low, high = c, lo, hi
        found = 0
        for at in range(low, high):
            r = order[narrow, at] if narrow >= 0 else at
            matched = True
            for t in range(columns.shape[1]):
                c = columns[q, t]
                if c >= 0 and not _holds(data[r, c], ops[q, t], bounds[q, t]):
                    matched = False
                    break
            if matched:
                found += 1
                if found >= cap:
                    break
        counts[q] = found
    return counts


class Indexed:
    """A table's records with each column's rows in the order of its values (missing last),
    for :func:`count_matches`."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.order = np.ascontiguousarray(np.argsort(self.data, axis=0, kind="stable").T)
        self.keys = np.ascontiguousarray(np.take_along_axis(self.data, self.order.T, axis=0).T)
        self.present = (~np.isnan(self.data)).sum(axis=0).astype(np.int64)

    @property
    def rows(self) -> int:
        """How many records."""
        return int(self.data.shape[0])

    def subset(self, rows: np.ndarray) -> Indexed:
        """The records ``rows``."""
        return Indexed(self.data[rows])


class Predicates:
    """Conjunctions of terms ``column op value``: (q, t) arrays of columns (-1 for no
    term), operators and values (a category's code)."""

    def __init__(self, columns: np.ndarray, ops: np.ndarray, bounds: np.ndarray) -> None:
        self.columns = np.ascontiguousarray(columns, dtype=np.int64)
        self.ops = np.ascontiguousarray(ops, dtype=np.int64)
        self.bounds = np.ascontiguousarray(bounds, dtype=np.float64)

    def __len__(self) -> int:
        return int(self.columns.shape[0])

    def take(self, chosen: np.ndarray) -> Predicates:
        """The predicates at ``chosen``."""
        return Predicates(self.columns[chosen], self.ops[chosen], self.bounds[chosen])

    def keys(self) -> list[bytes]:
        """One key per predicate, equal for equal predicates."""
        order = np.argsort(self.columns, axis=1, kind="stable")
        parts = [np.take_along_axis(a, order, axis=1) for a in
                 (self.columns, self.ops, np.nan_to_num(self.bounds, nan=np.inf))]
        joined = np.concatenate([p.astype(np.float64) for p in parts], axis=1)
        return [row.tobytes() for row in joined]


def count_matches(table: Indexed, predicates: Predicates, cap: int = 2) -> np.ndarray:
    """How many records of ``table`` each predicate matches, counting up to ``cap``."""
    return _count(table.data, table.order, table.keys, table.present, predicates.columns,
                  predicates.ops, predicates.bounds, cap)


def _isolating(data: Indexed, candidates: Predicates, kept: list[Predicates],
               seen: set[bytes], wanted: int) -> int:
    """Add to ``kept`` the candidates isolating one record of ``data``, unseen before, up to
    ``wanted`` in all; return how many are kept."""
    total = sum(len(k) for k in kept)
    single = np.flatnonzero(count_matches(data, candidates) == 1)
    chosen: list[int] = []
    for at, key in zip(single, candidates.take(single).keys(), strict=True):
        if total + len(chosen) >= wanted:
            break
        if key not in seen:
            seen.add(key)
            chosen.append(int(at))
    kept.append(candidates.take(np.array(chosen, dtype=np.int64)))
    return total + len(chosen)


def _univariate(table: Indexed, numeric: np.ndarray, n_attacks: int,
                rng: np.random.Generator) -> Predicates:
    release = table.data
    terms: list[tuple[int, int, float]] = []
    for j in range(release.shape[1]):
        column = release[:, j]
        missing = np.isnan(column)
        if missing.sum() == 1:
            terms.append((j, MISSING, np.nan))
        present = column[~missing]
        if numeric[j] and present.size:
            terms += [(j, LE, float(present.min())), (j, GE, float(present.max()))]
        values, counts = np.unique(present, return_counts=True)
        terms += [(j, EQ, float(v)) for v in values[counts == 1]]
    order = rng.permutation(len(terms))
    listed = np.array([terms[i] for i in order]).reshape(-1, 3)
    candidates = Predicates(listed[:, :1], listed[:, 1:2], listed[:, 2:3])
    kept: list[Predicates] = []
    _isolating(table, candidates, kept, set(), n_attacks)
    return _joined(kept, 1)


def _multivariate(table: Indexed, numeric: np.ndarray, n_attacks: int, n_cols: int,
                  max_attempts: int, rng: np.random.Generator) -> Predicates:
    release = table.data
    n, d = release.shape
    n_cols = min(n_cols, d)
    n_attacks = min(n_attacks, n * math.comb(d, n_cols))  # the distinct predicates there are
    medians = np.array([np.nanmedian(release[:, j]) if numeric[j] and
                        not np.isnan(release[:, j]).all() else np.nan for j in range(d)])
    kept: list[Predicates] = []
    seen: set[bytes] = set()
    found = attempts = 0
    batch = min(1000, max_attempts)
    # A predicate follows from its record and columns alone: once every pair has been
    # drawn, no draw can find another (a small release would otherwise draw max_attempts).
    tried = np.zeros(n * d ** n_cols, dtype=bool) if n * d ** n_cols <= 10_000_000 else None
    candidates = n * math.comb(d, n_cols)
    while found < n_attacks and attempts < max_attempts:
        rows = rng.integers(0, n, size=batch)
        columns = np.argsort(rng.random((batch, d)), axis=1)[:, :n_cols]
        if tried is not None:
            tried[rows * d ** n_cols + np.sort(columns, axis=1) @ d ** np.arange(n_cols)] = True
            if int(tried.sum()) == candidates:
                attempts = max_attempts  # this batch is the last
        values = release[rows[:, None], columns]
        above = values > medians[columns]
        ops = np.where(np.isnan(values), MISSING,
                       np.where(numeric[columns], np.where(above, GE, LE), EQ))
        found = _isolating(table, Predicates(columns, ops, values), kept, seen, n_attacks)
        attempts = min(attempts + batch, max_attempts)
    return _joined(kept, n_cols)


def _baseline(release: np.ndarray, numeric: np.ndarray, n_attacks: int, n_cols: int,
              rng: np.random.Generator) -> Predicates:
    d = release.shape[1]
    n_cols = min(n_cols, d)
    distinct = [pd.unique(release[:, j]) for j in range(d)]
    columns = np.argsort(rng.random((n_attacks, d)), axis=1)[:, :n_cols]
    ops = np.empty(columns.shape, dtype=np.int64)
    bounds = np.empty(columns.shape)
    for at in np.ndindex(columns.shape):
        j = columns[at]
        value = distinct[j][rng.integers(len(distinct[j]))]
        op = rng.choice(_NUMERIC_OPS if numeric[j] else _CATEGORY_OPS)
        if np.isnan(value):
            op = MISSING if op == EQ else PRESENT
        ops[at], bounds[at] = op, value
    return Predicates(columns, ops, bounds)


def _joined(kept: list[Predicates], terms: int) -> Predicates:
    if not kept:
        return Predicates(np.empty((0, terms)), np.empty((0, terms)), np.empty((0, terms)))
    return Predicates(np.concatenate([k.columns for k in kept]),
                      np.concatenate([k.ops for k in kept]),
                      np.concatenate([k.bounds for k in kept]))


def _isolated(table: Indexed, predicates: Predicates) -> int:
    return int((count_matches(table, predicates) == 1).sum()) if len(predicates) else 0


def _size_correction(control: Indexed, predicates: Predicates, size: int,
                     rng: np.random.Generator) -> float:
    """How many more of ``predicates`` would isolate a record among ``size`` records than
    among the control's, by the model of the module docstring fitted on subsamples."""
    from scipy.optimize import curve_fit

    n = control.rows
    # subsamples from a tenth of the control (at most 1,000 records, Anonymeter's start) to
    # all of it: from 1,000 alone, a control of 1,000 or fewer records fits one size only
    sizes = np.repeat(np.linspace(min(1000, max(2, n // 10)), n, 10).astype(int), 5)
    hits = np.array([_isolated(control.subset(rng.choice(n, s, replace=False)), predicates)
                     for s in sizes], dtype=float)

    def model(x: np.ndarray, weight: float, norm: float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return norm * (1 - (x * weight + 1) * (1 - weight) ** x) / (x + 1)

    start = 1 / sizes.max()
    guess = (start, 1 / float(model(np.array(sizes.max()), start, 1.0)))
    try:
        fitted, _ = curve_fit(model, sizes, hits, bounds=(0, (1, np.inf)), p0=guess)
    except (RuntimeError, ValueError):
        return 1.0
    below = float(model(np.array(n), *fitted))
    return float(model(np.array(size), *fitted)) / below if below > 0 else 1.0


def _distinct(block: np.ndarray) -> Indexed:
    return Indexed(pd.DataFrame(block).drop_duplicates().to_numpy(dtype=float))


def singling_out(tables: AttackTables, *, mode: str = "multivariate", n_attacks: int = 500,
                 n_cols: int = 3, max_attempts: int = 10_000_000,
                 rng: np.random.Generator | int | None = None) -> AttackRisk:
    """The singling-out risk of the release (module docstring).

    Parameters
    ----------
    tables
        The original, the release and (for the risk over what the release teaches of
        anyone) the control (:func:`microagg.risk.attack_data.attack_tables`).
    mode
        ``"univariate"`` or ``"multivariate"``.
    n_attacks
        How many predicates to write at most (each rate's denominator is those written).
    n_cols
        How many columns a multivariate predicate names.
    max_attempts
        How many multivariate predicates to draw at most looking for ``n_attacks``.
    rng
        A numpy Generator or a seed.

    Returns
    -------
    AttackRisk
        The rates and the risk.
    """
    generator = make_rng(rng)
    blocks, numeric = tables.raw(tables.columns)
    original, release = _distinct(blocks[0]), _distinct(blocks[1])
    if mode == "univariate":
        predicates = _univariate(release, numeric, n_attacks, generator)
        width = 1
    elif mode == "multivariate":
        predicates = _multivariate(release, numeric, n_attacks, n_cols, max_attempts,
                                   generator)
        width = n_cols
    else:
        raise ValueError(f"mode must be univariate or multivariate, got {mode!r}")
    tries = len(predicates)  # the predicates written, not those asked (module docstring)
    attack = wilson(tries, _isolated(original, predicates))
    guesses = _baseline(release.data, numeric, tries, width, generator)
    baseline = wilson(tries, _isolated(original, guesses))
    control_rate = None
    if tables.control is not None:
        control = _distinct(blocks[2])
        hits: float = _isolated(control, predicates)
        if control.rows != original.rows and len(predicates):
            hits *= _size_correction(control, predicates, original.rows, generator)
        control_rate = wilson(tries, min(hits, float(tries)))
    return attack_risk(attack, baseline, control_rate)
