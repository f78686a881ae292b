"""Domains clipped at DP quantiles (release/dp/clipping.py): the candidate grid, the quality's
sensitivity, the exact choice probabilities, an audit of the published bound, and the
releases and reports that use it."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from microagg.errors import InputError, PrivacyError, PrivacyLeakWarning
from microagg.evaluation.audit import epsilon_lower_bound
from microagg.release import dp_cross_moment, dp_individual_ranking, dp_insensitive, dp_laplace
from microagg.release.dp import clipping as clipping_module
from microagg.release.dp.clipping import (
    Clipping,
    bound_quality,
    candidate_bounds,
    clip_domains,
    private_bound,
    rank_error,
)
from microagg.release.dp.mechanisms import Budget
from microagg.release.inputs import prepare_dp


def test_candidates_are_a_fixed_geometric_grid_inside_the_domain():
    upper = candidate_bounds(2.0, 10.0, upper=True)
    assert upper.size == 1024 and upper[0] == 10.0  # the declared bound: no clipping
    assert np.all(np.diff(upper) < 0) and upper[-1] > 2.0
    assert np.allclose((upper[:-1] - 2.0) / (upper[1:] - 2.0), 2 ** (1 / 64))
    assert upper[-1] - 2.0 == pytest.approx(8.0 * 2.0 ** (-1023 / 64))
    lower = candidate_bounds(2.0, 10.0, upper=False)
    assert lower[0] == 2.0 and np.array_equal(lower[1:], upper[1:])  # no clipping, or the grid


@pytest.mark.parametrize("upper", [True, False])
def test_quality_changes_by_at_most_one_when_a_record_is_replaced(upper):
    """Every replacement of one record by a domain corner or another record's value moves
    each candidate's quality by at most 1, and some move it by exactly 1 (so a bound of 1/2
    would be wrong)."""
    rng = np.random.default_rng(7)
    candidates = candidate_bounds(0.0, 1.0, upper=upper)
    largest = 0.0
    for _ in range(200):
        n = int(rng.integers(1, 40))
        x = np.round(rng.random(n), 2)  # ties on purpose
        q = float(rng.choice([0.1, 0.5, 0.9, 0.95, rng.random()]))
        base = bound_quality(np.sort(x), q, candidates, upper=upper)
        for value in (0.0, 1.0, float(x[0]), float(rng.random())):
            y = x.copy()
            y[int(rng.integers(n))] = value
            change = np.abs(bound_quality(np.sort(y), q, candidates, upper=upper) - base)
            largest = max(largest, float(change.max()))
    assert largest == pytest.approx(1.0, abs=1e-9)  # |count - q n|: q n is a float


def test_choice_probabilities_are_the_exponential_mechanisms():
    """On four records the probability of each region of candidates equals
    Σ exp(ε u(c) / 2) / Σ_all, within 5 standard errors of 40,000 draws."""
    x = np.sort(np.array([0.1, 0.1, 0.6, 0.95]))
    epsilon, draws = 1.0, 40_000
    candidates = candidate_bounds(0.0, 1.0, upper=True)
    quality = bound_quality(x, 0.5, candidates, upper=True)
    weights = np.exp(epsilon * quality / 2)
    rng = np.random.default_rng(3)
    chosen = np.array([private_bound(x, 0.5, low=0.0, high=1.0, upper=True, epsilon=epsilon,
                                     rng=rng)[0] for _ in range(1_000)])
    # many draws at once through the same mechanism, for the frequencies
    from microagg.release.dp.mechanisms import exponential_mechanism
    picks, _ = exponential_mechanism(np.tile(quality, (draws, 1)), sensitivity=1.0,
                                     epsilon=epsilon, rng=4)
    for lo, hi in ((0.0, 0.1), (0.1, 0.6), (0.6, 0.95), (0.95, 1.01)):
        region = (candidates >= lo) & (candidates < hi)
        p = weights[region].sum() / weights.sum()
        frequency = np.isin(picks, np.flatnonzero(region)).mean()
        assert abs(frequency - p) < 5 * math.sqrt(p * (1 - p) / draws)
        share = ((chosen >= lo) & (chosen < hi)).mean()  # the bound itself, fewer draws
        assert abs(share - p) < 5 * math.sqrt(p * (1 - p) / chosen.size)
    assert set(np.unique(chosen)) <= set(candidates)


@pytest.mark.parametrize(("upper", "quantile"), [(True, 0.9), (False, 0.1)])
def test_bound_lies_at_the_quantile_when_epsilon_is_large(upper, quantile):
    x = np.sort(np.random.default_rng(1).lognormal(size=20_000))
    high = 1.5 * x.max()
    bound, entry = private_bound(x, quantile, low=0.0, high=high, upper=upper, epsilon=50.0,
                                 rng=2)
    share_below = np.mean(x <= bound) if upper else np.mean(x < bound)
    assert abs(share_below - quantile) < 0.005
    assert entry["sensitivity"] == 1.0 and entry["mechanism"] == "exponential"


def test_clipping_options_are_checked():
    assert Clipping.parse("0.95") == Clipping(0.0, 0.95, 0.1)
    assert Clipping.parse("0.05,0.9", 0.2) == Clipping(0.05, 0.9, 0.2)
    assert [side for side, _ in Clipping(0.05, 0.9).sides] == ["upper", "lower"]
    for text in ("x", "0.9,0.1", "1.2", "0,1", "0.1,0.5,0.9"):
        with pytest.raises(InputError, match="`clip`"):
            Clipping.parse(text)
    with pytest.raises(InputError, match="`clip_share`"):
        Clipping(0.0, 0.9, 1.0)


def test_clip_domains_clamps_into_the_released_domain_and_spends_its_share():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"a": rng.lognormal(size=2_000), "b": 5 + rng.lognormal(size=2_000)})
    data = prepare_dp(frame, schema=None, columns=None, bounds={"a": (0, 200), "b": (5, 500)},
                      bounds_from_data=False)
    budget = Budget(2.0)
    clipped, entries = clip_domains(data, Clipping(0.05, 0.95, 0.5), budget, rng)
    assert budget.aside == 1.0 and budget.remaining == 1.0
    assert [e["part"] for e in budget.ledger] == [
        "domain clipping: upper bound of a", "domain clipping: lower bound of a",
        "domain clipping: upper bound of b", "domain clipping: lower bound of b"]
    assert math.fsum(e["epsilon"] for e in budget.ledger) <= 1.0
    assert len(entries) == 4 and all(e["epsilon"] <= 0.25 for e in entries)
    assert np.all(clipped.lows >= data.lows) and np.all(clipped.highs <= data.highs)
    assert np.all((clipped.X >= clipped.lows) & (clipped.X <= clipped.highs))
    assert np.all(clipped.highs - clipped.lows < 20)  # far inside the declared domains
    assert np.all(clipped.lows > data.lows)
    assert clipped.warnings == ()  # 2,000 records, ε = 0.25 per bound: within 74 ranks
    for j, name in enumerate(clipped.numeric):
        assert clipped.clipped[name] == np.count_nonzero(clipped.X[:, j] != data.X[:, j]) > 0
        assert clipped.domains[name]["declared"] == [float(data.lows[j]), float(data.highs[j])]
    assert clip_domains(data, None, Budget(1.0), rng) == (data, [])


@pytest.mark.slow
def test_released_bound_is_audited_on_worst_case_neighbours():
    """The published upper bound (quantile 0.5, ε_clip = 2 of ε = 4) on D = (.1, .1, .6, .95)
    and D' (the first record moved to .95): the counts below every candidate in [.1, .6) and
    [.6, .95) move by one, in opposite directions. The event 'bound in [.6, .95)' has
    probabilities about 0.085 and 0.41 (a loss of 1.57); the Clopper-Pearson lower bound
    stays below ε_clip. With the quality's sensitivity declared as 1/2 (a wrong
    implementation) the same audit proves a loss above ε_clip."""
    neighbours = (pd.DataFrame({"x": [0.1, 0.1, 0.6, 0.95]}),
                  pd.DataFrame({"x": [0.95, 0.1, 0.6, 0.95]}))
    bounds = {"x": (0.0, 1.0)}
    clip = Clipping(0.0, 0.5, 0.5)

    def losses(trials: int, seed: int) -> float:
        rng = np.random.default_rng(seed)
        hits = []
        for frame in neighbours:
            count = 0
            for _ in range(trials):
                report = dp_cross_moment(frame, epsilon=4.0, k=4, moments=1, bounds=bounds,
                                         clip=clip, rng=rng).report
                count += 0.6 <= json.loads(json.dumps(report.to_dict()))["domains"]["x"][
                    "high"] < 0.95
            hits.append(count)
        return epsilon_lower_bound(hits[0], hits[1], trials)

    assert losses(1_500, 11) < 2.0
    original = clipping_module.exponential_mechanism

    def halved(quality, *, sensitivity, epsilon, rng):
        return original(quality, sensitivity=sensitivity / 2, epsilon=epsilon, rng=rng)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clipping_module, "exponential_mechanism", halved)
        assert losses(1_500, 12) > 2.0


def _heavy_tailed(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=n)
    return pd.DataFrame({"u": np.exp(1.2 * z[:, 0]), "v": np.exp(1.2 * z[:, 1])})


def test_clipping_cuts_the_covariance_noise_on_heavy_tails():
    """Lognormal columns (correlation 0.54) with declared domains [0, 1.5 max]: the covariance
    noise of a one-cluster cross-moment release at ε = 1 swamps the correlation; clipped at
    the DP 0.9 quantile with a tenth of ε, the released correlation's error over eight seeds
    is less than half as large."""
    frame = _heavy_tailed(2_000, 0)
    bounds = {c: (0.0, 1.5 * float(frame[c].max())) for c in frame}
    truth = frame.corr().iloc[0, 1]
    errors: dict[bool, list[float]] = {False: [], True: []}
    for seed in range(8):
        for clipped in (False, True):
            release = dp_cross_moment(frame, epsilon=1.0, k=len(frame), moments=1,
                                      noise="separate", strategy=(0.25, 0.75), bounds=bounds,
                                      rng=np.random.default_rng(seed),
                                      clip=Clipping(0.0, 0.9) if clipped else None)
            errors[clipped].append(abs(release.frame.corr().iloc[0, 1] - truth))
            assert release.report.differentially_private
    assert np.mean(errors[True]) < 0.5 * np.mean(errors[False])


def test_every_dp_release_takes_clipping_and_reports_it():
    frame = _heavy_tailed(400, 1)
    bounds = {c: (0.0, 1.5 * float(frame[c].max())) for c in frame}
    clip = Clipping(0.0, 0.9, 0.2)
    def rng():
        return np.random.default_rng(1)

    releases = [dp_insensitive(frame, epsilon=1.0, k=10, bounds=bounds, clip=clip, rng=rng()),
                dp_individual_ranking(frame, epsilon=1.0, k=10, bounds=bounds, clip=clip,
                                      rng=rng()),
                dp_laplace(frame, epsilon=1.0, bounds=bounds, clip=clip, rng=rng()),
                dp_cross_moment(frame, epsilon=1.0, k=100, bounds=bounds, clip=clip,
                                rng=rng())]
    for release in releases:
        report = release.report
        assert report.differentially_private
        spent = math.fsum(e.get("total", e["epsilon"]) for e in report.epsilon_split)
        assert spent <= 1.0
        clipping_parts = [e for e in report.epsilon_split
                          if e["part"].startswith("domain clipping")]
        assert math.fsum(e["epsilon"] for e in clipping_parts) == pytest.approx(0.2)
        for name in frame:
            domain = report.domains[name]
            assert domain["high"] < domain["declared"][1]
            assert domain["low"] <= release.frame[name].min()  # exactly, not within an ulp
            assert release.frame[name].max() <= domain["high"]
        assert sum("clipped domain" in notice for notice in release.notices) == 2
        text = json.dumps(report.to_dict())
        assert "outside its clipped domain" not in text  # the counts are for the owner only


def test_clipping_refuses_what_it_cannot_compose_with():
    frame = _heavy_tailed(200, 2)
    bounds = {c: (0.0, 1.5 * float(frame[c].max())) for c in frame}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(InputError, match="`clip` needs `clustering` insensitive"):
            dp_cross_moment(frame, epsilon=1.0, k=10, clustering="mdav", bounds=bounds,
                            clip=Clipping(0.0, 0.9))
        with pytest.raises(PrivacyError, match="nothing can be set aside"):
            dp_insensitive(frame, epsilon=1.0, k=10, calibration="paper", bounds=bounds,
                           clip=Clipping(0.0, 0.9))
    categories = pd.DataFrame({"c": ["a", "b"] * 5})
    from microagg.data.schema import Attribute, Kind, Role, Schema
    schema = Schema((Attribute("c", Role.QUASI, Kind.NOMINAL, domain=("a", "b")),))
    with pytest.raises(InputError, match="numeric"):
        dp_laplace(categories, epsilon=1.0, schema=schema, clip=Clipping(0.0, 0.9))


def test_dp_cli_clips(run_cli, tmp_path):
    source = tmp_path / "in.csv"
    _heavy_tailed(300, 3).to_csv(source, index=False)
    out = tmp_path / "out.csv"
    result = run_cli("dp", source, "-o", out, "--epsilon", "1", "--k", "300",
                     "--method", "cross-moment", "--bounds", "u=0:200,v=0:200",
                     "--clip", "0.9", "--clip-share", "0.2")
    assert result.code == 0, result.stderr
    report = json.loads((tmp_path / "out.csv.privacy.json").read_text())
    assert report["domains"]["u"]["declared"] == [0.0, 200.0]
    assert "domain of u clipped to [0, " in result.stdout
    failed = run_cli("dp", source, "-o", out, "--epsilon", "1", "--k", "30",
                     "--bounds", "u=0:200,v=0:200", "--clip-share", "0.2")
    assert failed.code != 0 and "--clip-share applies with --clip only" in failed.stderr


def test_a_bound_chosen_with_too_little_epsilon_is_warned_about():
    """R = (2/ε)(ln 1024 + ln 10) ranks: at ε = 0.025 per bound it is 738, more than the 30
    records of 300 that the 0.9 quantile is meant to clip; at ε = 1 it is 18.5."""
    assert rank_error(0.025) == pytest.approx(2 / 0.025 * (math.log(1024) + math.log(10)))
    frame = _heavy_tailed(300, 4)
    bounds = {c: (0.0, 1.5 * float(frame[c].max())) for c in frame}
    weak = dp_laplace(frame, epsilon=0.25, bounds=bounds, clip=Clipping(0.0, 0.9), rng=1)
    assert sum("may land far from that quantile" in w for w in weak.report.warnings) == 2
    strong = dp_laplace(frame, epsilon=20.0, bounds=bounds, clip=Clipping(0.0, 0.9), rng=1)
    assert not any("may land far" in w for w in strong.report.warnings)
