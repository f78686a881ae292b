"""A step's output kinds flow into the next step of a recipe (global recoding makes a column
categorical), and which recodings keep a DP step's guarantee for the recipe's input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg.core.recoding import interval_labels
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.data.taxonomy import Taxonomy
from microagg.errors import PrivacyError
from microagg.recipe import Recipe
from microagg.recipe.composition import dp_context
from microagg.recipe.model import Step
from microagg.release.methods.global_recoding import GlobalRecoding

TAXONOMY = Path(__file__).parent / "data" / "abc_taxonomy.csv"
SCHEMA = Schema((
    Attribute("age", Role.QUASI, Kind.NUMERIC, domain=(0, 120), missing=35),
    Attribute("hours", Role.QUASI, Kind.NUMERIC, domain=(0, 99)),
    Attribute("c", Role.QUASI, Kind.NOMINAL, domain=("a", "b", "c"), taxonomy=TAXONOMY,
              missing="c"),
))
BREAKS = [-np.inf, 30, 40, 50, np.inf]


def _frame(rows: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"age": rng.integers(17, 90, rows), "hours": rng.integers(1, 99, rows),
                         "c": rng.choice(["a", "b"], rows)})  # no 'c': the level keeps it


def test_a_recoded_column_is_categorical_for_every_step_after_it():
    run = Recipe(schema=SCHEMA).run(_frame()).then(
        {"family": "keys", "method": "global-recoding", "breaks": {"age": BREAKS},
         "levels": {"c": 1}})
    assert run.schema is not None and run.recipe.schema == SCHEMA  # the input's stays
    age, c = run.schema["age"], run.schema["c"]
    assert age.kind is Kind.ORDINAL and age.domain == tuple(interval_labels(BREAKS))
    assert set(run.frame["age"].astype(str)) <= set(age.domain)
    # every concept of the level, not only those the data hold; the declared missing value
    # recoded with its column
    assert c.kind is Kind.NOMINAL and set(c.domain) == {"a or b", "c alone"}
    assert c.missing == "c alone" and age.missing == "[30, 40)"
    after = run.then({"family": "microaggregate", "method": "mdav", "k": 5,
                      "columns": ["hours"]})
    assert (after.frame["age"].astype(str) == run.frame["age"].astype(str)).all()
    assert after.results[-1].risk.n == len(run.frame)
    assert after.undo().schema == run.schema


def test_the_schema_after_recoding_follows_the_declarations_not_the_data():
    method = GlobalRecoding(breaks={"age": [0, 18, 120]}, levels={"c": 1})
    out = method.output_schema(SCHEMA)
    assert out["age"].domain == ("[0, 18)", "[18, 120]") and out["hours"] == SCHEMA["hours"]
    assert GlobalRecoding(breaks={"age": [0, 18, 120]}, closed="right").output_schema(
        SCHEMA)["age"].domain == ("[0, 18]", "(18, 120]")
    # a declared missing value beyond the breaks maps to nothing
    assert GlobalRecoding(breaks={"age": [40, 120]}).output_schema(SCHEMA)["age"].missing \
        is None


LAPLACE = {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["hours"]}


@pytest.mark.parametrize("recode", [{"breaks": {"age": BREAKS}}, {"levels": {"c": 1}}])
def test_a_recoding_fixed_in_advance_keeps_the_guarantee_for_the_input(recode):
    step = Step.of({"family": "keys", "method": "global-recoding", **recode})
    context = dp_context(Step.of(LAPLACE), [step])
    assert context is not None and context.holds_for_input


def test_finite_outer_breaks_refuse_the_dp_step_with_the_rule():
    step = Step.of({"family": "keys", "method": "global-recoding",
                    "breaks": {"age": [0, 30, 120]}})
    with pytest.raises(PrivacyError) as caught:
        dp_context(Step.of(LAPLACE), [step])
    message = str(caught.value)
    assert "-inf and inf" in message and "taxonomy" in message
    assert "'protects: step-input'" in message
    assert "\n" not in message
    context = dp_context(Step.of({**LAPLACE, "protects": "step-input"}), [step])
    assert context is not None and not context.holds_for_input


def test_a_dp_step_on_recoded_intervals_is_dp_for_the_input():
    frame = _frame()
    run = Recipe(schema=SCHEMA).run(frame).then(
        {"family": "keys", "method": "global-recoding", "breaks": {"age": BREAKS}}).then(
        {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["age", "hours"]})
    assert run.privacy is not None and run.privacy.differentially_private
    assert set(run.frame["age"].astype(str)) <= set(interval_labels(BREAKS))
    assert len(run.frame) == len(frame)


OCCUPATIONS = """\
Tech-support;Technical;Employed;*
Craft-repair;Technical;Employed;*
Sales;Nontechnical;Employed;*
Exec-managerial;Nontechnical;Employed;*
Other-service;Other;Not employed;*
"""


def test_a_coarser_level_follows_a_level_recoding_as_the_two_levels_at_once(tmp_path):
    path = tmp_path / "occupation.csv"
    path.write_text(OCCUPATIONS, encoding="utf-8")
    leaves = [line.split(";")[0] for line in OCCUPATIONS.splitlines()]
    schema = Schema((Attribute("occupation", Role.QUASI, Kind.NOMINAL, taxonomy=path,
                               missing="Other-service"),
                     Attribute("hours", Role.QUASI, Kind.NUMERIC, domain=(0, 99))))
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"occupation": rng.choice(leaves, 80), "hours": rng.integers(1, 99, 80)})
    recode = {"family": "keys", "method": "global-recoding"}
    once = Recipe(schema=schema).run(frame).then({**recode, "levels": {"occupation": 1}})
    kept = once.schema["occupation"]
    # the recoded column keeps the taxonomy above its level: its leaves are the categories
    assert kept.taxonomy is not None and kept.taxonomy != path
    assert Taxonomy.load(kept.taxonomy).leaves == kept.domain
    assert kept.missing == "Other" and path.read_text(encoding="utf-8") == OCCUPATIONS
    twice = once.then({**recode, "levels": {"occupation": 1}})
    direct = Recipe(schema=schema).run(frame).then({**recode, "levels": {"occupation": 2}})
    assert (twice.frame["occupation"].astype(str)
            == direct.frame["occupation"].astype(str)).all()
    assert twice.schema["occupation"].domain == direct.schema["occupation"].domain
    assert twice.schema["occupation"].missing == direct.schema["occupation"].missing
    top = twice.then({**recode, "levels": {"occupation": 1}}).schema["occupation"]
    assert top.domain == ("*",) and top.taxonomy is None  # the root alone is no tree
    # each recoding maps a record on its own: a DP step after both keeps the guarantee
    steps = [Step.of({**recode, "levels": {"occupation": 1}})] * 2
    context = dp_context(Step.of(LAPLACE), steps)
    assert context is not None and context.holds_for_input
