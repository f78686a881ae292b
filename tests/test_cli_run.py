"""``microagg run``: every output written together, a seeded recipe reproduced byte for byte,
the recipe as run reproducing the run, and one-line errors."""

from __future__ import annotations

import json

import microagg
from microagg.recipe import Recipe

STEPS = [{"family": "microaggregate", "method": "mdav", "k": 5},
         {"family": "mask", "method": "rank-swap", "fraction": 0.05}]


def _recipe(tmp_path, steps=STEPS, seed=4):
    data = microagg.datasets.synthetic(300, 2, seed=0)
    data.frame.to_csv(tmp_path / "in.csv", index=False)
    recipe = Recipe(input=tmp_path / "in.csv", schema=data.schema, seed=seed)
    for step in steps:
        recipe = recipe.add(step)
    path = tmp_path / "r.yaml"
    path.write_text(recipe.dumps(tmp_path))
    return path


def test_run_writes_the_release_its_report_and_the_recipe(tmp_path, run_cli):
    recipe = _recipe(tmp_path)
    result = run_cli("run", recipe, "-o", tmp_path / "out.csv", "--report",
                     tmp_path / "out.html")
    assert result.code == 0, result.stderr
    written = {p.name for p in tmp_path.iterdir()}
    assert {"out.csv", "out.csv.report.json", "out.csv.recipe.yaml", "out.html"} <= written
    report = json.loads((tmp_path / "out.csv.report.json").read_text())
    assert [s["method"] for s in report["steps"]] == ["mdav", "rank-swap"]
    assert report["steps"][0]["risk_after"]["smallest_class"] >= 5
    assert report["rows_aligned"] is True
    again = run_cli("run", tmp_path / "out.csv.recipe.yaml", "-o", tmp_path / "again.csv")
    assert again.code == 0, again.stderr
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "out.csv").read_bytes()
    evaluated = run_cli("evaluate", tmp_path / "in.csv", tmp_path / "out.csv", "--json")
    assert json.loads(evaluated.stdout)["aligned"] is True


def test_run_refuses_a_bad_step_in_one_line_and_writes_nothing(tmp_path, run_cli):
    recipe = _recipe(tmp_path, [STEPS[0]])
    recipe.write_text(recipe.read_text().replace("k: 5", "k: 1"))
    result = run_cli("run", recipe, "-o", tmp_path / "out.csv")
    assert result.code == 2
    assert result.stderr.count("\n") == 1 and "step 1" in result.stderr and "--k" in \
        result.stderr
    assert not (tmp_path / "out.csv").exists()


def test_run_refuses_dp_after_microaggregation_unless_said(tmp_path, run_cli):
    dp = {"family": "dp", "method": "laplace", "epsilon": 1.0, "columns": ["age"],
          "bounds": {"age": [0, 120]}}
    recipe = _recipe(tmp_path, [STEPS[0], dp])
    refused = run_cli("run", recipe, "-o", tmp_path / "out.csv")
    assert refused.code == 2 and "--protects" not in refused.stderr
    assert "masked table" in refused.stderr and not (tmp_path / "out.csv").exists()
    recipe = _recipe(tmp_path, [STEPS[0], {**dp, "protects": "step-input"}], seed=None)
    result = run_cli("run", recipe, "-o", tmp_path / "out.csv")
    assert result.code == 0, result.stderr
    privacy = json.loads((tmp_path / "out.csv.privacy.json").read_text())
    assert "NOT for the recipe's input" in privacy["steps"][0]["context"]
    assert privacy["differentially_private"] is False
    assert privacy["guarantee_scope"] == "masked table"
    assert privacy["steps"][0]["record"]["guarantee_scope"] == "table"
    seeded = _recipe(tmp_path, [STEPS[0], {**dp, "protects": "step-input"}])
    result = run_cli("run", seeded, "-o", tmp_path / "seeded.csv")
    assert "known seed" in result.stderr  # the CLI's warnings for a seeded DP release
    assert "guesses the seed" in result.stderr


def test_ui_refuses_a_port_that_cannot_be(run_cli):
    result = run_cli("ui", "--port", "70000")
    assert result.code == 2 and result.stderr.count("\n") == 1
    assert "--port must be between 1 and 65535" in result.stderr


def test_run_repeats_the_web_apps_table_with_codes_declared_categorical(tmp_path, run_cli):
    """The app reads a column declared household or nominal as the text it holds, though
    its cells are numbers; the recipe it offers, run by ``microagg run``, reads it so too
    and writes the app's table byte for byte (a targeted record swap, whose households and
    areas are numbered by their codes)."""
    from microagg.ui.state import (
        ColumnEdit,
        begin_run,
        build_schema,
        read_upload,
        write_downloads,
    )
    from tests.test_record_swap import census

    frame = census(300)
    frame["hid"] -= 95  # identifiers of one to three digits: 10 sorts before 9 as text
    source = tmp_path / "census.csv"
    frame.to_csv(source, index=False)
    table, inferred, _ = read_upload(source)
    edits = {"hid": ColumnEdit(role="household"),
             **{c: ColumnEdit(kind="nominal") for c in ("nuts1", "nuts2", "nuts3")}}
    step = {"family": "keys", "method": "targeted-record-swapping",
            "hierarchy": "nuts1,nuts2,nuts3", "similar": "hsize;htype",
            "risk_variables": "age,national", "swap_rate": 0.1}
    app = begin_run(source, table, build_schema(inferred, edits), 7, "matches-any").then(step)
    files = write_downloads(app, source, "csv", "internal")
    assert files.table.read_bytes() != source.read_bytes()
    result = run_cli("run", files.recipe, "-o", tmp_path / "again.csv")
    assert result.code == 0, result.stderr
    assert (tmp_path / "again.csv").read_bytes() == files.table.read_bytes()
