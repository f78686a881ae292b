"""The report every release writes beside its table (OUT.report.json, OUT.privacy.json), its
HTML rendering, and `evaluate` reading it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg import datasets
from microagg.release.reports.sidecar import COSTLY_MAX_ROWS

KEYS = {"format", "method", "family", "parameters", "input", "microagg_version", "created",
        "records", "rows_aligned", "columns", "guarantee", "risk", "utility", "measures",
        "skipped", "report"}


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    synthetic = datasets.synthetic(400, 4, seed=1)
    path, schema = tmp_path / "in.csv", tmp_path / "in.yaml"
    synthetic.frame.to_csv(path, index=False)
    synthetic.schema.save(schema)
    return path, schema


def _commands(source: Path, schema: Path, out: Path) -> dict[str, list[str | Path]]:
    return {
        "microaggregate": ["microaggregate", source, "-o", out, "--k", "5", "--schema", schema],
        "tclose": ["tclose", source, "-o", out, "--k", "5", "--t", "0.4", "--quasi",
                   "age,income", "--confidential", "savings"],
        "mask": ["mask", source, "-o", out, "--method", "rank-swap", "--fraction", "0.1",
                 "--schema", schema, "--seed", "3"],
    }


def test_a_key_release_names_every_key_protected_even_those_it_left_unchanged(run_cli,
                                                                              tmp_path):
    """Local suppression protects all its keys, though it blanks cells of some only: the
    report's columns say so, and no key is listed as released unprotected."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"age": rng.integers(17, 90, 300), "sex": rng.choice(["m", "f"], 300),
                          "region": rng.choice(list("ab"), 300),
                          "income": rng.lognormal(10, 1, 300).round(2)})
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    frame.to_csv(source, index=False)
    result = run_cli("suppress", source, "-o", out, "--keys", "age,sex,region", "--k", "3")
    assert result.code == 0, result.stderr
    record = json.loads((tmp_path / "out.csv.report.json").read_text())
    written = pd.read_csv(out, keep_default_na=False, na_values=[""])
    changed = [c for c in ("age", "sex", "region") if written[c].isna().any()]
    assert "age" in changed and len(changed) < 3  # the claim is about a key left unchanged
    assert record["columns"]["masked"] == ["age", "sex", "region"]
    assert record["columns"]["released_unchanged"] == ["income"]


def test_the_html_report_of_a_key_release_counts_the_cells_it_changed():
    """Suppressed cells per key (local suppression) and changed values per key (PRAM), in the
    owner's HTML report, as the method's report counts them; the outsider's report has none."""
    from microagg.evaluation.release_record import release_record
    from microagg.evaluation.report_html import release_html

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"age": rng.integers(17, 90, 300).astype(str),
                          "sex": rng.choice(["m", "f"], 300),
                          "region": rng.choice(list("abcd"), 300)})
    for method in (microagg.LocalSuppression(k=3), microagg.InvariantPram(retention=0.6)):
        seeded = {} if isinstance(method, microagg.LocalSuppression) else {"rng": 4}
        release = method.release(frame, keys=["age", "sex", "region"], **seeded)
        record = release_record(release, frame, method=method)
        html = release_html(record)
        counts = release.report.suppressions if isinstance(method, microagg.LocalSuppression) \
            else release.report.changed_values
        assert sum(counts.values()) > 0
        table = html.split('id="suppressions"' if "suppressions" in html
                           else 'id="changed-values"')[1].split("</table>")[0]
        for key, count in counts.items():
            assert re.search(rf"<tr><td>{key}</td>(<td>[^<]*</td>)?<td>{count:,}</td></tr>",
                             table), (key, count, table)
        assert 'id="suppressions"' not in release_html(record, "external")
        assert 'id="changed-values"' not in release_html(record, "external")


@pytest.mark.parametrize("command", ["microaggregate", "tclose", "mask"])
def test_every_release_writes_its_report(run_cli, data, tmp_path, command):
    source, schema = data
    out = tmp_path / "out.csv"
    result = run_cli(*_commands(source, schema, out)[command])
    assert result.code == 0, result.stderr
    record = json.loads((tmp_path / "out.csv.report.json").read_text())
    assert set(record) == KEYS and record["format"] == "microagg-report/1"
    assert record["family"] == command and record["rows_aligned"] is True
    assert record["input"] == {"name": "in.csv", "bytes": source.stat().st_size,
                               "sha256": hashlib.sha256(source.read_bytes()).hexdigest()}
    assert pd.Timestamp(record["created"]).tzname() == "UTC"
    assert set(record["columns"]) == {"masked", "confidential", "released_unchanged",
                                      "identifiers_dropped"}
    written = pd.read_csv(out)
    masked = record["columns"]["masked"]
    assert sorted(masked + record["columns"]["confidential"]
                  + record["columns"]["released_unchanged"]) == sorted(written.columns)
    assert {"statement", "holds", "columns", "semantics"} <= set(record["guarantee"])
    before, after = record["risk"]["before"], record["risk"]["after"]
    sizes = written.groupby(masked).size()
    assert after["smallest_class"] == sizes.min() and after["classes"] == len(sizes)
    assert after["unique_percent"] == pytest.approx(100 * (sizes == 1).sum() / len(written))
    assert before["records"] == after["records"] == 400
    assert 0 <= after["record_linkage_percent"] <= 100 and after["rank_risk"] > 0
    assert record["utility"]["sse_percent"] > 0 and set(record["skipped"]) == {"emd"}
    assert record["report"] == json.loads(json.dumps(record["report"]))
    assert record["report"]["method"] == record["method"]


def test_the_report_agrees_with_evaluate(run_cli, data, tmp_path):
    """The figures of the report are those `evaluate` gives on the written table."""
    source, schema = data
    out = tmp_path / "m.csv"
    assert run_cli("microaggregate", source, "-o", out, "--k", "4", "--schema", schema).code == 0
    record = json.loads((tmp_path / "m.csv.report.json").read_text())
    result = run_cli("evaluate", source, out, "--schema", schema, "--json")
    measured = json.loads(result.stdout)
    assert record["risk"]["after"]["record_linkage_percent"] == pytest.approx(
        measured["record_linkage_percent"])
    for key in ("sse_percent", "jsd", "relative_error"):
        assert record["utility"][key] == pytest.approx(measured[key]), key
    # the EMD is evaluate's (a transport problem that costs more than a small release)
    assert record["utility"]["emd"] is None and "microagg evaluate" in record["skipped"]["emd"]
    assert measured["emd"] is not None
    assert record["risk"]["before"]["unique_percent"] == 100.0  # continuous synthetic data
    assert record["risk"]["after"]["smallest_class"] >= 4 and record["guarantee"]["holds"]


def test_record_linkage_and_rank_risk_are_skipped_above_the_row_limit():
    from microagg import MDAV
    from microagg.evaluation.release_record import release_record

    synthetic = datasets.synthetic(60, 2, seed=0)
    method = MDAV(k=3)
    release = method.release(synthetic.frame, schema=synthetic.schema)
    record = release_record(release, synthetic.frame, method=method, costly_max_rows=50)
    assert record.risk["after"].record_linkage_percent is None and record.utility.emd is None
    assert set(record.skipped) == {"record_linkage_percent", "rank_risk", "emd"}
    assert "50" in record.skipped["record_linkage_percent"] and "50" in record.skipped[
        "rank_risk"]
    assert record.risk["after"].rank_risk is None
    assert "record_linkage_percent" not in record.to_dict()["risk"]["after"]
    assert record.utility.sse_percent is not None and COSTLY_MAX_ROWS >= 10_000


def test_rows_dropped_as_incomplete_are_compared_with_their_own_input_rows():
    from microagg import MDAV
    from microagg.evaluation.release_record import release_record

    frame = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0, 5.0, 6.0, 7.0],
                          "b": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 70.0]}, index=list(range(7)))
    method = MDAV(k=2)
    release = method.release(frame, drop_incomplete=True)
    record = release_record(release, frame, method=method)
    kept = frame.dropna()
    assert record.records == 6 and record.risk["before"].records == 6
    assert record.report["rows_dropped_as_incomplete"] == 1
    expected = 100 * np.mean(((kept - release.frame) ** 2).sum() / ((kept - kept.mean()) ** 2)
                             .sum())
    assert record.utility.sse_percent == pytest.approx(expected)


def test_a_failed_release_writes_no_report(run_cli, data, tmp_path):
    source, schema = data
    out = tmp_path / "bad.csv"
    result = run_cli("microaggregate", source, "-o", out, "--k", "100000", "--schema", schema,
                     "--report", tmp_path / "bad.html")
    assert result.code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "in.yaml"]
    result = run_cli("mask", source, "-o", out, "--method", "rank-swap", "--fraction", "0.1",
                     "--report", tmp_path / "bad.txt")
    assert result.code == 2 and "--report must name an .html file" in result.stderr
    result = run_cli("tclose", source, "-o", out, "--k", "5", "--t", "0.4", "--quasi", "age",
                     "--confidential", "savings", "--report", tmp_path / "r.html",
                     "--report-kind", "public")
    assert result.code == 2 and "--report-kind" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "in.yaml"]


def test_the_report_never_replaces_an_input(run_cli, data, tmp_path):
    """A schema named like the report, an HTML report named like the input or the table's
    report: refused, every input intact, nothing written."""
    source, schema = data
    out = tmp_path / "out.csv"
    named_like_report = tmp_path / "out.csv.report.json"
    named_like_report.write_bytes(schema.read_bytes())
    saved = {p: p.read_bytes() for p in (source, schema, named_like_report)}
    cases = [["microaggregate", source, "-o", out, "--k", "5", "--schema", named_like_report],
             ["mask", source, "-o", out, "--method", "rank-swap", "--fraction", "0.1",
              "--schema", named_like_report]]
    for args in cases:
        result = run_cli(*args)
        assert result.code == 2 and "would destroy the input" in result.stderr, result.stderr
    html_schema = tmp_path / "schema.html"  # a schema named like an HTML report
    html_schema.write_bytes(schema.read_bytes())
    saved[html_schema] = html_schema.read_bytes()
    result = run_cli("tclose", source, "-o", out, "--k", "5", "--t", "0.4", "--quasi", "age",
                     "--confidential", "savings", "--schema", html_schema, "--report",
                     html_schema)
    assert result.code == 2 and "would destroy the input" in result.stderr, result.stderr
    result = run_cli("microaggregate", source, "-o", tmp_path / "x.csv", "--k", "5",
                     "--labels-out", tmp_path / "x.csv.report.json")
    assert result.code == 2 and "two different outputs" in result.stderr
    assert {p: p.read_bytes() for p in saved} == saved
    assert not out.exists() and not (tmp_path / "x.csv").exists()


def test_json_output_is_the_method_report_unchanged(run_cli, data, tmp_path):
    from microagg import MDAV

    source, schema = data
    result = run_cli("microaggregate", source, "-o", tmp_path / "m.csv", "--k", "5",
                     "--schema", schema, "--json")
    printed = json.loads(result.stdout)
    expected = MDAV(k=5).release(pd.read_csv(source),
                                 schema=datasets.synthetic(400, 4, seed=1).schema).report
    assert set(printed) == set(expected.to_dict())
    record = json.loads((tmp_path / "m.csv.report.json").read_text())
    assert record["report"] == printed


def test_a_dp_report_holds_provenance_but_nothing_computed_from_the_records(run_cli, data,
                                                                           tmp_path):
    from microagg.release.reports.report import PrivacyReport

    source, schema = data
    out = tmp_path / "d.csv"
    result = run_cli("dp", source, "-o", out, "--epsilon", "1", "--k", "20", "--schema",
                     schema, "--columns", "age,income")
    assert result.code == 0, result.stderr
    record = json.loads((tmp_path / "d.csv.privacy.json").read_text())
    assert not (tmp_path / "d.csv.report.json").exists()
    report_keys = {f for f in PrivacyReport.__dataclass_fields__}
    assert report_keys <= set(record) and isinstance(record["columns"], list)
    assert record["rows_aligned"] is False and record["format"] == "microagg-privacy/1"
    assert record["input"]["name"] == "in.csv"
    assert "sha256" not in record["input"] and "bytes" not in record["input"]
    text = json.dumps(record)
    assert hashlib.sha256(source.read_bytes()).hexdigest() not in text
    for figure in ("risk", "utility", "record_linkage_percent", "sse_percent", "unique_percent"):
        assert figure not in record
    assert "seed" not in record["parameters"] and record["parameters"]["epsilon"] == 1.0


def test_a_dp_html_report_shows_the_ledger_domains_and_unit_and_nothing_else(run_cli, data,
                                                                            tmp_path):
    source, schema = data
    out, page = tmp_path / "d.csv", tmp_path / "d.html"
    bad = run_cli("dp", source, "-o", out, "--epsilon", "1", "--k", "20", "--schema", schema,
                  "--columns", "age,income", "--report", tmp_path / "d.txt")
    assert bad.code == 2 and "--report must name an .html file" in bad.stderr
    assert not out.exists()
    result = run_cli("dp", source, "-o", out, "--epsilon", "1", "--k", "20", "--schema",
                     schema, "--columns", "age,income", "--report", page)
    assert result.code == 0, result.stderr
    html = page.read_text()
    record = json.loads((tmp_path / "d.csv.privacy.json").read_text())
    for part in record["epsilon_split"]:
        assert f"<td>{part['part']}</td>" in html
    assert 'id="domains"' in html and "one record" in html and record["guarantee"] in html
    original = pd.read_csv(source)
    for column in ("age", "income"):  # no statistic of the records on the page
        assert f"{original[column].mean():.4g}" not in html
    assert hashlib.sha256(source.read_bytes()).hexdigest() not in html


def _record(frame: pd.DataFrame, schema):
    from microagg import MDAV
    from microagg.evaluation.release_record import release_record

    method = MDAV(k=3)
    release = method.release(frame, schema=schema)
    return release_record(release, frame, method=method, source=None, schema=schema)


def test_the_external_html_report_holds_no_record_level_figure():
    from microagg.evaluation.report_html import release_html

    synthetic = datasets.synthetic(200, 3, seed=2)
    frame = synthetic.frame.copy()
    frame.loc[:6, ["age", "income", "expenses"]] = frame.loc[0, ["age", "income",
                                                                 "expenses"]].to_numpy()
    record = _record(frame, synthetic.schema)
    internal, external = release_html(record), release_html(record, "external")
    for page in (internal, external):
        assert page.startswith("<!DOCTYPE html>") and "http://" not in page
        assert "https://" not in page and "<script" not in page
        assert record.guarantee.statement in page and "k</td><td style='text-align:left'>3" \
            in page
    after = record.risk["after"]
    clusters = record.report["clusters"]
    figures = {"record linkage": f"{after.record_linkage_percent:.4g}",
               "rank risk": f"{after.rank_risk:.4g}",
               "unique before": f"{record.risk['before'].unique_percent:.4g}",
               "largest cluster": f"<td style='text-align:left'>{clusters['largest']}</td>",
               "histogram": 'id="figure-clusters"', "per attribute": 'id="per-attribute"',
               "mean variation": "mean variation"}
    assert clusters["largest"] > clusters["smallest"]  # the repeated records make one larger
    for name, text in figures.items():
        assert text in internal, name
        assert text not in external, name
    assert "id=\"risk\"" in internal and "id=\"risk\"" not in external
    assert "Internal report" in internal and "External report" in external


def test_evaluate_refuses_record_level_measures_on_a_dp_release(run_cli, data, tmp_path):
    source, schema = data
    out = tmp_path / "d.csv"
    assert run_cli("dp", source, "-o", out, "--epsilon", "1", "--k", "20", "--schema", schema,
                   "--columns", "age,income", "--bounds-from-data").code == 0
    result = run_cli("evaluate", source, out, "--schema", schema, "--columns", "age,income",
                     "--json")
    assert result.code == 0, result.stderr
    measured = json.loads(result.stdout)
    for key in ("sse", "sse_percent", "record_linkage_percent", "relative_error", "rank_risk"):
        assert measured[key] is None and key in measured["skipped"]
    for key in ("jsd", "mean_variation", "variance_variation", "emd"):
        assert measured[key] is not None, key
    assert measured["aligned"] is False
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "d.csv.privacy.json" in lines[0] and "left out" in lines[0]
    text = run_cli("evaluate", source, out, "--schema", schema, "--columns", "age,income")
    assert "SSE" not in text.stdout and "JSD" in text.stdout and "EMD" in text.stdout


def test_evaluate_of_an_aligned_release_is_unchanged(run_cli, data, tmp_path):
    """An MDAV release's report says its rows are aligned: evaluate gives what it gives
    without a report, and says nothing on stderr."""
    source, schema = data
    out = tmp_path / "m.csv"
    assert run_cli("microaggregate", source, "-o", out, "--k", "5", "--schema", schema).code == 0
    with_report = run_cli("evaluate", source, out, "--schema", schema, "--json")
    (tmp_path / "m.csv.report.json").unlink()
    without = run_cli("evaluate", source, out, "--schema", schema, "--json")
    assert with_report.stdout == without.stdout and with_report.stderr == ""
    measured = json.loads(with_report.stdout)
    assert measured["aligned"] is True and measured["skipped"] == {}
    assert measured["sse_percent"] > 0 and measured["record_linkage_percent"] is not None
    text = run_cli("evaluate", source, out, "--schema", schema)
    assert "SSE/SST" in text.stdout and "record linkage" in text.stdout


def test_an_older_privacy_report_without_rows_aligned_still_counts(tmp_path):
    from microagg.release.reports.sidecar import rows_aligned

    table = tmp_path / "t.csv"
    assert rows_aligned(table) == (True, None)
    sidecar = tmp_path / "t.csv.privacy.json"
    sidecar.write_text(json.dumps({"row_order": "uniformly random permutation"}))
    assert rows_aligned(table) == (False, sidecar)
    sidecar.unlink()
    (tmp_path / "t.csv.report.json").write_text(json.dumps({"rows_aligned": True}))
    assert rows_aligned(table)[0] is True
    (tmp_path / "t.csv.report.json").write_text("{not json")
    from microagg.errors import InputError

    with pytest.raises(InputError, match="cannot read the report"):
        rows_aligned(table)


def test_evaluate_in_python_takes_aligned():
    from microagg.evaluation.evaluate import evaluate

    rng = np.random.default_rng(0)
    original = pd.DataFrame({"x": rng.normal(size=50), "y": rng.normal(size=50)})
    shuffled = original.sample(frac=1.0, random_state=1).reset_index(drop=True)
    aligned = evaluate(original, shuffled)
    assert aligned.sse_percent > 50  # row i against row i of a shuffle: a large error
    unaligned = evaluate(original, shuffled, aligned=False)
    assert unaligned.sse is None and unaligned.jsd == pytest.approx(0.0)
    assert unaligned.mean_variation == pytest.approx(0.0, abs=1e-12)
    shorter = evaluate(original, shuffled.iloc[:40], aligned=False)
    assert shorter.jsd > 0 and shorter.per_attribute["x"].sse is None
