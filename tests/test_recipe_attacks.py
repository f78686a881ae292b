"""A recipe's ``attacks`` section: parsed and refused in one line naming its field, its
figures those of ``microagg evaluate --attacks`` on the same pair and seed, and none of them
beside a differentially private release."""

from __future__ import annotations

import json

import pytest
import yaml

import microagg
from microagg.errors import InputError
from microagg.recipe import Recipe
from microagg.recipe.attacks import RecipeAttacks

MDAV = {"family": "microaggregate", "method": "mdav", "k": 5}
DP = {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["age", "income"],
      "bounds": {"age": [16, 100], "income": [0, 200000]}}
ASKED = {"kinds": ["singling-out", "linkability", "inference"], "control": "held.csv",
         "secret": ["income", "region"], "linkability_columns": [["age", "region"],
                                                                 ["income", "education"]],
         "n": 120, "seed": 3}


def _files(tmp_path, steps, attacks):
    """The input, the held-out control records and the recipe, written in ``tmp_path``."""
    data = microagg.datasets.synthetic(400, 2, seed=0)
    data.frame.iloc[:300].to_csv(tmp_path / "in.csv", index=False)
    data.frame.iloc[300:].to_csv(tmp_path / "held.csv", index=False)
    recipe = Recipe(input=tmp_path / "in.csv", schema=data.schema, seed=1)
    for step in steps:
        recipe = recipe.add(step)
    document = {**recipe.to_dict(tmp_path), "attacks": attacks}
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.mark.parametrize(("spec", "field"), [
    ({"control": "held.csv"}, "'kinds'"),
    ({"kinds": ["membership"], "control": "held.csv"}, "'kinds'"),
    ({"kinds": ["inference"]}, "'control'"),
    ({"kinds": ["inference"], "control": "held.csv", "n": 0}, "'n'"),
    ({"kinds": ["inference"], "control": "held.csv", "n": True}, "'n'"),
    ({"kinds": ["inference"], "control": "held.csv", "seed": -1}, "'seed'"),
    ({"kinds": ["inference"], "control": "held.csv", "secret": [1]}, "'secret'"),
    ({"kinds": ["linkability"], "control": "held.csv", "secret": ["age"]}, "'secret'"),
    ({"kinds": ["linkability"], "control": "held.csv", "linkability_columns": [["a"]]},
     "'linkability_columns'"),
    ({"kinds": ["inference"], "control": "held.csv", "linkability_columns": [["a"], ["b"]]},
     "'linkability_columns'"),
    ({"kinds": ["inference"], "control": "held.csv", "secrets": ["age"]}, "'secrets'"),
    (["inference"], "'attacks' is a mapping"),
])
def test_a_wrong_section_is_refused_in_one_line_naming_its_field(spec, field):
    with pytest.raises(InputError) as refused:
        Recipe.from_dict({"steps": [MDAV], "attacks": spec})
    said = str(refused.value)
    assert field in said and "\n" not in said and said.startswith("the recipe's 'attacks'")


def test_the_section_is_read_back_as_it_was_written(tmp_path):
    section = RecipeAttacks.of(ASKED, tmp_path)
    assert section.control == tmp_path / "held.csv"
    assert section.linkability_columns == (("age", "region"), ("income", "education"))
    assert RecipeAttacks.of(section.to_dict(tmp_path), tmp_path) == section
    recipe = Recipe.from_dict({"steps": [MDAV], "attacks": ASKED}, tmp_path)
    assert Recipe.from_dict(yaml.safe_load(recipe.dumps(tmp_path)), tmp_path) == recipe
    default = RecipeAttacks.of({"kinds": "inference", "control": "held.csv"})
    assert (default.kinds, default.secret, default.n, default.seed) == (("inference",), None,
                                                                        500, None)


def test_a_run_writes_the_figures_evaluate_gives_and_reads_them_in_words(tmp_path, run_cli):
    recipe = _files(tmp_path, [MDAV], ASKED)
    done = run_cli("run", recipe, "-o", tmp_path / "out.csv", "--report",
                   tmp_path / "out.html")
    assert done.code == 0, done.stderr
    report = json.loads((tmp_path / "out.csv.report.json").read_text())
    evaluated = run_cli("evaluate", tmp_path / "in.csv", tmp_path / "out.csv", "--control",
                        tmp_path / "held.csv", "--attacks", ",".join(ASKED["kinds"]),
                        "--secret", "income,region", "--linkability-columns",
                        "age,region|income,education", "--attacks-n", "120", "--seed", "3",
                        "--json")
    assert evaluated.code == 0, evaluated.stderr
    assert report["attacks"] == json.loads(evaluated.stdout)["attacks"]
    assert set(report["attacks"]["inference"]) == {"income", "region"}
    page = (tmp_path / "out.html").read_text()
    linked = report["attacks"]["linkability"]["risk"]
    assert (f"for {100 * linked:.3g} % of the people in the release that the same attack "
            "fails to link") in page
    said = page.split('id="attacks-in-words"')[1].split("</ul>")[0]
    assert said.count("<li>") == 5  # two singling-out modes, linkability, two secrets
    assert "in words" in done.stdout  # the owner's run prints them
    # the recipe as run keeps the section: the same figures again
    again = run_cli("run", tmp_path / "out.csv.recipe.yaml", "-o", tmp_path / "again.csv")
    assert again.code == 0, again.stderr
    assert json.loads((tmp_path / "again.csv.report.json").read_text())["attacks"] == \
        report["attacks"]


def test_a_bad_control_stops_the_run_before_any_step(tmp_path, run_cli):
    recipe = _files(tmp_path, [MDAV], {**ASKED, "secret": ["salary"]})
    refused = run_cli("run", recipe, "-o", tmp_path / "out.csv")
    assert refused.code == 2 and "'secret'" in refused.stderr and "salary" in refused.stderr
    recipe = _files(tmp_path, [MDAV], {**ASKED, "control": "other.csv"})
    import pandas as pd

    pd.read_csv(tmp_path / "held.csv").drop(columns="age").to_csv(tmp_path / "other.csv",
                                                                  index=False)
    refused = run_cli("run", recipe, "-o", tmp_path / "out.csv")
    assert refused.code == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "'control'" in refused.stderr and not (tmp_path / "out.csv").exists()
    # the control is an input: no output may replace it
    recipe = _files(tmp_path, [MDAV], ASKED)
    kept = (tmp_path / "held.csv").read_bytes()
    refused = run_cli("run", recipe, "-o", tmp_path / "held.csv")
    assert refused.code == 2 and (tmp_path / "held.csv").read_bytes() == kept


def test_a_dp_recipe_publishes_no_attack_and_the_owner_report_holds_them(tmp_path, run_cli):
    recipe = _files(tmp_path, [DP], {**ASKED, "kinds": ["inference"],
                                     "secret": ["income"], "linkability_columns": None})
    done = run_cli("run", recipe, "-o", tmp_path / "dp.csv", "--report", tmp_path / "dp.html",
                   "--owner-report", tmp_path / "owner.json")
    assert done.code == 0, done.stderr
    owner = json.loads((tmp_path / "owner.json").read_text())
    assert set(owner["attacks"]) == {"inference"} and "attacks" in owner["recipe"]
    for name in ("dp.csv.report.json", "dp.csv.recipe.yaml", "dp.csv.privacy.json",
                 "dp.html"):
        text = (tmp_path / name).read_text()
        assert "attack" not in text.lower() and "held.csv" not in text, name
        assert "guesses the person" not in text, name
    assert "attack" not in done.stdout.lower() and "in words" not in done.stdout
    assert "--owner-report only" not in done.stderr
    printed = run_cli("run", recipe, "-o", tmp_path / "j.csv", "--json")
    assert printed.code == 0 and "attacks" not in json.loads(printed.stdout)
    # without --owner-report the run says where the attacks go (of the recipe, not the data)
    assert "measured into --owner-report only" in printed.stderr
