import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from microagg.errors import InputError
from microagg.partition.insensitive import corner_sequence, insensitive, total_order
from microagg.partition.mdav import mdav
from tests import reference


def _bits(corners):
    return ["".join("1" if b else "0" for b in row) for row in corners]


def test_corner_sequence_hand_derived():
    # m = 2: R1 lower corner, R2 its opposite, then the two mixed corners (tie -> smaller
    # number, attribute 1 = least significant bit: "10" = attribute 1 at its upper bound).
    assert _bits(corner_sequence(2, 4)) == ["00", "11", "10", "01"]
    # m = 3, derived by hand from the rule (see docs/algorithms.md)
    assert _bits(corner_sequence(3, 8)) == ["000", "111", "100", "011", "110", "001", "010",
                                            "101"]


@pytest.mark.parametrize("m", [1, 2, 3, 4, 6, 8])
def test_corner_sequence_is_a_permutation_then_restarts(m):
    period = corner_sequence(m, 2**m)
    assert len({tuple(c) for c in period}) == 2**m
    again = corner_sequence(m, 2**m + 3)
    np.testing.assert_array_equal(again[2**m:], corner_sequence(m, 3))
    # each corner is followed by its opposite (greatest Hamming distance m)
    np.testing.assert_array_equal(period[1::2], ~period[0::2])


@st.composite
def domain_data(draw, max_rows=60, max_cols=3):
    n = draw(st.integers(1, max_rows))
    m = draw(st.integers(1, max_cols))
    if draw(st.booleans()):
        values = st.integers(0, 4).map(float)
    else:
        values = st.floats(0, 4, allow_nan=False, width=32)
    X = draw(arrays(np.float64, (n, m), elements=values))
    k = draw(st.integers(1, n))
    return X, k, np.zeros(m), np.full(m, 4.0)


@settings(max_examples=200, deadline=None)
@given(domain_data())
def test_equals_reference_implementation(case):
    X, k, lo, hi = case
    corners = corner_sequence(X.shape[1], max(X.shape[0] // k - 1, 0))
    np.testing.assert_array_equal(insensitive(X, k, lo, hi),
                                  reference.insensitive(X, k, lo, hi, corners))


def test_equals_reference_on_the_parallel_path(split_passes):
    rng = np.random.default_rng(11)
    X = rng.integers(0, 3, (3000, 3)).astype(float)
    lo, hi = np.zeros(3), np.full(3, 2.0)
    corners = corner_sequence(3, 3000 // 9 - 1)
    np.testing.assert_array_equal(insensitive(X, 9, lo, hi, threads=split_passes),
                                  reference.insensitive(X, 9, lo, hi, corners))


@settings(max_examples=150, deadline=None)
@given(domain_data(), st.sampled_from(["corners", "single"]))
def test_cluster_sizes(case, reference_kind):
    X, k, lo, hi = case
    sizes = np.bincount(insensitive(X, k, lo, hi, reference=reference_kind))
    assert sizes.sum() == X.shape[0]
    assert np.all(sizes[:-1] == k) and k <= sizes[-1] <= 2 * k - 1


def _records(X, labels, cluster):
    """Cluster members as (row, values) pairs: a modified row is a different record."""
    return {(int(r), tuple(X[r])) for r in np.flatnonzero(labels == cluster)}


def _max_cluster_difference(X, labels, Y, labels_y):
    worst = 0
    for cluster in range(labels.max() + 1):
        a, b = _records(X, labels, cluster), _records(Y, labels_y, cluster)
        worst = max(worst, len(a - b), len(b - a))
    return worst


@settings(max_examples=200, deadline=None)
@given(domain_data(), st.data(), st.sampled_from(["corners", "single"]))
def test_insensitivity(case, data, reference_kind):
    """000 Def. 3 / Prop. 2: neighbouring data sets give i-th clusters differing in at most one
    record, for every i."""
    X, k, lo, hi = case
    row = data.draw(st.integers(0, X.shape[0] - 1))
    new = data.draw(arrays(np.float64, X.shape[1], elements=st.floats(0, 4, width=32)))
    Y = X.copy()
    Y[row] = new
    labels_x = insensitive(X, k, lo, hi, reference=reference_kind)
    labels_y = insensitive(Y, k, lo, hi, reference=reference_kind)
    assert _max_cluster_difference(X, labels_x, Y, labels_y) <= 1


def test_standard_mdav_is_not_insensitive():
    """000 Fig. 1: moving one record changes MDAV's clusters by more than one record."""
    X = np.array([[0.0, 0], [1, 0], [2, 0], [10, 0], [11, 0], [12, 0]])
    Y = X.copy()
    Y[0] = [20.0, 0]  # one record moved from the left end to the right end
    assert _max_cluster_difference(X, mdav(X, 3), Y, mdav(Y, 3)) > 1
    lo, hi = np.zeros(2), np.full(2, 20.0)
    assert _max_cluster_difference(X, insensitive(X, 3, lo, hi),
                                   Y, insensitive(Y, 3, lo, hi)) <= 1


def test_total_order_ties_are_lexicographic():
    # all three records at the same distance from the lower corner (0, 0)
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    np.testing.assert_array_equal(total_order(X, np.zeros(2), np.ones(2)), [1, 2, 0])


def test_domain_must_hold_the_data():
    with pytest.raises(InputError, match="outside their declared domain"):
        insensitive(np.array([[5.0], [1.0]]), 1, np.zeros(1), np.full(1, 4.0))
    with pytest.raises(InputError, match="high > low"):
        insensitive(np.array([[1.0], [1.0]]), 1, np.ones(1), np.ones(1))
    with pytest.raises(InputError, match="unknown reference"):
        insensitive(np.array([[1.0], [1.0]]), 1, np.zeros(1), np.full(1, 4.0), reference="x")
