"""``microagg run --engine dask`` (microagg.at_scale.recipe) on a LocalCluster of 2 workers:
the deterministic steps give one machine's table and risk figures, seeded steps repeat, what
cannot run there is refused before anything is written, and no step's data set outlives the
run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

SCHEMA = """schema:
  attributes:
    region: {kind: nominal, role: quasi, taxonomy: regions.yaml}
    edu: {kind: nominal, role: quasi}
    age: {kind: numeric, role: quasi}
    income: {kind: numeric, role: other}
    x: {kind: numeric, role: other}
"""


@pytest.fixture
def survey(tmp_path):
    """Two Parquet files of keys (some missing) and numbers, the whole table as one file, and
    the taxonomy a recipe's schema names."""
    rng = np.random.default_rng(11)
    n = 3000
    frame = pd.DataFrame({
        "region": rng.choice(["north", "south", "east", "west"], n),
        "edu": rng.choice(["low", "mid", "high"], n, p=[0.5, 0.4, 0.1]),
        "age": rng.integers(16, 90, n).astype(float),
        "income": np.round(rng.gamma(2.0, 3.0, n), 1), "x": rng.normal(size=n)})
    frame.loc[rng.random(n) < 0.03, "edu"] = None
    folder = tmp_path / "in"
    folder.mkdir()
    frame.iloc[:1200].to_parquet(folder / "part-0.parquet", index=False)
    frame.iloc[1200:].to_parquet(folder / "part-1.parquet", index=False)
    frame.to_parquet(tmp_path / "all.parquet", index=False)
    (tmp_path / "regions.yaml").write_text("any:\n  north-west: [north, west]\n"
                                           "  south-east: [south, east]\n")
    return folder, frame


def _recipe(tmp_path, steps: str, extra: str = "") -> str:
    path = tmp_path / "recipe.yaml"
    path.write_text(f"format: microagg-recipe/1\ninput: all.parquet\n{extra}{SCHEMA}"
                    f"steps:\n{steps}")
    return str(path)


DETERMINISTIC = """  - {family: keys, method: global-recoding, levels: {region: 1},
     breaks: {age: [-.inf, 30, 45, 60, .inf]}}
  - {family: keys, method: local-suppression, k: 15}
  - {family: mask, method: top-bottom-coding, top: 12, bottom: 1, columns: [income]}
"""


def _hidden(folder) -> list[str]:
    return [p.name for p in folder.iterdir() if ".microagg-" in p.name]


def test_a_recipe_on_the_cluster_is_the_recipe_on_one_machine(client, survey, tmp_path,
                                                              run_cli):
    folder, whole = survey
    recipe = _recipe(tmp_path, DETERMINISTIC)
    cluster = ["--engine", "dask", "--scheduler", client.scheduler.address]
    done = run_cli("run", recipe, "--input", folder, "-o", tmp_path / "out", *cluster)
    assert done.code == 0, done.stderr
    local = run_cli("run", recipe, "-o", tmp_path / "local.parquet")
    assert local.code == 0, local.stderr
    ours, theirs = pd.read_parquet(tmp_path / "out"), pd.read_parquet(tmp_path / "local.parquet")
    assert ours.astype(str).equals(theirs.astype(str))
    assert set(ours["region"].dropna()) == {"north-west", "south-east"}
    assert ours["income"].max() <= 12 and ours["income"].min() >= 1
    assert ours["x"].equals(whole["x"])  # a column no step names, kept in order
    report = json.loads((tmp_path / "out.report.json").read_text())
    reference = json.loads((tmp_path / "local.parquet.report.json").read_text())
    assert report["keys"] == reference["risk_before"]["keys"] == ["region", "edu", "age"]
    pairs = [(report["risk_before"], reference["risk_before"])] + [
        (a["risk_after"], b["risk_after"]) for a, b in zip(report["steps"], reference["steps"],
                                                           strict=True)]
    for figures, expected in pairs:
        assert figures["n"] == expected["n"] == len(whole)
        for name in ("global_risk", "expected_reidentifications"):
            assert figures[name] == pytest.approx(expected[name], rel=1e-12), name
        assert figures["violations"] == {str(k): v for k, v in expected["violations"].items()}
    assert report["steps"][1]["report"]["k_anonymity"]["holds"]
    assert [s["method"] for s in report["steps"]] == [
        "global-recoding", "local-suppression", "top-bottom-coding"]
    assert report["steps"][2]["parameters"] == {"top": 12, "bottom": 1}
    assert report["steps"][2]["options"] == {"columns": ["income"]}
    assert not _hidden(tmp_path)  # the steps' data sets are gone
    # the recipe as run, run again, gives the same table
    again = run_cli("run", tmp_path / "out.recipe.yaml", "-o", tmp_path / "again", *cluster)
    assert again.code == 0, again.stderr
    assert pd.read_parquet(tmp_path / "again").astype(str).equals(ours.astype(str))


def test_a_seeded_recipe_draws_the_same_tables_again(client, survey, tmp_path, run_cli):
    folder, whole = survey
    steps = """  - {family: microaggregate, method: mdav, k: 4, columns: [income, x]}
  - {family: keys, method: invariant-pram, keys: [edu]}
  - {family: mask, method: multiplicative-noise, s: 0.1, columns: [age]}
"""
    cluster = ["--engine", "dask", "--scheduler", client.scheduler.address, "--json"]
    tables = []
    for seed in (5, 5, 6):
        recipe = _recipe(tmp_path, steps, f"seed: {seed}\n")
        done = run_cli("run", recipe, "--input", folder, "-o", tmp_path / f"out{len(tables)}",
                       *cluster)
        assert done.code == 0, done.stderr
        tables.append(pd.read_parquet(tmp_path / f"out{len(tables)}"))
    assert tables[0].equals(tables[1]) and not tables[0].equals(tables[2])
    masked = tables[0]
    assert masked.groupby(["income", "x"]).size().min() >= 4  # block MDAV's k
    assert set(masked["edu"].dropna()) <= set(whole["edu"].dropna())
    assert not np.allclose(masked["age"], whole["age"])
    report = json.loads(done.stdout)
    assert report["steps"][0]["report"]["k_anonymity"]["holds"]
    assert not _hidden(tmp_path)


@pytest.mark.parametrize(("steps", "extra", "said"), [
    ("  - {family: dp, method: laplace, epsilon: 1.0, columns: [income],"
     " bounds: {income: [0, 50]}}\n", "", "step 1 (laplace): a differentially private"),
    ("  - {family: keys, method: local-suppression, k: 3}\n"
     "  - {family: tclose, method: merge, k: 3, t: 0.3, quasi: [age], confidential: [income]}\n",
     "", "step 2 (merge): t-closeness runs on one machine"),
    ("  - {family: microaggregate, method: vmdav, k: 3, columns: [income]}\n", "",
     "step 1 (vmdav): the cluster path runs block MDAV only"),
    ("  - {family: microaggregate, method: mdav, k: 3, columns: [income],"
     " drop_incomplete: true}\n", "", "drop_incomplete applies on one machine only"),
    ("  - {family: keys, method: local-suppression, k: 3}\n",
     "read: {na: ['?']}\n", "the recipe's 'read' options"),
    ("  - {family: keys, method: local-suppression, k: 3}\n",
     "attacks: {kinds: [inference], control: all.parquet, secret: [income]}\n",
     "the recipe's attacks are measured on one machine"),
])
def test_what_cannot_run_on_the_cluster_is_refused_before_anything_is_written(
        survey, tmp_path, run_cli, steps, extra, said):
    folder, _ = survey
    done = run_cli("run", _recipe(tmp_path, steps, extra), "--input", folder, "-o",
                   tmp_path / "out", "--engine", "dask", "--workers", "1")
    assert done.code == 2 and said in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "dask cannot run" in done.stderr
    assert not (tmp_path / "out").exists() and not _hidden(tmp_path)


def test_options_of_one_machine_are_refused_with_the_cluster(survey, tmp_path, run_cli):
    recipe = _recipe(tmp_path, DETERMINISTIC)
    done = run_cli("run", recipe, "-o", tmp_path / "out", "--engine", "dask",
                   "--owner-report", tmp_path / "o.json")
    assert done.code == 2 and "--owner-report is not available with --engine dask" \
        in done.stderr
    done = run_cli("run", recipe, "-o", tmp_path / "out", "--workers", "2")
    assert done.code == 2 and "apply to --engine dask only" in done.stderr


def test_a_step_that_fails_leaves_no_output_and_no_step_data_set(client, survey, tmp_path,
                                                                 run_cli):
    """Step 2 recodes ages that step 1 already made intervals: it fails after step 1 wrote
    its data set, which goes with the run; an older output stays as it was."""
    folder, _ = survey
    (tmp_path / "out").mkdir()
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "out" / "part-00000.parquet")
    steps = """  - {family: keys, method: global-recoding, breaks: {age: [-.inf, 50, .inf]}}
  - {family: keys, method: global-recoding, breaks: {age: [-.inf, 30, .inf]}}
"""
    done = run_cli("run", _recipe(tmp_path, steps), "--input", folder, "-o", tmp_path / "out",
                   "--engine", "dask", "--scheduler", client.scheduler.address)
    assert done.code == 2 and "step" not in done.stdout, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert pd.read_parquet(tmp_path / "out").equals(pd.DataFrame({"a": [1]}))
    assert not (tmp_path / "out.report.json").exists()
    assert not _hidden(tmp_path)


def test_an_mdav_step_masks_the_declared_quasi_identifiers_only(client, tmp_path, run_cli):
    """Without `columns`, block MDAV masks the schema's quasi-identifiers, as one machine's
    step does: the household, the weight and the other columns keep their values."""
    rng = np.random.default_rng(4)
    n = 2000
    frame = pd.DataFrame({"hid": np.repeat(np.arange(n // 2), 2), "w": rng.uniform(1, 9, n),
                          "age": rng.integers(0, 90, n).astype(float),
                          "income": rng.gamma(2.0, 3.0, n), "x": rng.normal(size=n)})
    frame.to_parquet(tmp_path / "people.parquet", index=False)
    (tmp_path / "recipe.yaml").write_text(
        "format: microagg-recipe/1\ninput: people.parquet\nschema:\n  attributes:\n"
        "    hid: {role: household}\n    w: {role: weight}\n"
        "    age: {kind: numeric, role: quasi}\n    income: {kind: numeric, role: quasi}\n"
        "    x: {kind: numeric, role: other}\n"
        "steps:\n  - {family: microaggregate, method: mdav, k: 5}\n")
    done = run_cli("run", tmp_path / "recipe.yaml", "-o", tmp_path / "out", "--engine",
                   "dask", "--scheduler", client.scheduler.address, "--json")
    assert done.code == 0, done.stderr
    written = pd.read_parquet(tmp_path / "out")
    for kept in ("hid", "w", "x"):
        assert written[kept].equals(frame[kept]), kept
    assert not written["age"].equals(frame["age"])
    assert written.groupby(["age", "income"]).size().min() >= 5
    report = json.loads(done.stdout)["steps"][0]["report"]
    assert report["columns"] == ["age", "income"]


def test_a_masking_that_changes_nothing_is_said_not_refused_in_a_recipe(client, survey,
                                                                         tmp_path, run_cli):
    folder, whole = survey
    steps = "  - {family: mask, method: top-bottom-coding, top: 1000, columns: [income]}\n"
    done = run_cli("run", _recipe(tmp_path, steps), "--input", folder, "-o", tmp_path / "out",
                   "--engine", "dask", "--scheduler", client.scheduler.address)
    assert done.code == 0, done.stderr
    assert pd.read_parquet(tmp_path / "out")["income"].equals(whole["income"])
    assert "no value" in done.stderr or "changes no" in done.stderr, done.stderr


def test_no_file_beside_the_output_may_be_an_input(survey, tmp_path, run_cli):
    """The recipe as run goes to OUT.recipe.yaml: a recipe of that name is an input, which
    the run refuses to replace before any step."""
    folder, _ = survey
    recipe = tmp_path / "out.recipe.yaml"
    recipe.write_text(Path(_recipe(tmp_path, DETERMINISTIC)).read_text())
    before = recipe.read_bytes()
    done = run_cli("run", recipe, "--input", folder, "-o", tmp_path / "out", "--engine",
                   "dask", "--workers", "1")
    assert done.code == 2 and "is an input of this command" in done.stderr, done.stderr
    assert recipe.read_bytes() == before and not (tmp_path / "out").exists()


def test_the_output_and_its_files_appear_together_or_not_at_all(client, survey, tmp_path):
    """A failure once the last step's data set is written (here: making the files beside
    it) leaves the older output as it was, and no step's data set."""
    from microagg.at_scale.dataset import open_dataset
    from microagg.at_scale.recipe import run_recipe_at_scale
    from microagg.recipe import Recipe

    folder, _ = survey
    recipe = Recipe.load(_recipe(tmp_path, DETERMINISTIC))
    (tmp_path / "out").mkdir()
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "out" / "part-00000.parquet")

    def broken(run):
        raise OSError("the disk is full")

    with pytest.raises(OSError, match="the disk is full"):
        run_recipe_at_scale(client, recipe, open_dataset(folder), tmp_path / "out",
                            beside=broken)
    assert pd.read_parquet(tmp_path / "out").equals(pd.DataFrame({"a": [1]}))
    assert not _hidden(tmp_path) and not (tmp_path / "out.report.json").exists()
    run_recipe_at_scale(client, recipe, open_dataset(folder), tmp_path / "out",
                        beside=lambda run: {".report.json": json.dumps(run.to_dict())})
    assert len(pd.read_parquet(tmp_path / "out")) == 3000
    assert json.loads((tmp_path / "out.report.json").read_text())["records"] == 3000
    assert not _hidden(tmp_path)
