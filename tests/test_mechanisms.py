import math

import numpy as np
import pytest

from microagg.errors import InputError, PrivacyError
from microagg.release.dp.mechanisms import Budget, exponential_mechanism, laplace_mechanism
from microagg.release.dp.samplers import discrete_laplace


@pytest.mark.parametrize("scale", [1, 3, 10])
def test_discrete_laplace_matches_its_pmf(scale):
    draws = discrete_laplace(scale, 400_000, rng=11)
    p = math.exp(-1 / scale)
    for z in range(-3 * scale, 3 * scale + 1):
        pmf = (1 - p) / (1 + p) * p ** abs(z)
        freq = np.mean(draws == z)
        sigma = math.sqrt(pmf * (1 - pmf) / draws.size)
        assert abs(freq - pmf) < 5 * sigma, (z, freq, pmf)
    assert abs(draws.mean()) < 5 * math.sqrt(2 * p / (1 - p) ** 2 / draws.size)


def test_discrete_laplace_large_scale_variance_and_seeds():
    scale = 2**30
    draws = discrete_laplace(scale, 200_000, rng=3)
    p = math.exp(-1 / scale)
    expected = 2 * p / (1 - p) ** 2
    assert draws.var() / expected == pytest.approx(1.0, abs=0.02)
    np.testing.assert_array_equal(discrete_laplace(9, 1000, 5), discrete_laplace(9, 1000, 5))
    assert not np.array_equal(discrete_laplace(9, 1000, 5), discrete_laplace(9, 1000, 6))
    # the threaded path is seeded too
    np.testing.assert_array_equal(discrete_laplace(9, 500_000, 8),
                                  discrete_laplace(9, 500_000, 8))
    with pytest.raises(InputError, match="scale"):
        discrete_laplace(0, 10, 1)


def test_laplace_mechanism_grid_scale_and_clamping():
    values = np.array([3.0, 5.5, 9.0])
    released, info = laplace_mechanism(values, sensitivity=2.0, epsilon=0.5, lows=0.0,
                                       highs=10.0, rng=1)
    assert info.scale >= 2.0 / 0.5
    assert info.scale <= 2.0 / 0.5 * (1 + 1e-4)
    assert info.standard_deviation == pytest.approx(math.sqrt(2) * info.scale, rel=1e-3)
    assert math.log2(info.grid_step).is_integer()
    # outputs lie on the grid above the lower bound (0), except where clamped to the domain
    assert np.all((released >= 0) & (released <= 10))
    inside = (released > 0) & (released < 10)
    steps = released[inside] / info.grid_step
    np.testing.assert_array_equal(steps, np.rint(steps))
    with pytest.raises(InputError, match="finite"):
        laplace_mechanism(np.array([np.nan]), sensitivity=1.0, epsilon=1.0, lows=0.0,
                          highs=10.0, rng=1)
    with pytest.raises(InputError, match="epsilon"):
        laplace_mechanism(values, sensitivity=1.0, epsilon=0.0, lows=0.0, highs=10.0, rng=1)
    with pytest.raises(InputError, match="sensitivity"):
        laplace_mechanism(values, sensitivity=-1.0, epsilon=1.0, lows=0.0, highs=10.0, rng=1)
    with pytest.raises(TypeError):  # privacy parameters are keyword-only
        laplace_mechanism(values, 1.0, 1.0, 0.0, 10.0, 1)  # type: ignore[misc]


def test_laplace_mechanism_clips_statistics_into_the_domain():
    """A mean of values at the upper bound may exceed it by an ulp: whether a release succeeds
    must not depend on the data (clipping is free: it cannot raise the sensitivity)."""
    mean = np.mean([0.1, 0.1, 0.1])
    assert mean > 0.1  # the floating-point case of the audit
    released, _ = laplace_mechanism(np.array([mean, 11.0]), sensitivity=0.1, epsilon=1.0,
                                    lows=0.0, highs=0.1, rng=1)
    assert np.all((released >= 0) & (released <= 0.1))


@pytest.mark.parametrize("epsilon", [1e-300, 5e-324])  # 5e-324: subnormal, 1 / ε is inf
def test_too_small_epsilon_names_the_smallest_usable_one(epsilon):
    with pytest.raises(PrivacyError, match=r"smallest usable epsilon here is [0-9.e-]+\b"):
        laplace_mechanism(np.array([1.0]), sensitivity=1.0, epsilon=epsilon, lows=0.0,
                          highs=10.0, rng=1)
    with pytest.raises(PrivacyError, match="smallest usable epsilon"):
        exponential_mechanism(np.zeros((1, 3)), sensitivity=1.0, epsilon=epsilon, rng=1)


def test_exponential_mechanism_probabilities():
    quality = np.array([0.0, -1.0, -2.0, -9.0])
    epsilon, sensitivity = 2.0, 1.0
    choices, info = exponential_mechanism(np.tile(quality, (200_000, 1)),
                                          sensitivity=sensitivity, epsilon=epsilon, rng=4)
    assert epsilon * (1 - 1e-5) < info.epsilon <= epsilon
    weights = np.exp(info.epsilon * quality / (2 * sensitivity))
    expected = weights / weights.sum()
    frequency = np.bincount(choices, minlength=4) / choices.size
    sigma = np.sqrt(expected * (1 - expected) / choices.size)
    assert np.all(np.abs(frequency - expected) < 5 * sigma)


@pytest.mark.parametrize(("numerator", "denominator"), [(0, 3), (1, 3), (3, 3), (7, 2), (1, 1)])
def test_bernoulli_exp_is_exact(numerator, denominator):
    from microagg.release.dp.samplers import _bernoulli_exp

    rng = np.random.default_rng(numerator * 10 + denominator)
    block = np.empty(4096, dtype=np.int64)
    cursor = np.full(1, 4096, dtype=np.int64)
    trials = 100_000
    hits = sum(_bernoulli_exp(rng, block, cursor, numerator, denominator)
               for _ in range(trials))
    p = math.exp(-numerator / denominator)
    assert abs(hits / trials - p) < 5 * math.sqrt(p * (1 - p) / trials) + 1e-12


def test_exponential_mechanism_has_no_zero_probability_candidate():
    """With 53-bit floating-point weights a candidate of weight e^-37.5 next to the best gets
    probability 0 while its neighbour's e^-36.5 gets 2^-53: an unbounded privacy loss. The exact
    sampler accepts such a candidate with exactly its probability; here a weight of e^-8 among
    two candidates, checked against the exact rate."""
    quality = np.tile([0.0, -8.0], (400_000, 1))
    choices, info = exponential_mechanism(quality, sensitivity=1.0, epsilon=2.0, rng=9)
    p = math.exp(-8.0 * info.epsilon / 2) / (1 + math.exp(-8.0 * info.epsilon / 2))
    rate = choices.mean()
    assert abs(rate - p) < 5 * math.sqrt(p / choices.size)
    assert rate > 0


def test_exponential_mechanism_is_stable():
    quality = np.array([[-1e9, -1e9 - 1, -5e8]])
    choices, _ = exponential_mechanism(quality, sensitivity=1.0, epsilon=1.0, rng=1)
    assert choices.tolist() == [2]
    with pytest.raises(InputError, match="too large"):
        exponential_mechanism(np.array([[1e300, 0.0]]), sensitivity=1.0, epsilon=1.0, rng=1)


def test_budget_splits_and_never_overspends():
    budget = Budget(1.0)
    shares = budget.split({"a": 2.0, "b": 1.0})
    assert shares["a"] == pytest.approx(2 / 3) and shares["b"] == pytest.approx(1 / 3)
    assert budget.spent <= 1.0
    assert [entry["part"] for entry in budget.ledger] == ["a", "b"]
    with pytest.raises(PrivacyError, match="already spent"):
        budget.split({"c": 1.0})
    with pytest.raises(InputError, match="positive"):
        Budget(1.0).split({"x": 0.0})
    with pytest.raises(InputError, match="epsilon"):
        Budget(-1.0)


def test_budget_sets_aside_before_the_split():
    budget = Budget(2.0)
    aside = budget.set_aside({"x": 1.0, "y": 3.0}, 0.4, "first")
    assert aside["x"] == pytest.approx(0.1) and aside["y"] == pytest.approx(0.3)
    assert budget.remaining == pytest.approx(1.6)
    shares = budget.split({"a": 1.0, "b": 1.0})
    assert shares["a"] == pytest.approx(0.8)
    assert [e["part"] for e in budget.ledger] == ["x", "y", "a", "b"]
    assert budget.spent <= 2.0
    with pytest.raises(PrivacyError, match="already spent"):
        budget.set_aside({"z": 1.0}, 0.1, "late")
    with pytest.raises(InputError, match="cannot set aside"):
        Budget(1.0).set_aside({"z": 1.0}, 1.0, "all of it")
    paper = Budget(1.0)
    paper.set_aside({"z": 1.0}, 0.1, "first")
    with pytest.raises(PrivacyError, match="nothing can be set aside"):
        paper.reuse("every attribute", 3, "paper")
