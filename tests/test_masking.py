"""Masking methods of paper 003 §5: correlated noise, Höhne's multiplicative noise, rank
swapping (checked against a naive transcription of sdcMicro's loop)."""

import numpy as np
import pandas as pd
import pytest

from microagg.core.masking import _swap_column, correlated_noise, multiplicative_noise, rank_swap
from microagg.errors import InputError
from microagg.release import mask


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.gamma(2.0, 10.0, n)
    b = 0.5 * a + rng.normal(0, 3, n)
    return np.column_stack([a, b, a + b])  # exact linear relation: singular covariance


def test_correlated_noise_has_covariance_gamma_sigma_and_keeps_linear_relations():
    X = _data(20000)
    Y = correlated_noise(X, 0.5, rng=1)
    noise = Y - X
    sigma = np.cov(X, rowvar=False)
    assert np.allclose(np.cov(noise, rowvar=False), 0.5 * sigma, rtol=0.05, atol=0.05 * sigma.max())
    # Σ is singular (third column = first + second): the noise respects the relation.
    assert np.allclose(Y[:, 2], Y[:, 0] + Y[:, 1], rtol=1e-9, atol=1e-6)
    assert np.array_equal(correlated_noise(X, 0.0, rng=1), X)


def test_multiplicative_noise_restores_means_and_covariances_exactly():
    X = _data(3000)[:, :2]
    Y = multiplicative_noise(X, 0.3, rng=2)
    assert np.allclose(Y.mean(axis=0), X.mean(axis=0), rtol=1e-10)
    assert np.allclose(np.cov(Y, rowvar=False), np.cov(X, rowvar=False), rtol=1e-8)
    assert np.mean(np.abs(Y - X) / np.abs(X)) > 0.05  # and it did mask
    # A small s masks little.
    assert np.mean(np.abs(multiplicative_noise(X, 1e-4, rng=2) - X) / np.abs(X)) < 1e-3


def test_multiplicative_noise_handles_singular_covariance():
    X = _data(1000)
    Y = multiplicative_noise(X, 0.2, rng=3)
    assert np.allclose(np.cov(Y, rowvar=False), np.cov(X, rowvar=False), rtol=1e-6,
                       atol=1e-6 * np.abs(np.cov(X, rowvar=False)).max())


def _naive_swap(values, window, picks):
    """sdcMicro's RankSwapping loop, scanning the window (values sorted)."""
    out = values.copy()
    n = len(values)
    swapped = np.zeros(n, bool)
    for j in range(n):
        if swapped[j]:
            continue
        r = min(n, j + window)
        free = [k for k in range(j + 1, r) if not swapped[k]]
        if free:
            partner = free[min(int(picks[j] * len(free)), len(free) - 1)]
            out[j], out[partner] = out[partner], out[j]
            swapped[j] = swapped[partner] = True
    return out


@pytest.mark.parametrize("window", [0, 1, 2, 3, 7, 50, 200])
def test_rank_swap_kernel_equals_the_naive_loop(window):
    rng = np.random.default_rng(window)
    values = np.sort(rng.normal(size=200))
    picks = rng.random(200)
    assert np.array_equal(_swap_column(values, window, picks), _naive_swap(values, window, picks))


def test_rank_swap_permutes_each_column_within_the_window():
    X = _data(1000)
    fraction = 0.05
    Y = rank_swap(X, fraction, rng=4)
    window = int(1000 * fraction)
    for j in range(X.shape[1]):
        assert np.array_equal(np.sort(Y[:, j]), np.sort(X[:, j]))
        order = np.argsort(X[:, j], kind="stable")
        rank_of_row = np.empty(1000, int)
        rank_of_row[order] = np.arange(1000)
        # the value a row receives came from a rank less than `window` away
        source = np.searchsorted(np.sort(X[:, j]), Y[:, j])
        assert np.all(np.abs(source - rank_of_row) < window)
        assert np.mean(Y[:, j] != X[:, j]) > 0.8
    assert np.array_equal(rank_swap(X, 0.0, rng=4), X)


def test_bad_parameters_are_one_line_errors():
    X = _data(50)
    with pytest.raises(InputError, match="fraction of the records"):
        rank_swap(X, 5)
    with pytest.raises(InputError, match="non-negative"):
        correlated_noise(X, -1)
    with pytest.raises(InputError, match="finite"):
        multiplicative_noise(np.array([[1.0], [np.nan]]), 0.1)


def test_mask_release_keeps_rows_and_drops_identifiers():
    X = _data(100)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame.insert(0, "name", [f"p{i}" for i in range(100)])
    from microagg.data.schema import Attribute, Kind, Role, Schema

    schema = Schema((Attribute("name", Role.IDENTIFIER, Kind.NOMINAL),
                     Attribute("a", Role.QUASI, Kind.NUMERIC),
                     Attribute("b", Role.QUASI, Kind.NUMERIC),
                     Attribute("c", Role.OTHER, Kind.NUMERIC)))
    release = mask(frame, method="rank-swap", fraction=0.1, schema=schema, rng=0)
    assert list(release.frame.columns) == ["a", "b", "c"]
    assert np.array_equal(release.frame["c"].to_numpy(), X[:, 2])
    assert release.report.columns == ["a", "b"] and release.report.parameter == "fraction"
    assert sorted(release.frame["a"]) == sorted(X[:, 0])
    with pytest.raises(InputError, match="unknown method"):
        mask(frame, method="swap", fraction=0.1)


def test_mask_without_schema_masks_the_numeric_columns_and_lists_the_others():
    frame = pd.DataFrame({"x": np.arange(40.0), "region": ["n", "s"] * 20})
    release = mask(frame, method="correlated-noise", gamma=0.1, rng=1)
    assert release.report.columns == ["x"] and release.report.released_unchanged == ["region"]
    assert release.frame["region"].equals(frame["region"])
    with pytest.raises(InputError, match="column 'region' is not numeric"):
        mask(frame, method="rank-swap", fraction=0.1, columns=["x", "region"])


def test_numbers_the_file_holds_as_text_are_named_rather_than_no_numeric_column():
    frame = pd.DataFrame({"x": ["1,5", "2,5", "3,0", "4,0"], "y": ["2,5", "3,5", "1,0", "2,0"]})
    with pytest.raises(InputError, match="column 'x' holds numbers written with a decimal comma"):
        mask(frame, method="rank-swap", fraction=0.5, rng=0)
    with pytest.raises(InputError, match="no numeric column to mask"):
        mask(pd.DataFrame({"job": ["a", "b", "c", "d"]}), method="rank-swap", fraction=0.5)
