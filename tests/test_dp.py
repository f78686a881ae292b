"""Differentially private releases: sensitivities, an empirical privacy audit, the releases and
their privacy reports."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from microagg import datasets
from microagg.aggregate import cluster_means
from microagg.errors import PrivacyError
from microagg.mechanisms import exponential_mechanism, laplace_mechanism
from microagg.partition.insensitive import insensitive
from microagg.partition.univariate import individual_ranking
from microagg.release.baselines import dp_laplace
from microagg.release.dp_insensitive import dp_insensitive
from microagg.release.dp_ranking import dp_individual_ranking
from microagg.release.privacy import category_sensitivity, marginality_quality
from microagg.schema import Attribute, Kind, Role, Schema
from microagg.taxonomy import CategoryMetric, Taxonomy

LOWS, HIGHS = np.array([0.0, -5.0]), np.array([10.0, 5.0])


def _neighbours(rng, n=24, trials=300):
    """Random data sets in the box [LOWS, HIGHS] and adversarial neighbours: a record moved
    between opposite corners, between the extremes of one attribute, or anywhere."""
    corners = np.array([[a, b] for a in (LOWS[0], HIGHS[0]) for b in (LOWS[1], HIGHS[1])])
    for t in range(trials):
        X = LOWS + rng.random((n, 2)) * (HIGHS - LOWS)
        if t % 3 == 0:
            X = np.round(X)  # ties
        Y = X.copy()
        row = rng.integers(n)
        kind = t % 4
        if kind == 0:
            X[row], Y[row] = corners[0], corners[3]
        elif kind == 1:
            X[row], Y[row] = corners[1], corners[2]
        elif kind == 2:
            X[row, 0], Y[row, 0] = LOWS[0], HIGHS[0]
        else:
            Y[row] = LOWS + rng.random(2) * (HIGHS - LOWS)
        yield X, Y


def _worst(statistic, rng):
    return max(np.abs(statistic(X) - statistic(Y)).sum() for X, Y in _neighbours(rng))


def test_insensitive_centroid_sensitivity():
    """000 §4: the c x p matrix of centroids moves by at most c * sum(widths) / k in L1."""
    k = 4

    def centroids(X):
        return cluster_means(X, insensitive(X, k, LOWS, HIGHS))

    worst = _worst(centroids, np.random.default_rng(0))
    clusters = 24 // k
    used = clusters * (HIGHS - LOWS).sum() / k
    assert worst <= used + 1e-9
    assert worst > (HIGHS - LOWS).sum() / k  # forgetting the c clusters would be wrong


def test_insensitive_centroid_sensitivity_per_attribute():
    """The per-attribute calibration: attribute j's c centroids move by at most
    c * width_j / k in L1."""
    k, clusters = 4, 24 // 4
    for j in range(2):
        worst = _worst(lambda X, j=j: cluster_means(X, insensitive(X, k, LOWS, HIGHS))[:, j],
                       np.random.default_rng(10 + j))
        assert worst <= clusters * (HIGHS[j] - LOWS[j]) / k + 1e-9
        assert worst > (HIGHS[j] - LOWS[j]) / k


def test_individual_ranking_sensitivity():
    """001 Lemma 1: one attribute's group means move by at most width / k in L1."""
    k = 4

    def means(X):
        labels = individual_ranking(X[:, 0], k)
        return cluster_means(X[:, 0], labels)[:, 0]

    worst = _worst(means, np.random.default_rng(1))
    assert worst <= (HIGHS[0] - LOWS[0]) / k + 1e-9
    assert worst > (HIGHS[0] - LOWS[0]) / (2 * k)  # half the sensitivity would be wrong


def test_record_sensitivity_of_the_plain_baseline():
    worst = _worst(lambda X: X, np.random.default_rng(2))
    assert worst <= (HIGHS - LOWS).sum() + 1e-9
    assert worst > (HIGHS - LOWS).max()  # the paper's per-attribute width is not enough


def test_marginality_sensitivity_is_the_diameter():
    taxonomy = Taxonomy.from_paths([["a", "A", "r"], ["b", "A", "r"], ["c", "r"]])
    metric = CategoryMetric.nominal("x", taxonomy)
    diameter = category_sensitivity(metric)
    assert diameter >= metric.scale
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(300):
        codes = rng.integers(0, 3, 12)
        other = codes.copy()
        other[rng.integers(12)] = rng.integers(0, 3)
        labels = np.repeat(np.arange(3), 4)
        change = np.abs(marginality_quality(codes, labels, metric)
                        - marginality_quality(other, labels, metric)).max()
        worst = max(worst, change)
    assert worst <= diameter + 1e-12
    assert worst > diameter / 2


# -- empirical privacy audit ----------------------------------------------------------------

def _ratio_bounds(hits_a, hits_b, trials, confidence=1e-4):
    """Clopper-Pearson bounds of P_a / P_b."""
    low_a = beta.ppf(confidence / 2, hits_a, trials - hits_a + 1) if hits_a else 0.0
    high_a = beta.ppf(1 - confidence / 2, hits_a + 1, trials - hits_a)
    low_b = beta.ppf(confidence / 2, hits_b, trials - hits_b + 1) if hits_b else 0.0
    high_b = beta.ppf(1 - confidence / 2, hits_b + 1, trials - hits_b)
    return low_a / high_b, high_a / max(low_b, 1e-300)


def _audit_laplace(noise_fraction, epsilon=1.0, trials=200_000):
    """A value 2 or 3 (neighbours, sensitivity 1) released many times; the event 'output <= 2'
    has probabilities 1/2 and e^-ε/2: the tightest ratio a correct mechanism allows."""
    sensitivity = 1.0
    a, _ = laplace_mechanism(np.full(trials, 2.0), sensitivity * noise_fraction, epsilon, 0.0,
                             5.0, rng=1, changing=1)
    b, _ = laplace_mechanism(np.full(trials, 3.0), sensitivity * noise_fraction, epsilon, 0.0,
                             5.0, rng=2, changing=1)
    return _ratio_bounds(int((a <= 2.0).sum()), int((b <= 2.0).sum()), trials)


def test_audit_laplace_mechanism():
    low, _ = _audit_laplace(1.0)
    assert low <= math.e  # no evidence of a privacy loss above ε
    low_half, _ = _audit_laplace(0.5)  # half the noise: the loss reaches 2ε
    assert low_half > math.e


def test_audit_exponential_mechanism():
    epsilon, trials = 1.0, 200_000
    # Qualities on neighbouring data sets differ by at most the sensitivity 1. The privacy
    # loss reaches ε only when the chosen candidate gains while many others lose (the
    # normalizer moves too): with 50 candidates the ratio of P(choose 0) is 2.66 (vs e), and
    # 7.06 with half the sensitivity.
    qa = np.r_[0.0, np.full(49, -1.0)]
    qb = np.r_[-1.0, np.zeros(49)]
    for fraction, caught in ((1.0, False), (0.5, True)):
        ca = exponential_mechanism(np.tile(qa, (trials, 1)), fraction, epsilon, 5)
        cb = exponential_mechanism(np.tile(qb, (trials, 1)), fraction, epsilon, 6)
        low, _ = _ratio_bounds(int((ca == 0).sum()), int((cb == 0).sum()), trials)
        assert bool(low > math.e) == caught


def test_audit_individual_ranking_release():
    """End to end: four records in [0, 10], k = 2; one record moves from 0 to 10. The released
    value of a record that stays is compared on both data sets."""
    schema = Schema((Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 10)),))
    a = pd.DataFrame({"x": [0.0, 4.0, 6.0, 10.0]})
    b = pd.DataFrame({"x": [10.0, 4.0, 6.0, 10.0]})
    trials = 1500
    hits = []
    for frame, offset in ((a, 0), (b, 10_000)):
        values = [dp_individual_ranking(frame, 1.0, 2, schema=schema, rng=offset + t)
                  .frame["x"].iloc[1] for t in range(trials)]
        hits.append(int((np.array(values) <= 3.5).sum()))
    low, _ = _ratio_bounds(hits[0], hits[1], trials)
    assert low <= math.e


# -- releases -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mixed():
    data = datasets.synthetic(600, 6, seed=4)
    return data, ["age", "hours", "region", "education"]


def test_dp_insensitive_release(mixed):
    data, columns = mixed
    release = dp_insensitive(data.frame, 1.0, 40, schema=data.schema, columns=columns, rng=7)
    frame, report = release.frame, release.report
    assert len(frame) == 600 and list(frame.columns) == list(data.frame.columns)
    assert frame["age"].between(16, 100).all() and frame["hours"].between(0, 168).all()
    for cluster in range(release.labels.max() + 1):  # one draw per cluster and attribute
        members = frame[release.labels == cluster]
        assert members[columns].nunique().max() == 1
    numeric = report["sensitivities"][0]
    clusters = 600 // 40
    assert numeric["sensitivity"] == pytest.approx(clusters * (84 + 168) / 40)
    assert numeric["scale"] >= numeric["sensitivity"] / numeric["epsilon"]
    assert sum(part["epsilon"] for part in report["epsilon_split"]) <= 1.0
    assert report["differentially_private"] and "1-differential privacy" in report["guarantee"]
    assert "n is public" in report["neighbouring"]
    assert report["domains"]["age"]["source"] == "schema"
    again = dp_insensitive(data.frame, 1.0, 40, schema=data.schema, columns=columns, rng=7)
    pd.testing.assert_frame_equal(again.frame, frame)
    assert any("sqrt(n)" in w for w in report["warnings"]) is (40 * 40 < 600)
    choices = [s for s in report["sensitivities"] if s["mechanism"] == "exponential"]
    assert len(choices) == 2  # region, education: 000 Alg. 4, ε_j / c per cluster
    for choice in choices:
        assert choice["epsilon_per_cluster"] * clusters == pytest.approx(choice["epsilon"])
        assert choice["epsilon"] == pytest.approx(1 / 4)


def test_dp_individual_ranking_scales(mixed):
    data, columns = mixed
    release = dp_individual_ranking(data.frame, 2.0, 10, schema=data.schema, columns=columns,
                                    rng=1)
    scales = {s["statistic"].split("'")[1]: s["scale"] for s in release.report["sensitivities"]
              if s["mechanism"] == "Laplace"}
    m = len(columns)
    assert scales["age"] == pytest.approx(m * 84 / (10 * 2.0), rel=1e-4)
    assert scales["hours"] == pytest.approx(m * 168 / (10 * 2.0), rel=1e-4)
    for j, name in enumerate(columns[:2]):
        groups = release.labels[:, j]
        assert release.frame.groupby(groups)[name].nunique().max() == 1


def test_dp_laplace_modes(mixed):
    data, columns = mixed
    correct = dp_laplace(data.frame, 1.0, schema=data.schema, columns=columns, rng=2)
    numeric = correct.report["sensitivities"][0]
    assert numeric["sensitivity"] == pytest.approx(84 + 168)
    paper = dp_laplace(data.frame, 1.0, schema=data.schema, columns=columns, rng=2,
                       calibration="paper")
    assert "4-differential privacy" in paper.report["guarantee"]
    assert any("never to publish" in w for w in paper.report["warnings"])


def test_paper_calibration_of_insensitive_dp(mixed):
    data, columns = mixed
    release = dp_insensitive(data.frame, 1.0, 40, schema=data.schema, columns=columns, rng=3,
                             calibration="paper")
    scales = [s for s in release.report["sensitivities"] if s["mechanism"] == "Laplace"]
    assert [s["sensitivity"] for s in scales] == pytest.approx([15 * 84 / 40, 15 * 168 / 40])
    assert "4-differential privacy" in release.report["guarantee"]
    assert release.report["calibration"] == "paper"


def test_per_attribute_calibration(mixed):
    data, columns = mixed
    m = len(columns)
    release = dp_insensitive(data.frame, 1.0, 40, schema=data.schema, columns=columns, rng=3,
                             calibration="per-attribute")
    laplace = [s for s in release.report["sensitivities"] if s["mechanism"] == "Laplace"]
    assert [s["sensitivity"] for s in laplace] == pytest.approx([15 * 84 / 40, 15 * 168 / 40])
    assert [s["epsilon"] for s in laplace] == pytest.approx([1 / m, 1 / m])
    assert sum(part["epsilon"] for part in release.report["epsilon_split"]) <= 1.0
    assert "1-differential privacy" in release.report["guarantee"]
    assert not release.report["warnings"] or all("paper" not in w
                                                  for w in release.report["warnings"])
    plain = dp_laplace(data.frame, 1.0, schema=data.schema, columns=columns, rng=3,
                       calibration="per-attribute")
    scales = [s["scale"] for s in plain.report["sensitivities"] if s["mechanism"] == "Laplace"]
    assert scales == pytest.approx([m * 84, m * 168], rel=1e-4)  # 001 §3.3


def test_bounds_policy():
    frame = pd.DataFrame({"v": [1.0, 2.0, 3.0, 50.0]})
    with pytest.raises(PrivacyError, match="no declared domain"):
        dp_laplace(frame, 1.0, rng=1)
    from_data = dp_laplace(frame, 1.0, rng=1, bounds_from_data=True)
    assert not from_data.report["differentially_private"]
    assert "NOT differentially private" in from_data.report["guarantee"]
    assert from_data.report["domains"]["v"]["high"] == 75.0
    explicit = dp_laplace(frame, 1.0, rng=1, bounds={"v": (0.0, 10.0)})
    assert explicit.report["domains"]["v"]["source"] == "--bounds"
    assert explicit.frame["v"].max() <= 10.0  # 50 was clamped before the noise


def test_report_is_json_serializable(mixed):
    data, columns = mixed
    release = dp_individual_ranking(data.frame, 1.0, 10, schema=data.schema, columns=columns,
                                    rng=1)
    json.dumps(release.report)


def test_dp_cli(run_cli, tmp_path):
    source = tmp_path / "syn.csv"
    schema = tmp_path / "syn.yaml"
    assert run_cli("datasets", "export", "synthetic", "-o", source, "--schema-out", schema,
                   "--n", "300").code == 0
    output = tmp_path / "out.parquet"
    result = run_cli("dp", source, "-o", output, "--epsilon", "1", "--k", "20", "--schema",
                     schema, "--seed", "3")
    assert result.code == 0, result.stderr
    report = json.loads((tmp_path / "out.parquet.privacy.json").read_text())
    assert report["epsilon"] == 1.0 and report["k"] == 20
    assert len(pd.read_parquet(output)) == 300
    for args, fragment in (
        (["--epsilon", "1", "--k", "20"], "no declared domain"),
        (["--epsilon", "0", "--k", "20", "--schema", str(schema)], "epsilon must be"),
        (["--epsilon", "1", "--schema", str(schema)], "needs --k"),
        (["--epsilon", "1", "--k", "5", "--method", "magic"], "unknown method"),
        (["--epsilon", "1", "--method", "laplace", "--bounds", "age=9"], "NAME=LO:HI"),
        (["--epsilon", "1", "--k", "5", "--calibration", "loose"], "unknown calibration"),
        (["--epsilon", "1", "--k", "5", "--method", "individual-ranking", "--calibration",
          "paper"], "insensitive and laplace only"),
    ):
        target = tmp_path / "bad.csv"
        bad = run_cli("dp", source, "-o", target, *args)
        assert bad.code == 2 and fragment in bad.stderr, (args, bad.stderr)
        assert not target.exists() and not (tmp_path / "bad.csv.privacy.json").exists()
