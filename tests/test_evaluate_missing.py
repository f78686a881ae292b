"""evaluate on tables with missing values: every measure over the values the rule says
(docs/algorithms.md), against direct computations; no crash and no unexplained NaN."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg import MDAV
from microagg.core.distance import Categorical
from microagg.data.taxonomy import CategoryMetric, Taxonomy
from microagg.evaluation.evaluate import evaluate
from microagg.evaluation.risk import record_linkage
from microagg.evaluation.utility import js_divergence
from microagg.release import tclose
from tests import reference
from tests.partition.test_mixed import _metrics
from tests.test_tclose_missing import adult_like


def _pair_with_missing(seed, n=60, p=3, share=0.2):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, size=(n, p)).astype(float)
    y = x + rng.integers(-1, 2, size=(n, p))
    x[rng.random((n, p)) < share] = np.nan
    y[rng.random((n, p)) < share] = np.nan
    return x, y


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.5))
def test_numeric_measures_over_the_values_present(seed, share):
    x, y = _pair_with_missing(seed, share=share)
    columns = ["a", "b", "c"]
    original, masked = pd.DataFrame(x, columns=columns), pd.DataFrame(y, columns=columns)
    if original.isna().all().any() or masked.isna().all().any():
        return  # a column without any value: its JSD is undefined (tested below)
    result = evaluate(original, masked)
    both = ~np.isnan(x) & ~np.isnan(y)
    assert result.sse == pytest.approx(float(((x - y)[both] ** 2).sum()))
    ratios = []
    for j in range(3):
        rows = both[:, j]
        sst = ((x[rows, j] - x[rows, j].mean()) ** 2).sum()
        if sst > 0:
            ratios.append(((x[rows, j] - y[rows, j]) ** 2).sum() / sst)
    assert result.sse_percent == pytest.approx(100 * np.mean(ratios))
    means = [abs(np.nanmean(y[:, j]) - np.nanmean(x[:, j])) / abs(np.nanmean(x[:, j]))
             for j in range(3) if np.nanmean(x[:, j]) != 0]
    assert result.mean_variation == pytest.approx(np.mean(means))
    lows = np.nanmin(x, axis=0)
    widths = np.nanmax(x, axis=0) - lows
    widths[widths <= 0] = 1.0
    errors = np.abs(x - y) / np.maximum(np.abs(x), widths / 100)
    assert result.relative_error == pytest.approx(float(errors[both].mean()))
    linkage = reference.record_linkage_with_missing(x / widths, y / widths)
    assert result.record_linkage_percent == pytest.approx(linkage, abs=1e-9)
    counts = result.missing_values
    for j, name in enumerate(columns):
        missing = (int(np.isnan(x[:, j]).sum()), int(np.isnan(y[:, j]).sum()))
        if any(missing):
            assert (counts[name].original, counts[name].masked) == missing
            assert counts[name].both_present == int(both[:, j].sum())
    assert bool(result.missing_rule) == bool(counts)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_record_linkage_with_categories_and_missing_values_agrees_with_its_definition(seed):
    rng = np.random.default_rng(seed)
    n = 40
    x, y = _pair_with_missing(seed, n=n, p=2)
    metrics = _metrics()[:1]
    cx = rng.integers(-1, metrics[0].n_leaves, size=(n, 1))
    cy = np.where(rng.random((n, 1)) < 0.2, -1, rng.integers(0, metrics[0].n_concepts, (n, 1)))
    squared = Categorical(np.maximum(cx, 0), metrics).squared()
    found = record_linkage(x, y, categories=(cx, cy, squared))
    assert found == pytest.approx(reference.record_linkage_with_missing(x, y, cx, cy, squared),
                                  abs=1e-9)


def test_categorical_measures_and_an_all_missing_column():
    original = pd.DataFrame({"job": ["a", "b", None, "a", "b", "a"],
                             "age": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    masked = pd.DataFrame({"job": ["a", None, "b", "b", "b", "a"],
                           "age": [np.nan] * 6})
    result = evaluate(original, masked, columns=["job", "age"])
    job = result.per_attribute["job"]
    # rows 0, 3, 4, 5 have a job in both tables; only row 3 differs (a against b)
    delta = CategoryMetric.nominal("job", Taxonomy.flat(["a", "b"])).distances[0, 1]
    assert job.sse == pytest.approx(delta**2)
    assert job.mean_semantic_distance == pytest.approx(delta / 4)
    assert job.jsd == pytest.approx(js_divergence(np.array([3, 2]) / 5, np.array([2, 3]) / 5))
    assert result.per_attribute["age"].jsd is None  # no value present in the release
    assert result.jsd == pytest.approx(job.jsd)
    assert result.missing_values["age"].to_dict() == {"original": 0, "masked": 6,
                                                      "both_present": 0}
    assert result.skipped["emd"].startswith("a table has no record complete")
    assert result.sse_percent is None


@pytest.mark.parametrize("release", ["mdav", "tclose"])
def test_an_adult_like_release_is_evaluated_without_nan(release):
    frame = adult_like()
    if release == "mdav":
        masked = MDAV(k=5).release(frame, roles={"fnlwgt": "weight"},
                                   columns=["age", "hours", "workclass", "region"]).frame
    else:
        masked = tclose(frame, k=5, t=0.25, confidential=["income"],
                        roles={"fnlwgt": "weight"}).frame
    columns = ["age", "hours", "workclass", "region", "sex"]
    result = evaluate(frame, masked, columns=columns).to_dict()
    for key in ("sse", "sse_percent", "record_linkage_percent", "relative_error", "jsd",
                "variance_variation", "mean_variation", "rank_risk", "emd"):
        assert result[key] is not None and np.isfinite(result[key]), key
    assert result["missing_values"]["region"]["original"] == int(frame["region"].isna().sum())
    json.dumps(result)  # plain JSON, no NaN


def test_cli_evaluate_says_how_missing_values_count(run_cli, tmp_path):
    frame = adult_like(200)
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    frame.to_csv(source, index=False)
    made = run_cli("microaggregate", source, "-o", out, "--k", "4", "--weight", "fnlwgt")
    assert made.code == 0, made.stderr
    result = run_cli("evaluate", source, out, "--columns", "age,workclass,region")
    assert result.code == 0, result.stderr
    assert "nan" not in result.stdout.lower().replace("nan ", "")
    assert "missing values (original / release): age" in result.stdout
    assert "values present in both" in result.stdout
    plain = run_cli("evaluate", source, out, "--columns", "hours")
    assert "missing values" not in plain.stdout
