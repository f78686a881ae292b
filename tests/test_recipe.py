"""Recipes: the YAML form, the run step by step with undo, seeds, the risk after each step
against a direct count, the rule for DP steps after other steps, and the DP preview against
the real run."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.errors import ParameterError, PrivacyError
from microagg.recipe import Recipe, Step, measure_risk, recipe_report
from microagg.recipe.preview import dp_preview
from microagg.release.families.masking import MaskingMethod
from microagg.release.methods.base import release_method
from microagg.release.params import Interval, param

MDAV5 = {"family": "microaggregate", "method": "mdav", "k": 5}
SWAP = {"family": "mask", "method": "rank-swap", "fraction": 0.05}
LAPLACE = {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["age"],
           "bounds": {"age": [0, 120]}}


@pytest.fixture(scope="module")
def data():
    return microagg.datasets.synthetic(400, 3, seed=0)


def _matches_any(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """f_k by the definition: records that agree with the record on every key both have."""
    values = frame[keys].to_numpy(object)
    missing = frame[keys].isna().to_numpy()
    out = np.zeros(len(frame), dtype=np.int64)
    for i in range(len(frame)):
        agree = (values == values[i]) | missing | missing[i]
        out[i] = int(agree.all(axis=1).sum())
    return out


def test_risk_counts_records_as_the_definition_does():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 200),
                          "b": rng.choice([1.0, 2.0, np.nan], 200, p=[0.45, 0.45, 0.1])})
    risk = measure_risk(frame, ["a", "b"], ks=[4])
    fk = _matches_any(frame, ["a", "b"])
    assert risk.fk.tolist() == fk.tolist()
    assert risk.expected_reidentifications == pytest.approx((1 / fk).sum())
    assert risk.violations == {k: int((fk < k).sum()) for k in (2, 3, 4, 5)}


def test_a_recipe_reads_back_as_written(data, tmp_path):
    taxonomy = tmp_path / "region.csv"
    taxonomy.write_text("North;Top;*\nSouth;Top;*\nEast;Rest;*\nWest;Rest;*\nCentre;Rest;*\n")
    schema = data.schema.with_roles({"region": "quasi"})
    schema = microagg.Schema(tuple(dataclasses.replace(a, taxonomy=taxonomy, domain=None)
                                   if a.name == "region" else a for a in schema))
    recipe = Recipe(schema=schema, seed=7).add(MDAV5).add({**LAPLACE, "protects":
                                                          "step-input"})
    again = Recipe.from_dict(__import__("yaml").safe_load(recipe.dumps()))
    assert again.steps == recipe.steps and again.seed == 7
    assert [a.to_dict() | {"taxonomy": None} for a in again.schema] == \
        [a.to_dict() | {"taxonomy": None} for a in schema]
    inline = again.schema["region"].taxonomy
    assert inline != taxonomy and inline.read_text().splitlines()[0] == "North;Top;*"


def test_a_run_step_by_step_with_undo_equals_the_run_of_its_recipe(data):
    recipe = Recipe(schema=data.schema, seed=11).add(MDAV5).add(SWAP)
    whole = recipe.run(data.frame)
    built = Recipe(schema=data.schema, seed=11).run(data.frame).then(MDAV5).then(
        {**SWAP, "fraction": 0.2}).undo().then(SWAP)
    assert built.recipe.steps == recipe.steps
    pd.testing.assert_frame_equal(built.frame, whole.frame)
    direct = microagg.MDAV(k=5).release(data.frame, schema=data.schema).frame
    pd.testing.assert_frame_equal(whole.results[0].frame, direct)
    assert whole.undo().frame is whole.results[0].frame


def test_seeds_make_randomized_steps_reproducible_and_distinct(data):
    runs = [Recipe(schema=data.schema, seed=s).add(SWAP).run(data.frame) for s in (1, 1, 2)]
    pd.testing.assert_frame_equal(runs[0].frame, runs[1].frame)
    assert not runs[0].frame.equals(runs[2].frame)


def test_the_risk_after_each_step_is_the_risk_of_its_table(data):
    run = Recipe(schema=data.schema).add(MDAV5).run(data.frame)
    keys = list(data.schema.quasi_identifiers)
    fk = _matches_any(run.frame, keys)
    assert run.results[0].risk.fk.tolist() == fk.tolist() and fk.min() >= 5
    report = recipe_report(run).to_dict()
    before, after = report["risk_before"], report["steps"][0]["risk_after"]
    assert report["steps"][0]["risk_change"]["global_risk"] == pytest.approx(
        after["global_risk"] - before["global_risk"])
    assert report["steps"][0]["record"]["parameters"]["k"] == 5


def test_bad_steps_are_refused_naming_the_parameter():
    with pytest.raises(ParameterError) as caught:
        Step.of({**MDAV5, "k": 1})
    assert caught.value.parameter == "k"
    with pytest.raises(ParameterError) as caught:
        Step.of({**MDAV5, "bounds": {"age": [0, 1]}})
    assert caught.value.parameter == "bounds"


def test_dp_after_a_step_that_reads_other_records_needs_to_say_so(data):
    run = Recipe(schema=data.schema).add(MDAV5).run(data.frame)
    with pytest.raises(PrivacyError, match="masked table"):
        run.then(LAPLACE)
    said = run.then({**LAPLACE, "protects": "step-input"})
    assert not said.results[-1].context.holds_for_input
    assert "NOT for the recipe's input" in said.results[-1].context.statement
    assert "masked table" in said.guarantee
    # the table's guarantee says it in its top-level fields, not only in the step's context
    privacy = said.privacy
    assert not privacy.differentially_private and privacy.guarantee_scope == "masked table"
    assert any("masked table" in w for w in privacy.weaker_than_plain_dp)


def test_dp_after_record_by_record_steps_or_dp_keeps_the_input_guarantee(data):
    coding = {"family": "mask", "method": "top-bottom-coding", "top": 60.0,
              "columns": ["age"]}
    run = Recipe(schema=data.schema).add(coding).add(LAPLACE).run(data.frame)
    assert run.results[-1].context.holds_for_input
    quantile = {**coding, "top": 0.9, "at": "quantile"}
    with pytest.raises(PrivacyError, match="quantiles"):
        Recipe(schema=data.schema).add(quantile).add(LAPLACE).run(data.frame)
    twice = run.then({**LAPLACE, "epsilon": 0.5})
    context = twice.results[-1].context
    assert "post-processing" in context.statement and not context.spends
    assert twice.privacy.epsilon == 1.0 and twice.privacy.spending_steps == [2]
    assert twice.privacy.differentially_private and "input" in twice.guarantee
    seeded = Recipe(schema=data.schema, seed=3).add(coding).add(LAPLACE).run(data.frame)
    assert not seeded.privacy.differentially_private  # a known seed removes the noise
    assert "known seed" in seeded.guarantee


def test_the_dp_preview_is_the_real_runs_ledger(data):
    step = Step.of({"family": "dp", "method": "insensitive", "epsilon": 1.0, "k": 100,
                    "columns": ["age", "income"]})
    preview = dp_preview(step, data.frame, data.schema)
    real = Recipe(schema=data.schema).add(step).run(data.frame).results[0]
    assert preview.report.epsilon_split == real.release.report.epsilon_split
    assert preview.report.noise == real.release.report.noise
    assert preview.report.guarantee == real.release.report.guarantee


def test_a_new_method_appears_in_recipes_without_other_code(data, monkeypatch):
    from microagg.release import methods

    @release_method
    class Halve(MaskingMethod):
        """Halve every value (a test method)."""

        name: ClassVar[str] = "halve"
        summary: ClassVar[str] = "every value divided by `by`"
        parameter: ClassVar[str] = "by"
        by: float = param(Interval(float, 1, closed="neither"), help="The divisor.")

        def mask(self, values, rng):
            return values / self.by

    monkeypatch.setattr(methods, "METHODS", (*methods.METHODS, Halve))
    run = Recipe(schema=data.schema).add({"family": "mask", "method": "halve", "by": 2,
                                          "columns": ["age"]}).run(data.frame)
    assert np.allclose(run.frame["age"], data.frame["age"] / 2)
    assert "halve" in Recipe.from_dict(__import__("yaml").safe_load(run.recipe.dumps())
                                       ).steps[0].name
    pytest.importorskip("shiny")
    from microagg.recipe.families import adapter
    from microagg.ui.forms import method_form

    assert 'id="f_by"' in str(method_form(Halve, adapter("mask"), ["age"]))


def test_methods_for_categorical_keys_are_steps(data):
    """Local suppression and PRAM (the keys family) run as recipe steps: the suppressed keys
    are k-anonymous with a missing value matching any value, and a seeded PRAM step gives the
    same table twice (a deterministic method takes no seed)."""
    from microagg.core.frequencies import sample_frequencies

    frame = data.frame.assign(band=(data.frame["age"] // 10).astype(int).astype(str))
    suppress = {"family": "keys", "method": "local-suppression", "k": 4,
                "keys": ["band", "region", "education"]}
    run = Recipe(seed=3).add(suppress).run(frame)
    written = run.frame
    assert sample_frequencies(written, ["band", "region", "education"]).min() >= 4
    assert written[["band", "region", "education"]].isna().to_numpy().any()
    pram = {"family": "keys", "method": "invariant-pram", "keys": ["region"],
            "retention": 0.5}
    once, twice = (Recipe(seed=5).add(pram).run(frame).frame for _ in range(2))
    pd.testing.assert_frame_equal(once, twice)
    assert not once["region"].equals(frame["region"])


def test_with_a_weight_the_risk_is_the_individual_risk_of_microagg_risk():
    """A recipe whose schema declares a sampling weight measures the Benedetti-Franconi
    individual risk (the figures of ``microagg risk``), not 1/f_k."""
    from microagg.data.schema import Attribute, Kind, Role, Schema

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"sex": rng.choice(["m", "f"], 300),
                          "region": rng.choice(list("abcdef"), 300),
                          "w": rng.uniform(1, 60, 300)})
    schema = Schema((Attribute("sex", Role.QUASI, Kind.NOMINAL),
                     Attribute("region", Role.QUASI, Kind.NOMINAL),
                     Attribute("w", Role.WEIGHT, Kind.NUMERIC)))
    run = Recipe(schema=schema).run(frame)
    expected = microagg.categorical_risk(frame, ["sex", "region"], weight="w")
    assert run.risk_before.global_risk == pytest.approx(expected.global_risk, rel=1e-12)
    assert run.risk_before.expected_reidentifications == pytest.approx(
        expected.expected_reidentifications, rel=1e-12)
    assert run.risk_before.global_risk < measure_risk(frame, ["sex", "region"]).global_risk
    assert "Benedetti-Franconi" in run.risk_before.measure


def test_without_a_schema_the_risk_is_over_the_keys_the_steps_name():
    """Without a schema, a recipe's risk figures are over the keys its steps name, before and
    after every step (every column as a key would make each record unique); a recipe that
    names no key measures over every column."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"sex": rng.choice(["m", "f"], 400),
                          "region": rng.choice(list("abcdefgh"), 400),
                          "income": rng.lognormal(10, 1, 400)})
    suppress = {"family": "keys", "method": "local-suppression", "k": 3,
                "keys": ["region", "sex"]}
    run = Recipe.from_dict({"steps": [suppress]}).run(frame)
    assert run.risk_before.keys == ["region", "sex"]
    assert run.risk_before.global_risk == pytest.approx(
        measure_risk(frame, ["region", "sex"]).global_risk, rel=1e-12)
    assert run.results[0].measured.value().keys == ["region", "sex"]
    assert run.risk_before.global_risk < measure_risk(frame, list(frame.columns)).global_risk
    unnamed = Recipe.from_dict({"steps": [{"family": "mask", "method": "top-bottom-coding",
                                           "columns": ["income"], "top": 1e5}]}).run(frame)
    assert unnamed.risk_before.keys == list(frame.columns)


def test_a_step_counts_its_records_up_to_the_table_across_strata(data):
    """``then(records=)`` hears the records a k-anonymity step has clustered, rising to every
    record of the table even when each stratum is clustered on its own; a family that does
    not count them (masking) says nothing."""
    schema = data.schema.with_roles({"region": "stratum"})
    heard: list[int] = []
    run = Recipe(schema=schema).run(data.frame).then(MDAV5, records=heard.append)
    assert heard and heard[-1] == len(data.frame)
    assert heard == sorted(heard)
    strata = data.frame["region"].value_counts().sort_index().to_numpy()
    assert len(strata) > 1 and max(heard) > strata.max()  # the later strata count on
    assert run.results[0].risk.fk.min() >= 5
    quiet: list[int] = []
    run.then(SWAP, records=quiet.append)
    assert quiet == []


@pytest.mark.parametrize("data", [
    {"input": "a.csv", "steps": "microaggregate"},
    {"input": "a.csv", "steps": []},
    {"input": 5, "steps": [{"family": "mask"}]},
    {"input": "a.csv", "schema": 7, "steps": [{"family": "mask"}]},
    {"input": "a.csv", "steps": [{"method": "mdav"}]},
    {"input": "a.csv", "read": {"sepparator": ";"}, "steps": [{"family": "microaggregate",
                                                               "method": "mdav", "k": 3}]},
])
def test_a_malformed_recipe_names_its_keys_not_flags(data):
    """The keys of a recipe file are no command-line options: a refusal names them as the
    file writes them, also once the command line has said it in its words."""
    from microagg.errors import MicroaggError
    from microagg.release.flags import render

    with pytest.raises(MicroaggError) as caught:
        Recipe.from_dict(data)
    said = render(str(caught.value))
    assert "--" not in said and "'" in said, said
