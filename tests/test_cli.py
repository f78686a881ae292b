import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from microagg import __version__


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def distinct_csv(tmp_path: Path) -> Path:
    return _write(tmp_path / "distinct.csv", "a,b,c\n1,10,x\n2,20,y\n3,30,z\n4,40,w\n")


@pytest.fixture
def bad_inputs(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """Bad input name -> (extra arguments for `check IN --k 2`, expected message fragment)."""
    nan = _write(tmp_path / "nan.csv", "a,b\n1,2\n,3\n")
    text = _write(tmp_path / "text.csv", "a,b\n1,2\nlots,3\n")
    empty = _write(tmp_path / "empty.csv", "a,b\n")
    dup = _write(tmp_path / "dup.csv", "a,a\n1,2\n3,4\n")
    ok = _write(tmp_path / "ok.csv", "a,b\n1,2\n5,3\n")
    schema = _write(tmp_path / "s.yaml", "attributes:\n  a: {kind: numeric, domain: [0, 2]}\n")
    text_schema = _write(tmp_path / "t.yaml", "attributes:\n  a: {kind: numeric}\n")
    return {
        "missing file": ([str(tmp_path / "absent.csv"), "--k", "2"], "file not found"),
        "unknown column": ([str(ok), "--k", "2", "--quasi", "zz"], "unknown column 'zz'"),
        "NaN": ([str(nan), "--k", "2"], "column 'a' has a missing value in row 2"),
        "text in numeric column": ([str(text), "--k", "2", "--schema", str(text_schema)],
                                   "row 2 holds the text 'lots'"),
        "empty table": ([str(empty), "--k", "2"], "no rows"),
        "duplicated column names": ([str(dup), "--k", "2"], "'a' appears more than once"),
        "value outside the domain": ([str(ok), "--k", "2", "--schema", str(schema)],
                                     "outside the declared domain [0, 2]"),
        "k < 1": ([str(ok), "--k", "0"], "--k must be"),
        "k > n": ([str(ok), "--k", "3"], "k = 3 exceeds the number of records (2)"),
        "missing schema": ([str(ok), "--k", "2", "--schema", str(tmp_path / "no.yaml")],
                           "schema file not found"),
    }


BAD = ["missing file", "unknown column", "NaN", "text in numeric column", "empty table",
       "duplicated column names", "value outside the domain", "k < 1", "k > n", "missing schema"]


@pytest.mark.parametrize("case", [c for c in BAD if c != "NaN"])  # a missing value matches any
def test_check_bad_input_exit_2_one_line(run_cli, bad_inputs, case):
    args, fragment = bad_inputs[case]
    result = run_cli("check", *args)
    assert result.code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("microagg: error: ")
    assert fragment in lines[0]


def test_version(run_cli):
    result = run_cli("--version")
    assert result.code == 0 and result.stdout.strip() == f"microagg {__version__}"


def test_check_distinct_rows_violates_k2(run_cli, distinct_csv):
    result = run_cli("check", distinct_csv, "--k", "2")
    assert result.code == 1
    assert "VIOLATED for k = 2" in result.stdout
    assert run_cli("check", distinct_csv, "--k", "1").code == 0


def test_check_json_k_and_t(run_cli, tmp_path):
    path = _write(tmp_path / "t.csv", "q,c\n0,1\n0,2\n1,3\n1,4\n")
    result = run_cli("check", path, "--k", "2", "--quasi", "q", "--t", "0.34",
                     "--confidential", "c", "--json")
    assert result.code == 0
    report = json.loads(result.stdout)
    assert report["holds"] is True
    assert report["k_anonymity"]["smallest_class"] == 2
    assert report["t_closeness"][0]["largest_emd"] == pytest.approx(1 / 3)
    strict = run_cli("check", path, "--quasi", "q", "--t", "0.3", "--confidential", "c", "--json")
    assert strict.code == 1 and json.loads(strict.stdout)["holds"] is False


def test_check_needs_something_to_check(run_cli, distinct_csv):
    result = run_cli("check", distinct_csv)
    assert result.code == 2 and "give --k, --l and/or --t" in result.stderr
    assert run_cli("check", distinct_csv, "--t", "0.1").code == 2  # --t without --confidential


def test_evaluate_json(run_cli, tmp_path, distinct_csv):
    masked = tmp_path / "masked.csv"
    pd.DataFrame({"a": [1.5, 1.5, 3.5, 3.5], "b": [10, 20, 30, 40], "c": list("xyzw")}).to_csv(
        masked, index=False)
    result = run_cli("evaluate", distinct_csv, masked, "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["columns"] == ["a", "b"]
    assert report["sse"] == pytest.approx(1.0)
    for key in ("sse_percent", "record_linkage_percent", "relative_error", "jsd",
                "variance_variation", "mean_variation"):
        assert key in report
    text = run_cli("evaluate", distinct_csv, masked)
    assert "record linkage (%)" in text.stdout


def test_evaluate_row_mismatch(run_cli, tmp_path, distinct_csv):
    short = _write(tmp_path / "short.csv", "a,b,c\n1,10,x\n")
    result = run_cli("evaluate", distinct_csv, short)
    assert result.code == 2 and "keep every row" in result.stderr


def test_datasets_export_synthetic_with_schema(run_cli, tmp_path):
    out = tmp_path / "syn.parquet"
    schema = tmp_path / "syn.yaml"
    result = run_cli("datasets", "export", "synthetic", "-o", out, "--schema-out", schema,
                     "--n", "50", "--d", "3")
    assert result.code == 0, result.stderr
    frame = pd.read_parquet(out)
    assert frame.shape == (50, 5)
    assert "income:" in schema.read_text()
    check = run_cli("check", out, "--k", "1", "--schema", schema)
    assert check.code == 0, check.stderr


def test_datasets_export_bad_name_writes_nothing(run_cli, tmp_path):
    out = tmp_path / "x.csv"
    result = run_cli("datasets", "export", "nope", "-o", out)
    assert result.code == 2 and "unknown data set 'nope'" in result.stderr
    assert not out.exists()


def test_datasets_list_json(run_cli):
    result = run_cli("datasets", "list", "--json")
    names = [row["name"] for row in json.loads(result.stdout)]
    assert names == ["census", "eia", "tarragona", "adult", "adult-categorical", "adult-mixed",
                     "synthetic", "census-synthetic"]


@pytest.mark.reference_data
def test_check_and_evaluate_on_census(run_cli, tmp_path):
    path = tmp_path / "census.csv"
    assert run_cli("datasets", "export", "census", "-o", path).code == 0
    assert run_cli("check", path, "--k", "2").code == 1  # every record is distinct
    report = json.loads(run_cli("evaluate", path, path, "--json").stdout)
    assert report["record_linkage_percent"] == 100.0


def test_console_script_exit_codes(tmp_path, distinct_csv):
    """The installed entry point, run as a separate process."""
    command = [sys.executable, "-c", "import sys; from microagg.cli import main; "
               "sys.exit(main())"]
    ok = subprocess.run([*command, "check", str(distinct_csv), "--k", "1"],
                        capture_output=True, text=True)
    violated = subprocess.run([*command, "check", str(distinct_csv), "--k", "2"],
                              capture_output=True, text=True)
    bad = subprocess.run([*command, "check", str(tmp_path / "none.csv"), "--k", "2"],
                         capture_output=True, text=True)
    assert (ok.returncode, violated.returncode, bad.returncode) == (0, 1, 2)
    assert bad.stderr.count("\n") == 1


MICROAGGREGATE_BAD = [c for c in BAD if c != "NaN"]  # MDAV keeps missing values


@pytest.mark.parametrize("case", MICROAGGREGATE_BAD)
def test_microaggregate_bad_input_writes_nothing(run_cli, bad_inputs, tmp_path, case):
    args, fragment = bad_inputs[case]
    source, options = args[0], args[1:]
    if "--quasi" in options:
        options = [o if o != "--quasi" else "--columns" for o in options]
    output = tmp_path / "out" / "masked.csv"
    output.parent.mkdir()
    labels = tmp_path / "out" / "labels.csv"
    result = run_cli("microaggregate", source, "-o", output, "--labels-out", labels, *options)
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert list(output.parent.iterdir()) == []  # no output, no labels, no temporary file


def test_microaggregate_writes_release_and_labels(run_cli, tmp_path, distinct_csv):
    output = tmp_path / "m.parquet"
    labels = tmp_path / "l.csv"
    result = run_cli("microaggregate", distinct_csv, "-o", output, "--k", "2", "--labels-out",
                     labels, "--columns", "a,b")
    assert result.code == 0, result.stderr
    masked = pd.read_parquet(output)
    # whole numbers stay whole (means 1.5 and 3.5 rounded half to even), --no-round keeps them
    assert list(masked["a"]) == [2, 2, 4, 4] and list(masked["c"]) == list("xyzw")
    assert list(pd.read_csv(labels)["cluster"]) == [0, 0, 1, 1]
    exact = tmp_path / "exact.csv"
    assert run_cli("microaggregate", distinct_csv, "-o", exact, "--k", "2", "--columns", "a,b",
                   "--no-round").code == 0
    assert list(pd.read_csv(exact)["a"]) == [1.5, 1.5, 3.5, 3.5]
    assert run_cli("check", output, "--k", "2", "--quasi", "a,b").code == 0
    report = json.loads(run_cli("microaggregate", distinct_csv, "-o", output, "--k", "2",
                                "--method", "vmdav", "--json").stdout)
    assert report["method"] == "vmdav" and report["k_anonymity"]["holds"]


def test_microaggregate_unknown_method(run_cli, tmp_path, distinct_csv):
    result = run_cli("microaggregate", distinct_csv, "-o", tmp_path / "x.csv", "--k", "2",
                     "--method", "kmeans")
    assert result.code == 2 and "unknown method 'kmeans'" in result.stderr
    assert not (tmp_path / "x.csv").exists()


def test_demo(run_cli):
    result = run_cli("demo", "--n", "300")
    assert result.code == 0, result.stderr
    assert "5-anonymity holds" in result.stdout
    assert "record linkage" in result.stdout


def test_microaggregate_and_evaluate_with_a_taxonomy(run_cli, tmp_path):
    (tmp_path / "job.csv").write_text("a1;A;root\na2;A;root\nb1;B;root\nb2;B;root\n")
    (tmp_path / "s.yaml").write_text(
        "attributes:\n  job: {role: quasi, kind: nominal, taxonomy: job.csv}\n"
        "  age: {role: quasi, kind: numeric, domain: [0, 100]}\n")
    pd.DataFrame({"job": ["a1", "a2", "b1", "b2"] * 5, "age": range(20, 40)}).to_csv(
        tmp_path / "in.csv", index=False)
    result = run_cli("microaggregate", tmp_path / "in.csv", "-o", tmp_path / "out.csv", "--k",
                     "4", "--schema", tmp_path / "s.yaml", "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["k_anonymity"]["holds"]
    report = json.loads(run_cli("evaluate", tmp_path / "in.csv", tmp_path / "out.csv",
                                "--schema", tmp_path / "s.yaml", "--json").stdout)
    assert report["columns"] == ["job", "age"]
    assert report["taxonomies"]["job"]["concepts"] == 7
    bad = run_cli("microaggregate", tmp_path / "in.csv", "-o", tmp_path / "x.csv", "--k", "4",
                  "--schema", tmp_path / "s.yaml", "--method", "optimal-univariate")
    assert bad.code == 2 and "numeric attributes" in bad.stderr
    assert not (tmp_path / "x.csv").exists()


def test_check_accepts_inner_concepts_of_the_tools_own_release(run_cli, tmp_path):
    (tmp_path / "job.csv").write_text("a1;A;root\na2;A;root\na3;A;root\na4;A;root\n"
                                      "b1;B;root\nb2;B;root\n")
    (tmp_path / "s.yaml").write_text(
        "attributes:\n  job: {role: quasi, kind: nominal, taxonomy: job.csv}\n")
    pd.DataFrame({"job": ["a1", "a2", "a3", "a4", "b1", "b1", "b2", "b2"]}).to_csv(
        tmp_path / "in.csv", index=False)
    assert run_cli("microaggregate", tmp_path / "in.csv", "-o", tmp_path / "out.csv", "--k",
                   "4", "--schema", tmp_path / "s.yaml").code == 0
    assert "A" in set(pd.read_csv(tmp_path / "out.csv")["job"])
    result = run_cli("check", tmp_path / "out.csv", "--k", "4", "--schema", tmp_path / "s.yaml")
    assert result.code == 0, result.stderr
    pd.DataFrame({"job": ["Z"] * 4}).to_csv(tmp_path / "bad.csv", index=False)
    bad = run_cli("check", tmp_path / "bad.csv", "--k", "4", "--schema", tmp_path / "s.yaml")
    assert bad.code == 2 and "'Z'" in bad.stderr


def test_microaggregate_without_schema_masks_every_column(run_cli, tmp_path):
    """No silent pass-through: text columns are quasi-identifiers too, and the summary states
    k-anonymity over the table as written."""
    source = tmp_path / "in.csv"
    pd.DataFrame({"age": [30, 31, 50, 52], "job": ["x", "y", "z", "w"]}).to_csv(source,
                                                                              index=False)
    result = run_cli("microaggregate", source, "-o", tmp_path / "out.csv", "--k", "2")
    assert result.code == 0, result.stderr
    assert "age, job" in result.stdout
    assert run_cli("check", tmp_path / "out.csv", "--k", "2").code == 0  # every column
    partial = run_cli("microaggregate", source, "-o", tmp_path / "p.csv", "--k", "2",
                      "--columns", "age")
    assert "table as written" in partial.stdout and "does NOT hold" in partial.stdout
    assert "released unchanged: job" in partial.stdout


def test_outputs_never_overwrite_the_input_or_each_other(run_cli, tmp_path, distinct_csv):
    before = distinct_csv.read_text()
    same = run_cli("microaggregate", distinct_csv, "-o", distinct_csv, "--k", "2")
    assert same.code == 2 and "would destroy the input" in same.stderr
    assert distinct_csv.read_text() == before
    twice = run_cli("microaggregate", distinct_csv, "-o", tmp_path / "o.csv", "--k", "2",
                    "--labels-out", tmp_path / "o.csv")
    assert twice.code == 2 and "two different outputs" in twice.stderr
    assert not (tmp_path / "o.csv").exists()
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    into_dir = run_cli("microaggregate", distinct_csv, "-o", folder, "--k", "2")
    assert into_dir.code == 2 and "is a folder" in into_dir.stderr
    labels_dir = run_cli("microaggregate", distinct_csv, "-o", tmp_path / "t.csv", "--k", "2",
                         "--labels-out", folder)
    assert labels_dir.code == 2 and not (tmp_path / "t.csv").exists()


def test_outputs_respect_the_umask_and_clean_stale_temporaries(run_cli, tmp_path,
                                                               distinct_csv):
    import os

    stale = tmp_path / ".o.csv.microagg-999999999-abc.tmp"  # a process that no longer runs
    stale.write_text("masked data of a killed run")
    previous = os.umask(0o022)
    try:
        assert run_cli("microaggregate", distinct_csv, "-o", tmp_path / "o.csv", "--k",
                       "2").code == 0
    finally:
        os.umask(previous)
    assert (tmp_path / "o.csv").stat().st_mode & 0o777 == 0o644
    assert not stale.exists()


def test_datasets_export_writes_all_outputs_or_none(run_cli, tmp_path):
    table, schema = tmp_path / "s.csv", tmp_path / "nodir" / "s.yaml"
    missing_folder = run_cli("datasets", "export", "synthetic", "-o", table, "--schema-out",
                             schema)
    assert missing_folder.code == 2 and not table.exists()
    same = run_cli("datasets", "export", "synthetic", "-o", table, "--schema-out", table)
    assert same.code == 2 and "two different outputs" in same.stderr and not table.exists()


def test_exported_taxonomy_paths_are_relative_to_the_schema(tmp_path):
    from microagg.data.schema import Attribute, Kind, Role, Schema

    (tmp_path / "tax").mkdir()
    (tmp_path / "tax" / "job.csv").write_text("a;A\nb;A\n")
    (tmp_path / "out").mkdir()
    schema = Schema((Attribute("job", Role.QUASI, Kind.NOMINAL,
                               taxonomy=tmp_path / "tax" / "job.csv"),))
    schema.save(tmp_path / "out" / "s.yaml")
    assert "taxonomy: ../tax/job.csv" in (tmp_path / "out" / "s.yaml").read_text()
    assert Schema.load(tmp_path / "out" / "s.yaml")["job"].taxonomy.resolve() == (
        tmp_path / "tax" / "job.csv").resolve()


def test_ordinary_files_do_not_crash(run_cli, tmp_path):
    boolean = _write(tmp_path / "b.csv", "a,b,flag\n1,2,True\n3,4,False\n5,6,True\n7,8,False\n")
    for command in (["microaggregate", boolean, "-o", tmp_path / "o.csv", "--k", "2"],
                    ["check", boolean, "--k", "1"]):
        result = run_cli(*command)
        assert result.code == 0, result.stderr
    assert set(pd.read_csv(tmp_path / "o.csv")["flag"]) <= {True, False}
    semicolons = _write(tmp_path / "semi.csv", "a;b\n1;2\n3;4\n5;6\n7;8\n")
    result = run_cli("microaggregate", semicolons, "-o", tmp_path / "s.csv", "--k", "2")
    assert result.code == 0 and "columns a, b" in result.stdout
    huge = _write(tmp_path / "huge.csv", "a,b\n1e308,2\n1.5e308,4\n-1e308,3\n1,1\n")
    for options in ([], ["--standardize", "none"]):
        result = run_cli("microaggregate", huge, "-o", tmp_path / "h.csv", "--k", "2", *options)
        assert result.code == 2 and "rescale the column" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "h.csv").exists()
    means = _write(tmp_path / "m.csv", "a\n10.551\n10.553\n")
    assert run_cli("microaggregate", means, "-o", tmp_path / "mo.csv", "--k", "2").code == 0
    assert (tmp_path / "mo.csv").read_text().split() == ["a", "10.552", "10.552"]


def test_help_is_complete(run_cli):
    from microagg import datasets

    short = run_cli("-h")
    assert short.code == 0 and "Commands" in short.stdout
    text = " ".join(run_cli("--help").stdout.split())
    assert ("ε-differential privacy (insensitive, individual-ranking, cross-moment, laplace)"
            in text)
    export = " ".join(run_cli("datasets", "export", "--help").stdout.split())
    for name in datasets.names():
        assert name in export


def test_interrupt_says_nothing_was_written(monkeypatch, capsys):
    from microagg import cli
    from microagg.cli import program

    class Interrupted:
        def main(self, **_):
            raise KeyboardInterrupt

    monkeypatch.setattr(program, "_click_command", Interrupted)
    assert cli.main(["demo"]) == 130
    assert "interrupted; no output was written" in capsys.readouterr().err


def test_version_and_help_import_no_optional_package():
    """The commands' options come from the method objects, which load the numeric stack; the
    optional and slow packages (the Dask engine, the plots, optimal transport) wait for the
    command that needs them."""
    code = ("import sys; from microagg.cli import main; main(['--version']); main(['--help']); "
            "print(sorted(m for m in ('dask', 'distributed', 'matplotlib', 'ot') "
            "if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().endswith("[]"), result.stdout + result.stderr


def test_version_alone_loads_no_numeric_stack(run_cli):
    """`microagg --version` is answered before the commands are imported (no pandas, numpy
    or numba), and says what the full program says."""
    code = ("import sys; sys.argv = ['microagg', '--version']; from microagg.cli import entry\n"
            "try:\n    entry()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pandas', 'numpy', 'numba') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = result.stdout.strip().splitlines()
    assert lines[-1] == "[]", result.stdout + result.stderr
    assert lines[0] == run_cli("--version").stdout.strip()


def test_negative_seed_and_report_path_folder(run_cli, tmp_path):
    bad = run_cli("datasets", "export", "synthetic", "-o", tmp_path / "s.csv", "--seed", "-1")
    assert bad.code == 2 and "non-negative" in bad.stderr
    source = tmp_path / "in.csv"
    assert run_cli("datasets", "export", "synthetic", "-o", source, "--n", "50").code == 0
    (tmp_path / "out.csv.privacy.json").mkdir()
    result = run_cli("dp", source, "-o", tmp_path / "out.csv", "--epsilon", "1", "--k", "5",
                     "--columns", "age", "--bounds", "age=0:120")
    assert result.code == 2 and "is a folder" in result.stderr
    assert not (tmp_path / "out.csv").exists()  # no table without its report
