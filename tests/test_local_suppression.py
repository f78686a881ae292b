"""Local suppression to k-anonymity: the written table is k-anonymous by the definition of
f_k (a missing value matching any value), no suppressed value can be put back, and the
choices follow the importance of the keys."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg.core.frequencies import key_codes
from microagg.core.suppression import (
    Constraint,
    _passes,
    default_importance,
    local_suppression,
)
from microagg.errors import InputError
from microagg.release.methods import LocalSuppression
from tests.reference import local_suppression_sweeps, matching_counts


def _codes(rng, n, cards, missing=0.05):
    codes = np.column_stack([rng.integers(0, c, n) for c in cards]).astype(np.int64)
    codes[rng.random(codes.shape) < missing] = -1
    return codes


def _apply(codes, suppressed):
    out = codes.copy()
    out[suppressed] = -1
    return out


def _restorable(codes, out, k, constraints):
    """The suppressed cells whose value could be put back keeping every constraint."""
    found = []
    for i, j in zip(*np.nonzero((out < 0) & (codes >= 0)), strict=True):
        trial = out.copy()
        trial[i, j] = codes[i, j]
        if all(matching_counts(trial, c.columns).min() >= c.k for c in constraints):
            found.append((int(i), int(j)))
    return found


@settings(max_examples=60, deadline=None)
@given(st.integers(5, 70), st.integers(1, 4), st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_the_result_is_k_anonymous_and_no_value_can_be_put_back(n, q, k, seed):
    rng = np.random.default_rng(seed)
    codes = _codes(rng, n, rng.integers(2, 6, q))
    done = local_suppression(codes, k)
    out = _apply(codes, done.suppressed)
    assert matching_counts(out).min() >= k
    assert not (done.suppressed & (codes < 0)).any()  # only values present are suppressed
    assert done.total == done.greedy - done.restored
    assert _restorable(codes, out, k, [Constraint(tuple(range(q)), k)]) == []


@settings(max_examples=30, deadline=None)
@given(st.integers(6, 50), st.integers(0, 2**32 - 1))
def test_combinations_make_every_set_of_keys_k_anonymous(n, seed):
    rng = np.random.default_rng(seed)
    codes = _codes(rng, n, [3, 4, 2, 5])
    constraints = [Constraint(c, 3) for c in itertools.combinations(range(4), 2)]
    constraints += [Constraint(c, 2) for c in itertools.combinations(range(4), 3)]
    out = _apply(codes, local_suppression(codes, 3, constraints=constraints).suppressed)
    for c in constraints:
        assert matching_counts(out, c.columns).min() >= c.k
    assert _restorable(codes, out, 3, constraints) == []


def test_a_hand_checked_table():
    """Rows 0-1 (a, x) and 3-4 (b, y) are pairs; row 2 (a, y) and row 5 (b, x) are alone.
    Suppressing the second key of row 2 makes it (a, *): it matches rows 0 and 1. Row 5 the
    same with rows 3, 4. The first key would do as well; the second has as many categories
    and comes later, so it is the less important (sdcMicro's default order)."""
    codes = np.array([[0, 0], [0, 0], [0, 1], [1, 1], [1, 1], [1, 0]])
    done = local_suppression(codes, 2)
    assert np.argwhere(done.suppressed).tolist() == [[2, 1], [5, 1]]
    reversed_order = local_suppression(codes, 2, importance=np.array([0, 1]))
    assert np.argwhere(reversed_order.suppressed).tolist() == [[2, 0], [5, 0]]


def test_a_class_is_suppressed_as_a_whole_and_the_fewest_values_are_chosen():
    """Three records (0, 0, 0) need k = 4: one suppression each in key 2 lets them match
    the three records (0, 0, 1), which in turn match them: both classes reach 6 with three
    suppressions (keys 0 and 1 instead would cost two per record)."""
    codes = np.array([[0, 0, 0]] * 3 + [[0, 0, 1]] * 3 + [[1, 1, 0]] * 4 + [[2, 2, 1]] * 4)
    done = local_suppression(codes, 4)
    assert np.argwhere(done.suppressed).tolist() == [[0, 2], [1, 2], [2, 2]]


def test_default_importance_is_sdcmicros():
    """More categories: less important (rank 0 is suppressed first); ties: the later key."""
    codes = np.column_stack([np.arange(10) % 2, np.arange(10) % 5, np.arange(10) % 2])
    assert default_importance(codes).tolist() == [2, 0, 1]


def test_more_keys_than_the_limit_are_refused():
    with pytest.raises(InputError, match="at most 16 keys"):
        local_suppression(np.zeros((5, 17), dtype=np.int64), 2)
    with pytest.raises(InputError, match="larger than the 3 records"):
        local_suppression(np.zeros((3, 2), dtype=np.int64), 4)


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "sex": rng.choice(["f", "m"], n), "region": rng.choice(list("abcdef"), n),
        "age": rng.integers(18, 40, n), "income": rng.normal(3e4, 5e3, n).round(2),
        "w": rng.uniform(10, 100, n).round(1), "stratum": rng.choice(["x", "y"], n)})
    frame.loc[rng.random(n) < 0.05, "region"] = None
    return frame


def test_the_written_table_is_k_anonymous_and_keeps_everything_else():
    frame = _frame()
    keys = ["sex", "region", "age"]
    release = LocalSuppression(k=4).release(frame, keys=keys, roles={"w": "weight"})
    out = release.frame
    report = release.report
    assert matching_counts(key_codes(out, keys)).min() >= 4
    assert report.k_anonymity.holds and report.k_anonymity.smallest_class >= 4
    # only key values, and only present ones, became missing; nothing else moved
    for key in keys:
        before, after = frame[key], out[key]
        moved = before.notna() & after.isna()
        assert report.suppressions[key] == int(moved.sum())
        assert (before[after.notna()].astype(str) == after[after.notna()].astype(str)).all()
    assert out[["income", "w", "stratum"]].equals(frame[["income", "w", "stratum"]])
    assert str(out["age"].dtype) == "Int64"  # whole numbers stay whole beside the missing values
    assert report.total_suppressions == sum(report.suppressions.values())
    assert report.before.below_k["5"] > 0 and report.after.below_k["3"] == 0
    assert report.importance[-1] == "age"  # the most categories: suppressed first


def test_each_stratum_is_made_k_anonymous_on_its_own():
    frame = _frame(seed=1)
    keys = ["sex", "region", "age"]
    release = LocalSuppression(k=3).release(frame, keys=keys, roles={"stratum": "stratum"})
    codes = key_codes(release.frame, keys)
    for value in ("x", "y"):
        rows = (frame["stratum"] == value).to_numpy()
        assert matching_counts(codes[rows]).min() >= 3
    assert release.report.n_strata == 2 and release.report.k_anonymity.holds


def test_importance_names_keys_only():
    with pytest.raises(InputError, match="`importance` names 'income'"):
        LocalSuppression(k=3, importance="income").release(_frame(), keys=["sex", "age"])
    with pytest.raises(InputError, match="sets of 3 keys, but there are 2"):
        LocalSuppression(k=3, combinations=(3,)).release(_frame(), keys=["sex", "age"])


def test_a_stratum_smaller_than_k_is_refused():
    frame = _frame(20).assign(stratum=["x"] * 18 + ["y"] * 2)
    with pytest.raises(InputError, match="stratum stratum=y has 2 record"):
        LocalSuppression(k=3).release(frame, keys=["sex"], roles={"stratum": "stratum"})


@pytest.mark.reference_data
def test_adult_with_sdcmicros_keys_and_fewer_suppressions():
    """UCI Adult, 7 keys, k = 5: k-anonymous with fewer suppressions than sdcMicro 5.8.1's
    localSuppression on the same keys (15,340, docs/reproduction.md)."""
    from microagg import datasets

    frame = datasets.load("adult").frame
    keys = ["age", "workclass", "education", "marital-status", "race", "sex",
            "native-country"]
    release = LocalSuppression(k=5).release(frame, keys=keys, roles={"fnlwgt": "weight"})
    assert release.report.k_anonymity.holds
    assert release.report.total_suppressions < 15_340


def test_combinations_within_strata_on_the_written_table():
    frame = _frame(400, seed=3)
    keys = ["sex", "region", "age"]
    release = LocalSuppression(k=3, combinations=(2,)).release(
        frame, keys=keys, roles={"stratum": "stratum"})
    codes = key_codes(release.frame, keys)
    for value in ("x", "y"):
        rows = (frame["stratum"] == value).to_numpy()
        for pair in itertools.combinations(range(3), 2):
            assert matching_counts(codes[rows], pair).min() >= 3
    report = release.report
    assert report.k_anonymity.holds and report.combinations == [2]
    # k-anonymity of the pairs does not make the three keys together k-anonymous
    assert report.after.smallest_class < 3


@pytest.mark.parametrize(("values", "written"), [
    ([1, 1, 2, 2, 3], "Int64"), (np.array([1, 1, 2, 2, 3], dtype=np.uint8), "UInt8"),
    ([True, True, True, True, False], "boolean"), ([1.5, 1.5, 2.5, 2.5, 3.5], "float64"),
    (pd.Categorical(list("aabbc")), "category")])
def test_a_suppressed_value_is_missing_and_the_rest_keeps_its_type(values, written):
    frame = pd.DataFrame({"key": values})
    out = LocalSuppression(k=2).release(frame, keys=["key"]).frame["key"]
    assert str(out.dtype) == written
    assert out.isna().tolist() == [False, False, False, False, True]
    assert out[:4].tolist() == pd.Series(values)[:4].tolist()


@settings(max_examples=80, deadline=None)
@given(st.integers(5, 40), st.integers(1, 3), st.integers(2, 4), st.integers(0, 2**32 - 1))
def test_records_left_blank_count_for_no_complete_record(n, q, k, seed):
    """With many missing values, some records end with every key missing: they count for no record
    that has every key (sdcMicro's freqCalc), so they cannot make the others k-anonymous;
    the result is k-anonymous by that definition and nothing can be put back."""
    rng = np.random.default_rng(seed)
    codes = _codes(rng, n, rng.integers(2, 4, q), missing=0.3)
    constraints = [Constraint(tuple(range(q)), k)]
    if q == 3:
        constraints += [Constraint(c, 2) for c in itertools.combinations(range(q), 2)]
    done = local_suppression(codes, k, constraints=constraints)
    out = _apply(codes, done.suppressed)
    for c in constraints:
        assert matching_counts(out, c.columns).min() >= c.k
    assert _restorable(codes, out, k, constraints) == []


@settings(max_examples=25, deadline=None)
@given(st.integers(5, 30), st.integers(1, 4), st.integers(2, 4), st.sampled_from([0.0, 0.1, 0.3]),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_the_sweeps_make_the_choices_of_their_definition(n, q, k, missing, pairs, seed):
    """The grouped sweeps and the grouped restoring suppress exactly the cells that the
    same rules give with every frequency counted afresh from its definition (few categories:
    copies and ties in f; ``missing``: a share of missing values, some records left blank),
    with and without the switch to a record at a time."""
    rng = np.random.default_rng(seed)
    codes = _codes(rng, n, rng.integers(2, 4, q), missing)
    rank = default_importance(codes)
    constraints = [Constraint(tuple(range(q)), k)]
    if pairs and q >= 3:
        constraints += [Constraint(c, 2) for c in itertools.combinations(range(q), 2)]
    for mode in ("sweeps", "auto"):
        done = _passes(codes, constraints, rank, mode)
        expected = local_suppression_sweeps(codes, rank, constraints, auto=mode == "auto")
        assert (done.suppressed == ((expected < 0) & (codes >= 0))).all(), mode
        assert done.total == done.greedy - done.restored


def test_mostly_unique_records_are_done_by_sweeps_with_no_value_to_put_back(monkeypatch):
    """200 records of 5 keys, most of them unique: the sweeps do the work (the record at a
    time kernel is never called), the result is 5-anonymous by the definition of f_k and no
    suppressed value can be put back."""
    import microagg.core.suppression as suppression

    def refused(*args):
        raise AssertionError("a record at a time")

    rng = np.random.default_rng(7)
    codes = _codes(rng, 200, [4, 5, 4, 3, 5], missing=0.01)
    assert (matching_counts(codes) == 1).mean() > 0.5
    monkeypatch.setattr(suppression, "_greedy", refused)
    constraint = [Constraint(tuple(range(5)), 5)]
    done = _passes(codes, constraint, default_importance(codes), "sweeps")
    out = _apply(codes, done.suppressed)
    assert matching_counts(out).min() >= 5
    assert _restorable(codes, out, 5, constraint) == []
