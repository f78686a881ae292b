import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance

from microagg.core.emd import GroundModel, emd_by_class
from microagg.core.verifiers import equivalence_classes, k_anonymity, t_closeness
from microagg.errors import InputError


def test_k_anonymity_hand_example():
    frame = pd.DataFrame({"a": [1, 1, 2, 2, 2, 3], "b": ["x", "x", "y", "y", "y", "x"]})
    report = k_anonymity(frame, ["a", "b"])
    assert (report.records, report.classes, report.smallest_class, report.largest_class) == (
        6, 3, 1, 3)
    assert report.holds(1) and not report.holds(2)
    merged = k_anonymity(frame, ["b"])
    assert merged.smallest_class == 3 and merged.holds(3)


def test_equivalence_classes_numbered_by_first_appearance():
    frame = pd.DataFrame({"q": [5.0, 1.0, 5.0, 2.5]})
    np.testing.assert_array_equal(equivalence_classes(frame, ["q"]), [0, 1, 0, 2])


def test_unknown_quasi_identifier():
    with pytest.raises(InputError, match="unknown column 'zz'"):
        k_anonymity(pd.DataFrame({"a": [1]}), ["zz"])


def test_t_closeness_hand_example_ordered():
    # values 1..4, classes {1,2} and {3,4}: Q = (1/4, 1/2, 3/4), P_A = (1/2, 1, 1),
    # P_B = (0, 0, 1/2): EMD = (1/4 + 1/2 + 1/4) / 3 = 1/3 for both.
    frame = pd.DataFrame({"q": [0, 0, 1, 1], "c": [1, 2, 3, 4]})
    report = t_closeness(frame, ["q"], "c")
    np.testing.assert_allclose(report.emd, [1 / 3, 1 / 3])
    assert report.distance == "ordered"
    assert report.holds(0.34) and not report.holds(0.33)


def test_t_closeness_hand_example_nominal():
    # class A = {a, a}, whole = {a, a, b, c}: ½(|1-½| + |0-¼| + |0-¼|) = ½
    frame = pd.DataFrame({"q": [0, 0, 1, 1], "c": ["a", "a", "b", "c"]})
    report = t_closeness(frame, ["q"], "c")
    assert report.distance == "equal"
    np.testing.assert_allclose(report.emd, [0.5, 0.5])


def test_t_closeness_single_class_is_zero():
    frame = pd.DataFrame({"q": [1] * 5, "c": [3, 1, 4, 1, 5]})
    assert t_closeness(frame, ["q"], "c").t == pytest.approx(0.0, abs=1e-15)


def test_confidential_cannot_be_quasi():
    frame = pd.DataFrame({"q": [1], "c": [2]})
    with pytest.raises(InputError, match="both quasi-identifier and confidential"):
        t_closeness(frame, ["q", "c"], "c")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_emd_matches_scipy_and_direct_formula(data):
    n = data.draw(st.integers(1, 80))
    m = data.draw(st.integers(1, 15))
    c = data.draw(st.integers(1, 8))
    values = np.array(data.draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n)))
    classes = np.array(data.draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)))
    _, values = np.unique(values, return_inverse=True)
    _, classes = np.unique(classes, return_inverse=True)
    distinct = values.max() + 1
    ordered = emd_by_class(classes, GroundModel.ordered("c", values))
    equal = emd_by_class(classes, GroundModel.tree("c", values))
    q = np.bincount(values, minlength=distinct) / n
    for label in range(classes.max() + 1):
        member = values[classes == label]
        if distinct > 1:
            reference = wasserstein_distance(member / (distinct - 1), values / (distinct - 1))
        else:
            reference = 0.0
        assert ordered[label] == pytest.approx(reference, abs=1e-12)
        p = np.bincount(member, minlength=distinct) / member.size
        assert equal[label] == pytest.approx(0.5 * np.abs(p - q).sum(), abs=1e-12)
