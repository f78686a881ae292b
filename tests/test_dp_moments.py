"""Cross-moment microaggregation (paper 004): the moments, their sensitivities on adversarial
neighbouring clusters, the post-processing, the samplers and the release."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import skew

from microagg.core.aggregate import cluster_moments, moment_indices
from microagg.core.synthesis import (
    SKEWNESS_LIMIT,
    covariance_bound,
    nearest_covariance,
    sample_normal,
    sample_skew_normal,
    skew_normal_parameters,
)
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError, PrivacyLeakWarning
from microagg.options import CoskewnessTerms, MomentVariant
from microagg.partition.insensitive import insensitive
from microagg.partition.mdav import mdav
from microagg.release import dp_cross_moment
from microagg.release.dp.moments import (
    coefficient_sensitivity,
    joint_sensitivity,
    statistic_blocks,
)

# -- the moments -------------------------------------------------------------------------------


def _naive_coskewness(Y, i, j, h):
    """004 eq. (2), written out."""
    k = len(Y)
    c = Y - Y.mean(axis=0)
    return k / ((k - 1) * (k - 2)) * np.sum(c[:, i] * c[:, j] * c[:, h])


def test_cluster_moments_match_the_formulas():
    rng = np.random.default_rng(0)
    X = rng.random((200, 3)) ** 3
    labels = rng.integers(0, 7, 200)
    pairs, triples = moment_indices(3, 2, marginal=False), moment_indices(3, 3, marginal=False)
    assert len(pairs) == 6 and len(triples) == 10  # d(d+1)/2, d(d+1)(d+2)/6
    m = cluster_moments(X, labels, covariance=pairs, coskewness=triples)
    for c in range(7):
        Y = X[labels == c]
        cov = np.cov(Y.T)  # unbiased, eq. (1)
        assert m.sizes[c] == len(Y)
        np.testing.assert_allclose(m.means[c], Y.mean(axis=0))
        np.testing.assert_allclose(m.covariance[c], cov[pairs[:, 0], pairs[:, 1]])
        np.testing.assert_allclose(m.coskewness[c], [_naive_coskewness(Y, *t) for t in triples])
        # Fisher's coskewness is the unbiased skewness numerator: scipy agrees on the margins
        np.testing.assert_allclose(m.coskewness[c][[0, 6, 9]] / np.diag(cov) ** 1.5,
                                   skew(Y, bias=False), rtol=1e-10)


def test_cluster_moments_are_stable_far_from_zero():
    """Two passes: a spread of 1e-3 around 1e6 keeps its digits; the one-pass formula
    (Σx² − k x̄²) / (k − 1) loses all of them."""
    rng = np.random.default_rng(1)
    base = rng.random((50, 2)) * 1e-3
    labels = np.repeat([0, 1], 25)
    pairs = moment_indices(2, 2, marginal=False)
    near = cluster_moments(base, labels, covariance=pairs)
    shifted = base + 1e6
    far = cluster_moments(shifted, labels, covariance=pairs)
    np.testing.assert_allclose(far.covariance, near.covariance, rtol=1e-5)
    x = shifted[:25, 0]
    one_pass = (np.sum(x * x) - 25 * x.mean() ** 2) / 24
    assert abs(one_pass - near.covariance[0, 0]) > near.covariance[0, 0]


# -- sensitivities on adversarial neighbouring clusters --------------------------------------

WIDTHS = np.array([2.0, 3.0, 5.0])


def _statistic(index):
    order = len(index)

    def f(Y):
        k = len(Y)
        c = Y - Y.mean(axis=0)
        if order == 1:
            return Y[:, index[0]].mean()
        product = np.prod(c[:, list(index)], axis=1).sum()
        return product / (k - 1) if order == 2 else product * k / ((k - 1) * (k - 2))
    return f


def _largest_change(index, k, rng, starts=40):
    """The largest |f(C') - f(C)| found over neighbouring clusters of k records in the box
    [0, WIDTHS]: the k-1 shared records and the two versions of the changed one are free,
    searched from random vertices and random interior points by L-BFGS-B."""
    f = _statistic(index)
    d = len(WIDTHS)
    box = np.tile(WIDTHS, k + 1)

    def change(z):
        Z = z.reshape(k + 1, d)
        return f(np.vstack([Z[:-2], Z[-1:]])) - f(Z[:-1])

    best = 0.0
    for s in range(starts):
        z0 = (rng.integers(0, 2, box.size) if s % 2 else rng.random(box.size)) * box
        for sign in (1, -1):
            result = minimize(lambda z, sign=sign: -sign * change(z), z0, method="L-BFGS-B",
                              bounds=list(zip(np.zeros(box.size), box, strict=True)))
            best = max(best, abs(change(result.x)))
    return best


@pytest.mark.parametrize("index", [(0,), (1, 1), (0, 2), (2, 2, 2), (0, 0, 1), (0, 1, 2)],
                         ids=["mean", "variance", "covariance", "coskewness-iii",
                              "coskewness-iij", "coskewness-ijl"])
@pytest.mark.parametrize("k", [3, 4, 7])
def test_sensitivity_is_reached_and_never_exceeded(index, k):
    """Props. 5, 6, 8: the change reaches the bound (to 0.1 %) and never exceeds it; a bound
    half as large would be broken. For k = 3 the coskewness bound is twice Prop. 8's."""
    bound = coefficient_sensitivity(WIDTHS, index, k)
    found = _largest_change(index, k, np.random.default_rng(k))
    assert found <= bound * (1 + 1e-9)
    assert found >= 0.999 * bound
    assert found > bound / 2


def test_joint_sensitivity_of_theorem_11():
    """Theorem 11 (i) on a hand-checked case: d = 2, Λ = (1, 2), k = 5, m = 1 pure:
    (1 + 2) + (1·1 + 1·2 + 2·2) = 10, over k; m = 2 adds the 4 triples 1+2+4+8 = 15."""
    widths = np.array([1.0, 2.0])
    blocks1 = statistic_blocks(2, 1, MomentVariant.PURE, CoskewnessTerms.ALL)
    blocks2 = statistic_blocks(2, 2, MomentVariant.PURE, CoskewnessTerms.ALL)
    assert joint_sensitivity(widths, blocks1, 5) == pytest.approx(10 / 5)
    assert joint_sensitivity(widths, blocks2, 5) == pytest.approx(25 / 5)
    variances = statistic_blocks(2, 2, MomentVariant.VARIANCES, CoskewnessTerms.MARGINAL)
    assert joint_sensitivity(widths, variances, 5) == pytest.approx((3 + 5 + 9) / 5)
    # on the unit domain every coefficient has sensitivity 1/k: Λ̂ counts them
    assert joint_sensitivity(np.ones(4), statistic_blocks(
        4, 1, MomentVariant.PURE, CoskewnessTerms.MARGINAL), 1) == 4 + 10


def test_proposition_8_fails_for_clusters_of_three():
    """{0, 0, 1} and {0, 1, 1} are neighbours with Fisher coskewness 1/3 and -1/3: the change
    2/3 is twice Prop. 8's 1/k. The sensitivity we use says 2/k for k = 3 only."""
    phi = _statistic((0, 0, 0))
    change = phi(np.array([[0.0], [0.0], [1.0]])) - phi(np.array([[0.0], [1.0], [1.0]]))
    assert change == pytest.approx(2 / 3)
    assert coefficient_sensitivity(np.ones(1), (0, 0, 0), 3) == pytest.approx(2 / 3)
    assert coefficient_sensitivity(np.ones(1), (0, 0, 0), 4) == pytest.approx(1 / 4)


# -- post-processing ---------------------------------------------------------------------------


def test_nearest_covariance_clips_eigenvalues_when_the_box_is_loose():
    A = np.array([[[2.0, 3.0], [3.0, 1.0]]])
    values, vectors = np.linalg.eigh(A[0])
    expected = vectors @ np.diag(np.maximum(values, 0)) @ vectors.T  # Higham 1988
    np.testing.assert_allclose(nearest_covariance(A, -100, 100)[0], expected, atol=1e-12)
    inside = np.array([[[2.0, 0.5], [0.5, 1.0]]])  # already PSD and in the box: unchanged
    np.testing.assert_array_equal(nearest_covariance(inside, -100, 100), inside)


def test_nearest_covariance_with_an_active_box_matches_a_solver():
    """The nearest PSD matrix with coefficients in [-0.5, 0.5] (diagonal [0, 0.5]): Dykstra's
    projections agree with SLSQP on the explicit problem."""
    rng = np.random.default_rng(3)
    for _ in range(5):
        B = rng.normal(0, 0.6, (2, 2))
        A = (B + B.T) / 2
        lows = np.array([[0.0, -0.5], [-0.5, 0.0]])
        out = nearest_covariance(A[None], lows, 0.5)[0]
        assert np.linalg.eigvalsh(out).min() >= -1e-10
        assert np.all(out >= lows - 1e-8) and np.all(out <= 0.5 + 1e-8)

        def matrix(z):
            return np.array([[z[0], z[1]], [z[1], z[2]]])
        solved = minimize(lambda z, A=A: np.sum((matrix(z) - A) ** 2), [0.1, 0.0, 0.1],
                          method="SLSQP", bounds=[(0, 0.5), (-0.5, 0.5), (0, 0.5)],
                          constraints=[{"type": "ineq",
                                        "fun": lambda z: z[0] * z[2] - z[1] ** 2}],
                          options={"ftol": 1e-14, "maxiter": 500})
        assert np.sum((out - A) ** 2) == pytest.approx(solved.fun, abs=1e-7)


def test_covariance_bound_is_the_largest_sample_variance():
    for k in (2, 3, 4, 7, 10):
        half = np.r_[np.zeros(k // 2), np.ones(k - k // 2)]
        assert covariance_bound(np.array([k]))[0] == pytest.approx(np.var(half, ddof=1))
        assert covariance_bound(np.array([k]))[0] >= 0.25


# -- samplers ----------------------------------------------------------------------------------

MEAN = np.array([[0.3, 0.5, 0.2]])
COV = np.array([[[0.02, 0.01, 0.0], [0.01, 0.03, -0.005], [0.0, -0.005, 0.01]]])


def test_normal_sampler_matches_its_moments():
    labels = np.zeros(200_000, dtype=np.int64)
    Y = sample_normal(MEAN, COV, labels, np.random.default_rng(4))
    np.testing.assert_allclose(Y.mean(axis=0), MEAN[0], atol=1e-3)
    np.testing.assert_allclose(np.cov(Y.T), COV[0], atol=5e-4)


@pytest.mark.parametrize("skewness", [[0.5, 0.0, 0.0], [0.3, -0.2, 0.1], [0.9, -0.9, 0.9]])
def test_skew_normal_sampler_matches_its_moments(skewness):
    model = skew_normal_parameters(MEAN, COV, np.array([skewness]))
    # feasible skewness is kept, infeasible shrunk (never grown, never sign-flipped)
    assert np.all(np.abs(model.skewness) <= np.abs(skewness) + 1e-12)
    assert np.all(model.skewness * np.array(skewness) >= 0)
    if skewness == [0.5, 0.0, 0.0]:
        np.testing.assert_allclose(model.skewness[0], skewness)
    labels = np.zeros(400_000, dtype=np.int64)
    Y = sample_skew_normal(model, labels, np.random.default_rng(5))
    np.testing.assert_allclose(Y.mean(axis=0), MEAN[0], atol=1e-3)
    np.testing.assert_allclose(np.cov(Y.T), COV[0], atol=5e-4)
    np.testing.assert_allclose(skew(Y), model.skewness[0], atol=0.02)


def test_skewness_beyond_the_family_is_clipped():
    model = skew_normal_parameters(MEAN[:, :1], COV[:, :1, :1], np.array([[3.0]]))
    assert 0.98 * SKEWNESS_LIMIT < model.skewness[0, 0] < SKEWNESS_LIMIT


# -- the release -------------------------------------------------------------------------------


def _schema(*names, high=1.0):
    return Schema(tuple(Attribute(n, Role.QUASI, Kind.NUMERIC, domain=(0, high))
                        for n in names))


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(6)
    z = rng.normal(size=(600, 3))
    X = np.clip(0.5 + 0.15 * (z @ np.array([[1, 0.6, 0], [0, 0.8, 0.3], [0, 0, 0.9]])), 0, 1)
    return pd.DataFrame(X * 100, columns=["a", "b", "c"])


@pytest.mark.parametrize(("moments", "noise", "variant", "epsilon"), [
    (1, "joint", "pure", 1e7), (2, "joint", "eigen", 1e9), (2, "separate", "eigen", 1e9)])
def test_release_with_almost_no_noise_recovers_the_cluster_statistics(data, moments, noise,
                                                                      variant, epsilon):
    """With ε = 1e7 (1e9 for the eigen variant, whose eigenvector sensitivity is about √(2d)
    per vector) the noise is below 1e-6 of the domains: the released statistics are the
    MDAV clusters' own (in data units; the eigen variant's rebuilt from the noisy
    eigenvalues and eigenvectors, every coskewness coefficient), and the records have their
    moments."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        release = dp_cross_moment(data, epsilon=epsilon, k=100, moments=moments, noise=noise,
                                  clustering="mdav", variant=variant,
                                  schema=_schema("a", "b", "c", high=100.0), rng=7)
    stats = release.statistics
    labels = mdav(data.to_numpy() / 100, 100)
    truth = cluster_moments(data.to_numpy(), labels,
                            covariance=moment_indices(3, 2, marginal=False),
                            coskewness=moment_indices(3, 3, marginal=False))
    for cluster in range(6):
        rows = stats[stats.cluster == cluster]
        means = rows[rows.statistic == "mean"].value.to_numpy()
        match = np.flatnonzero(np.all(np.abs(truth.means - means) < 1e-3, axis=1))
        assert len(match) == 1
        covariance = rows[rows.statistic == "covariance"].value.to_numpy()
        np.testing.assert_allclose(covariance, truth.covariance[match[0]], atol=1e-2)
        if variant == "eigen":
            coskewness = rows[rows.statistic == "coskewness"].value.to_numpy()
            # every coefficient, within 1e-6 of the coskewness' unit 100³
            np.testing.assert_allclose(coskewness, truth.coskewness[match[0]], atol=1.0)
    assert sorted(stats.groupby("cluster")["size"].first()) == [100] * 6
    # records: the sampled values of each cluster have its mean up to sampling error
    aligned = release.aligned().to_numpy()
    for c in range(6):
        got = aligned[labels == c].mean(axis=0)
        sd = np.sqrt(np.diag(np.cov(data.to_numpy()[labels == c].T)) / 100)
        assert np.all(np.abs(got - truth.means[c]) < 5 * sd + 1e-9)


def test_release_rows_are_shuffled_and_guarantee_follows_the_clustering(data):
    schema = _schema("a", "b", "c", high=100.0)
    release = dp_cross_moment(data, epsilon=1.0, k=50, moments=1, schema=schema,
                              rng=np.random.default_rng(8))
    report = release.report
    assert report.differentially_private and report.guarantee_scope == "table"
    assert sorted(release.source_rows) == list(range(600))
    assert not np.array_equal(release.source_rows, np.arange(600))
    assert report.moments["clustering"] == "insensitive"
    # insensitive: every cluster may change, so the sensitivity sums 1/k_i over clusters
    sizes = np.bincount(insensitive(data.to_numpy(), 50, np.zeros(3), np.full(3, 100.0)))
    assert report.sensitivities[0]["sensitivity"] == pytest.approx(
        (3 + 6) * np.sum(1 / sizes))
    with pytest.warns(PrivacyLeakWarning, match="X\\^m"):
        mdav_release = dp_cross_moment(data, epsilon=1.0, k=50, moments=1,
                                       clustering="mdav", schema=schema,
                                       rng=np.random.default_rng(8))
    assert not mdav_release.report.differentially_private
    assert mdav_release.report.guarantee_scope == "microaggregated data set"
    assert "NOT differentially private with respect to the original records" in \
        mdav_release.report.guarantee
    # X^m: one cluster is a query; its 9 coefficients have sensitivity 9 / k_i
    assert mdav_release.report.sensitivities[0]["sensitivity"] == pytest.approx(9 / 50)
    json.dumps(mdav_release.report.to_dict())


def test_separate_noise_splits_epsilon_by_the_strategy(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        release = dp_cross_moment(data, epsilon=2.0, k=60, moments=2, noise="separate",
                                  strategy=(0.75, 0.15, 0.10), clustering="mdav",
                                  variant="variances", schema=_schema("a", "b", "c",
                                                                     high=100.0), rng=9)
    split = {e["part"].split(": ")[-1]: e["epsilon"] for e in release.report.epsilon_split}
    assert split == pytest.approx({"mean": 1.5, "covariance": 0.3, "coskewness": 0.2})
    assert sum(split.values()) <= 2.0
    entries = release.report.sensitivities
    by_part = {e["statistic"].split(" (")[0]: e for e in entries if "of 60" in e["statistic"]}
    # each statistic: its number of coefficients over k (3 means, 3 variances, 3 φ_iii)
    assert by_part["mean"]["sensitivity"] == pytest.approx(3 / 60)
    assert by_part["coskewness"]["sensitivity"] == pytest.approx(3 / 60)
    stats = release.statistics
    assert set(stats.statistic) == {"mean", "covariance", "coskewness", "skewness"}
    covariance = stats[stats.statistic == "covariance"]
    assert (covariance.a == covariance.b).all()  # variances only
    assert (stats[stats.statistic == "skewness"].value.abs() < SKEWNESS_LIMIT).all()


def test_groups_are_written_unlinked_by_default(data):
    schema = _schema("a", "b", "c", high=100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        release = dp_cross_moment(data, epsilon=1.0, k=30, moments=1, clustering="ir-mdav",
                                  groups=[["a", "b"], ["c"]], schema=schema, rng=10)
        linked = dp_cross_moment(data, epsilon=1.0, k=30, moments=1, clustering="ir-mdav",
                                 groups=[["a", "b"], ["c"]], linkage="linked", schema=schema,
                                 rng=np.random.default_rng(10))
    rows = release.source_rows
    assert rows.shape == (600, 3)
    assert np.array_equal(rows[:, 0], rows[:, 1]) and not np.array_equal(rows[:, 0], rows[:, 2])
    assert release.labels.shape == (600, 3)
    assert [e["part"] for e in release.report.epsilon_split] == ["a, b", "c"]
    assert linked.report.guarantee_scope == "each column"
    assert "(a, b): 0.5" in linked.report.guarantee


@pytest.mark.parametrize("clustering", ["insensitive", "mdav"])
def test_the_report_says_individual_dp_and_publishes_no_local_scale(data, clustering):
    with pytest.warns(PrivacyLeakWarning, match="individual differential privacy only"):
        release = dp_cross_moment(data, epsilon=1.0, k=50, moments=1, variant="eigen",
                                  clustering=clustering,
                                  schema=_schema("a", "b", "c", high=100.0),
                                  rng=np.random.default_rng(3))
    report = release.report
    assert not report.differentially_private
    assert report.guarantee_scope == "individual DP"
    assert "1-individual differential privacy" in report.guarantee
    assert "NOT differentially private" in report.guarantee
    assert ("X^m" in report.guarantee) == (clustering == "mdav")
    (entry,) = report.sensitivities
    assert "sensitivity" not in entry and "not published" in entry["scale"]
    clusters = report.groups
    expected = 1.0 / clusters if clustering == "insensitive" else 1.0
    assert entry["epsilon_per_cluster"] == pytest.approx(expected)
    for level in report.noise.values():
        assert "at least" in level["note"]
    json.dumps(report.to_dict())
    assert sorted(release.source_rows) == list(range(600))
    assert not np.array_equal(release.source_rows, np.arange(600))


def test_means_only_is_plain_dp_and_takes_no_variant(data):
    schema = _schema("a", "b", "c", high=100.0)
    release = dp_cross_moment(data, epsilon=1.0, k=50, moments=0, schema=schema,
                              rng=np.random.default_rng(3))
    assert release.report.differentially_private
    with pytest.raises(InputError, match="`moments` 0 releases the means only"):
        dp_cross_moment(data, epsilon=1.0, k=50, moments=0, variant="eigen", schema=schema)


@pytest.mark.parametrize(("options", "message"), [
    ({"moments": 3}, "`moments` must be an integer >= 0 and <= 2, got 3"),
    ({"moments": 2, "k": 2}, "`k` must be at least 3 with `moments` 2"),
    ({"noise": "separate", "strategy": (0.5, 0.6)}, "sum to 1"),
    ({"noise": "separate", "strategy": (1.0,)}, "needs 2 shares"),
    ({"strategy": (0.5, 0.5)}, "`strategy` applies to `noise` separate only"),
    ({"groups": [["a"], ["b", "c"]]}, "`groups` applies to `clustering` ir-mdav only"),
    ({"clustering": "ir-mdav", "groups": [["a"], ["b"]]}, "puts column 'c' in no group"),
    ({"clustering": "ir-mdav", "groups": [["a", "b"], ["b", "c"]]}, "in two groups"),
    ({"linkage": "linked"}, "`linkage` applies"),
    ({"variant": "eigenvalues"}, "`variant` must be one of pure, variances, eigen, kendall"),
    ({"variant": "eigen", "moments": 2, "coskewness": "marginal"}, "`coskewness` must be all"),
    ({"variant": "kendall", "moments": 2}, "it is for `moments` 1"),
])
def test_bad_options_are_one_line_errors(data, options, message):
    kwargs = {"epsilon": 1.0, "k": 10, "schema": _schema("a", "b", "c", high=100.0), **options}
    with pytest.raises(InputError, match=message):
        dp_cross_moment(data, **kwargs)


def test_categorical_columns_are_refused():
    frame = pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4], "c": ["a", "b", "a", "b"]})
    schema = Schema((Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1)),
                     Attribute("c", Role.QUASI, Kind.NOMINAL, domain=("a", "b"))))
    with pytest.raises(InputError, match="'c' is categorical"):
        dp_cross_moment(frame, epsilon=1.0, k=2, schema=schema)


def test_cli_writes_table_report_and_statistics(run_cli, tmp_path, data):
    source = tmp_path / "in.csv"
    data.to_csv(source, index=False)
    out, stats = tmp_path / "out.csv", tmp_path / "stats.parquet"
    result = run_cli("dp", str(source), "-o", str(out), "--epsilon", "1", "--k", "50",
                     "--method", "cross-moment", "--moments", "2", "--noise", "separate",
                     "--strategy", "0.5,0.3,0.2", "--clustering", "mdav",
                     "--bounds", "a=0:100,b=0:100,c=0:100", "--statistics-out", str(stats),
                     "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["moments"]["m"] == 2 and report["moments"]["strategy"] == [0.5, 0.3, 0.2]
    assert "X^m" in result.stderr
    table = pd.read_csv(out)
    assert list(table.columns) == ["a", "b", "c"] and len(table) == 600
    assert table.min().min() >= 0 and table.max().max() <= 100
    released = pd.read_parquet(stats)
    assert released.groupby("cluster")["size"].first().sum() == 600
    bad = run_cli("dp", str(source), "-o", str(tmp_path / "x.csv"), "--epsilon", "1", "--k",
                  "5", "--method", "insensitive", "--statistics-out", str(stats))
    assert bad.code == 2 and "--statistics-out applies" in bad.stderr
    assert not (tmp_path / "x.csv").exists()
    assert math.isfinite(report["epsilon"])
    eigen = run_cli("dp", str(source), "-o", str(out), "--epsilon", "2", "--k", "60",
                    "--method", "cross-moment", "--moments", "2", "--variant", "eigen",
                    "--bounds", "a=0:100,b=0:100,c=0:100", "--statistics-out", str(stats))
    assert eigen.code == 0, eigen.stderr
    assert "individual differential privacy" in eigen.stderr
    assert "noise on a: sd at least" in eigen.stdout
    assert set(pd.read_parquet(stats).statistic) == {"mean", "covariance", "coskewness",
                                                     "skewness"}
    report = json.loads((tmp_path / "out.csv.privacy.json").read_text())
    assert report["moments"]["variant"] == "eigen"
    assert report["guarantee_scope"] == "individual DP"


# -- the Kendall variant --------------------------------------------------------------------

def _naive_tau_a(x, y):
    k = x.size
    signs = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    return signs[np.triu_indices(k, 1)].sum() / (k * (k - 1) / 2)


def test_kendall_tau_a_matches_the_pair_count_with_ties():
    from microagg.core.aggregate import cluster_kendall, kendall_tau_a

    rng = np.random.default_rng(12)
    for _ in range(300):
        k = int(rng.integers(1, 40))
        x, y = rng.integers(0, 5, k).astype(float), rng.integers(0, 5, k).astype(float)
        expected = _naive_tau_a(x, y) if k > 1 else 0.0
        assert kendall_tau_a(x, y) == pytest.approx(expected, abs=1e-12)
    # clusters of 30 (counted pair by pair) and one of 2,100 (through scipy's τ_b)
    X = np.round(rng.random((2_190, 3)), 2)
    labels = np.r_[np.repeat([2, 0, 1], 30), np.full(2_100, 3)]
    pairs = np.array([[0, 1], [0, 2], [1, 2]])
    got = cluster_kendall(X, labels, pairs)
    for c in range(4):
        rows = labels == c
        assert got[c].tolist() == pytest.approx(
            [_naive_tau_a(X[rows, i], X[rows, j]) for i, j in pairs], abs=1e-12)


@pytest.mark.parametrize("k", [2, 3, 7, 20])
def test_kendall_sensitivity_is_four_over_k_reached_and_never_exceeded(k):
    """Replacing one record of a cluster moves τ_a by at most 4/k: a record concordant with
    every other moved to where it is discordant with every other reaches it; 2,000 random
    replacements (domain corners included) never exceed it, and some exceed 2/k."""
    from microagg.core.aggregate import kendall_tau_a
    from microagg.release.dp.moments import KENDALL_SENSITIVITY

    x = y = np.arange(k, dtype=float) / k
    moved = y.copy()
    moved[-1] = -1.0
    assert kendall_tau_a(x, y) - kendall_tau_a(x, moved) == pytest.approx(
        KENDALL_SENSITIVITY / k)
    rng = np.random.default_rng(k)
    largest = 0.0
    for _ in range(2_000):
        a, b = np.round(rng.random(k), 1), np.round(rng.random(k), 1)
        c, d = a.copy(), b.copy()
        r = int(rng.integers(k))
        c[r], d[r] = rng.choice([0.0, 1.0, rng.random()]), rng.choice([0.0, 1.0, rng.random()])
        largest = max(largest, abs(kendall_tau_a(a, b) - kendall_tau_a(c, d)))
    assert largest <= KENDALL_SENSITIVITY / k + 1e-12
    assert largest > 2 / k


def test_kendall_variant_releases_variances_and_rank_correlations(data):
    """The block of variances and τ_a / 4 has sensitivity (d + pairs) / k; with almost no
    noise the released τ are the data's and the records' rank correlations follow them."""
    from microagg.core.aggregate import kendall_tau_a

    schema = _schema("a", "b", "c", high=100.0)
    release = dp_cross_moment(data, epsilon=1e7, k=600, moments=1, variant="kendall",
                              noise="separate", strategy=(0.5, 0.5), schema=schema,
                              rng=np.random.default_rng(4))
    entry = release.report.sensitivities[1]
    assert entry["sensitivity"] == pytest.approx((3 + 3) / 600)
    assert "3 Kendall tau_a / 4" in entry["formula"]
    stats = release.statistics
    taus = stats[stats.statistic == "kendall tau"]
    assert list(zip(taus.a, taus.b, strict=True)) == [("a", "b"), ("a", "c"), ("b", "c")]
    X = data.to_numpy()
    truth = [kendall_tau_a(X[:, i], X[:, j]) for i, j in ((0, 1), (0, 2), (1, 2))]
    np.testing.assert_allclose(taus.value, truth, atol=1e-6)
    Y = release.frame.to_numpy()
    got = [kendall_tau_a(Y[:, i], Y[:, j]) for i, j in ((0, 1), (0, 2), (1, 2))]
    # a normal sample of 600 records: τ_a's standard error is about 0.027
    np.testing.assert_allclose(got, truth, atol=4.5 * 0.027)
    covariance = stats[stats.statistic == "covariance"]
    assert len(covariance) == 6  # every q_ij, rebuilt as sd_i sd_j sin(pi tau / 2)


def test_kendall_on_one_attribute_releases_its_variance():
    """One attribute has no pair to rank-correlate: the Kendall variant releases its mean
    and variance (an empty block of τ ended in an unforeseen error), as `variances` does."""
    frame = pd.DataFrame({"x": np.linspace(0.0, 1.0, 12)})
    schema = Schema((Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1)),))
    released = {}
    for variant in ("kendall", "variances"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            release = dp_cross_moment(frame, epsilon=1.0, k=3, variant=variant, schema=schema,
                                      rng=np.random.default_rng(0))
        assert release.report.differentially_private
        released[variant] = [e["statistic"] for e in release.report.sensitivities]
        assert release.frame["x"].between(0, 1).all() and len(release.frame) == 12
    assert released["kendall"] == released["variances"]
