"""EMD of t-closeness: hand-checked examples, the printed formulas, a transport LP, scipy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.stats import wasserstein_distance

from microagg.core.emd import GroundModel, class_emd, emd_by_class, stack
from microagg.options import GroundDistance
from tests.reference import class_emd_direct

# A taxonomy: leaves a, b (under X), c (under Y, alone), d (directly under the root).
#   concepts: a=0 b=1 c=2 d=3 X=4 Y=5 *=6; heights: leaves 0, X 1, Y 1, * 2.
PARENT = np.array([4, 4, 5, 6, 6, 6, -1])


def test_hierarchical_hand_example():
    # class {a, a}, table {a, a, b, c}: extra(a) = 1/2, extra(b) = -1/4, extra(c) = -1/4.
    # Li et al.: cost(X) = h(X)/H · min(1/2, 1/4) = 1/2 · 1/4; cost(*) = 2/2 · min(1/4, 1/4).
    values = np.array([0, 0, 1, 2])
    model = GroundModel.tree("c", values, PARENT)
    emd = emd_by_class(np.array([0, 0, 1, 1]), model)
    assert emd[0] == pytest.approx(1 / 8 + 1 / 4)
    assert model.distance is GroundDistance.HIERARCHICAL
    # the equal distance of the same classes: ½(|1 - ½| + ¼ + ¼) = ½
    assert emd_by_class(np.array([0, 0, 1, 1]), GroundModel.tree("c", values))[0] == 0.5


def test_ordered_hand_example():
    # values 1..4 in classes {1,2} {3,4}: (1/4 + 1/2 + 1/4) / 3 = 1/3 (002 §2.2)
    model = GroundModel.ordered("c", np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(emd_by_class(np.array([0, 0, 1, 1]), model), [1 / 3, 1 / 3])


def _lp_emd(p, q, ground):
    """EMD by the transportation linear program."""
    m = p.size
    equalities = []
    for i in range(m):
        row = np.zeros((m, m))
        row[i, :] = 1
        equalities.append(row.ravel())
    for j in range(m):
        col = np.zeros((m, m))
        col[:, j] = 1
        equalities.append(col.ravel())
    result = linprog(ground.ravel(), A_eq=np.array(equalities), b_eq=np.r_[p, q],
                     bounds=(0, None), method="highs")
    return result.fun


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_hierarchical_matches_transport_lp_and_li_formula(data):
    leaves = 4
    values = np.array(data.draw(st.lists(st.integers(0, leaves - 1), min_size=2, max_size=30)))
    classes = np.array(data.draw(st.lists(st.integers(0, 2), min_size=values.size,
                                          max_size=values.size)))
    _, classes = np.unique(classes, return_inverse=True)
    model = GroundModel.tree("c", values, PARENT)
    emd = emd_by_class(classes, model)
    # ground distance h(lca)/H on the leaves a, b, c, d
    lca_height = np.array([[0, 1, 2, 2], [1, 0, 2, 2], [2, 2, 0, 2], [2, 2, 2, 0]]) / 2
    q = np.bincount(values, minlength=leaves) / values.size
    tables = stack([model])
    scratch = np.zeros(PARENT.size)
    for label in range(classes.max() + 1):
        members = np.flatnonzero(classes == label)
        p = np.bincount(values[members], minlength=leaves) / members.size
        assert emd[label] == pytest.approx(_lp_emd(p, q, lca_height), abs=1e-9)
        assert emd[label] == pytest.approx(
            class_emd_direct(values, members, "hierarchical", PARENT), abs=1e-12)
        assert class_emd(members, tables.arrays, scratch) == pytest.approx(emd[label],
                                                                           abs=1e-12)
        assert not scratch.any()


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_ordered_and_equal_match_scipy_and_direct(data):
    n = data.draw(st.integers(1, 80))
    values = np.array(data.draw(st.lists(st.integers(0, 14), min_size=n, max_size=n)))
    classes = np.array(data.draw(st.lists(st.integers(0, 7), min_size=n, max_size=n)))
    _, classes = np.unique(classes, return_inverse=True)
    _, ranks = np.unique(values, return_inverse=True)
    distinct = ranks.max() + 1
    ordered_model = GroundModel.ordered("c", values.astype(float))
    equal_model = GroundModel.tree("c", values)
    ordered = emd_by_class(classes, ordered_model)
    equal = emd_by_class(classes, equal_model)
    tables = stack([ordered_model, equal_model])
    scratch = np.zeros(tables.weights.shape[1])
    for label in range(classes.max() + 1):
        members = np.flatnonzero(classes == label)
        reference = (wasserstein_distance(ranks[members] / (distinct - 1), ranks / (distinct - 1))
                     if distinct > 1 else 0.0)
        assert ordered[label] == pytest.approx(reference, abs=1e-12)
        assert ordered[label] == pytest.approx(class_emd_direct(values, members, "ordered"),
                                               abs=1e-12)
        assert equal[label] == pytest.approx(class_emd_direct(values, members, "equal"),
                                             abs=1e-12)
        # the compiled one-class EMD gives the larger of the two
        assert class_emd(members, tables.arrays, scratch) == pytest.approx(
            max(ordered[label], equal[label]), abs=1e-12)


def test_flat_taxonomy_gives_equal_distance():
    values = np.array([0, 1, 2, 2, 1, 0, 0])
    flat = np.array([3, 3, 3, -1])
    classes = np.array([0, 0, 1, 1, 1, 2, 2])
    np.testing.assert_allclose(emd_by_class(classes, GroundModel.tree("c", values, flat)),
                               emd_by_class(classes, GroundModel.tree("c", values)))
