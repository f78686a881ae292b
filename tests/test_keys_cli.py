"""The commands of the methods for categorical keys and top coding: what they write (table
and report, all or nothing), what they refuse (one line, exit 2)."""

import json

import numpy as np
import pandas as pd
import pytest

from microagg.core.frequencies import key_codes
from tests.reference import matching_counts


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(4)
    n = 400
    frame = pd.DataFrame({
        "id": np.arange(n), "sex": rng.choice(["f", "m"], n),
        "region": rng.choice(["north", "south", "east", "west"], n),
        "age": rng.integers(18, 70, n), "income": rng.lognormal(10, 1, n).round(0),
        "w": rng.uniform(50, 500, n).round(2), "hh": rng.integers(0, 150, n)})
    frame.loc[rng.random(n) < 0.03, "region"] = None
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _one_line_error(result, *words):
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("microagg: error: ")
    for word in words:
        assert word in lines[0], lines[0]


def test_suppress_writes_a_k_anonymous_table_and_its_report(run_cli, table, tmp_path):
    path, frame = table
    out = tmp_path / "out.csv"
    result = run_cli("suppress", path, "-o", out, "--keys", "sex,region,age", "--k", "5",
                     "--identifiers", "id", "--weight", "w", "--household", "hh",
                     "--importance", "age,sex")
    assert result.code == 0, result.stderr
    assert "k-anonymity holds" in result.stdout
    written = pd.read_csv(out)
    keys = ["sex", "region", "age"]
    assert matching_counts(key_codes(written, keys)).min() >= 5  # the file as written
    assert "id" not in written.columns
    pd.testing.assert_frame_equal(written[["w", "hh", "income"]],
                                  frame[["w", "hh", "income"]], check_dtype=False)
    record = json.loads((tmp_path / "out.csv.report.json").read_text())
    assert record["family"] == "keys" and record["method"] == "local-suppression"
    assert record["guarantee"]["holds"] and record["risk"]["after"]["smallest_class"] >= 5
    report = record["report"]
    assert report["importance"][:2] == ["age", "sex"]  # as given, the most important first
    moved = {k: int((frame[k].notna() & written[k].isna()).sum()) for k in keys}
    assert report["suppressions"] == moved
    changed = [key for key in keys if moved[key]]
    assert changed
    for key in changed:
        assert record["utility"]["per_attribute"][key]["missing_after"] == int(
            written[key].isna().sum())


def test_suppress_refuses_in_one_line(run_cli, table, tmp_path):
    path, _ = table
    out = tmp_path / "out.csv"
    _one_line_error(run_cli("suppress", path, "-o", out, "--keys", "sex"), "--k",
                    "local-suppression")
    _one_line_error(run_cli("suppress", path, "-o", out, "--keys", "sex,w", "--k", "3",
                            "--weight", "w"), "--keys", "'w'", "weight")
    _one_line_error(run_cli("suppress", path, "-o", out, "--k", "3"), "--keys")
    _one_line_error(run_cli("suppress", path, "-o", out, "--keys", "sex", "--k", "3",
                            "--importance", "age"), "--importance", "'age'")
    _one_line_error(run_cli("suppress", path, "-o", path, "--keys", "sex", "--k", "3"),
                    str(path))
    assert not out.exists() and not (tmp_path / "out.csv.report.json").exists()


def test_pram_is_reproducible_with_a_seed_and_reports_its_matrices(run_cli, table, tmp_path):
    path, frame = table
    first, again = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (first, again):
        result = run_cli("pram", path, "-o", out, "--keys", "region", "--retention", "0.7",
                         "--seed", "3", "--strata", "sex")
        assert result.code == 0, result.stderr
    assert first.read_bytes() == again.read_bytes()
    report = json.loads((tmp_path / "a.csv.report.json").read_text())["report"]
    assert report["seeded"] and report["retention"] == 0.7 and report["alpha"] == 0.5
    assert [m["stratum"] for m in report["matrices"]] == ["sex=f", "sex=m"]
    for m in report["matrices"]:
        p = np.array(m["marginal"])
        np.testing.assert_allclose(p @ np.array(m["matrix"]), p, atol=1e-12)
    written = pd.read_csv(first)
    assert written["sex"].equals(frame["sex"])


def test_recode_breaks_and_levels(run_cli, table, tmp_path):
    path, _ = table
    tree = tmp_path / "region.csv"
    tree.write_text("north;N;*\nsouth;S;*\neast;EW;*\nwest;EW;*\n", encoding="utf-8")
    schema = tmp_path / "s.yaml"
    schema.write_text(f"attributes:\n  region: {{role: quasi, kind: nominal, taxonomy: "
                      f"{tree}}}\n  sex: {{role: quasi, kind: nominal}}\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    result = run_cli("recode", path, "-o", out, "--schema", schema, "--levels", "region=1",
                     "--breaks", "age=0:30:50:inf", "--identifiers", "id")
    assert result.code == 0, result.stderr
    written = pd.read_csv(out)
    assert set(written["region"].dropna()) <= {"N", "S", "EW"}
    assert set(written["age"]) == {"[0, 30)", "[30, 50)", "[50, inf)"}
    report = json.loads((tmp_path / "out.csv.report.json").read_text())["report"]
    assert report["keys"] == ["region", "age", "sex"]
    assert report["recoded"]["region"]["categories_after"] == 3


def test_topcode_is_top_bottom_coding_with_its_own_command(run_cli, table, tmp_path):
    path, frame = table
    out = tmp_path / "out.csv"
    result = run_cli("topcode", path, "-o", out, "--columns", "income", "--top", "0.9",
                     "--at", "quantile")
    assert result.code == 0, result.stderr
    written = pd.read_csv(out)
    cap = np.quantile(frame["income"], 0.9, method="inverted_cdf")
    assert written["income"].tolist() == np.minimum(frame["income"], cap).tolist()
    record = json.loads((tmp_path / "out.csv.report.json").read_text())
    assert record["method"] == "top-bottom-coding" and record["family"] == "mask"


def test_pram_that_can_change_nothing_exits_2_and_writes_nothing(run_cli, tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("sex,region\nm,a\nm,b\nm,a\nm,b\n")
    out = tmp_path / "out.csv"
    result = run_cli("pram", path, "-o", out, "--keys", "sex")
    assert result.code == 2 and not out.exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "column 'sex' has one category (m)" in lines[0]


def test_recode_closed_on_the_right(run_cli, table, tmp_path):
    path, frame = table
    out = tmp_path / "out.csv"
    result = run_cli("recode", path, "-o", out, "--breaks", "age=0:30:50:inf", "--closed",
                     "right", "--identifiers", "id")
    assert result.code == 0, result.stderr
    written = pd.read_csv(out)
    expected = ["[0, 30]" if a <= 30 else "(30, 50]" if a <= 50 else "(50, inf)"
                for a in frame["age"]]
    assert written["age"].tolist() == expected
    record = json.loads((tmp_path / "out.csv.report.json").read_text())
    assert record["parameters"]["closed"] == "right"
    assert record["report"]["recoded"]["age"]["to"] == "intervals closed on the right"
