"""UCI Adult as exported (32,561 rows, '?' read as missing, fnlwgt declared as the weight) through
microaggregate, check, tclose, dp and evaluate on the command line, without --drop-incomplete:
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
def test_adult_with_its_missing_values_through_every_command(run_cli, tmp_path):
    source = tmp_path / "adult.csv"
    assert run_cli("datasets", "export", "adult", "-o", source).code == 0
    adult = read_table(source)
    assert len(adult) == 32_561
    missing = adult.isna().sum()
    assert missing[["workclass", "occupation", "native-country"]].tolist() == [1836, 1843, 583]

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


@pytest.mark.slow
@pytest.mark.reference_data
def test_adult_with_its_missing_values_through_dp(run_cli, tmp_path):
    """dp on Adult as exported: the schema declares an `Unknown` category (added to the three
    taxonomies) that missing values are read as, and fnlwgt as the weight. The written table
    holds no missing value, only declared categories and values inside the declared domains,
    and the privacy report states the rule and plain 1-DP; `evaluate` reads the report and
    gives the distributional measures only."""
    import yaml

    source, schema_path = tmp_path / "adult.csv", tmp_path / "adult.yaml"
    assert run_cli("datasets", "export", "adult", "-o", source, "--schema-out",
                   schema_path).code == 0
    spec = yaml.safe_load(schema_path.read_text())
    attributes = spec["attributes"]
    with_missing = ("workclass", "occupation", "native-country")
    for name in with_missing:
        attributes[name]["domain"].append("Unknown")
        attributes[name]["missing"] = "Unknown"
        taxonomy = tmp_path / attributes[name]["taxonomy"]
        taxonomy.write_text(taxonomy.read_text().rstrip("\n") + "\nUnknown;Not-stated;*\n")
    attributes["fnlwgt"]["role"] = "weight"
    attributes["capital-gain"]["domain"] = [0, 100000]
    attributes["capital-loss"]["domain"] = [0, 5000]
    dp_schema = tmp_path / "adult_dp.yaml"
    dp_schema.write_text(yaml.safe_dump(spec, sort_keys=False))

    out = tmp_path / "dp.csv"
    made = run_cli("dp", source, "-o", out, "--schema", dp_schema, "--epsilon", "1", "--k",
                   "1000", "--method", "individual-ranking", "--columns",
                   "age,hours-per-week,workclass,occupation,native-country", "--json")
    assert made.code == 0, made.stderr
    assert "missing value(s)" not in made.stderr  # the counts are the owner's
    report = json.loads((tmp_path / "dp.csv.privacy.json").read_text())
    assert report["differentially_private"] and report["unit"] == "one record"
    for name in with_missing:
        assert "read as Unknown" in report["domains"][name]["missing"]
    written = read_table(out)
    assert len(written) == 32_561 and not written.isna().to_numpy().any()
    assert "fnlwgt" not in written.columns
    assert written["age"].between(0, 120).all()
    for name in with_missing:
        taxonomy = (tmp_path / attributes[name]["taxonomy"]).read_text()
        concepts = {c for line in taxonomy.splitlines() for c in line.split(";")}
        assert set(written[name]) <= concepts
    measured = run_cli("evaluate", source, out, "--columns", "age,hours-per-week", "--json")
    assert measured.code == 0, measured.stderr
    result = json.loads(measured.stdout)
    assert result["sse"] is None and np.isfinite(result["jsd"])
