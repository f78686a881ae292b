"""The k-anonymous t-close release and the tclose command: the written table satisfies what
the report says, by the independent verifier and by `microagg check`."""

import json

import numpy as np
import pandas as pd
import pytest

from microagg import datasets
from microagg.core.verifiers import k_anonymity, t_closeness
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.data.taxonomy import Taxonomy
from microagg.errors import InputError
from microagg.options import TClosenessMethod
from microagg.release import tclose


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 301  # not a multiple of k
    frame = pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(18, 90, n),  # ties
        "income": rng.lognormal(10, 1, n).round(-3),  # heavy ties
        "region": rng.choice(["north", "south", "east"], n),
        "salary": (rng.integers(0, 40, n) * 1000).astype(float),
        "diagnosis": rng.choice(["flu", "cold", "asthma", "copd"], n),
    })
    return frame


@pytest.mark.parametrize("method", [m.value for m in TClosenessMethod])
def test_release_is_k_anonymous_and_t_close_as_written(data, method):
    quasi = ["age", "income", "region"]
    release = tclose(data, k=4, t=0.12, quasi=quasi, confidential=["salary", "diagnosis"],
                     method=method, round_values=False)
    frame = release.frame
    report = release.report
    assert "id" in frame.columns  # not declared an identifier: written unchanged
    assert len(frame) == len(data)
    for column in ("salary", "diagnosis", "id"):  # same rows, same order
        pd.testing.assert_series_equal(frame[column], data[column])
    anonymity = k_anonymity(frame, quasi)
    assert anonymity.smallest_class >= 4
    assert anonymity.smallest_class == report.k_anonymity["smallest_class"]
    for name, distance in (("salary", "ordered"), ("diagnosis", "equal")):
        verified = t_closeness(frame, quasi, name)
        assert verified.t <= 0.12 + 1e-9
        assert verified.t == pytest.approx(report.largest_emd[name], abs=1e-12)
        assert report.distances[name] == distance
    # numeric quasi-identifiers are replaced by their class means
    classes = release.labels
    for label in np.unique(classes)[:5]:
        rows = classes == label
        assert frame.loc[rows, "income"].nunique() == 1
        assert frame.loc[rows, "income"].iloc[0] == pytest.approx(data.loc[rows, "income"].mean())
    if method == "t-closeness-first":
        assert report.effective_k >= 4
        assert np.bincount(classes).min() >= report.effective_k


def test_hierarchical_distance_from_the_schema(tmp_path, data):
    taxonomy = tmp_path / "diagnosis.yaml"
    taxonomy.write_text("'*':\n  infection: [flu, cold]\n  chronic: [asthma, copd]\n")
    schema = Schema.infer(data).with_roles({"id": Role.IDENTIFIER})
    schema = Schema(tuple(a if a.name != "diagnosis" else Attribute(
        "diagnosis", Role.CONFIDENTIAL, Kind.NOMINAL,
        domain=("flu", "cold", "asthma", "copd"), taxonomy=taxonomy)
        for a in schema))
    equal = tclose(data, k=3, t=0.06, quasi=["age", "income"], confidential=["diagnosis"],
                   schema=schema)
    hierarchical = tclose(data, k=3, t=0.06, quasi=["age", "income"],
                          confidential=["diagnosis"], schema=schema, distance="hierarchical")
    assert "id" not in equal.frame.columns
    assert hierarchical.report.distances == {"diagnosis": "hierarchical"}
    # the hierarchical ground distance is at most the equal one: classes can be smaller
    assert (hierarchical.report.clusters["count"] >= equal.report.clusters["count"])
    tree = Taxonomy.load(taxonomy, leaf_order=["flu", "cold", "asthma", "copd"])
    codes = pd.Categorical(hierarchical.frame["diagnosis"],
                           categories=["flu", "cold", "asthma", "copd"]).codes
    written = hierarchical.frame.assign(diagnosis=codes)
    verified = t_closeness(written, ["age", "income"], "diagnosis", distance="hierarchical",
                           parent=tree.parent)
    assert verified.t <= 0.06 + 1e-9


@pytest.mark.parametrize("kwargs, fragment", [
    ({"t": 0.0}, "`t` must be a number > 0 and <= 1, got 0"),
    ({"t": 1.5}, "`t` must be a number > 0 and <= 1, got 1.5"),
    ({"confidential": ["age"]}, "both quasi-identifier and confidential"),
    ({"k": 500}, "exceeds the number of records"),
    ({"t": 0.001}, "below what 301 records allow"),
    ({"confidential": ["constant"]}, "'constant' is constant"),
    ({"method": "fastest"}, "unknown method 'fastest'"),
    ({"distance": "ordered"}, "`distance` chooses the EMD of nominal"),
])
def test_bad_input(data, kwargs, fragment):
    frame = data.assign(constant=1.0)
    arguments = {"k": 3, "t": 0.2, "quasi": ["age", "income"], "confidential": ["salary"],
                 **kwargs}
    with pytest.raises(InputError) as error:
        tclose(frame, **arguments)
    assert fragment in str(error.value)


@pytest.mark.reference_data
def test_table_iii_cells_on_census(census):
    # 002 Table III: Algorithm 3 gives classes of exactly k' = 6 for k = 5, t = 0.09 (MCD)
    release = tclose(census.frame, k=5, t=0.09, quasi=["TAXINC", "POTHVAL"],
                     confidential=["FEDTAX"], schema=census.schema)
    assert release.report.clusters["smallest"] == release.report.clusters["largest"] == 6
    assert release.report.merges == 0


def test_cli_tclose_then_check_agree(run_cli, tmp_path, data):
    source = tmp_path / "in.csv"
    data.to_csv(source, index=False)
    out = tmp_path / "out.csv"
    labels = tmp_path / "labels.csv"
    result = run_cli("tclose", source, "-o", out, "--k", "3", "--t", "0.1", "--quasi",
                     "age,income", "--confidential", "salary,diagnosis", "--labels-out", labels,
                     "--threads", "1", "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["t_closeness_holds"] and report["k_anonymity"]["holds"]
    assert len(pd.read_csv(labels)) == len(data)
    worst = max(report["largest_emd"].values())
    smallest = report["k_anonymity"]["smallest_class"]
    check = run_cli("check", out, "--k", str(smallest), "--t", f"{worst:.17g}", "--quasi",
                    "age,income", "--confidential", "salary,diagnosis", "--json")
    assert check.code == 0, check.stdout
    checked = json.loads(check.stdout)
    assert [c["largest_emd"] for c in checked["t_closeness"]] == pytest.approx(
        list(report["largest_emd"].values()), abs=1e-12)
    stricter = run_cli("check", out, "--t", f"{worst * 0.99:.17g}", "--quasi", "age,income",
                       "--confidential", "salary,diagnosis")
    assert stricter.code == 1


def test_cli_bad_t_is_one_line_exit_2_and_no_file(run_cli, tmp_path, data):
    source = tmp_path / "in.csv"
    data.to_csv(source, index=False)
    out = tmp_path / "out.csv"
    result = run_cli("tclose", source, "-o", out, "--k", "3", "--t", "0", "--quasi", "age",
                     "--confidential", "salary")
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    assert "--t must be a number > 0 and <= 1, got 0" in result.stderr
    assert not out.exists()
    threads = run_cli("tclose", source, "-o", out, "--k", "3", "--t", "0.1", "--quasi", "age",
                      "--confidential", "salary", "--threads", "0")
    assert threads.code == 2 and threads.stderr.count("\n") == 1 and not out.exists()


@pytest.mark.parametrize("method", [m.value for m in TClosenessMethod])
def test_mixed_quasi_identifiers_every_method(method):
    synthetic = datasets.synthetic(400, 3, seed=5)
    quasi = ["age", "income", "region", "education"]  # numeric, nominal and ordinal
    release = tclose(synthetic.frame, k=3, t=0.15, quasi=quasi, confidential=["expenses"],
                     schema=synthetic.schema, method=method)
    frame = release.frame
    assert k_anonymity(frame, quasi).smallest_class >= 3
    assert t_closeness(frame, quasi, "expenses").t <= 0.15 + 1e-9
    assert set(frame["region"]) <= set(synthetic.schema["region"].domain) | {"*"} | set(
        release.report.generalized_categories.get("region", []))


def test_the_classes_printed_are_those_check_counts_on_the_output(run_cli, tmp_path):
    """Twelve identical records make four clusters written with one value: the written table
    has fewer classes than the partition has clusters, and the command says so with the
    count check gives."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 100, 60), "b": rng.integers(0, 100, 60),
                          "c": rng.integers(0, 5, 60)})
    frame.iloc[:12, :2] = [50, 50]
    path, out = tmp_path / "dup.csv", tmp_path / "out.csv"
    frame.to_csv(path, index=False)
    done = run_cli("tclose", path, "-o", out, "--k", "3", "--t", "0.9", "--confidential", "c",
                   "--method", "merge")
    assert done.code == 0, done.stderr
    checked = run_cli("check", out, "--k", "3", "--quasi", "a,b", "--json")
    classes = json.loads(checked.stdout)["k_anonymity"]["classes"]
    report = json.loads((tmp_path / "out.csv.report.json").read_text())
    assert report["report"]["k_anonymity"]["classes"] == classes
    assert report["report"]["clusters"]["count"] > classes
    assert f"{classes} classes as written" in done.stdout
