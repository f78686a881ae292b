import math

import numpy as np
import pytest

from microagg.errors import InputError, PrivacyError
from microagg.mechanisms import (
    Budget,
    discrete_laplace,
    exponential_mechanism,
    laplace_mechanism,
)


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
    released, info = laplace_mechanism(values, 2.0, 0.5, 0.0, 10.0, rng=1)
    assert info.scale >= 2.0 / 0.5
    assert info.scale <= 2.0 / 0.5 * (1 + 1e-4)
    assert math.log2(info.grid_step).is_integer()
    # outputs lie on the grid above the lower bound (0), except where clamped to the domain
    assert np.all((released >= 0) & (released <= 10))
    inside = (released > 0) & (released < 10)
    steps = released[inside] / info.grid_step
    np.testing.assert_array_equal(steps, np.rint(steps))
    with pytest.raises(InputError, match="declared domains"):
        laplace_mechanism(np.array([11.0]), 1.0, 1.0, 0.0, 10.0, rng=1)
    with pytest.raises(InputError, match="epsilon"):
        laplace_mechanism(values, 1.0, 0.0, 0.0, 10.0, rng=1)
    with pytest.raises(InputError, match="sensitivity"):
        laplace_mechanism(values, -1.0, 1.0, 0.0, 10.0, rng=1)


def test_exponential_mechanism_probabilities():
    quality = np.array([0.0, -1.0, -2.0])
    epsilon, sensitivity = 2.0, 1.0
    choices = exponential_mechanism(np.tile(quality, (200_000, 1)), sensitivity, epsilon, 4)
    weights = np.exp(epsilon * quality / (2 * sensitivity))
    expected = weights / weights.sum()
    frequency = np.bincount(choices, minlength=3) / choices.size
    sigma = np.sqrt(expected * (1 - expected) / choices.size)
    assert np.all(np.abs(frequency - expected) < 5 * sigma)


def test_exponential_mechanism_is_stable():
    quality = np.array([[-1e9, -1e9 - 1, -5e8], [1e300, 0.0, -1e300]])
    choices = exponential_mechanism(quality, 1.0, 1.0, 1)
    assert choices.tolist() == [2, 0]


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
