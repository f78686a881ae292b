"""A compared method applied as a recipe step releases what the comparison measured."""

import numpy as np
import pandas as pd
import pytest

from microagg.data.schema import Schema
from microagg.errors import InputError
from microagg.evaluation.as_step import step_spec
from microagg.evaluation.compare import candidates, compare, compared_matrix
from microagg.evaluation.evaluate import attribute_domains
from microagg.options import CompareMethod
from microagg.recipe.families import step_seed
from microagg.recipe.model import Recipe, Step
from microagg.recipe.runner import RecipeRun

SEED = 11
APPLIED = ["mdav", "individual-ranking", "correlated-noise", "multiplicative-noise",
           "rank-swap"]


def _frame(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    x = rng.normal(40.0, 9.0, n)
    return pd.DataFrame({"x": x, "y": 0.6 * x + rng.normal(0.0, 5.0, n),
                         "z": rng.gamma(2.0, 10.0, n), "group": rng.choice(["a", "b"], n)})


@pytest.fixture(scope="module")
def compared():
    frame = _frame()
    schema = Schema.infer(frame, strict=False)
    result = compare(frame, target_risk="mdav=4", methods=APPLIED, columns=["x", "z"],
                     schema=schema, seeds=2, tolerance=0.05)
    return frame, schema, result


@pytest.mark.parametrize("method", APPLIED)
def test_the_applied_step_releases_the_compared_candidate(compared, method):
    frame, schema, result = compared
    spec = step_spec(result, method)
    run = RecipeRun.start(Recipe(schema=schema, seed=SEED), frame)
    done = run.then(Step.of(spec), records=lambda _: None)
    chosen = result.by_method()[CompareMethod(method)]
    names, selected, X = compared_matrix(frame, schema, ["x", "z"])
    lows, highs, _ = attribute_domains(selected, X)
    candidate = candidates(X, lows, highs)[CompareMethod(method)]
    expected = candidate.mask(X, chosen.value, np.random.default_rng(step_seed(SEED, 0)))
    released = done.frame[names].to_numpy(dtype=float)
    assert not np.allclose(released, X)  # the step masked the compared columns
    assert np.allclose(released, expected, rtol=0, atol=1e-9)
    assert done.frame["y"].equals(frame["y"])  # a column not compared is left as it was
    # the recipe written afterwards holds that very step
    assert done.recipe.steps[-1].to_dict() == Step.of(spec).to_dict()


def test_a_step_is_refused_for_a_method_not_compared(compared):
    with pytest.raises(InputError, match="was not compared"):
        step_spec(compared[2], "dp-laplace")


def test_a_dp_candidate_on_domains_read_off_the_data_is_not_applied():
    frame = _frame(40)
    result = compare(frame, target_risk="mdav=4", methods=["mdav", "dp-laplace"],
                     columns=["x", "z"], seeds=2, tolerance=0.05)
    with pytest.raises(InputError, match="calibrated on the records"):
        step_spec(result, "dp-laplace")
    assert step_spec(result, "mdav")["k"] == 4


def test_the_app_applies_the_winner_through_the_steps_tabs_plan(compared):
    from shiny import reactive

    from microagg.ui.compare_tab import apply_choices, comparison_view
    from microagg.ui.session import State
    from microagg.ui.steps_tab import plan

    frame, schema, result = compared
    choices = apply_choices(result)
    assert next(iter(choices)) == result.ranking[0].value  # the winner is offered first
    assert set(choices) == {m.method.value for m in result.methods}
    shown = str(comparison_view((result, "<html></html>"), running=False, stopped=False))
    assert 'id="apply_method"' in shown and 'id="apply_compare"' in shown
    state = State.new()
    try:
        with reactive.isolate():
            state.frame.set(frame)
            state.inferred.set(schema)
            winner = result.ranking[0]
            planned = plan(state, Step.of(step_spec(result, winner)), SEED, "matches-any")
        done = planned.run().then(planned.step, records=lambda _: None)
    finally:
        state.close()
    names, selected, X = compared_matrix(frame, schema, ["x", "z"])
    lows, highs, _ = attribute_domains(selected, X)
    value = result.by_method()[winner].value
    expected = candidates(X, lows, highs)[winner].mask(
        X, value, np.random.default_rng(step_seed(SEED, 0)))
    assert np.allclose(done.frame[names].to_numpy(dtype=float), expected, rtol=0, atol=1e-9)
    assert done.recipe.seed == SEED and len(done.recipe.steps) == 1


KEY_METHODS = ["local-suppression", "invariant-pram", "mdav"]


@pytest.fixture(scope="module")
def keys_compared():
    from microagg.evaluation.key_compare import compare_keys

    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"a": rng.choice(list("pqrstu"), n), "b": rng.choice(list("xyz"), n),
                          "c": rng.choice(list("lmno"), n), "other": rng.normal(size=n)})
    frame["a"] = frame["a"].where(rng.random(n) > 0.05)  # a missing key value or two
    schema = Schema.infer(frame, strict=False)
    result = compare_keys(frame, target_risk=2.0, risk_kind="expected-reidentifications",
                          keys=["a", "b", "c"],
                          schema=schema, methods=KEY_METHODS, seeds=2)
    return frame, schema, result


@pytest.mark.parametrize("method", KEY_METHODS)
def test_the_applied_key_step_releases_the_compared_candidate(keys_compared, method):
    from microagg.evaluation.key_candidates import key_candidates
    from microagg.evaluation.key_compare import _input
    from microagg.evaluation.key_measures import released_codes
    from microagg.ui.compare_tab import apply_choices

    frame, schema, result = keys_compared
    assert method in apply_choices(result)
    keys = ["a", "b", "c"]
    inp = _input(frame, keys, None, schema, None, None, 1)
    chosen = result.by_method()[CompareMethod(method)]
    candidate = key_candidates(inp)[0][CompareMethod(method)]
    expected = candidate.mask(inp.coding.codes, chosen.value,
                              np.random.default_rng(step_seed(SEED, 0)))
    run = RecipeRun.start(Recipe(schema=schema, seed=SEED), frame)
    done = run.then(Step.of(step_spec(result, method)), records=lambda _: None)
    released = released_codes(inp.coding, {k: done.frame[k] for k in keys})
    assert not np.array_equal(released, inp.coding.codes)  # the step protected the keys
    assert np.array_equal(released, expected)


def test_a_recoding_compared_at_a_level_of_every_key_is_not_one_step(keys_compared):
    from dataclasses import replace

    from microagg.ui.compare_tab import apply_choices

    result = keys_compared[2]
    recoded = replace(result, methods=(replace(
        result.methods[0], method=CompareMethod.GLOBAL_RECODING, parameter="level"),),
        ranking=(CompareMethod.GLOBAL_RECODING,))
    assert apply_choices(recoded) == {}
    with pytest.raises(InputError, match="Steps tab"):
        step_spec(recoded, "global-recoding")
