"""Differentially private releases: sensitivities, an empirical privacy audit, the releases and
their privacy reports."""

import dataclasses
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from microagg import datasets
from microagg.core.aggregate import cluster_means
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.data.taxonomy import CategoryMetric, Taxonomy
from microagg.errors import InputError, PrivacyError, PrivacyLeakWarning
from microagg.evaluation.audit import audit
from microagg.evaluation.audit import scenarios as audit_scenarios
from microagg.evaluation.audit import type_scenarios as audit_type_scenarios
from microagg.partition.insensitive import insensitive
from microagg.partition.univariate import individual_ranking
from microagg.release import dp_individual_ranking, dp_insensitive, dp_laplace
from microagg.release.dp.categorical import category_sensitivity, marginality_quality
from microagg.release.dp.mechanisms import exponential_mechanism, laplace_mechanism

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
    a, _ = laplace_mechanism(np.full(trials, 2.0), sensitivity=sensitivity * noise_fraction,
                             epsilon=epsilon, lows=0.0, highs=5.0, rng=1, changing=1)
    b, _ = laplace_mechanism(np.full(trials, 3.0), sensitivity=sensitivity * noise_fraction,
                             epsilon=epsilon, lows=0.0, highs=5.0, rng=2, changing=1)
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
        ca, _ = exponential_mechanism(np.tile(qa, (trials, 1)), sensitivity=fraction,
                                      epsilon=epsilon, rng=5)
        cb, _ = exponential_mechanism(np.tile(qb, (trials, 1)), sensitivity=fraction,
                                      epsilon=epsilon, rng=6)
        low, _ = _ratio_bounds(int((ca == 0).sum()), int((cb == 0).sum()), trials)
        assert bool(low > math.e) == caught


# -- end-to-end audits of the tables as written ---------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("scenario", audit_scenarios(), ids=lambda s: s.name)
def test_audit_release_as_written(scenario):
    """The audit's worst-case neighbours, 1,500 runs each (400 for the column types), on the
    table exactly as written:
    the Clopper-Pearson lower bound of ε stays below the claim. Where rows in input order
    (the behaviour before rows were shuffled, and the linked individual-ranking table) would
    leak, the same event on the aligned table proves a loss above ε: the test has power."""
    result = audit(scenario.release, scenario.neighbours, scenario.event,
                   trials=scenario.trials, fmt=scenario.fmt)
    assert result.epsilon_written < scenario.epsilon
    if scenario.leaks_in_input_order:
        assert result.epsilon_input_order > scenario.epsilon
    else:
        assert result.epsilon_input_order < scenario.epsilon


@pytest.mark.parametrize("scenario", audit_type_scenarios()[::3], ids=lambda s: s.name)
def test_the_type_audit_catches_types_that_follow_the_input(scenario):
    """Power of the column-type audit: the same releases, their written columns given the
    input's types where the values allow it (what releases wrote before their types came
    from the schema), prove a loss far above the claim; as released, they prove none."""
    from microagg.data.table import category_labels

    def input_typed(frame, rng):
        release = scenario.release(frame, rng)
        out = release.frame.copy()
        for name in out.columns:
            values = out[name]
            if not pd.api.types.is_float_dtype(values):
                values = pd.to_numeric(category_labels(values), errors="coerce")
            if (pd.api.types.is_integer_dtype(frame[name]) and values.notna().all()
                    and (values == values.round()).all()):
                out[name] = values.astype(frame[name].dtype)
        return dataclasses.replace(release, frame=out)

    leaky = audit(input_typed, scenario.neighbours, scenario.event, trials=200,
                  fmt=scenario.fmt)
    assert leaky.epsilon_written > 2 * scenario.epsilon
    assert audit(scenario.release, scenario.neighbours, scenario.event, trials=200,
                 fmt=scenario.fmt).hits_written == (0, 0)


def test_dp_columns_take_their_types_from_the_schema():
    """Whole-number input, float64 output; numeric category labels stay text."""
    schema = Schema((Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 10)),
                     Attribute("c", Role.QUASI, Kind.ORDINAL, domain=("1", "2", "3"))))
    frame = pd.DataFrame({"x": [1, 2, 3, 4, 5, 6], "c": [1, 2, 3, 1, 2, 3]})
    for release in (dp_insensitive(frame, epsilon=1.0, k=2, schema=schema),
                    dp_individual_ranking(frame, epsilon=1.0, k=2, schema=schema)):
        assert release.frame["x"].dtype == np.float64
        assert release.frame["c"].dtype == object
        assert set(release.frame["c"]) <= {"1", "2", "3"}


def test_linked_individual_ranking_says_it_is_not_dp():
    d = pd.DataFrame({"x": [0.1, 0.2, 0.8, 0.9], "y": [0.1, 0.2, 0.8, 0.9]})
    schema = Schema((Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1)),
                     Attribute("y", Role.QUASI, Kind.NUMERIC, domain=(0, 1))))
    with pytest.warns(PrivacyLeakWarning, match="linked"):
        release = dp_individual_ranking(d, epsilon=4.0, k=2, schema=schema, linkage="linked")
    assert not release.report.differentially_private
    assert release.report.guarantee_scope == "each column"
    assert "on its own (ε per set: (x): 2; (y): 2)" in release.report.guarantee
    assert release.source_rows.ndim == 1  # linked: one order for every column


# -- releases -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mixed():
    data = datasets.synthetic(600, 6, seed=4)
    return data, ["age", "hours", "region", "education"]


def _quiet(release, *args, **kwargs):
    """A seeded release (tests are reproducible on purpose) without its PrivacyLeakWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return release(*args, **kwargs)


def test_dp_insensitive_release(mixed):
    data, columns = mixed
    release = dp_insensitive(data.frame, epsilon=1.0, k=40, schema=data.schema,
                             columns=columns, rng=np.random.default_rng(7))
    frame, report = release.frame, release.report
    assert len(frame) == 600 and list(frame.columns) == columns  # only protected columns
    assert report.dropped_columns == ["income", "expenses", "savings", "household_size"]
    assert list(frame.index) == list(range(600))  # a fresh index
    assert frame["age"].between(16, 100).all() and frame["hours"].between(0, 168).all()
    aligned = release.aligned()
    for cluster in range(release.labels.max() + 1):  # one draw per cluster and attribute
        members = aligned[release.labels == cluster]
        assert members[columns].nunique().max() == 1
    # the rows are a permutation of the aligned rows, not the input order
    rows = release.source_rows
    assert sorted(rows) == list(range(600)) and not np.array_equal(rows, np.arange(600))
    np.testing.assert_array_equal(frame.to_numpy(), aligned.to_numpy()[rows])
    numeric = report.sensitivities[0]
    clusters = 600 // 40
    assert numeric["sensitivity"] == pytest.approx(clusters * (84 + 168) / 40)
    assert numeric["scale"] >= numeric["sensitivity"] / numeric["epsilon"]
    assert sum(part["epsilon"] for part in report.epsilon_split) <= 1.0
    assert report.differentially_private
    assert report.guarantee_scope == "table" and "1-differential privacy" in report.guarantee
    assert "n is public" in report.neighbouring
    assert report.domains["age"]["source"] == "schema"
    again = _quiet(dp_insensitive, data.frame, epsilon=1.0, k=40, schema=data.schema,
                   columns=columns, rng=7)
    pd.testing.assert_frame_equal(again.frame, frame)
    assert any("sqrt(n)" in w for w in report.warnings) is (40 * 40 < 600)
    choices = [s for s in report.sensitivities if s["mechanism"] == "exponential"]
    assert len(choices) == 2  # region, education: 000 Alg. 4, ε_j / c per cluster
    for choice in choices:
        assert choice["epsilon_per_cluster"] * clusters == pytest.approx(choice["epsilon"])
        assert choice["epsilon"] == pytest.approx(1 / 4)
    # the noise is reported in public terms: one sd for the block, as a fraction per width
    age, hours = report.noise["age"], report.noise["hours"]
    assert age["standard_deviation"] == pytest.approx(hours["standard_deviation"])
    assert age["fraction_of_width"] == pytest.approx(age["standard_deviation"] / 84)


def test_report_never_holds_the_seed_and_a_seed_warns(mixed):
    data, columns = mixed
    with pytest.warns(PrivacyLeakWarning, match="known seed"):
        release = dp_insensitive(data.frame, epsilon=1.0, k=40, schema=data.schema,
                                 columns=columns, rng=123456789)
    text = json.dumps(release.report.to_dict())
    assert "seed" not in json.loads(text) and "123456789" not in text
    assert any("seed" in w for w in release.report.warnings)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # OS entropy: no warning
        unseeded = dp_insensitive(data.frame, epsilon=1.0, k=40, schema=data.schema,
                                  columns=columns)
    assert unseeded.report.weaker_than_plain_dp == []


def test_default_protects_every_column_and_carry_is_not_dp(mixed):
    data, _ = mixed
    release = _quiet(dp_insensitive, data.frame, epsilon=1.0, k=40, schema=data.schema)
    assert release.report.columns == list(data.frame.columns)  # every non-identifier column
    assert release.report.differentially_private
    with pytest.warns(PrivacyLeakWarning, match="carried columns region"):
        carried = dp_insensitive(data.frame, epsilon=1.0, k=40, schema=data.schema,
                                 columns=["age", "hours"], carry=["region"])
    report = carried.report
    assert list(carried.frame.columns) == ["age", "hours", "region"]
    assert not report.differentially_private and report.guarantee_scope == "protected columns"
    assert "NOT differentially private" in report.guarantee and "region" in report.guarantee
    # carried values are the input's, in the same rows as their protected values
    pd.testing.assert_series_equal(carried.aligned()["region"], data.frame["region"])
    with pytest.raises(InputError, match="both protected"):
        dp_insensitive(data.frame, epsilon=1.0, k=40, schema=data.schema,
                       columns=["age", "region"], carry=["region"])


def test_identifiers_are_dropped():
    frame = pd.DataFrame({"id": list("abcd"), "x": [0.1, 0.2, 0.3, 0.4]})
    schema = Schema((Attribute("id", Role.IDENTIFIER, Kind.NOMINAL),
                     Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1))))
    release = dp_insensitive(frame, epsilon=1.0, k=2, schema=schema)
    assert list(release.frame.columns) == ["x"] and release.report.dropped_columns == ["id"]
    with pytest.raises(InputError, match="identifier"):
        dp_insensitive(frame, epsilon=1.0, k=2, schema=schema, carry=["id"])


def test_undeclared_categories_are_refused():
    """A category seen only in the data would be released under D and impossible under D'."""
    frame = pd.DataFrame({"c": ["a", "a", "b", "rare"]})
    with pytest.raises(PrivacyError, match="'c' has no declared domain"):
        dp_insensitive(frame, epsilon=1.0, k=2)
    with pytest.warns(PrivacyLeakWarning, match="domains of c taken from the data"):
        from_data = dp_insensitive(frame, epsilon=1.0, k=2, bounds_from_data=True)
    assert not from_data.report.differentially_private
    assert from_data.report.guarantee_scope == "none"
    assert "observed categories" in from_data.report.domains["c"]["source"]


def test_mean_at_the_upper_bound_does_not_fail():
    """000 Alg. 3 on D = (0.1, 0.1, 0.1), bounds [0, 0.1], k = 3: the mean exceeds 0.1 by an
    ulp; whether a release succeeds must not depend on the data."""
    frame = pd.DataFrame({"v": [0.1, 0.1, 0.1]})
    release = dp_insensitive(frame, epsilon=1.0, k=3, bounds={"v": (0.0, 0.1)})
    assert release.frame["v"].between(0, 0.1).all()


def test_drop_incomplete_is_in_the_guarantee():
    """Dropping incomplete rows publishes their number exactly (the table's length): the
    release is DP of the complete rows only, said from the option, whatever the data."""
    frame = pd.DataFrame({"v": [0.1, np.nan, 0.3, 0.5]})
    complete = frame.fillna(0.2)
    with pytest.warns(PrivacyLeakWarning, match="table's length"):
        incomplete = dp_laplace(frame, epsilon=1.0, bounds={"v": (0.0, 1.0)}, drop_incomplete=True)
        full = dp_laplace(complete, epsilon=1.0, bounds={"v": (0.0, 1.0)},
                          drop_incomplete=True)
    assert len(incomplete.frame) == 3 and len(full.frame) == 4
    for report in (incomplete.report, full.report):
        assert not report.differentially_private
        assert report.guarantee_scope == "complete rows"
        assert "how many rows are complete" in report.guarantee
    assert incomplete.report.guarantee == full.report.guarantee
    # with a declared missing value nothing can be dropped: the option changes nothing
    schema = Schema((Attribute("v", Role.QUASI, Kind.NUMERIC, domain=(0, 1), missing=0),))
    declared = dp_laplace(frame, epsilon=1.0, schema=schema, drop_incomplete=True,
                          rng=np.random.default_rng(0))
    assert declared.report.differentially_private and len(declared.frame) == 4


def test_clamping_is_told_to_the_owner_not_published():
    frame = pd.DataFrame({"v": [0.1, 5.0, 7.0, 0.5]})
    release = dp_laplace(frame, epsilon=1.0, bounds={"v": (0.0, 1.0)})
    assert release.notices == ("2 value(s) of 'v' lay outside its declared domain and were "
                               "clamped into it",)
    text = json.dumps(release.report.to_dict())
    assert "clamped into it before the release" in text and "2 value" not in text


def test_noise_that_swamps_the_data_is_said():
    data = datasets.synthetic(300, 6, seed=1)
    release = dp_insensitive(data.frame, epsilon=1.0, k=20, schema=data.schema)
    fractions = {c: v["fraction_of_width"] for c, v in release.report.noise.items()
                 if "fraction_of_width" in v}
    swamped = [c for c, f in fractions.items() if f > 0.25]
    assert swamped  # 15 clusters, sum of six widths: pure noise
    for name in swamped:
        assert any(f"noise on '{name}'" in w and "larger k" in w
                   for w in release.report.warnings)


def test_options_a_method_ignores_are_errors():
    from microagg.release import dp_release

    frame = pd.DataFrame({"v": [0.1, 0.2, 0.3, 0.5]})
    common = {"epsilon": 1.0, "bounds": {"v": (0.0, 1.0)}}
    for method, option, fragment in (("laplace", {"k": 5}, "`k` applies"),
                                     ("laplace", {"linkage": "linked"}, "`linkage` applies"),
                                     ("individual-ranking", {"k": 2, "calibration": "paper"},
                                      "`calibration` applies"),
                                     ("individual-ranking", {"k": 2, "reference": "single"},
                                      "`reference` applies"),
                                     ("insensitive", {"k": 2, "linkage": "unlinked"},
                                      "`linkage` applies"),
                                     ("insensitive", {}, "`k` is needed by")):
        with pytest.raises(InputError, match=fragment):
            dp_release(frame, method=method, **common, **option)


def test_privacy_parameters_are_keyword_only():
    frame = pd.DataFrame({"v": [0.1, 0.2]})
    with pytest.raises(TypeError):
        dp_insensitive(frame, 1.0, 2)  # type: ignore[misc]


def test_dp_individual_ranking_scales(mixed):
    data, columns = mixed
    release = dp_individual_ranking(data.frame, epsilon=2.0, k=10, schema=data.schema,
                                    columns=columns, rng=np.random.default_rng(1))
    scales = {s["statistic"].split("'")[1]: s["scale"] for s in release.report.sensitivities
              if s["mechanism"] == "Laplace"}
    m = len(columns)
    assert scales["age"] == pytest.approx(m * 84 / (10 * 2.0), rel=1e-4)
    assert scales["hours"] == pytest.approx(m * 168 / (10 * 2.0), rel=1e-4)
    aligned = release.aligned()
    for j, name in enumerate(columns[:2]):
        groups = release.labels[:, j]
        assert aligned.groupby(groups)[name].nunique().max() == 1
    assert release.report.linkage == "unlinked" and release.report.differentially_private
    # unlinked: every column is the list of its noisy group values, each in its own order
    for name in columns:
        assert sorted(release.frame[name]) == sorted(aligned[name])


def test_dp_laplace_modes(mixed):
    data, columns = mixed
    correct = _quiet(dp_laplace, data.frame, epsilon=1.0, schema=data.schema, columns=columns,
                     rng=2)
    numeric = correct.report.sensitivities[0]
    assert numeric["sensitivity"] == pytest.approx(84 + 168)
    with pytest.warns(PrivacyLeakWarning, match="paper calibration"):
        paper = dp_laplace(data.frame, epsilon=1.0, schema=data.schema, columns=columns,
                           calibration="paper")
    assert "4-differential privacy" in paper.report.guarantee
    assert any("never to publish" in w for w in paper.report.warnings)


def test_paper_calibration_of_insensitive_dp(mixed):
    data, columns = mixed
    release = _quiet(dp_insensitive, data.frame, epsilon=1.0, k=40, schema=data.schema,
                     columns=columns, rng=3, calibration="paper")
    scales = [s for s in release.report.sensitivities if s["mechanism"] == "Laplace"]
    assert [s["sensitivity"] for s in scales] == pytest.approx([15 * 84 / 40, 15 * 168 / 40])
    assert "4-differential privacy" in release.report.guarantee
    assert release.report.calibration == "paper"


def test_per_attribute_calibration(mixed):
    data, columns = mixed
    m = len(columns)
    release = _quiet(dp_insensitive, data.frame, epsilon=1.0, k=40, schema=data.schema,
                     columns=columns, rng=3, calibration="per-attribute")
    laplace = [s for s in release.report.sensitivities if s["mechanism"] == "Laplace"]
    assert [s["sensitivity"] for s in laplace] == pytest.approx([15 * 84 / 40, 15 * 168 / 40])
    assert [s["epsilon"] for s in laplace] == pytest.approx([1 / m, 1 / m])
    assert sum(part["epsilon"] for part in release.report.epsilon_split) <= 1.0
    assert "1-differential privacy" in release.report.guarantee
    assert all("paper" not in w for w in release.report.warnings)
    plain = _quiet(dp_laplace, data.frame, epsilon=1.0, schema=data.schema, columns=columns,
                   rng=3, calibration="per-attribute")
    scales = [s["scale"] for s in plain.report.sensitivities if s["mechanism"] == "Laplace"]
    assert scales == pytest.approx([m * 84, m * 168], rel=1e-4)  # 001 §3.3


def test_bounds_policy():
    frame = pd.DataFrame({"v": [1.0, 2.0, 3.0, 50.0]})
    with pytest.raises(PrivacyError, match="no declared domain"):
        dp_laplace(frame, epsilon=1.0)
    with pytest.warns(PrivacyLeakWarning):
        from_data = dp_laplace(frame, epsilon=1.0, bounds_from_data=True)
    assert not from_data.report.differentially_private
    assert "NOT differentially private" in from_data.report.guarantee
    assert from_data.report.domains["v"]["high"] == 75.0
    explicit = dp_laplace(frame, epsilon=1.0, bounds={"v": (0.0, 10.0)})
    assert explicit.report.domains["v"]["source"] == "--bounds"
    assert explicit.frame["v"].max() <= 10.0  # 50 was clamped before the noise


def test_report_is_json_serializable(mixed):
    data, columns = mixed
    release = dp_individual_ranking(data.frame, epsilon=1.0, k=10, schema=data.schema,
                                    columns=columns)
    json.dumps(release.report.to_dict())


def test_dp_cli(run_cli, tmp_path):
    source = tmp_path / "syn.csv"
    schema = tmp_path / "syn.yaml"
    assert run_cli("datasets", "export", "synthetic", "-o", source, "--schema-out", schema,
                   "--n", "300").code == 0
    output = tmp_path / "out.parquet"
    result = run_cli("dp", source, "-o", output, "--epsilon", "1", "--k", "20", "--schema",
                     schema, "--columns", "age,hours", "--seed", "3")
    assert result.code == 0, result.stderr
    assert "known seed" in result.stderr
    report = json.loads((tmp_path / "out.parquet.privacy.json").read_text())
    assert report["epsilon"] == 1.0 and report["k"] == 20 and "seed" not in report
    written = pd.read_parquet(output)
    assert len(written) == 300 and list(written.columns) == ["age", "hours"]
    carried = run_cli("dp", source, "-o", tmp_path / "c.csv", "--epsilon", "1", "--k", "20",
                      "--schema", schema, "--columns", "age", "--carry", "region")
    assert carried.code == 0 and "NOT differentially private" in carried.stderr
    for args, fragment in (
        (["--epsilon", "1", "--k", "20"], "no declared domain"),
        (["--epsilon", "0", "--k", "20", "--schema", str(schema)], "epsilon must be"),
        (["--epsilon", "1", "--schema", str(schema)], "--k is needed by"),
        (["--epsilon", "1", "--k", "5", "--method", "magic"], "unknown method"),
        (["--epsilon", "1", "--method", "laplace", "--bounds", "age=9"], "NAME=LO:HI"),
        (["--epsilon", "1", "--k", "5", "--calibration", "loose", "--schema", str(schema)],
         "--calibration must be one of correct, per-attribute, paper, got 'loose'"),
        (["--epsilon", "1", "--k", "5", "--method", "individual-ranking", "--calibration",
          "paper", "--schema", str(schema)], "--calibration applies"),
        (["--epsilon", "1", "--k", "5", "--method", "laplace", "--schema", str(schema)],
         "--k applies"),
        (["--epsilon", "1", "--k", "5", "--seed", "-1", "--schema", str(schema)],
         "--seed must be"),
        (["--epsilon", "1e-300", "--k", "5", "--schema", str(schema)],
         "smallest usable epsilon"),
    ):
        target = tmp_path / "bad.csv"
        bad = run_cli("dp", source, "-o", target, *args)
        assert bad.code == 2 and fragment in bad.stderr, (args, bad.stderr)
        assert len(bad.stderr.strip().splitlines()) == 1 and len(bad.stderr) < 400
        assert not target.exists() and not (tmp_path / "bad.csv.privacy.json").exists()
