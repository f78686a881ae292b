"""002 Algorithms 1-3 against direct implementations, and the k-anonymity and t-closeness of
every partition they return."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg.core.distance import Categorical
from microagg.core.emd import GroundModel, class_emd, largest_emd, stack
from microagg.data.taxonomy import CategoryMetric, Taxonomy
from microagg.errors import InputError
from microagg.partition import _subsets
from microagg.partition.mdav import mdav
from microagg.partition.tcloseness import (
    cluster_size,
    k_anonymity_first,
    merge,
    smallest_t,
    t_close_partition,
    t_closeness_first,
)
from tests import reference

PAPER_T = (0.01, 0.05, 0.09, 0.13, 0.17, 0.21, 0.25)
# 002 Table III, the smallest class of Algorithm 3 on 1,080 records (both data sets).
TABLE_III = {2: (49, 10, 6, 4, 3, 3, 2), 5: (49, 10, 6, 5, 5, 5, 5),
             10: (49, 10, 10, 10, 10, 10, 10), 15: (49, 15, 15, 15, 15, 15, 15),
             20: (49, 20, 20, 20, 20, 20, 20), 25: (49, 25, 25, 25, 25, 25, 25),
             30: (49, 30, 30, 30, 30, 30, 30)}


def _same_partition(a, b):
    _, ca = np.unique(a, return_inverse=True)
    _, cb = np.unique(b, return_inverse=True)
    pairs = set(zip(ca.tolist(), cb.tolist(), strict=True))
    return len(pairs) == np.unique(ca).size == np.unique(cb).size


def test_cluster_size_reproduces_table_iii():
    for k, row in TABLE_III.items():
        assert tuple(cluster_size(1080, k, t) for t in PAPER_T) == row
    # the listing's ceiling in eq. (4) would give 50 for k = 2, t = 0.01
    assert cluster_size(1080, 2, 0.01) == 49


def test_eq4_leaves_no_more_extra_records_than_clusters():
    for n in range(2, 400):
        for k in range(1, n + 1):
            size = cluster_size(n, k, 1.0)
            assert n % size <= n // size


def _data(seed, n, d=2, ties=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, ties, size=(n, d)).astype(float)  # integers: exact sums, many ties
    c = rng.integers(0, 6, size=n) + X[:, 0]
    return X, c


def _categorical(rng, n):
    taxonomy = Taxonomy.from_paths([["a", "X", "*"], ["b", "X", "*"], ["c", "Y", "*"],
                                    ["d", "Y", "*"], ["e", "*"]])
    metric = CategoryMetric.nominal("cat", taxonomy)
    return Categorical(rng.integers(0, 5, size=(n, 1)), (metric,))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 70), k=st.integers(1, 6),
       t=st.sampled_from([0.05, 0.1, 0.2, 0.4]), mixed=st.booleans())
def test_t_closeness_first_matches_direct(seed, n, k, t, mixed):
    k = min(k, n)
    X, c = _data(seed, n)
    categorical = _categorical(np.random.default_rng(seed), n) if mixed else None
    labels, size = t_closeness_first(X, c, k, t, categorical=categorical)
    assert size == cluster_size(n, k, t)
    expected = reference.t_closeness_first(X, c, size, categorical)
    assert _same_partition(labels, expected)
    sizes = np.bincount(labels)
    assert set(sizes.tolist()) <= {size, size + 1}  # eq. (3)-(4): k' or k' + 1 records
    assert sizes.sum() == n


@pytest.mark.parametrize(("block_rows", "split"), [(256, False), (3, False), (16, True)])
def test_t_closeness_first_on_larger_data_in_many_blocks(request, monkeypatch, block_rows,
                                                         split):
    """Subsets laid out afresh as they empty, cut in many blocks of nearby records (down to
    blocks of 3, whose boxes prune most of them), and (optionally) searched by two threads,
    against the direct algorithm; the progress callback counts the rows clustered up to n."""
    monkeypatch.setattr(_subsets, "BLOCK_ROWS", block_rows)
    threads = request.getfixturevalue("split_passes") if split else 1
    rng = np.random.default_rng(7)
    n = 1_203
    X = rng.normal(size=(n, 3))
    X[:200] = np.round(X[:200], 1)  # some ties too
    c = 0.5 * X[:, 0] + rng.normal(size=n)
    seen: list[int] = []
    labels, size = t_closeness_first(X, c, 2, 0.1, progress=seen.append, threads=threads)
    assert _same_partition(labels, reference.t_closeness_first(X, c, size, None))
    assert seen == sorted(seen) and seen[-1] == n
    mixed = _categorical(rng, 400)
    labels, size = t_closeness_first(X[:400], c[:400], 3, 0.2, categorical=mixed,
                                     threads=threads)
    assert _same_partition(labels, reference.t_closeness_first(X[:400], c[:400], size, mixed))


def _largest(models):
    """A class's largest EMD by the compiled one-class EMD (tested against the printed
    formulas in test_emd.py): the same floating-point values, so that the direct algorithms
    break ties between equal EMDs as the kernels do."""
    tables = stack(models)
    scratch = np.zeros(max(tables.weights.shape[1], 1))

    def emd(members):
        return class_emd(np.asarray(members, dtype=np.int64), tables.arrays, scratch)
    return emd


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 60), k=st.integers(1, 5),
       t=st.sampled_from([0.05, 0.1, 0.2, 0.4]), mixed=st.booleans())
def test_k_anonymity_first_and_merge_match_direct(seed, n, k, t, mixed):
    k = min(k, n)
    X, c = _data(seed, n)
    categorical = _categorical(np.random.default_rng(seed), n) if mixed else None
    models = [GroundModel.ordered("c", c), GroundModel.ordered("x", X[:, 1] * 7 % 5)]
    labels = k_anonymity_first(X, models, k, t, categorical=categorical)
    expected = reference.k_anonymity_first(X, _largest(models), k, t, categorical)
    assert _same_partition(labels, expected)
    merged, merges = merge(X, labels, models, t, categorical=categorical)
    expected_merged, expected_merges = reference.merge(X, expected, _largest(models), t,
                                                       categorical)
    assert merges == expected_merges
    assert _same_partition(merged, expected_merged)


@pytest.mark.parametrize("method", ["merge", "k-anonymity-first", "t-closeness-first"])
@pytest.mark.parametrize("seed", range(4))
def test_every_method_is_k_anonymous_and_t_close(method, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(150, 260))
    k = int(rng.integers(2, 7))
    t = float(rng.choice([0.03, 0.08, 0.15]))
    X = rng.normal(size=(n, 3)).round(1)  # rounded: ties in the quasi-identifiers
    models = [GroundModel.ordered("a", (X[:, 0] + rng.normal(size=n)).round(0)),
              GroundModel.tree("b", rng.integers(0, 4, size=n))]
    result = t_close_partition(X, models, k, t, method=method,
                               microaggregate=lambda size: mdav(X, size))
    sizes = np.bincount(result.labels)
    assert sizes.min() >= k
    assert largest_emd(result.labels, models).max() <= t + 1e-9
    assert result.labels.size == n


def test_heavy_ties_exercise_the_repair():
    # Two confidential values only: Prop. 2's bound assumes distinct values, and subsets cut
    # through a run of equal values leave classes above t; merging repairs them.
    rng = np.random.default_rng(3)
    n = 300
    X = rng.normal(size=(n, 2))
    c = (rng.random(n) < 0.1).astype(float)
    models = [GroundModel.ordered("c", c)]
    labels, _ = t_closeness_first(X, c, 2, 0.1)
    assert largest_emd(labels, models).max() > 0.1  # Alg. 3 alone violates t here
    result = t_close_partition(X, models, 2, 0.1)
    assert result.merges > 0
    assert largest_emd(result.labels, models).max() <= 0.1 + 1e-9
    assert np.bincount(result.labels).min() >= result.effective_k


def test_bad_t_and_unreachable_t():
    X, c = _data(0, 40)
    models = [GroundModel.ordered("c", c)]
    for bad in (0, -0.1, 1.5, float("nan")):
        with pytest.raises(InputError, match="t must lie in"):
            t_close_partition(X, models, 2, bad)
    with pytest.raises(InputError, match=r"one class; t >= 0\.0128"):
        t_close_partition(X, models, 2, 0.01)
    assert smallest_t(40) == pytest.approx(1 / 78)
    with pytest.raises(InputError, match="exceeds the number of records"):
        t_close_partition(X, models, 41, 0.5)
