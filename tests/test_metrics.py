import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg.data.schema import Attribute, Schema
from microagg.errors import InputError
from microagg.evaluation.evaluate import evaluate
from microagg.evaluation.risk import record_linkage
from microagg.evaluation.utility import (
    jsd,
    mean_variation,
    relative_error,
    sse,
    sse_percent,
    variance_variation,
)


def test_sse_hand_example():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    y = np.array([[2.0, 2.0], [3.0, 1.0]])
    assert sse(x, y) == 1 + 9


def test_sse_percent_bounds():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 3)) * [1, 10, 100]
    assert sse_percent(x, x) == 0.0
    # Replacing every value by its column mean loses all the variance: 100 %.
    assert sse_percent(x, np.broadcast_to(x.mean(axis=0), x.shape)) == pytest.approx(100.0)
    # Scale-free: rescaling a column does not change the figure.
    y = x + rng.normal(size=x.shape)
    assert sse_percent(x * [1, 5, 0.1], y * [1, 5, 0.1]) == pytest.approx(sse_percent(x, y))


def test_sse_percent_hand_example():
    x = np.array([[0.0], [2.0]])  # mean 1, SST = 2
    y = np.array([[1.0], [2.0]])  # SSE = 1
    assert sse_percent(x, y) == pytest.approx(50.0)


def test_relative_error_sanity_bound():
    x = np.array([[0.0], [100.0]])
    y = np.array([[1.0], [90.0]])
    # width 200: bound 2. |0-1|/max(0, 2) = 0.5; |100-90|/100 = 0.1
    assert relative_error(x, y, np.array([200.0])) == pytest.approx(0.3)


def test_variance_and_mean_variation():
    x = np.array([[1.0, 10.0], [3.0, 10.0]])
    y = np.array([[2.0, 12.0], [2.0, 12.0]])
    np.testing.assert_allclose(variance_variation(x, y), [1.0, np.nan])
    np.testing.assert_allclose(mean_variation(x, y), [0.0, 0.2])


def test_jsd_identical_disjoint_and_edges():
    x = np.array([[0.0], [0.1], [0.2]])
    assert jsd(x, x, [0.0], [1.0])[0] == 0.0
    assert jsd(x, x + 0.9, [0.0], [1.0])[0] == pytest.approx(1.0)
    # values outside the domain fall into the edge bins
    assert jsd(np.array([[1.0]]), np.array([[7.0]]), [0.0], [1.0])[0] == 0.0
    # half the mass moved: P = (1, 0), Q = (1/2, 1/2): JSD = 1 - ¾·log2(4/3)·... computed:
    p, q = np.array([1.0, 0.0]), np.array([0.5, 0.5])
    m = (p + q) / 2
    expected = 0.5 * np.sum(p[p > 0] * np.log2(p[p > 0] / m[p > 0])) + 0.5 * np.sum(
        q * np.log2(q / m))
    got = jsd(np.array([[0.1], [0.1]]), np.array([[0.1], [0.9]]), [0.0], [1.0])[0]
    assert got == pytest.approx(expected)


def test_shape_mismatch():
    with pytest.raises(InputError, match="differ in shape"):
        sse(np.zeros((2, 2)), np.zeros((3, 2)))


def _naive_rl(x, y):
    total = 0.0
    for j in range(len(x)):
        d = ((x - y[j]) ** 2).sum(axis=1)
        group = np.flatnonzero(d == d.min())
        if j in group:
            total += 1 / group.size
    return 100 * total / len(x)


def test_record_linkage_hand_examples():
    x = np.array([[0.0], [0.0], [5.0]])
    # identity release: the two duplicated records are confused (½ each), the third linked
    assert record_linkage(x, x) == pytest.approx(100 * 2 / 3)
    # everyone masked to the same value: nearest set is the two zeros for everyone
    y = np.zeros((3, 1))
    assert record_linkage(x, y) == pytest.approx(100 * (0.5 + 0.5) / 3)


def test_record_linkage_uses_widths():
    x = np.array([[0.0, 0.0], [1.0, 100.0]])
    y = np.array([[0.95, 45.0], [0.05, 55.0]])
    # Raw distances: the second attribute dominates, y0 is nearest x0 and y1 nearest x1.
    assert record_linkage(x, y) == 100.0
    # Scaled by widths (1, 100): y0 = (0.95, 0.45) is at 0.305 from x1 = (1, 1) and 1.105 from
    # x0, so both links go wrong.
    assert record_linkage(x, y, np.array([1.0, 100.0])) == 0.0


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_record_linkage_matches_naive(data):
    n = data.draw(st.integers(1, 25))
    p = data.draw(st.integers(1, 3))
    x = np.array(data.draw(st.lists(st.lists(st.integers(0, 3), min_size=p, max_size=p),
                                    min_size=n, max_size=n)), dtype=float)
    noise = np.array(data.draw(st.lists(st.lists(st.integers(-1, 1), min_size=p, max_size=p),
                                        min_size=n, max_size=n)), dtype=float)
    y = x + noise
    assert record_linkage(x, y) == pytest.approx(_naive_rl(x, y), abs=1e-9)


def test_evaluate_keys_and_column_choice():
    original = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [10, 20, 30, 40], "c": list("wxyz")})
    masked = original.copy()
    masked["a"] = [1.5, 1.5, 3.5, 3.5]
    result = evaluate(original, masked)
    assert result["columns"] == ["a", "b"]  # numeric columns by default
    for key in ("sse", "sse_percent", "record_linkage_percent", "relative_error", "jsd",
                "variance_variation", "mean_variation"):
        assert key in result
    assert result["sse"] == pytest.approx(4 * 0.25)
    assert result["per_attribute"]["b"]["sse"] == 0.0
    assert result["domains"]["a"] == {"low": 1.0, "high": 4.0, "source": "data"}
    schema = Schema((Attribute("a", "quasi", "numeric", domain=(0, 10)),))
    only_a = evaluate(original, masked, schema)
    assert only_a["columns"] == ["a"]
    assert only_a["domains"]["a"]["source"] == "schema"


def test_evaluate_refuses_row_mismatch_and_unknown_columns():
    original = pd.DataFrame({"a": [1.0, 2.0], "c": ["x", "y"]})
    with pytest.raises(InputError, match="keep every row"):
        evaluate(original, original.iloc[:1])
    with pytest.raises(InputError, match="unknown column 'zz'"):
        evaluate(original, original, columns=["zz"])


def test_evaluate_categorical_with_flat_and_declared_taxonomies(tmp_path):
    original = pd.DataFrame({"job": ["a1", "a2", "b1", "b1"], "n": [1.0, 2.0, 3.0, 4.0]})
    masked = pd.DataFrame({"job": ["a1", "a1", "b1", "b1"], "n": [1.0, 2.0, 3.0, 4.0]})
    # flat taxonomy: every pair of distinct categories at log2(1 + 2/3)
    flat = evaluate(original, masked, columns=["job"])
    d_flat = np.log2(1 + 2 / 3)
    assert flat["sse"] == pytest.approx(d_flat**2)
    assert flat["relative_error"] == pytest.approx(d_flat / 4)
    assert flat["sse_percent"] is None and flat["variance_variation"] is None
    # declared taxonomy: root -> A{a1, a2}, B{b1}; an inner concept may be released
    taxonomy = tmp_path / "job.csv"
    taxonomy.write_text("a1;A;root\na2;A;root\nb1;B;root\n")
    schema = Schema((Attribute("job", "quasi", "nominal", taxonomy=taxonomy),
                     Attribute("n", "other", "numeric")))
    inner = pd.DataFrame({"job": ["A", "A", "b1", "b1"], "n": [1.0, 2.0, 3.0, 4.0]})
    result = evaluate(original, inner, schema)
    d_leaf_parent = np.log2(1 + 1 / 3)  # δ(a1, A)
    assert result["columns"] == ["job"]
    assert result["sse"] == pytest.approx(2 * d_leaf_parent**2)
    assert result["per_attribute"]["job"]["mean_semantic_distance"] == pytest.approx(
        d_leaf_parent / 2)
    assert result["taxonomies"]["job"]["concepts"] == 6
    with pytest.raises(InputError, match="'Z' in row 1 is neither a category nor a concept"):
        evaluate(original, inner.assign(job=["Z", "A", "b1", "b1"]), schema)


def test_record_linkage_with_categories():
    # two records share the numeric value; their categories tell them apart
    x = np.array([[0.0], [0.0], [1.0]])
    codes = np.array([[0], [1], [0]])
    S = np.array([[[0.0, 1.0], [1.0, 0.0]]])
    assert record_linkage(x, x, categories=(codes, codes, S)) == 100.0
    assert record_linkage(x, x) == pytest.approx(100 * 2 / 3)  # without them: a shared tie


@pytest.mark.reference_data
def test_evaluate_on_census_identity(census):
    result = evaluate(census.frame, census.frame, census.schema)
    assert result["sse"] == 0.0 and result["sse_percent"] == 0.0
    assert result["record_linkage_percent"] == 100.0  # all records distinct
    assert result["jsd"] == 0.0


def test_evaluate_returns_a_typed_result_that_reads_as_its_json():
    import json

    from microagg import datasets
    from microagg.evaluation.evaluate import CategoricalDetail, Evaluation, NumericDetail
    from microagg.release import microaggregate

    data = datasets.synthetic(300, 3, seed=4)
    masked = microaggregate(data.frame, k=5, schema=data.schema).frame
    result = evaluate(data.frame, masked, data.schema, columns=["age", "region"])
    assert isinstance(result, Evaluation)
    assert result.sse_percent == result["sse_percent"] and result.rows == 300
    assert result.columns == ["age", "region"]
    assert isinstance(result.per_attribute["age"], NumericDetail)
    assert isinstance(result.per_attribute["region"], CategoricalDetail)
    text = json.loads(json.dumps(result.to_dict()))
    assert text["per_attribute"]["age"]["sse"] == result.per_attribute["age"].sse
    categories = evaluate(data.frame, masked, data.schema, columns=["region"]).to_dict()
    assert categories["sse_percent"] is None and "rank_risk" in categories  # null, not left out
