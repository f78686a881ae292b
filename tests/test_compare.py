"""Paper 003: rank-based risk (eq. 2), EMD utility (eq. 1), calibration at equal risk, the
HTML report and the commands `mask`, `compare`, `evaluate`."""

import base64
import json
import math
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.stats import rankdata, wasserstein_distance

from microagg.errors import InputError
from microagg.evaluation.compare import candidates, compare, parse_target
from microagg.evaluation.html import comparison_html
from microagg.evaluation.risk import nearest_rank_distances, permutation_distances, rank_risk
from microagg.evaluation.utility import emd
from microagg.options import CompareMethod, MatchStatus, Target

# -- risk ----------------------------------------------------------------------------------


def test_rank_risk_on_a_hand_checked_example():
    X = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])  # ranks (1,1) (2,2) (3,3)
    Y = np.array([[5.0, 9.0], [6.0, 1.0], [7.0, 2.0]])  # ranks (1,3) (2,1) (3,2)
    # nearest masked ranks: x1 -> y2 at 1, x2 -> y2 or y3 at 1, x3 -> y3 at 1
    assert np.allclose(nearest_rank_distances(X, Y), [1.0, 1.0, 1.0])
    assert rank_risk(X, Y) == pytest.approx(math.log(2.0))
    assert rank_risk(X, Y, aggregate="log-of-mean") == pytest.approx(0.0)
    assert rank_risk(X, Y, aggregate="printed") == pytest.approx(math.log(3.0) / 3)
    assert rank_risk(X, Y, scale="unit") == pytest.approx(math.log(1 + 1 / 3))
    assert rank_risk(X, X) == 0.0
    assert np.array_equal(permutation_distances(X, Y), [2.0, 1.0, 1.0])


def test_nearest_rank_distances_agree_with_brute_force_with_ties():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 6, size=(120, 3)).astype(float)  # many ties
    Y = X + rng.integers(-2, 3, size=X.shape)
    rx = np.column_stack([rankdata(X[:, j]) for j in range(3)])
    ry = np.column_stack([rankdata(Y[:, j]) for j in range(3)])
    brute = np.sqrt(((rx[:, None, :] - ry[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    assert np.allclose(nearest_rank_distances(X, Y, ties="midranks"), brute)
    # intervals: the ranks a tied value's ties span, at distance 0 from any rank inside
    low = np.column_stack([rankdata(X[:, j], method="min") for j in range(3)])
    high = np.column_stack([rankdata(X[:, j], method="max") for j in range(3)])
    gap = np.maximum(np.maximum(low[:, None, :] - ry[None], ry[None] - high[:, None, :]), 0)
    assert np.allclose(nearest_rank_distances(X, Y), np.sqrt((gap**2).sum(axis=2)).min(axis=1))
    assert np.all(nearest_rank_distances(X, Y) <= brute + 1e-12)


def compare_candidates(X):
    return candidates(X, X.min(axis=0), X.max(axis=0))


def test_breaking_ties_scores_as_the_identity_on_integer_data():
    """Noise of 1e-4 on whole numbers moves no value past another: the release scores the
    identity's risk, not that of a release that moved values (mid-ranks scored it far safer;
    on UCI Adult's age and hours, safer than MDAV with k = 5)."""
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.integers(17, 90, 3000), rng.integers(1, 99, 3000)]).astype(float)
    tiny = X + rng.normal(scale=1e-4, size=X.shape)
    mdav5 = compare_candidates(X)[CompareMethod.MDAV].mask(X, 5, None)
    assert rank_risk(X, X) == 0.0
    assert rank_risk(X, tiny) == 0.0
    assert rank_risk(X, tiny) < rank_risk(X, mdav5)
    assert rank_risk(X, tiny, ties="midranks") > 1.0  # far from the identity's 0
    noisier = [rank_risk(X, X + rng.normal(scale=s, size=X.shape)) for s in (0.5, 3, 20)]
    assert 0 < noisier[0] < noisier[1] < noisier[2]


def test_rank_risk_grows_with_protection():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    risks = [rank_risk(X, X + rng.normal(scale=s, size=X.shape)) for s in (0.01, 0.1, 1.0)]
    assert risks[0] < risks[1] < risks[2]


# -- EMD -----------------------------------------------------------------------------------


def test_emd_exact_values():
    result = emd(np.array([[0.0], [1.0]]), np.array([[0.0], [2.0]]), [0.0], [2.0])
    assert result.exact and result.value == pytest.approx(0.25)
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=300), rng.normal(0.3, 1.2, size=250)  # different sizes, 1-D
    assert emd(x, y, -10, 10).value == pytest.approx(wasserstein_distance(x, y) / 20, rel=1e-9)
    X, Y = rng.random((80, 3)), rng.random((80, 3))  # equal sizes: an assignment problem
    cost = np.sqrt(((X[:, None] - Y[None]) ** 2).sum(axis=2))
    rows, cols = linear_sum_assignment(cost)
    assert emd(X, Y, 0.0, 1.0).value == pytest.approx(cost[rows, cols].mean(), rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_grouped_emd_brackets_the_exact_one(seed):
    """The certified bounds of a grouped EMD contain the exact EMD: on ties, on noise of every
    size, on masked data of another size."""
    rng = np.random.default_rng(seed)
    X = rng.random((int(rng.integers(200, 600)), int(rng.integers(1, 4))))
    if seed % 2:
        X = np.round(X * 6) / 6  # ties: fewer distinct records
    Y = (X + rng.normal(scale=[0.001, 0.05, 0.3][seed % 3], size=X.shape) if seed < 4
         else rng.random((250, X.shape[1])))
    exact = emd(X, Y, -1.0, 2.0)
    grouped = emd(X, Y, -1.0, 2.0, max_points=int(rng.integers(8, 60)))
    assert exact.exact and exact.bound == 0.0 and exact.low == exact.value == exact.high
    assert not grouped.exact and grouped.clusters[1] <= 60
    assert grouped.low - 1e-12 <= exact.value <= grouped.high + 1e-12
    assert grouped.value == pytest.approx((grouped.low + grouped.high) / 2)
    assert abs(grouped.value - exact.value) <= grouped.bound + 1e-12


def test_grouped_emd_is_tight_where_a_ranking_needs_it():
    """Noise of 1 % on records that repeat (integer data) grouped by 300: an interval under
    15 % of the value; on continuous records the bound says how little is known, and the
    pairing of a masking that keeps its rows in order narrows it. The old bound, the mean
    distance between a record and its group's mean, was larger than the value in every
    case."""
    rng = np.random.default_rng(4)
    lattice = rng.integers(0, 40, size=(6000, 2)).astype(float)
    noisy = lattice * (1 + rng.normal(scale=0.01, size=lattice.shape))
    grouped = emd(lattice, noisy, 0.0, 40.0, max_points=1700)
    assert grouped.bound < 0.15 * grouped.value
    X = rng.random((3000, 2))
    Y = X * (1 + rng.normal(scale=0.01, size=X.shape))
    exact = emd(X, Y, 0.0, 1.0)
    paired = emd(X, Y, 0.0, 1.0, max_points=300)
    shuffled = emd(X, Y[np.random.default_rng(0).permutation(3000)], 0.0, 1.0, max_points=300)
    assert paired.low <= exact.value <= paired.high and paired.bound < shuffled.bound


def test_duplicated_records_keep_the_emd_exact():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, size=(2000, 2)).astype(float)  # 25 distinct records
    Y = rng.integers(0, 5, size=(1500, 2)).astype(float)
    assert emd(X, Y, 0.0, 4.0, max_points=30).exact


# -- calibration ---------------------------------------------------------------------------


def _frame(n=240, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.gamma(2.0, 10.0, n)
    b = 0.6 * a + rng.normal(0, 4, n)
    c = rng.lognormal(3, 0.5, n)
    return pd.DataFrame({"a": a, "b": b, "c": c, "total": a + c})  # singular covariance


@pytest.fixture(scope="module")
def comparison():
    return compare(_frame(), target_risk="mdav=3", seeds=5, tolerance=0.01)


def test_compare_matches_within_the_band_and_ranks_by_emd(comparison):
    assert comparison.target is Target.RISK and comparison.target_source.startswith("mdav")
    by = {m.method: m for m in comparison.methods}
    assert by[CompareMethod.MDAV].value == 3 and by[CompareMethod.MDAV].matched
    band = (comparison.target_value - comparison.tolerance,
            comparison.target_value + comparison.tolerance)
    assert sum(m.matched for m in comparison.methods) >= 3
    for m in comparison.methods:
        if m.matched:
            assert band[0] <= m.risk_ci[0] <= m.risk <= m.risk_ci[1] <= band[1]
        else:
            assert m.reason and m.method not in comparison.ranking
    emds = [by[m].utility.emd for m in comparison.ranking]
    assert emds == sorted(emds)


def test_matched_value_reproduces_the_target_with_fresh_seeds(comparison):
    from microagg.evaluation.compare import candidates

    frame = _frame()
    X = frame.to_numpy(float)
    table = candidates(X, X.min(axis=0), X.max(axis=0))
    for m in comparison.methods:
        if not (m.matched and table[m.method].randomized):
            continue
        fresh = np.array([rank_risk(X, table[m.method].mask(X, m.value,
                                                            np.random.default_rng(1000 + i)))
                          for i in range(40)])
        error = 3 * fresh.std(ddof=1) / np.sqrt(fresh.size)
        assert abs(fresh.mean() - comparison.target_value) <= comparison.tolerance + error


def test_unreachable_target_and_bad_options_are_errors():
    frame = _frame(120)
    with pytest.raises(InputError, match="out of reach of every method: they reach"):
        compare(frame, target_risk=1e6, seeds=2)
    with pytest.raises(InputError, match="`seeds` must be an integer from 1 to 1000"):
        compare(frame, target_risk=5.0, seeds=0)
    with pytest.raises(InputError, match="`seeds` must be an integer from 1 to 1000"):
        compare(frame, target_risk=5.0, seeds=99_999_999_999)
    with pytest.raises(InputError, match="unknown method 'swap'"):
        compare(frame, target_risk=5.0, methods=["swap"])
    with pytest.raises(InputError, match="exactly one"):
        compare(frame)
    with pytest.raises(InputError, match="outside its range"):
        compare(frame, target_risk="mdav=1000")
    text = frame.assign(city=["x", "y"] * 60)
    with pytest.raises(InputError, match="column 'city' is not numeric"):
        compare(text, target_risk=5.0, columns=["a", "city"])
    assert parse_target("rank-swap=0.2") == (CompareMethod.RANK_SWAP, 0.2)
    with pytest.raises(InputError, match="neither a number"):
        parse_target("high")


def test_a_method_safer_than_the_target_everywhere_is_ranked_at_its_closest_value():
    """A target riskier than MDAV with its smallest k: MDAV is safer over its whole range, so
    it is compared at k = 2 (not left out, which once let a worse method be recommended)."""
    frame = _frame(120)
    result = compare(frame, target_risk=0.5, methods=["mdav", "rank-swap"], seeds=3)
    mdav = next(m for m in result.methods if m.method is CompareMethod.MDAV)
    assert mdav.status is MatchStatus.EXCEEDS and not mdav.matched and mdav.value == 2
    assert mdav.risk > result.target_value and mdav.reason.startswith("safer than the target")
    assert CompareMethod.MDAV in result.ranking
    if result.ranking[0] is CompareMethod.MDAV:
        assert "safer than the target over its whole range" in result.recommendation()


def test_a_method_that_cannot_reach_the_target_is_left_out():
    """A target safer than any rank-swapping window reaches: rank swapping is short of it."""
    frame = _frame(120)
    result = compare(frame, target_risk="mdav=60", methods=["mdav", "rank-swap"], seeds=3)
    swap = next(m for m in result.methods if m.method is CompareMethod.RANK_SWAP)
    if swap.status is MatchStatus.SHORT:
        assert swap.reason.startswith("out of reach") and swap.method not in result.ranking
        assert "rank-swap cannot reach the target" in result.recommendation()
    else:  # the widest window reaches MDAV k = 60 on this sample
        assert swap.status in (MatchStatus.MATCHED, MatchStatus.UNSETTLED)


def test_the_comparison_is_an_owners_analysis_that_never_shows_raw_extremes():
    frame = _frame(120)
    frame.loc[7, "a"] = 123.456789  # a raw extreme an attacker would love
    result = compare(frame, target_risk="mdav=3", methods=["mdav", "rank-swap"], seeds=2,
                     source="survey.csv")
    body = json.dumps(result.to_dict())
    page = comparison_html(result)
    for text in (body, page):
        assert "123.45" not in text
        assert "not a release" in text
    assert result.provenance["input"] == "survey.csv" and result.provenance["microagg"]
    assert result.provenance["columns_left_out"] == []
    assert "not shown" in result.data["domains"]["a"]["source"]
    assert "risk of" in page and "rank positions" in page  # risk in plain words


def test_differential_privacy_at_absurd_epsilon_is_flagged():
    """At MDAV's risk with k = 3, plain Laplace noise needs ε near 80: flagged in the result,
    the recommendation and the report."""
    result = compare(_frame(100), target_risk="mdav=3", methods=["mdav", "dp-laplace"],
                     seeds=2, tolerance=0.05)
    dp, mdav = (next(m for m in result.methods if m.method is c)
                for c in (CompareMethod.DP_LAPLACE, CompareMethod.MDAV))
    assert dp.value > 10 and "no meaningful guarantee" in dp.warning and not mdav.warning
    assert "Warning: dp-laplace: epsilon" in result.recommendation()
    assert "no meaningful guarantee" in comparison_html(result)


def test_methods_that_cannot_be_told_apart_are_reported_tied(comparison):
    from dataclasses import replace

    by = comparison.by_method()
    first, second = comparison.ranking[:2]
    wide = replace(by[second].utility, emd=by[first].utility.emd + 1e-9, emd_bound=1.0)
    tied = replace(comparison, methods=tuple(
        replace(m, utility=wide) if m.method is second else m for m in comparison.methods))
    assert second in tied.tied_with_best()
    assert "cannot be told apart" in tied.recommendation()
    assert tied.to_dict()["tied_with_best"] == [second.value]


def test_dual_ranks_by_risk_and_dp_candidates_say_their_bounds_came_from_data():
    result = compare(_frame(150), target_utility="mdav=4",
                     methods=["mdav", "correlated-noise", "dp-laplace"], seeds=3,
                     tolerance=0.02)
    assert result.target is Target.UTILITY
    matched = [m for m in result.methods if m.matched]
    risks = [next(m for m in matched if m.method is r).risk for r in result.ranking]
    assert risks == sorted(risks, reverse=True)
    dp = next(m for m in result.methods if m.method is CompareMethod.DP_LAPLACE)
    assert "does not hold" in dp.note


# -- report and commands -------------------------------------------------------------------


class _Inventory(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.tables, self.rows = [], [], []
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images.append(attrs["src"])
        if tag == "table":
            self.tables.append(attrs.get("id"))
        if tag == "td":
            self._cell = ""

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag == "td":
            self.rows.append(self._cell)
            self._cell = None


def test_report_is_self_contained_with_every_figure_and_table(comparison):
    page = _Inventory()
    page.feed(comparison_html(comparison))
    assert len(page.images) == 2
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert {"utility-table", "data-table", "parameters"} <= set(page.tables)
    for m in comparison.methods:
        assert m.method.value in page.rows
    assert "http" not in comparison_html(comparison).replace("http-equiv", "")


def test_cli_mask_compare_evaluate(run_cli, tmp_path):
    data = tmp_path / "in.csv"
    _frame(160).to_csv(data, index=False)
    out = tmp_path / "out.csv"
    result = run_cli("mask", data, "-o", out, "--method", "rank-swap", "--param", "0.1",
                     "--seed", "3", "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["parameter"] == "fraction"
    evaluation = run_cli("evaluate", data, out, "--json")
    measures = json.loads(evaluation.stdout)
    assert measures["rank_risk"] > 0 and 0 < measures["emd"] < 1 and measures["emd_exact"]
    report = tmp_path / "r.html"
    result = run_cli("compare", data, "--target-risk", "mdav=4", "--seeds", "3",
                     "--methods", "mdav,rank-swap", "--report", report, "--json")
    assert result.code == 0, result.stderr
    body = json.loads(result.stdout)
    assert set(body) >= {"target_risk", "methods", "ranking"}
    assert {"method", "parameter", "value", "risk", "risk_ci", "utility", "matched"} <= set(
        body["methods"][0])
    assert "emd" in body["methods"][0]["utility"] and report.exists()


@pytest.mark.parametrize("args, fragment", [
    (["--target-risk", "1e9"], "out of reach of every method"),
    (["--target-risk", "5", "--seeds", "0"], "--seeds must be an integer from 1 to 1000"),
    (["--target-risk", "5", "--seeds", "99999999999"], "--seeds must be an integer from 1"),
    (["--target-risk", "5", "--methods", "magic"], "unknown method 'magic'"),
    (["--target-risk", "wat"], "neither a number nor METHOD=VALUE"),
])
def test_cli_compare_bad_input(run_cli, tmp_path, args, fragment):
    data = tmp_path / "in.csv"
    _frame(60).to_csv(data, index=False)
    report = tmp_path / "r.html"
    result = run_cli("compare", data, *args, "--report", report)
    assert result.code == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and fragment in result.stderr
    assert not report.exists()


def test_cli_mask_bad_parameter_writes_nothing(run_cli, tmp_path):
    data = tmp_path / "in.csv"
    _frame(30).to_csv(data, index=False)
    out = tmp_path / "out.csv"
    result = run_cli("mask", data, "-o", out, "--method", "rank-swap", "--param", "5")
    assert result.code == 2 and "fraction of the records" in result.stderr
    assert not out.exists()


@pytest.mark.reference_data
def test_census_matches_the_papers_parameters(census):
    """003 §5.1: on Census MDAV k = 5, correlated noise γ = 1, rank swapping p = 0.2 and
    multiplicative noise s = 0.5 have one risk; Table 1 ranks microaggregation first."""
    result = compare(census.frame, target_risk="mdav=5", seeds=10)
    by = {m.method: m for m in result.methods}
    assert all(m.matched for m in result.methods)
    assert 0.6 <= by[CompareMethod.CORRELATED_NOISE].value <= 1.5
    assert 0.1 <= by[CompareMethod.RANK_SWAP].value <= 0.3
    assert 0.35 <= by[CompareMethod.MULTIPLICATIVE_NOISE].value <= 0.7
    assert result.ranking[0] is CompareMethod.MDAV
    assert result.ranking[-1] is CompareMethod.CORRELATED_NOISE
    assert by[CompareMethod.MDAV].utility.emd == pytest.approx(0.16, abs=0.02)
    assert by[CompareMethod.CORRELATED_NOISE].utility.emd == pytest.approx(0.38, abs=0.06)


def test_a_target_just_beyond_the_range_but_within_tolerance_is_matched():
    from microagg.evaluation.compare import GRID_POINTS, _position, _value, candidates

    frame = _frame(120)
    X = frame.to_numpy(float)
    c = candidates(X, X.min(axis=0), X.max(axis=0))[CompareMethod.MDAV]
    grid = {_value(c, p) for p in np.linspace(_position(c, c.low), _position(c, c.high),
                                              GRID_POINTS)}
    highest = max(rank_risk(X, c.mask(X, k, None)) for k in grid)
    beyond = highest * (1 + 0.5 * 0.0025)  # above every grid point, inside the band
    result = compare(frame, target_risk=beyond, methods=["mdav"])
    (mdav,) = result.methods
    assert mdav.matched and mdav.reason == ""
    assert abs(mdav.risk - beyond) <= result.tolerance


@pytest.mark.parametrize("target", ["-1", -0.5, "-1e-9"])
def test_a_negative_target_is_refused(target):
    """Every risk and utility a comparison ranks by is at least 0: a negative target would
    rank every method as safer than asked, so it is refused."""
    with pytest.raises(InputError, match="is negative"):
        parse_target(target)
    assert parse_target("0") == 0.0 and parse_target("mdav=5")[1] == 5.0
