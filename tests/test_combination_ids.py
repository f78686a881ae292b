"""Numbering the combinations of values: the hashed pass against a direct numbering, on data
built to collide (few distinct values, many equal rows, signed zeros, NaN, texts, None)."""

import math

import numpy as np
import pandas as pd
import pytest

from microagg.core._row_hash import first_appearance_ids
from microagg.core.frequencies import combination_ids, combinations, value_ids
from microagg.core.verifiers import equivalence_classes, k_anonymity


def _direct(rows) -> list[int]:
    """Ids in order of first appearance, by a dictionary of the rows as tuples."""
    seen: dict = {}
    return [seen.setdefault(row, len(seen)) for row in rows]


def _normal(value):
    """A value as the numbering compares it: every NaN and None alike, 0.0 as -0.0."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "<missing>"
    return value + 0.0 if isinstance(value, float) else value


@pytest.mark.parametrize("seed", range(4))
def test_first_appearance_ids_equal_a_direct_numbering(seed):
    rng = np.random.default_rng(seed)
    n, p = 5_000, int(rng.integers(1, 6))
    words = rng.integers(0, 3, (n, p)).astype(np.uint64)  # many equal rows
    words[rng.random(n) < 0.1] = np.uint64(2**64 - 1)  # the largest word
    ids = first_appearance_ids(np.ascontiguousarray(words.T))
    assert ids.tolist() == _direct(map(tuple, words.tolist()))


def test_combination_ids_of_codes_equal_a_direct_numbering():
    rng = np.random.default_rng(7)
    codes = rng.integers(-1, 4, (3_000, 4))
    for columns in ([0], [1, 3], [0, 1, 2, 3]):
        expected = _direct(map(tuple, codes[:, columns].tolist()))
        assert combination_ids(codes, columns).tolist() == expected


def test_value_ids_equal_pandas_groups_and_a_direct_numbering():
    rng = np.random.default_rng(3)
    n = 4_000
    frame = pd.DataFrame({
        "x": rng.choice([0.0, -0.0, 1.5, np.nan, 1e300], n),
        "i": rng.integers(-2, 2, n),
        "t": rng.choice(np.array(["a", "b", None], dtype=object), n),
        "c": pd.Categorical(rng.choice(["u", "v"], n)),
        "b": rng.random(n) < 0.5,
    })
    columns = list(frame.columns)
    ids = value_ids(frame, columns)
    expected = _direct(tuple(_normal(v) for v in row)
                       for row in frame.astype(object).itertuples(index=False))
    assert ids.tolist() == expected
    grouped = frame.groupby(columns, sort=False, dropna=False).ngroup().to_numpy()
    assert np.array_equal(ids, grouped)
    assert np.array_equal(equivalence_classes(frame, columns), ids)


def test_k_anonymity_without_missing_values_counts_each_combination():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(rng.integers(0, 3, (2_000, 3)).astype(float), columns=list("abc"))
    frequencies, classes = combinations(frame, list("abc"))
    rows = list(map(tuple, frame.to_numpy().tolist()))
    assert frequencies.tolist() == [rows.count(r) for r in rows]
    assert classes == len(set(rows))
    assert k_anonymity(frame, list("abc")).smallest_class == min(rows.count(r) for r in rows)
