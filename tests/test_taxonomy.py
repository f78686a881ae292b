import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg.data.taxonomy import CategoryMetric, Taxonomy, marginality, semantic_distances
from microagg.errors import SchemaError

# root ─┬─ A ─┬─ a1
#       │     └─ a2
#       └─ B ─── b1
PATHS = [["a1", "A", "root"], ["a2", "A", "root"], ["b1", "B", "root"]]


def _log2(x):
    return math.log2(x)


def test_structure_and_numbering():
    tax = Taxonomy.from_paths(PATHS)
    assert tax.labels == ("a1", "a2", "b1", "A", "B", "root")
    assert tax.n_leaves == 3 and tax.root == 5
    np.testing.assert_array_equal(tax.parent, [3, 3, 4, 5, 5, -1])
    assert tax.path_to_root(0) == [0, 3, 5]
    np.testing.assert_array_equal(tax.depth(), [3, 3, 3, 2, 2, 1])


def test_semantic_distance_hand_values():
    """000 eq. 7, by hand: e.g. δ(a1, b1): φ(a1) ∪ φ(b1) has 5 concepts, the intersection 1
    (the root), so δ = log2(1 + 4/5)."""
    tax = Taxonomy.from_paths(PATHS)
    d = semantic_distances(tax)
    i = {label: n for n, label in enumerate(tax.labels)}
    assert d[i["a1"], i["a1"]] == 0
    assert d[i["a1"], i["a2"]] == pytest.approx(_log2(1 + 2 / 4))
    assert d[i["a1"], i["b1"]] == pytest.approx(_log2(1 + 4 / 5))
    assert d[i["a1"], i["A"]] == pytest.approx(_log2(1 + 1 / 3))
    assert d[i["a1"], i["root"]] == pytest.approx(_log2(1 + 2 / 3))
    assert d[i["A"], i["B"]] == pytest.approx(_log2(1 + 2 / 3))
    assert d[i["b1"], i["A"]] == pytest.approx(_log2(1 + 3 / 4))
    np.testing.assert_array_equal(d, d.T)


def test_marginality_boundaries_and_centroids_by_hand():
    tax = Taxonomy.from_paths(PATHS)
    metric = CategoryMetric.nominal("x", tax)
    s = _log2(1.5)  # δ(a1, a2)
    far = _log2(1.8)  # δ(a1, b1) = δ(a2, b1)
    # eq. 2 over the domain (the leaves): m(a1) = m(a2) = s + far, m(b1) = 2 far
    counts = np.array([1, 1, 1, 0, 0, 0])
    np.testing.assert_allclose(marginality(counts, metric.distances)[:3],
                               [s + far, s + far, 2 * far])
    # eq. 3: the most marginal leaf is b1; eq. 4: the farthest leaf from it, a1 (tie with a2,
    # lowest number wins)
    assert (metric.bottom, metric.top) == (2, 0)
    assert metric.scale == pytest.approx(far)
    # eq. 5: sample {a1, a1, a2}: candidates a1, a2, A; m(a1) = s is the least
    assert metric.centroid(np.array([2, 1, 0, 0, 0, 0])) == 0
    np.testing.assert_array_equal(metric.candidates(np.array([2, 1, 0, 0, 0, 0])), [0, 1, 3])
    # sample {a1, b1}: the minimal sub-taxonomy reaches the root; a1 and b1 tie (far each)
    np.testing.assert_array_equal(metric.candidates(np.array([1, 0, 1, 0, 0, 0])),
                                  [0, 2, 3, 4, 5])
    assert metric.centroid(np.array([1, 0, 1, 0, 0, 0])) == 0


def test_inner_concept_centroid():
    """Four children of A, one each: m(child) = 3 δ(siblings) = 3 log2(1.5) = 1.755 exceeds
    m(A) = 4 log2(4/3) = 1.660, so the centroid is the inner concept A."""
    tax = Taxonomy.from_paths([[f"a{i}", "A", "root"] for i in range(4)] + [["b", "root"]])
    metric = CategoryMetric.nominal("x", tax)
    counts = np.zeros(tax.n_concepts)
    counts[:4] = 1
    assert tax.labels[metric.centroid(counts)] == "A"
    # over all concepts (the DP variant) A still wins
    assert tax.labels[metric.centroid(counts, over_all=True)] == "A"


def test_chain_metric_centroid_is_a_median():
    metric = CategoryMetric.chain("edu", ["low", "mid", "high", "top"])
    assert metric.distances[0, 3] == 1 and metric.distances[1, 2] == pytest.approx(1 / 3)
    assert (metric.bottom, metric.top) == (0, 3) and metric.scale == 1
    assert metric.centroid(np.array([3, 0, 1, 1])) == 0  # values 0,0,0,2,3: median 0
    assert metric.centroid(np.array([1, 1, 1, 1])) == 1  # lower median of 0,1,2,3


def test_flat_taxonomy_is_equal_distance():
    tax = Taxonomy.flat(["x", "y", "z"])
    d = semantic_distances(tax)[:3, :3]
    off = d[~np.eye(3, dtype=bool)]
    assert np.allclose(off, off[0]) and off[0] == pytest.approx(_log2(1 + 2 / 3))
    assert Taxonomy.flat(["*", "y"]).labels[-1] == "(any *)"


def test_hierarchy_csv_and_yaml(tmp_path: Path):
    csv_file = tmp_path / "h.csv"
    csv_file.write_text("a1;A;root\nb1;B;root\na2;A;root")  # no final newline, like ARX's
    yaml_file = tmp_path / "h.yaml"
    yaml_file.write_text("root:\n  A: [a1, a2]\n  B:\n    b1:\n")
    order = ["a1", "a2", "b1"]
    from_csv = Taxonomy.load(csv_file, order)
    from_yaml = Taxonomy.load(yaml_file, order)
    assert from_csv.labels == from_yaml.labels == ("a1", "a2", "b1", "A", "B", "root")
    np.testing.assert_array_equal(from_csv.parent, from_yaml.parent)


@pytest.mark.parametrize(
    ("paths", "order", "fragment"),
    [
        ([["a", "X", "r"], ["a", "Y", "r"]], None, "listed twice"),
        ([["a", "X", "r"], ["b", "Y", "s"]], None, "exactly one root"),
        ([["a", "X", "r"], ["X", "r"]], None, "has sub-concepts"),
        ([["a", "X", "r"], ["b", "Y", "X"]], None, "two parents"),
        ([["a", "r"], ["b", "r"]], ["a", "c"], "'c' is not a leaf"),
        ([["a", "r"], ["b", "r"]], ["a"], "'b' is not one of the categories"),
        ([["a", "", "r"]], None, "empty concept"),
    ],
)
def test_validation_errors(paths, order, fragment):
    with pytest.raises(SchemaError, match=None) as info:
        Taxonomy.from_paths(paths, order)
    assert fragment in str(info.value)


def test_missing_file(tmp_path: Path):
    with pytest.raises(SchemaError, match="not found"):
        Taxonomy.load(tmp_path / "none.csv")


@st.composite
def random_taxonomy(draw):
    """A random tree: each new inner concept hangs under an earlier one; leaves under any."""
    inner = draw(st.integers(0, 6))
    parents = [-1] + [draw(st.integers(0, i)) for i in range(inner)]
    leaves = draw(st.integers(2, 9))
    paths = []
    for leaf in range(leaves):
        node = draw(st.integers(0, inner))
        path = [f"leaf{leaf}"]
        while node >= 0:
            path.append(f"c{node}")
            node = parents[node]
        paths.append(path)
    return Taxonomy.from_paths(paths)


@settings(max_examples=100, deadline=None)
@given(random_taxonomy(), st.data())
def test_semantic_distance_is_a_metric(tax, data):
    d = semantic_distances(tax)
    n = tax.n_concepts
    assert np.all(d >= 0) and np.all(d <= 1) and np.array_equal(d, d.T)
    assert np.all(np.diag(d) == 0)
    off = d[~np.eye(n, dtype=bool)]
    assert np.all(off > 0)  # identity of indiscernibles
    a, b, c = (data.draw(st.integers(0, n - 1)) for _ in range(3))
    assert d[a, c] <= d[a, b] + d[b, c] + 1e-12
