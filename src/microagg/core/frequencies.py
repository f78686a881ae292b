"""Sample frequencies of key combinations when keys may be missing.

The sample frequency f_k of a record is the number of records of the table that share its
combination of quasi-identifier (key) values, itself included; a table is k-anonymous over
the keys when every f_k >= k. A missing value needs a rule:

* ``matches-any`` (sdcMicro's ``alpha = 1``, the default): a missing value matches any value,
  so record j counts for record i when they agree on every key both have. Records with
  missing values then count for several combinations, and f_k is no longer the size of a
  partition class.
* ``category``: a missing value is a category of its own, matching only another missing value.

A record whose keys are *all* missing matches every record, but only through its missing
values. Under ``matches-any`` it is counted apart, as sdcMicro's ``freqCalc`` counts it: its
own f_k is n (F_k the total weight), and it counts for no record that has every key (a
record with some keys missing counts it, as it counts any record that agrees with it where
both have a value). Otherwise two blank records would make every other record of a table
look 3-anonymous. :func:`all_missing` finds them, so that every report can say how many
there are. (With a single key sdcMicro's ``freqCalc`` takes another branch, which adds the
records missing it to the count of every other record; microagg applies the rule above
whatever the number of keys: docs/algorithms.md.)

Computation: records are grouped by their pattern of present keys. For each pair of patterns
(P, Q), the records of Q are counted by their values on the keys P and Q share, and each
record of P adds the count of its own values there; the combinations on a set of shared keys
are numbered once for every pair that shares it. With π patterns this is O(π² n) (a file
has few patterns); without missing values it is one group-by. With sampling weights the same
passes sum the weights of the matching records instead of counting them: the estimated
population frequency F_k (sdcMicro's ``freqCalc``).

Under ``matches-any`` the records that match a record form its *matching set*, which plays
the part of its equivalence class in t-closeness (:func:`microagg.core.verifiers.t_closeness`):
:func:`matching_pairs` lists, for every combination of key values written, the combinations
that match it, found pattern pair by pattern pair in the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from microagg.data.table import missing_mask
from microagg.errors import InputError
from microagg.options import MissingValues, parse

__all__ = ["all_missing", "all_missing_note", "combination_ids", "combinations", "counts_for",
           "key_codes", "key_frequencies", "matching_counts", "matching_pairs",
           "sample_frequencies", "value_ids"]


def key_codes(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """(n, len(keys)) int64 codes of the key values, -1 where a value is missing."""
    _require(frame, keys)
    columns = []
    for key in keys:
        codes, _ = pd.factorize(frame[key], use_na_sentinel=True)
        codes = codes.astype(np.int64)
        codes[missing_mask(frame[key])] = -1
        columns.append(codes)
    return np.column_stack(columns) if columns else np.empty((len(frame), 0), dtype=np.int64)


def all_missing(codes: np.ndarray) -> np.ndarray:
    """Which rows of ``codes`` (:func:`key_codes`) have every key missing: the records that
    match others only through missing values (module docstring). False everywhere when there
    are no keys.

    Examples
    --------
    >>> import numpy as np
    >>> all_missing(np.array([[0, -1], [-1, -1], [1, 0]])).tolist()
    [False, True, False]
    """
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[1] == 0:
        return np.zeros(codes.shape[0] if codes.ndim else 0, dtype=bool)
    return np.asarray((codes < 0).all(axis=1))


def all_missing_note(records: int, columns: str = "keys") -> str:
    """The sentence a report or a command gives when ``records`` records have all their
    ``columns`` (keys, quasi-identifiers, masked columns) missing.

    Examples
    --------
    >>> print(all_missing_note(1))  # doctest: +NORMALIZE_WHITESPACE
    1 record with all keys missing matches every record only through missing values: it
    is counted apart (as sdcMicro's freqCalc: f_k = n for it, and it counts for no record
    that has every value)
    """
    return (f"{records:,} record{'' if records == 1 else 's'} with all {columns} missing "
            f"match{'es' if records == 1 else ''} every record only through missing values: "
            f"{'it is' if records == 1 else 'they are'} counted apart (as sdcMicro's freqCalc: "
            f"f_k = n for {'it' if records == 1 else 'them'}, and "
            f"{'it counts' if records == 1 else 'they count'} for no record that has every "
            "value)")


def _require(frame: pd.DataFrame, keys: Sequence[str]) -> None:
    for key in keys:
        if key not in frame.columns:
            raise InputError(f"unknown column '{key}' "
                             f"(the data has: {', '.join(map(str, frame.columns))})")


def combination_ids(codes: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    """One int64 id per row of ``codes`` (codes ≥ -1) for its combination of values on
    ``columns``: ids 0, 1, … in order of first appearance (one hashed pass over the rows,
    :func:`microagg.core._row_hash.first_appearance_ids`)."""

    from microagg.core._row_hash import first_appearance_ids

    codes = np.asarray(codes)
    columns = list(columns)
    words = np.empty((len(columns), codes.shape[0]), dtype=np.int64)  # one copy, transposed
    for row, column in enumerate(columns):
        words[row] = codes[:, column]
    return first_appearance_ids(words.view(np.uint64))


def value_ids(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """One int64 id per record for its combination of values on ``columns`` as written, a
    missing value (NaN, None) counted as one more value and no token read as missing: ids
    0, 1, … in order of first appearance, as ``frame.groupby(columns, sort=False,
    dropna=False).ngroup()`` numbers them. Numbers are compared by value (0.0 equals -0.0),
    other columns by pandas' factorization.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": [30.0, None, 30.0, -0.0, 0.0], "sex": list("mmmff")})
    >>> value_ids(frame, ["age", "sex"]).tolist()
    [0, 1, 0, 2, 2]
    """

    from microagg.core._row_hash import first_appearance_ids

    words = np.empty((len(columns), len(frame)), dtype=np.uint64)
    for j, name in enumerate(columns):
        column = frame[name]
        dtype = column.dtype
        if isinstance(dtype, np.dtype) and dtype.kind in "iub":
            words[j] = column.to_numpy().astype(np.int64, copy=False).view(np.uint64)
        elif isinstance(dtype, np.dtype) and dtype.kind == "f":
            values = words[j].view(np.float64)
            np.add(column.to_numpy(), 0.0, out=values, dtype=np.float64)  # -0.0 + 0.0 is 0.0
            values[np.isnan(values)] = np.nan  # one NaN
        else:
            words[j] = pd.factorize(column, use_na_sentinel=True)[0].astype(
                np.int64).view(np.uint64)
    return first_appearance_ids(words)


def key_frequencies(codes: np.ndarray,
                    missing: MissingValues | str = MissingValues.MATCHES_ANY,
                    weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """For every row of ``codes`` (:func:`key_codes`), the number of rows that match it, itself
    included (f_k, int64), and with ``weights`` their summed weight (F_k, float64; None
    without weights), from one grouping.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0], [0, 0], [-1, 0], [1, 1]])
    >>> fk, Fk = key_frequencies(codes, weights=np.array([10.0, 20.0, 5.0, 40.0]))
    >>> fk.tolist(), Fk.tolist()
    ([3, 3, 3, 1], [35.0, 35.0, 35.0, 40.0])
    >>> key_frequencies(np.array([[0, 0], [0, 1], [-1, 0], [-1, -1]]))[0].tolist()
    [2, 1, 3, 4]
    """
    missing = parse(MissingValues, missing, "missing")
    if missing is MissingValues.CATEGORY or not (codes < 0).any():
        inverse = combination_ids(codes, range(codes.shape[1]))
        counts = np.bincount(inverse)[inverse].astype(np.int64)
        return counts, None if weights is None else np.bincount(inverse, weights)[inverse]
    return _matching(codes, weights)


def matching_counts(codes: np.ndarray,
                    missing: MissingValues | str = MissingValues.MATCHES_ANY,
                    weights: np.ndarray | None = None) -> np.ndarray:
    """f_k of every row of ``codes``, or with ``weights`` F_k (:func:`key_frequencies`).

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0], [0, 0], [-1, 0], [1, 1]])
    >>> matching_counts(codes).tolist()
    [3, 3, 3, 1]
    >>> matching_counts(codes, "category").tolist()
    [2, 2, 1, 1]
    """
    fk, Fk = key_frequencies(codes, missing, weights)
    return fk if Fk is None else Fk


def combinations(frame: pd.DataFrame, keys: Sequence[str],
                 missing: MissingValues | str = MissingValues.MATCHES_ANY,
                 codes: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """f_k of every record over ``keys`` (:func:`sample_frequencies`) and the number of
    distinct combinations of key values written (a missing value counted as a value);
    ``codes``: the :func:`key_codes` of ``frame`` over ``keys`` when known."""
    missing = parse(MissingValues, missing, "missing")
    keys = list(keys)
    if not keys:
        raise InputError("at least one quasi-identifier is needed")
    _require(frame, keys)
    if not any(missing_mask(frame[key]).any() for key in keys):  # one hashed pass
        ids = value_ids(frame, keys)
        return np.bincount(ids)[ids].astype(np.int64), int(ids.max(initial=-1)) + 1
    codes = key_codes(frame, keys) if codes is None else codes
    inverse = combination_ids(codes, range(codes.shape[1]))
    classes = int(inverse.max()) + 1 if inverse.size else 0
    return matching_counts(codes, missing), classes


def sample_frequencies(frame: pd.DataFrame, keys: Sequence[str],
                       missing: MissingValues | str = MissingValues.MATCHES_ANY) -> np.ndarray:
    """f_k of every record over ``keys`` (int64, one per row, in row order).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sex": ["m", "m", None, "f"], "region": ["a", "a", "a", "b"]})
    >>> sample_frequencies(frame, ["sex", "region"]).tolist()
    [3, 3, 3, 1]
    >>> sample_frequencies(frame, ["sex", "region"], missing="category").tolist()
    [2, 2, 1, 1]
    """
    return combinations(frame, keys, missing)[0]


def _matching(codes: np.ndarray, weights: np.ndarray | None
              ) -> tuple[np.ndarray, np.ndarray | None]:
    """f_k (and F_k with ``weights``) under ``matches-any``, pattern pair by pattern pair
    (module docstring). The records of pattern R count for those of pattern P by their
    values on the keys the two share, C = P ∩ R; the combinations on C are numbered once
    for all the records that have C, and serve every pair that shares C. The records with
    no key (R empty) count for every pattern but the complete one."""
    n, q = codes.shape
    complete = (1 << q) - 1
    pattern = (codes >= 0).astype(np.int64) @ (1 << np.arange(q, dtype=np.int64))
    members = {int(p): np.flatnonzero(pattern == p) for p in np.unique(pattern)}
    counts = np.zeros(n, dtype=np.int64)
    sums = None if weights is None else np.zeros(n)
    shared: dict[int, list[tuple[int, int]]] = {}
    for p in members:
        for r in members:
            if not counts_for(r, p, complete):
                continue
            shared.setdefault(p & r, []).append((p, r))
    for common, pairs in shared.items():
        ids = np.zeros(n, dtype=np.int64)  # no key in common: every record matches
        top = 1
        if common:
            having = np.concatenate([rows for p, rows in members.items() if p & common == common])
            columns = [j for j in range(q) if (common >> j) & 1]
            if having.size == n:  # every record has these keys (the usual case): no copy
                ids = combination_ids(codes, columns)
            else:
                ids[having] = combination_ids(codes[having], columns)
            top = int(ids[having].max()) + 1
        for p, r in pairs:
            rows_p, rows_r = members[p], members[r]
            counts[rows_p] += np.bincount(ids[rows_r], minlength=top)[ids[rows_p]]
            if sums is not None and weights is not None:
                sums[rows_p] += np.bincount(ids[rows_r], weights=weights[rows_r],
                                            minlength=top)[ids[rows_p]]
    return counts, sums


def counts_for(r: int, p: int, complete: int) -> bool:
    """Whether the records of pattern ``r`` (a bit per key present) count for those of
    pattern ``p`` when they agree where both have values: always, but that a record without
    any key does not count for a record with every key (module docstring)."""
    return r != 0 or p != complete or p == 0


def matching_pairs(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The combinations of key values of ``codes`` (:func:`key_codes`: -1 where a key is
    missing) and which of them match which under ``matches-any``.

    Returns (combination of every row, g, h): the pairs (g[i], h[i]) of combinations that
    agree on every key both have, each pair once, (g, g) included, but for the combination
    without any key paired with a combination that has every key (it counts for none of its
    records: module docstring). Records of combination h all match every record of
    combination g, so the matching set of a record of g, whose size is its f_k, is the union
    of the combinations h paired with g.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0], [0, -1], [1, 0]])
    >>> combination, g, h = matching_pairs(codes)
    >>> combination.tolist(), sorted(zip(g.tolist(), h.tolist()))
    ([0, 1, 2], [(0, 0), (0, 1), (1, 0), (1, 1), (2, 2)])
    """
    codes = np.asarray(codes, dtype=np.int64)
    q = codes.shape[1]
    combination = combination_ids(codes, range(q)) if codes.shape[0] else np.empty(0, np.int64)
    count = int(combination.max()) + 1 if combination.size else 0
    first = np.full(count, codes.shape[0], dtype=np.int64)
    np.minimum.at(first, combination, np.arange(codes.shape[0]))
    combo_codes = codes[first]
    pattern = (combo_codes >= 0).astype(np.int64) @ (1 << np.arange(q, dtype=np.int64))
    members = {int(p): np.flatnonzero(pattern == p) for p in np.unique(pattern)}
    complete = (1 << q) - 1
    left, right = [], []
    for p, of_p in members.items():
        for r, of_r in members.items():
            if not counts_for(r, p, complete):
                continue
            common = [j for j in range(q) if (p >> j) & 1 and (r >> j) & 1]
            if not common:
                left.append(np.repeat(of_p, of_r.size))
                right.append(np.tile(of_r, of_p.size))
                continue
            ids = combination_ids(combo_codes[np.concatenate([of_p, of_r])], common)
            joined = pd.DataFrame({"g": of_p, "key": ids[:of_p.size]}).merge(
                pd.DataFrame({"h": of_r, "key": ids[of_p.size:]}), on="key")
            left.append(joined["g"].to_numpy(dtype=np.int64))
            right.append(joined["h"].to_numpy(dtype=np.int64))
    empty = np.empty(0, dtype=np.int64)
    return (combination, np.concatenate(left) if left else empty,
            np.concatenate(right) if right else empty)
