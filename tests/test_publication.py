"""What a path may publish beside a DP release (microagg.release.reports.disclosure): one test per
leak found on the recipe, app and schema paths, the composition of DP steps in a recipe, the
seed, categories read off the data, declared missing values checked against the taxonomy,
and the declaration itself (an undeclared figure cannot be written)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

import microagg
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import PrivacyError, SchemaError
from microagg.recipe import Recipe
from microagg.release.reports.disclosure import Audience, UndeclaredField, public, view

DP = {"family": "dp", "method": "laplace", "epsilon": 0.5, "columns": ["age"],
      "bounds": {"age": [0, 120]}}


def _recipe(tmp_path, steps, seed=None, schema=None):
    data = microagg.datasets.synthetic(300, 2, seed=0)
    data.frame.to_csv(tmp_path / "in.csv", index=False)
    recipe = Recipe(input=tmp_path / "in.csv", schema=schema or data.schema, seed=seed)
    for step in steps:
        recipe = recipe.add(step)
    path = tmp_path / "r.yaml"
    path.write_text(recipe.dumps(tmp_path))
    return path


def test_a_dp_recipe_writes_no_hash_of_its_input(tmp_path, run_cli):
    """L1: OUT.recipe.yaml and OUT.report.json of a DP recipe held the input's SHA-256,
    which confirms a guess of the whole input; a recipe without a DP step keeps it (the
    owner's file, as every k-anonymous release's report)."""
    done = run_cli("run", _recipe(tmp_path, [DP]), "-o", tmp_path / "out.csv")
    assert done.code == 0, done.stderr
    for name in ("out.csv.recipe.yaml", "out.csv.report.json", "out.csv.privacy.json"):
        text = (tmp_path / name).read_text()
        assert "sha256" not in text and '"bytes"' not in text, name
    mdav = {"family": "microaggregate", "method": "mdav", "k": 5}
    done = run_cli("run", _recipe(tmp_path, [mdav]), "-o", tmp_path / "k.csv")
    assert done.code == 0, done.stderr
    kept = yaml.safe_load((tmp_path / "k.csv.recipe.yaml").read_text())
    assert len(kept["input"]["sha256"]) == 64


def test_a_seeded_dp_run_is_not_dp_in_every_top_level_field(tmp_path, run_cli):
    """L2 and the seed rule: a seeded DP release says it is not DP at the top, not only in a
    list of weaknesses, and the recipe written beside it holds no seed."""
    done = run_cli("run", _recipe(tmp_path, [DP], seed=7), "-o", tmp_path / "out.csv")
    assert done.code == 0, done.stderr
    privacy = json.loads((tmp_path / "out.csv.privacy.json").read_text())
    assert privacy["differentially_private"] is False
    assert privacy["guarantee"].startswith("The released table is NOT differentially private")
    step = privacy["steps"][0]["record"]
    assert step["differentially_private"] is False and step["guarantee_scope"] == "none"
    assert "seed" in step["guarantee"].split(".")[0]
    assert "seed" not in yaml.safe_load((tmp_path / "out.csv.recipe.yaml").read_text())
    single = run_cli("dp", tmp_path / "in.csv", "-o", tmp_path / "d.csv", "--method",
                     "laplace", "--epsilon", "1", "--columns", "age", "--bounds",
                     "age=0:120", "--seed", "3", "--json")
    assert json.loads(single.stdout)["differentially_private"] is False


def test_a_dp_step_that_reads_a_carried_column_spends_again(tmp_path, run_cli):
    """L3: step 1 carries a raw column, step 2 protects it: step 2 reads the input, so the
    table's ε is the sum, in the top-level fields and in words."""
    first = {**DP, "carry": ["income"]}
    second = {**DP, "epsilon": 1.0, "columns": ["age", "income"],
              "bounds": {"age": [0, 120], "income": [0, 200000]}}
    done = run_cli("run", _recipe(tmp_path, [first, second]), "-o", tmp_path / "out.csv")
    assert done.code == 0, done.stderr
    privacy = json.loads((tmp_path / "out.csv.privacy.json").read_text())
    assert privacy["epsilon"] == 1.5 and privacy["differentially_private"] is True
    assert [s["spends"] for s in privacy["steps"]] == [True, True]
    assert "sequential composition" in privacy["steps"][1]["context"]
    assert "1.5-differential privacy" in privacy["guarantee"]
    # the carried column left raw: the table is not DP, said at the top
    kept = {**second, "columns": ["age"], "bounds": {"age": [0, 120]}, "carry": ["income"]}
    done = run_cli("run", _recipe(tmp_path, [first, kept]), "-o", tmp_path / "raw.csv")
    privacy = json.loads((tmp_path / "raw.csv.privacy.json").read_text())
    assert privacy["differentially_private"] is False
    assert privacy["guarantee_scope"] == "protected columns"
    # nothing raw left: a later DP step is post-processing and spends nothing
    clean = Recipe(schema=microagg.datasets.synthetic(300, 2, seed=0).schema).add(DP).add(
        {**DP, "epsilon": 3.0})
    run = clean.run(microagg.datasets.synthetic(300, 2, seed=0).frame)
    assert run.privacy.epsilon == 0.5 and run.privacy.spending_steps == [1]


def test_composing_dp_steps_needs_one_unit(tmp_path):
    data = microagg.datasets.synthetic(300, 2, seed=0)
    first = {**DP, "carry": ["income"]}
    with pytest.raises(PrivacyError, match="household_size"):
        Recipe(schema=data.schema).add(first).add(
            {**DP, "columns": ["income"], "bounds": {"income": [0, 2e5]},
             "household_size": 2}).run(data.frame)


def test_run_prints_no_figure_of_the_raw_input_after_a_dp_step(tmp_path, run_cli):
    """L4 and L5: stdout, OUT.report.json and the HTML report of a DP recipe hold no risk of
    the raw input (nor of any step); the owner gets them when asking, in a file of their
    own."""
    recipe = _recipe(tmp_path, [DP])
    done = run_cli("run", recipe, "-o", tmp_path / "out.csv", "--report",
                   tmp_path / "out.html", "--owner-report", tmp_path / "owner.json")
    assert done.code == 0, done.stderr
    for text in (done.stdout, (tmp_path / "out.html").read_text()):
        assert "re-identification" not in text and "global risk" not in text
    report = json.loads((tmp_path / "out.csv.report.json").read_text())
    assert "risk_before" not in report
    assert all(set(step) >= {"parameters", "dp_context"} and "risk_after" not in step
               and "seconds" not in step for step in report["steps"])
    owner = json.loads((tmp_path / "owner.json").read_text())
    assert owner["risk_before"]["n"] == 300 and "risk_after" in owner["steps"][0]
    assert len(owner["input"]["sha256"]) == 64
    printed = run_cli("run", recipe, "-o", tmp_path / "j.csv", "--json")
    assert "risk_before" not in json.loads(printed.stdout)


def test_a_missing_value_outside_the_taxonomy_is_refused_when_the_schema_is_read(tmp_path):
    """L6: `missing: V` with V not a leaf of the column's taxonomy was accepted, and the
    release then succeeded exactly when no cell was missing."""
    (tmp_path / "tax.csv").write_text("a;*\nb;*\n")
    (tmp_path / "s.yaml").write_text(
        "attributes:\n  c: {role: quasi, kind: nominal, taxonomy: tax.csv, missing: z}\n")
    with pytest.raises(SchemaError, match="not a leaf of its taxonomy"):
        Schema.load(tmp_path / "s.yaml")
    (tmp_path / "s.yaml").write_text(
        "attributes:\n  c: {role: quasi, kind: nominal, taxonomy: tax.csv, missing: b}\n")
    assert Schema.load(tmp_path / "s.yaml")["c"].missing == "b"


def _parquet(tmp_path):
    frame = pd.DataFrame({"age": np.arange(20, 80), "country": pd.Categorical(
        ["cuba", "peru"] * 29 + ["zz", "peru"])})
    frame.to_parquet(tmp_path / "in.parquet", index=False)
    return tmp_path / "in.parquet"


def test_categories_read_off_a_parquet_file_stay_observed(tmp_path, run_cli):
    """L8: `microagg schema` wrote the categories of a Parquet column as its declared
    domain, which `dp --schema` then took; they are written as observed and refused for DP
    until the owner lists them under `domain`."""
    source = _parquet(tmp_path)
    done = run_cli("schema", source, "-o", tmp_path / "s.yaml")
    assert done.code == 0, done.stderr
    written = yaml.safe_load((tmp_path / "s.yaml").read_text())["attributes"]["country"]
    assert written["observed"] == ["cuba", "peru", "zz"] and "domain" not in written
    refused = run_cli("dp", source, "-o", tmp_path / "d.csv", "--schema", tmp_path / "s.yaml",
                      "--method", "insensitive", "--epsilon", "1", "--k", "5", "--columns",
                      "country")
    assert refused.code == 2 and "observed in the data" in refused.stderr
    assert not (tmp_path / "d.csv").exists()
    text = (tmp_path / "s.yaml").read_text().replace("observed:", "domain:")
    (tmp_path / "s.yaml").write_text(text)
    declared = run_cli("dp", source, "-o", tmp_path / "d.csv", "--schema",
                       tmp_path / "s.yaml", "--method", "insensitive", "--epsilon", "1",
                       "--k", "5", "--columns", "country")
    assert declared.code == 0, declared.stderr


def test_the_schema_command_declares_no_role_read_off_the_values(tmp_path, run_cli):
    """`microagg schema` wrote a column whose values were all distinct (or numbered the rows)
    as an identifier, which `dp --schema` then dropped; one record repeating a value made it
    a quasi-identifier, protected and refused for want of a domain. Roles come from the names;
    what the values suggest is said, as a comment."""
    frame = pd.DataFrame({"age": np.arange(20, 60), "code": [f"c{i}" for i in range(40)],
                          "num": np.arange(1, 41), "wgt": np.ones(40)})
    other = frame.copy()
    other.loc[0, ["code", "num"]] = ["c1", 2]
    declared = []
    for i, table in enumerate((frame, other)):
        table.to_csv(tmp_path / f"in{i}.csv", index=False)
        done = run_cli("schema", tmp_path / f"in{i}.csv", "-o", tmp_path / f"s{i}.yaml")
        assert done.code == 0, done.stderr
        declared.append(yaml.safe_load((tmp_path / f"s{i}.yaml").read_text()))
    assert declared[0] == declared[1]
    assert declared[0]["attributes"]["wgt"]["role"] == "weight"  # its name says so
    assert "code: role identifier" in (tmp_path / "s0.yaml").read_text()


def test_a_recipe_on_parquet_publishes_no_category_read_off_the_data(tmp_path):
    """L7: the app's recipe held the categories of a Parquet column, even one the DP step
    dropped; the public recipe leaves them out, the owner's keeps them as observed."""
    from microagg.data.io import read_table
    from microagg.recipe.write import recipe_text
    from microagg.release.reports.disclosure import Audience

    frame = read_table(_parquet(tmp_path))
    schema = Schema.infer(frame, default_role=Role.QUASI)
    assert schema["country"].observed
    run = Recipe(schema=schema).add(DP).run(frame)
    assert "zz" not in recipe_text(run) and "observed" not in recipe_text(run)
    assert "zz" in recipe_text(run, audience=Audience.OWNER)


def test_a_dask_release_with_an_unbounded_household_says_group_privacy(tmp_path):
    pytest.importorskip("distributed")
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import open_dataset
    from microagg.at_scale.dp import dp_release_at_scale
    from microagg.release.methods import DPIndividualRanking

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"hh": np.repeat(np.arange(50), 2), "x": rng.uniform(0, 1, 100)})
    frame.to_parquet(tmp_path / "part-0.parquet", index=False)
    schema = Schema((Attribute("hh", Role.HOUSEHOLD, Kind.NUMERIC),
                     Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1))))
    with dask_client(None, 1) as client:
        release = dp_release_at_scale(client, open_dataset(tmp_path / "part-0.parquet"),
                                      tmp_path / "out", DPIndividualRanking(epsilon=1.0, k=5),
                                      columns=["x"], schema=schema)
    assert "group privacy" in release.report.guarantee
    assert "households (column hh)" in release.report.guarantee


def test_the_declaration_refuses_an_undeclared_figure():
    """Every document a release writes is declared key by key: a new key that is not
    declared cannot reach a file, and each audience sees its own part."""
    record = {"format": "microagg-report/1", "method": "mdav",
              "input": {"name": "d.csv", "bytes": 10, "sha256": "ab"},
              "risk": {"before": {"unique_percent": 9.0}, "after": {"records": 3}},
              "utility": {"sse_percent": 1.5, "jsd": 0.1}}
    assert public(record) == {"format": "microagg-report/1", "method": "mdav",
                              "input": {"name": "d.csv"}, "risk": {"after": {"records": 3}}}
    assert view(record, Audience.EXTERNAL)["utility"] == {"sse_percent": 1.5}
    assert view(record, Audience.OWNER) == record
    with pytest.raises(UndeclaredField, match=r"risk\.after\.secret"):
        view({**record, "risk": {"after": {"secret": 1}}}, Audience.OWNER)


def test_a_step_before_a_dp_step_names_its_columns():
    """With its default columns, which columns a step reads follows the data (their kinds,
    the roles read off them), so one record could decide whether the recipe runs: a step
    before a DP step names them, or the DP step is refused whatever the data."""
    data = microagg.datasets.synthetic(300, 2, seed=0)
    coding = {"family": "mask", "method": "top-bottom-coding", "top": 100.0}
    with pytest.raises(PrivacyError, match="does not name the columns"):
        Recipe(schema=data.schema).add(coding).add(DP).run(data.frame)
    named = Recipe(schema=data.schema).add({**coding, "columns": ["age"]}).add(DP)
    assert named.run(data.frame).privacy.differentially_private


def test_the_papers_calibration_states_the_epsilon_it_spends(tmp_path, run_cli):
    """Each of m attributes spends the full epsilon: the report's epsilon is m times it,
    as its sentence says (the field was the nominal epsilon)."""
    data = microagg.datasets.synthetic(300, 3, seed=0)
    release = microagg.dp_insensitive(data.frame, epsilon=1.0, k=10, schema=data.schema,
                                      columns=["age", "income", "expenses"],
                                      calibration="paper", rng=np.random.default_rng(0))
    report = release.report
    assert report.epsilon == report.unit_epsilon == 3.0
    assert "3-differential privacy" in report.guarantee
    run = Recipe(schema=data.schema).add(
        {"family": "dp", "method": "insensitive", "epsilon": 1.0, "k": 10,
         "calibration": "paper", "columns": ["age", "income", "expenses"]}).run(data.frame)
    assert run.privacy.epsilon == 3.0


def test_a_recipe_with_an_unbounded_household_says_group_privacy():
    """A household column without a bound: each DP step's report says that a household is
    protected by group privacy only; the recipe's top-level guarantee said "unit of privacy:
    one record" and nothing of the households."""
    data = microagg.datasets.synthetic(300, 2, seed=0)
    frame = data.frame.assign(hh=np.arange(300) // 3)
    schema = Schema((*data.schema, Attribute("hh", Role.HOUSEHOLD, Kind.NOMINAL)))
    run = Recipe(schema=schema).add(DP).run(frame)
    step = run.results[0].release.report.guarantee
    assert "group privacy" in step and "hh" in step
    assert step[step.index("The unit of privacy"):] in run.privacy.guarantee
    assert run.privacy.guarantee.count("group privacy") == 1


def test_no_dp_step_takes_an_epsilon_a_comparison_calibrated_on_the_records():
    """The comparison tab applied dp-laplace as a step with the epsilon it calibrated to a
    rank risk measured against the records: one record moved that epsilon (on declared
    domains), and the recipe and privacy report published it. A DP candidate is not
    offered as a step."""
    from microagg.errors import InputError
    from microagg.evaluation.as_step import applicable, step_spec
    from microagg.evaluation.compare import compare
    from microagg.options import CompareMethod

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.uniform(0, 10, 60).round(2),
                          "b": rng.uniform(0, 10, 60).round(2)})
    schema = Schema(tuple(Attribute(c, Role.QUASI, Kind.NUMERIC, domain=(0, 10))
                          for c in "ab"))
    calibrated = set()
    for record in ([0.0, 0.0], [0.0, 10.0]):
        neighbour = frame.copy()
        neighbour.loc[0, ["a", "b"]] = record
        result = compare(neighbour, target_risk="mdav=3", methods=["dp-laplace"],
                         schema=schema, seeds=2)
        calibrated.add(result.by_method()[CompareMethod.DP_LAPLACE].value)
        assert not applicable(result, CompareMethod.DP_LAPLACE)
        with pytest.raises(InputError, match="calibrated on the records"):
            step_spec(result, "dp-laplace")
    assert len(calibrated) == 2  # what the step would have published


def test_no_value_a_comparison_calibrated_follows_a_dp_step():
    """The comparison tab measures the uploaded records; after a DP step it applied the
    calibrated method as post-processing, and its parameter (rank swap's fraction: 0.25 or
    1.0 as one record lies) was published in the recipe. It is refused there."""
    pytest.importorskip("shiny")
    from microagg.errors import InputError
    from microagg.evaluation.compare import compare
    from microagg.ui.compare_tab import applied_step

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.uniform(0, 10, 60).round(2),
                          "b": rng.uniform(0, 10, 60).round(2)})
    schema = Schema(tuple(Attribute(c, Role.QUASI, Kind.NUMERIC, domain=(0, 10))
                          for c in "ab"))
    steps = []
    for record in ([0.0, 0.0], [10.0, 10.0]):
        neighbour = frame.copy()
        neighbour.loc[0, ["a", "b"]] = record
        result = compare(neighbour, target_risk="mdav=4", methods=["mdav", "rank-swap"],
                         schema=schema, seeds=3)
        assert applied_step(result, "rank-swap", None).family.value == "mask"
        released = Recipe(schema=schema).add(
            {"family": "dp", "method": "laplace", "epsilon": 1.0}).run(neighbour)
        with pytest.raises(InputError, match="after a differentially private step"):
            applied_step(result, "rank-swap", released)
        steps.append(result.by_method()["rank-swap"].value)
    assert steps[0] != steps[1]  # what the recipe would have published


def test_the_scope_names_the_weakest_guarantee():
    """Carried columns with a guarantee about the microaggregated set, or with dropped
    incomplete rows: the scope is the weaker one, not "protected columns"."""
    data = microagg.datasets.synthetic(300, 2, seed=0)
    frame = data.frame.assign(age=data.frame["age"].astype(float))
    frame.loc[0, "age"] = np.nan
    with pytest.warns(microagg.errors.PrivacyLeakWarning):
        dropped = microagg.dp_laplace(frame, epsilon=1.0, schema=data.schema,
                                      columns=["age"], carry=["income"], drop_incomplete=True)
    assert dropped.report.guarantee_scope == "complete rows"
    assert dropped.report.guarantee.startswith("This release is NOT differentially private")


def test_the_public_recipe_keeps_the_roles_a_release_needs(tmp_path, run_cli):
    """The recipe published beside a DP release that protects households keeps the
    household column's role, so that it runs again."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"hh": np.repeat(np.arange(60), 2), "x": rng.uniform(0, 1, 120),
                          "z": rng.integers(0, 9, 120)})
    frame.to_csv(tmp_path / "in.csv", index=False)
    schema = Schema((Attribute("hh", Role.HOUSEHOLD, Kind.NUMERIC),
                     Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1)),
                     Attribute("z", Role.OTHER, Kind.NUMERIC)))
    recipe = Recipe(input=tmp_path / "in.csv", schema=schema).add(
        {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["x"],
         "household_size": 2})
    (tmp_path / "r.yaml").write_text(recipe.dumps(tmp_path))
    done = run_cli("run", tmp_path / "r.yaml", "-o", tmp_path / "out.csv")
    assert done.code == 0, done.stderr
    published = yaml.safe_load((tmp_path / "out.csv.recipe.yaml").read_text())
    assert set(published["schema"]["attributes"]) == {"hh", "x"}  # z: dropped, not named
    again = run_cli("run", tmp_path / "out.csv.recipe.yaml", "-o", tmp_path / "again.csv")
    assert again.code == 0, again.stderr


def test_top_coding_codes_infinite_values_and_keeps_missing_values():
    from microagg.release.methods import TopBottomCoding

    frame = pd.DataFrame({"y": [1.0, np.inf, np.nan, 1e200, 50.0]})
    coded = TopBottomCoding(top=80.0).release(frame).frame["y"].tolist()
    assert coded[:2] == [1.0, 80.0] and np.isnan(coded[2]) and coded[3:] == [80.0, 50.0]


def test_a_dask_release_checks_the_types_of_what_it_reads_only(tmp_path, run_cli):
    pytest.importorskip("distributed")
    folder = tmp_path / "data"
    folder.mkdir()
    first = pd.DataFrame({"x": [1, 0, 1, 0] * 5, "z": list(range(20))})
    second = first.assign(x=[0.5] + [1.0, 0.0, 1.0] * 6 + [0.0], z=["abc"] * 20)
    first.to_parquet(folder / "p0.parquet", index=False)
    second.to_parquet(folder / "p1.parquet", index=False)
    done = run_cli("dp", folder, "-o", tmp_path / "out", "--method", "individual-ranking",
                   "--epsilon", "1", "--k", "5", "--columns", "x", "--bounds", "x=0:1",
                   "--engine", "dask", "--workers", "1")
    assert done.code == 0, done.stderr


def test_a_dp_release_reads_each_cell_alone(tmp_path, run_cli):
    """How a protected cell is read never follows the other cells: a True among numbers
    written with a decimal comma, with or without a schema (bounds declare a column
    numeric), on one machine and on the Dask engine's CSV partitions."""
    rows = [f"{v:.1f}".replace(".", ",") for v in np.linspace(0.1, 0.9, 20)]
    (tmp_path / "a.csv").write_text("x;y\n" + "\n".join(f"{v};1" for v in rows) + "\n")
    (tmp_path / "b.csv").write_text("x;y\n" + "\n".join(
        f"{'True' if i == 0 else v};1" for i, v in enumerate(rows)) + "\n")
    said = set()
    for name in ("a.csv", "b.csv"):
        done = run_cli("dp", tmp_path / name, "-o", tmp_path / f"out-{name}", "--method",
                       "laplace", "--epsilon", "1", "--columns", "x", "--bounds", "x=0:1",
                       "--decimal", ",")
        said.add((done.code, done.stderr))
    (code, stderr), = said  # the same on both: exit 0, the noise's public warning only
    assert code == 0 and "noise on 'x'" in stderr and stderr.count("\n") == 1
    pytest.importorskip("distributed")
    for part, text in (("p0", "1\n0\n1\n0\n1\n"), ("p1", "True\n0\n1\n100000000000000000000\n")):
        (tmp_path / "data").mkdir(exist_ok=True)
        (tmp_path / "data" / f"{part}.csv").write_text("x\n" + text)
    done = run_cli("dp", tmp_path / "data", "-o", tmp_path / "out", "--method",
                   "individual-ranking", "--epsilon", "1", "--k", "3", "--columns", "x",
                   "--bounds", "x=0:1", "--engine", "dask", "--workers", "1")
    assert done.code == 0, done.stderr


def test_categories_of_a_dropped_column_never_stop_a_dp_release(tmp_path, run_cli):
    """Two categories of a column the release drops that are one once stripped ('p' and
    'p ') made the schema refuse the table."""
    frame = pd.DataFrame({"x": np.linspace(0, 1, 6),
                          "d": pd.Categorical(["p", "q", "p ", "q", "p", "q"])})
    frame.to_parquet(tmp_path / "in.parquet", index=False)
    done = run_cli("dp", tmp_path / "in.parquet", "-o", tmp_path / "out.csv", "--method",
                   "laplace", "--epsilon", "1", "--columns", "x", "--bounds", "x=0:1")
    assert done.code == 0, done.stderr


def test_a_step_after_a_dp_step_reads_a_carried_column_as_the_first_would(tmp_path, run_cli):
    """A column step 1 carries is read by step 2 in the input's dialect (decimal comma) and
    by its declared kind, cell by cell, whatever another cell holds."""
    said = set()
    for first in ("0,2", "True"):
        text = "x;y\n" + "\n".join(f"0,{i % 9 + 1};{first if i == 0 else '0,5'}"
                                   for i in range(12)) + "\n"
        (tmp_path / "in.csv").write_text(text)
        (tmp_path / "r.yaml").write_text(
            "input: in.csv\nread: {decimal: ','}\nsteps:\n"
            "  - {family: dp, method: laplace, epsilon: 0.5, columns: [x], carry: [y],"
            " bounds: {x: [0, 1]}}\n"
            "  - {family: dp, method: laplace, epsilon: 0.5, columns: [x, y],"
            " bounds: {x: [0, 1], y: [0, 1]}}\n")
        done = run_cli("run", tmp_path / "r.yaml", "-o", tmp_path / "out.csv")
        said.add(done.code)
    assert said == {0}


def test_the_owners_figures_never_stop_a_release(tmp_path, run_cli):
    """The owner's report measures the risk over every key, a column the release drops
    included: a value the measure cannot read (a list) is said in the owner's report, and
    the release is made as on any neighbour."""
    frame = pd.DataFrame({"x": np.linspace(0, 1, 8), "z": [None] * 7 + [[1]]})
    frame.to_parquet(tmp_path / "in.parquet", index=False)
    (tmp_path / "r.yaml").write_text(
        "input: in.parquet\nsteps:\n  - {family: dp, method: laplace, epsilon: 1,"
        " columns: [x], bounds: {x: [0, 1]}}\n")
    done = run_cli("run", tmp_path / "r.yaml", "-o", tmp_path / "out.csv", "--owner-report",
                   tmp_path / "owner.json")
    assert done.code == 0, done.stderr
    owner = json.loads((tmp_path / "owner.json").read_text())
    assert "not_measured" in owner["risk_before"] or "n" in owner["risk_before"]


def test_a_household_column_takes_no_missing_value():
    with pytest.raises(SchemaError, match="household identifier takes no"):
        Schema.from_dict({"attributes": {"hh": {"role": "household", "missing": 0}}})
