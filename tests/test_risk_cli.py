"""``microagg risk`` and ``microagg check --l``: the command's outputs agree with the library
and with the definitions; errors are one line and exit 2; outputs are all or nothing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from microagg import categorical_risk
from microagg.errors import InputError
from tests import reference


@pytest.fixture
def survey_csv(tmp_path):
    rng = np.random.default_rng(5)
    n = 80
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], n),
                          "region": rng.choice(["north", "south", "east", "west"], n),
                          "age": rng.choice([20, 30, 40], n),
                          "w": rng.uniform(1, 100, n).round(2),
                          "hh": rng.integers(0, 30, n),
                          "illness": rng.choice(["flu", "cold", "none"], n)})
    frame.loc[[3, 17, 40], "region"] = None
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    return path


def test_json_is_the_library_result(run_cli, survey_csv):
    result = run_cli("risk", survey_csv, "--keys", "sex,region,age", "--weight", "w",
                     "--household", "hh", "--sensitive", "illness", "--k", "4", "--k", "8,9",
                     "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    frame = pd.read_csv(survey_csv)
    expected = categorical_risk(frame, ["sex", "region", "age"], weight="w", household="hh",
                                sensitive="illness", k=[4, 8, 9]).to_dict()
    assert report == json.loads(json.dumps(expected))
    assert list(report["violations"]) == ["2", "3", "4", "5", "8", "9"]
    assert report["n"] == 80 and set(report["suda_contributions"]) == {"sex", "region", "age"}


def test_records_out_one_row_per_record_in_input_order(run_cli, survey_csv, tmp_path):
    out = tmp_path / "records.csv"
    result = run_cli("risk", survey_csv, "--keys", "sex,region", "--sensitive", "illness",
                     "--records-out", out)
    assert result.code == 0, result.stderr
    records = pd.read_csv(out)
    assert list(records.columns) == ["fk", "Fk", "risk", "suda_score", "dis_score",
                                     "l_distinct", "l_entropy", "l_recursive"]
    frame = pd.read_csv(survey_csv)
    columns = [pd.factorize(frame[key])[0].tolist() for key in ("sex", "region")]
    codes = [list(row) for row in zip(*columns, strict=True)]
    assert records["fk"].tolist() == reference.frequencies_direct(codes, "matches-any")
    np.testing.assert_allclose(records["risk"], 1 / records["fk"])
    assert "sample uniques" in result.stdout and str(out) in result.stdout


def test_missing_as_a_category(run_cli, survey_csv):
    args = ("risk", survey_csv, "--keys", "sex,region", "--json")
    matches_any = json.loads(run_cli(*args).stdout)
    category = json.loads(run_cli(*args, "--missing", "category").stdout)
    assert matches_any["missing"] == "matches-any" and category["missing"] == "category"
    # a missing region matches every region: fewer records in small classes
    assert matches_any["violations"]["2"] <= category["violations"]["2"]


@pytest.mark.parametrize(("args", "fragment"), [
    (("--keys", "sex,nowhere"), "unknown column 'nowhere'"),
    (("--keys", "sex", "--k", "two"), "--k takes whole numbers"),
    (("--keys", "sex", "--weight", "region"), "weight column 'region'"),
    (("--keys", "sex", "--missing", "skip"), "--missing"),
    (("--keys", "sex", "--dis-fraction", "2"), "--dis-fraction must lie in (0, 1)"),
    ((), "--keys is needed"),
])
def test_errors_are_one_line_and_write_nothing(run_cli, survey_csv, tmp_path, args, fragment):
    out = tmp_path / "records.csv"
    result = run_cli("risk", survey_csv, *args, "--records-out", out)
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("microagg: error: "), result.stderr
    assert fragment in lines[0]
    assert not out.exists()


def test_records_out_never_replaces_the_input(run_cli, survey_csv):
    before = survey_csv.read_bytes()
    result = run_cli("risk", survey_csv, "--keys", "sex", "--records-out", survey_csv)
    assert result.code == 2 and survey_csv.read_bytes() == before


def test_check_l_diversity(run_cli, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("q,s\na,x\na,y\na,x\nb,x\nb,y\nb,z\n")
    holds = run_cli("check", path, "--quasi", "q", "--l", "2", "--sensitive", "s", "--json")
    assert holds.code == 0, holds.stderr
    report = json.loads(holds.stdout)["l_diversity"]
    assert (report["smallest"], report["violations"], report["kind"]) == (2, 0, "distinct")
    violated = run_cli("check", path, "--quasi", "q", "--l", "3", "--sensitive", "s")
    assert violated.code == 1
    assert "VIOLATED for l = 3" in violated.stdout and "3 records below l" in violated.stdout
    # class a holds x twice and y once: exp(entropy) = 3 / 2^(2/3) ≈ 1.89 < 2
    entropy = run_cli("check", path, "--quasi", "q", "--l", "2", "--sensitive", "s",
                      "--l-kind", "entropy", "--json")
    assert entropy.code == 1
    assert json.loads(entropy.stdout)["l_diversity"]["smallest"] == pytest.approx(
        3 / 2 ** (2 / 3))
    # recursive (2, 2): class a, 2 < 2 · 1 fails; class b, 1 < 2 · 2 holds
    recursive = run_cli("check", path, "--quasi", "q", "--l", "2", "--sensitive", "s",
                        "--l-kind", "recursive", "--l-c", "3", "--json")
    assert recursive.code == 0 and json.loads(recursive.stdout)["l_diversity"]["c"] == 3


@pytest.mark.parametrize(("args", "fragment"), [
    (("--l", "2"), "--l needs --sensitive"),
    (("--sensitive", "s", "--k", "2"), "apply with --l"),
    (("--l", "0.5", "--sensitive", "s"), "--l must be at least 1"),
    (("--l", "2", "--sensitive", "s", "--l-kind", "widest"), "--l-kind"),
    (("--l", "2", "--sensitive", "q"), "both quasi-identifier and sensitive"),
])
def test_check_l_bad_requests(run_cli, tmp_path, args, fragment):
    path = tmp_path / "t.csv"
    path.write_text("q,s\na,x\na,y\n")
    result = run_cli("check", path, "--quasi", "q", *args)
    assert result.code == 2 and fragment in result.stderr, result.stderr


def test_a_table_without_records_is_refused(run_cli, tmp_path):
    """A header alone: every other command refuses it, and so does risk (one line, exit 2,
    nothing written)."""
    path = tmp_path / "header.csv"
    path.write_text("sex,region\n")
    out = tmp_path / "records.csv"
    result = run_cli("risk", path, "--keys", "sex,region", "--records-out", out)
    assert result.code == 2 and not out.exists()
    assert result.stderr.strip() == "microagg: error: the table has no rows"
    with pytest.raises(InputError, match="no rows"):
        categorical_risk(pd.DataFrame({"sex": []}), ["sex"])


def test_key_contributions_are_labelled_as_percentages_of_the_scores(run_cli, survey_csv):
    result = run_cli("risk", survey_csv, "--keys", "sex,region,age")
    assert result.code == 0, result.stderr
    line = next(t for t in result.stdout.splitlines() if "MSUs holding each key" in t)
    assert "each out of 100 %" in line and "share" not in line
