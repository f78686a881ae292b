"""UCI Adult as exported (32,561 rows, '?' read as missing, fnlwgt declared as the weight) through
microaggregate, check, tclose and evaluate on the command line, without --drop-incomplete:
every written table satisfies what its report claims, by the independent verifiers."""

import json

import numpy as np
import pandas as pd
import pytest

from microagg.core.frequencies import sample_frequencies
from microagg.data.io import read_table

QUASI = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week",
         "workclass", "education", "marital-status", "occupation", "relationship", "race",
         "sex", "native-country"]


@pytest.mark.slow
@pytest.mark.reference_data
def test_adult_with_its_gaps_through_every_command(run_cli, tmp_path):
    source = tmp_path / "adult.csv"
    assert run_cli("datasets", "export", "adult", "-o", source).code == 0
    adult = read_table(source)
    assert len(adult) == 32_561
    gaps = adult.isna().sum()
    assert gaps[["workclass", "occupation", "native-country"]].tolist() == [1836, 1843, 583]

    k5 = tmp_path / "k5.csv"
    made = run_cli("microaggregate", source, "-o", k5, "--k", "5", "--weight", "fnlwgt",
                   "--json")
    assert made.code == 0, made.stderr
    report = json.loads(made.stdout)
    assert report["columns"] == [*QUASI, "income"] and report["k_anonymity"]["holds"]
    written = read_table(k5)
    assert written["fnlwgt"].equals(adult["fnlwgt"])  # the weight is never changed
    assert sample_frequencies(written, report["columns"]).min() >= 5
    check = run_cli("check", k5, "--k", "5", "--quasi", ",".join(report["columns"]))
    assert check.code == 0, check.stdout

    releases = [k5]
    for method, t in (("t-closeness-first", "0.1"), ("k-anonymity-first", "0.3"),
                      ("merge", "0.3")):
        out = tmp_path / f"{method}.csv"
        made = run_cli("tclose", source, "-o", out, "--k", "5", "--t", t, "--confidential",
                       "income", "--weight", "fnlwgt", "--method", method, "--json")
        assert made.code == 0, made.stderr
        report = json.loads(made.stdout)
        assert report["quasi_identifiers"] == QUASI and report["t_closeness_holds"]
        assert report["missing_values"] == {"workclass": 1836, "occupation": 1843,
                                            "native-country": 583}
        written = read_table(out)
        assert written["fnlwgt"].equals(adult["fnlwgt"]) and written["income"].equals(
            adult["income"])
        for semantics in ("matches-any", "category"):
            check = run_cli("check", out, "--k", "5", "--t", t, "--confidential", "income",
                            "--quasi", ",".join(QUASI), "--missing", semantics, "--json")
            assert check.code == 0, check.stdout
            largest = json.loads(check.stdout)["t_closeness"][0]["largest_emd"]
            assert largest == pytest.approx(report["largest_emd"]["income"], abs=1e-12)
        sidecar = json.loads(out.with_name(out.name + ".report.json").read_text())
        assert sidecar["guarantee"]["holds"] and "missing_values" in sidecar["skipped"]
        releases.append(out)

    for release in releases:
        measured = run_cli("evaluate", source, release, "--columns", ",".join(QUASI),
                           "--json")
        assert measured.code == 0, measured.stderr
        result = json.loads(measured.stdout)
        for key in ("sse", "sse_percent", "record_linkage_percent", "relative_error", "jsd",
                    "variance_variation", "mean_variation"):
            assert np.isfinite(result[key]), key
        assert result["missing_values"]["workclass"]["original"] == 1836
        assert pd.notna(result["missing_rule"]["record_linkage_percent"])
