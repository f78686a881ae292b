"""The command line's promises under bad or hostile input: exit 2 with one line, nothing
written unless everything is, no input overwritten, nothing on stderr that a DP release must
not publish."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest


def _numbers(tmp_path: Path, name: str = "in.csv") -> Path:
    path = tmp_path / name
    pd.DataFrame({"x": [1.0, 2.0, 3.0, 50.0, 5.0, 6.0, 7.0, 8.0]}).to_csv(path, index=False)
    return path


def test_dp_prints_clamped_counts_only_when_asked(run_cli, tmp_path):
    """The number of values clamped into the declared domain describes the data, not the
    release: it reaches stderr only with --show-clamped."""
    source = _numbers(tmp_path)
    common = ("dp", source, "--epsilon", "1", "--k", "2", "--bounds", "x=0:10")
    quiet = run_cli(*common, "-o", tmp_path / "a.csv")
    assert quiet.code == 0, quiet.stderr
    assert "clamped" not in quiet.stderr and "1 value" not in quiet.stderr
    shown = run_cli(*common, "-o", tmp_path / "b.csv", "--show-clamped")
    assert shown.code == 0, shown.stderr
    assert "1 value(s) of 'x' lay outside its declared domain" in shown.stderr


def _schema_with_taxonomy(tmp_path: Path) -> tuple[Path, Path, Path]:
    data = tmp_path / "jobs.csv"
    pd.DataFrame({"age": [30, 31, 40, 41, 50, 51],
                  "job": ["a", "b", "a", "b", "a", "b"]}).to_csv(data, index=False)
    taxonomy = tmp_path / "job.csv"
    taxonomy.write_text("a;A\nb;A\n")
    schema = tmp_path / "s.yaml"
    schema.write_text("attributes:\n  age: {role: quasi, kind: numeric}\n"
                      "  job: {role: quasi, kind: nominal, taxonomy: job.csv}\n")
    return data, schema, taxonomy


def test_no_output_replaces_the_schema_or_its_taxonomy(run_cli, tmp_path):
    """Every file a command reads is an input: the schema and the taxonomy files it names
    too, whichever output would replace them."""
    data, schema, taxonomy = _schema_with_taxonomy(tmp_path)
    saved = {p: p.read_bytes() for p in (data, schema, taxonomy)}
    cases = [
        ["microaggregate", data, "-o", tmp_path / "m.csv", "--k", "2", "--schema", schema,
         "--labels-out", taxonomy],
        ["microaggregate", data, "-o", taxonomy, "--k", "2", "--schema", schema],
        ["tclose", data, "-o", tmp_path / "t.csv", "--k", "2", "--t", "0.5", "--quasi", "age",
         "--confidential", "job", "--schema", schema, "--labels-out", taxonomy],
    ]
    privacy_schema = tmp_path / "d.csv.privacy.json"  # a schema named like the DP report
    privacy_schema.write_bytes(schema.read_bytes())
    saved[privacy_schema] = privacy_schema.read_bytes()
    cases.append(["dp", data, "-o", tmp_path / "d.csv", "--epsilon", "1", "--k", "2",
                  "--columns", "age", "--bounds", "age=0:100", "--schema", privacy_schema])
    for args in cases:
        result = run_cli(*args)
        assert result.code == 2, (args, result.stderr)
        assert "would destroy the input" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert {p: p.read_bytes() for p in saved} == saved
        assert not (tmp_path / "m.csv").exists() and not (tmp_path / "d.csv").exists()


def test_an_unwritable_destination_fails_before_the_work(run_cli, tmp_path):
    """The output folder is tried before anything is computed: a folder that takes no file,
    and a name longer than the file system allows, are one-line errors, and nothing of the
    command's other outputs appears."""
    source = _numbers(tmp_path)
    unwritable = Path("/sys/kernel/out.csv")  # a folder no one may create files in
    result = run_cli("microaggregate", source, "-o", tmp_path / "m.csv", "--k", "2",
                     "--labels-out", unwritable)
    assert result.code == 2 and "cannot write to /sys/kernel" in result.stderr
    assert not (tmp_path / "m.csv").exists()
    long_name = tmp_path / ("x" * 300 + ".csv")
    result = run_cli("microaggregate", source, "-o", long_name, "--k", "2")
    assert result.code == 2 and "too long" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_outputs_appear_together_or_not_at_all(tmp_path, monkeypatch):
    """A rename that fails half way puts back what was there and removes what was new."""
    import os

    from microagg.data.io import write_all
    from microagg.errors import InputError

    first, second = tmp_path / "a.csv", tmp_path / "a.csv.privacy.json"
    first.write_text("old table")
    real = os.replace
    calls = []

    def failing(src, dst):
        calls.append(dst)
        if Path(dst) == second:
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    try:
        write_all([(first, lambda p: p.write_text("new table")),
                   (second, lambda p: p.write_text("{}"))])
    except InputError as exc:
        assert "No space left on device" in str(exc) and "no output was written" in str(exc)
    else:
        raise AssertionError("the failed write was not reported")
    monkeypatch.setattr(os, "replace", real)
    assert first.read_text() == "old table" and not second.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]
    assert len(calls) >= 2


def test_a_dask_output_folder_with_foreign_files_is_refused(tmp_path):
    from microagg.at_scale.dataset import check_dataset_output
    from microagg.errors import InputError

    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "part-00000.parquet").write_bytes(b"")
    assert check_dataset_output(folder) == folder  # a data set microagg wrote
    (folder / "notes.txt").write_text("my notes")
    try:
        check_dataset_output(folder)
    except InputError as exc:
        assert "notes.txt" in str(exc) and "would delete them" in str(exc)
    else:
        raise AssertionError("a folder with foreign files was accepted")
    assert (folder / "notes.txt").read_text() == "my notes"


def test_nonsense_masks_are_refused(run_cli, tmp_path):
    """A parameter that masks nothing, or overflows, is an error, not a table of NaNs or an
    unchanged table called masked."""
    source = _numbers(tmp_path)
    for method, param, fragment in (("correlated-noise", "1e308", "overflows"),
                                    ("multiplicative-noise", "1e308", "overflows"),
                                    ("rank-swap", "0", "--fraction must be a number > 0"),
                                    ("rank-swap", "0.1", "changes no value"),
                                    ("correlated-noise", "0", "--gamma must be a number > 0")):
        result = run_cli("mask", source, "-o", tmp_path / "m.csv", "--method", method,
                         "--param", param)
        assert result.code == 2 and fragment in result.stderr, (method, param, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "m.csv").exists()
    huge = tmp_path / "huge.csv"
    pd.DataFrame({"x": [1.0, 2.0, 1e300, 4.0]}).to_csv(huge, index=False)
    result = run_cli("mask", huge, "-o", tmp_path / "m.csv", "--method",
                     "multiplicative-noise", "--param", "0.1")
    assert result.code == 2 and "beyond" in result.stderr


def test_a_schema_that_declares_a_column_twice_or_is_not_utf8_is_refused(run_cli, tmp_path):
    source = _numbers(tmp_path)
    twice = tmp_path / "twice.yaml"
    twice.write_text("attributes:\n  x: {kind: numeric, domain: [0, 100]}\n"
                     "  x: {kind: nominal}\n")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("attributes:\n  \u00e2ge: {kind: numeric}\n".encode("latin-1"))
    for schema, fragment in ((twice, "'x' is declared twice (line 3)"), (latin, "not UTF-8")):
        result = run_cli("check", source, "--k", "2", "--schema", schema)
        assert result.code == 2 and fragment in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_numbers_that_were_not_read_as_numbers_are_refused(run_cli, tmp_path):
    """Never generalize a column because its numbers were not parsed."""
    decimal = tmp_path / "decimal.csv"
    decimal.write_text("age;w\n69,5;1\n70,25;2\n71,0;3\n")
    thousands = tmp_path / "thousands.csv"
    thousands.write_text('income,w\n"31,931",1\n"1,234",2\n"2,000,500",3\n')
    strings = tmp_path / "strings.parquet"
    pd.DataFrame({"code": ["1", "2", "3"], "w": [1.0, 2.0, 3.0]}).to_parquet(strings)
    dates = tmp_path / "dates.parquet"
    pd.DataFrame({"day": pd.date_range("2020-01-01", periods=3),
                  "w": [1.0, 2.0, 3.0]}).to_parquet(dates)
    for path, fragment in ((decimal, "decimal comma (row 1: '69,5')"),
                           (thousands, "thousands separator (row 1: '31,931')"),
                           (strings, "numbers stored as text"), (dates, "dates or times")):
        result = run_cli("microaggregate", path, "-o", tmp_path / "o.csv", "--k", "2",
                         "--weight", "w")
        assert result.code == 2 and fragment in result.stderr, result.stderr
        assert not (tmp_path / "o.csv").exists()
    # a column that is not masked is carried as it is
    masked = run_cli("mask", dates, "-o", tmp_path / "m.csv", "--method", "rank-swap",
                     "--param", "0.9", "--seed", "1", "--columns", "w")
    assert masked.code == 0 and "written unchanged: day" in masked.stdout, masked.stderr


def test_contradictory_or_overflowing_options_are_refused(run_cli, tmp_path):
    source = _numbers(tmp_path)
    common = ("dp", source, "-o", tmp_path / "d.csv", "--k", "2")
    for args, fragment in (
            (("--epsilon", "1e308", "--bounds", "x=0:100"), "protects nothing"),
            (("--epsilon", "1", "--bounds", "x=0:1e308"), "where widths and their squares"),
            (("--epsilon", "1", "--bounds", "x=0:10,x=0:20"), "names column 'x' twice"),
            (("--epsilon", "1", "--bounds", "x=0:100", "--method", "cross-moment",
              "--moments", "1", "--coskewness", "all"), "--coskewness applies to --moments 2")):
        result = run_cli(*common, *args)
        assert result.code == 2 and fragment in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "d.csv").exists()
    result = run_cli("datasets", "export", "synthetic", "-o", tmp_path / "s.csv", "--n",
                     "1000000000000")
    assert result.code == 2 and "write it in parts" in result.stderr
    result = run_cli("microaggregate", source, "-o", tmp_path / "big", "--k", "2",
                     "--engine", "dask", "--block-size", "0")
    assert result.code == 2 and "--block-size must be at least 2k" in result.stderr


def test_evaluate_refuses_a_masked_table_that_lacks_columns_and_writes_valid_json(
        run_cli, tmp_path):
    import json

    original = tmp_path / "o.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [5.0, 5.0, 5.0, 5.0],
                  "c": [1.0, 0.0, 1.0, 0.0]}).to_csv(original, index=False)
    partial = tmp_path / "p.csv"
    pd.DataFrame({"a": [1.5, 1.5, 3.5, 3.5]}).to_csv(partial, index=False)
    result = run_cli("evaluate", original, partial)
    assert result.code == 2 and "lacks 2 of the 3 columns" in result.stderr
    constant = tmp_path / "k.csv"
    pd.DataFrame({"b": [5.0, 5.0, 5.0, 5.0]}).to_csv(constant, index=False)
    result = run_cli("evaluate", original, constant, "--columns", "b", "--json")
    assert result.code == 0, result.stderr
    body = json.loads(result.stdout, parse_constant=lambda c: pytest_fail(c))
    assert body["sse_percent"] is None  # SST = 0: undefined, not NaN


def pytest_fail(constant: str) -> None:
    raise AssertionError(f"invalid JSON constant {constant}")


def test_usage_errors_are_one_line_and_bare_commands_print_help(run_cli):
    for args, fragment in ((["frobnicate"], "No such command 'frobnicate'"),
                           (["check", "--frob"], "No such option: --frob"),
                           (["demo", "--k", "a"], "Invalid value for '--k'"),
                           (["datasets", "export", "census"], "Missing option '-o'")):
        result = run_cli(*args)
        assert result.code == 2 and fragment in result.stderr, (args, result.stderr)
        assert result.stderr.startswith("microagg: error: ")
        assert len(result.stderr.strip().splitlines()) == 1
    bare = run_cli()
    assert bare.code == 0 and "Usage: microagg" in bare.stdout and bare.stderr == ""


def test_k_anonymity_with_k_1_is_refused(run_cli, tmp_path):
    """k = 1 leaves every record as it is: the release would be the input called masked."""
    source = _numbers(tmp_path)
    result = run_cli("microaggregate", source, "-o", tmp_path / "o.csv", "--k", "1")
    assert result.code == 2 and "k-anonymous release needs k >= 2" in result.stderr
    assert run_cli("check", source, "--k", "1").code == 0  # checking k = 1 is fine


def test_names_match_across_unicode_forms_and_unnamed_columns_are_refused(run_cli, tmp_path):
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "na\u00efve")
    data = tmp_path / "u.csv"
    data.write_text(f"{decomposed},b\n1,2\n3,4\n5,6\n7,8\n", encoding="utf-8")
    result = run_cli("check", data, "--k", "1", "--quasi", "na\u00efve")
    assert result.code == 0, result.stderr
    unnamed = tmp_path / "unnamed.csv"
    unnamed.write_text("a,,c\n1,2,3\n")
    result = run_cli("check", unnamed, "--k", "1")
    assert result.code == 2 and "column 2 of" in result.stderr and "has no name" in result.stderr


def test_options_of_other_data_sets_and_nested_cells_are_refused(run_cli, tmp_path):
    result = run_cli("datasets", "export", "census", "-o", tmp_path / "c.csv", "--n", "1000")
    assert result.code == 2 and "--n applies to the synthetic data set only" in result.stderr
    nested = tmp_path / "nested.parquet"
    pd.DataFrame({"tags": [[1, 2], [3], [4], [5]], "x": [1.0, 2.0, 3.0, 4.0]}).to_parquet(nested)
    result = run_cli("microaggregate", nested, "-o", tmp_path / "o.csv", "--k", "2")
    assert result.code == 2 and "holds lists or mappings" in result.stderr
    assert run_cli("check", nested, "--k", "1").code == 0  # checking it masks nothing
    schema = tmp_path / "list.yaml"
    schema.write_text("- a\n- b\n")
    result = run_cli("check", nested, "--k", "1", "--schema", schema)
    assert result.code == 2 and f"schema file {schema}" in result.stderr


def _synthetic(tmp_path: Path, n: int = 60) -> tuple[Path, Path]:
    from microagg import datasets

    data = datasets.synthetic(n, 4, seed=1)
    table, schema = tmp_path / "syn.csv", tmp_path / "syn.yaml"
    data.frame.to_csv(table, index=False)
    data.schema.save(schema)
    return table, schema


def test_options_that_would_do_nothing_are_refused(run_cli, tmp_path):
    """An option the command would ignore is an error, not silence."""
    table, schema = _synthetic(tmp_path)
    cases = [
        (["microaggregate", table, "-o", tmp_path / "o.csv", "--k", "3", "--clamp"],
         "none of the masked numeric columns declares one"),
        (["tclose", table, "-o", tmp_path / "o.csv", "--k", "5", "--t", "0.5", "--quasi",
          "age,income", "--confidential", "savings", "--distance", "hierarchical"],
         "savings use the ordered distance"),
        (["tclose", table, "-o", tmp_path / "o.csv", "--k", "5", "--t", "0.5", "--quasi",
          "age,income", "--confidential", "region", "--distance", "hierarchical"],
         "needs the attribute's taxonomy"),
        (["tclose", table, "-o", tmp_path / "o.csv", "--k", "5", "--t", "0.5", "--quasi",
          "age,income", "--confidential", "savings", "--method", "k-anonymity-first",
          "--threads", "2"], "not k-anonymity-first (it runs on one thread)"),
        (["check", table, "--k", "2", "--distance", "equal"], "--distance applies with --t"),
        (["dp", table, "-o", tmp_path / "o.csv", "--epsilon", "1", "--k", "10", "--schema",
          schema, "--columns", "age", "--bounds", "income=0:10"],
         "'income', which this release does not protect (it is dropped)"),
        (["dp", table, "-o", tmp_path / "o.csv", "--epsilon", "1", "--k", "20", "--schema",
          schema, "--columns", "age,income", "--method", "cross-moment", "--moments", "0",
          "--variant", "variances"], "--moments 0 releases the means only"),
        (["evaluate", table, table, "--sample", "10"], "--sample applies to --engine dask"),
        (["compare", table, "--target-risk", "mdav=5", "--methods", "mdav,mdav"],
         "--methods names mdav twice"),
        (["compare", table, "--target-risk", "mdav=5", "--seed", "-1"],
         "--seed must be a non-negative integer"),
        (["mask", table, "-o", tmp_path / "o.csv", "--method", "multiplicative-noise",
          "--param", "1e-12"], "changes no value beyond rounding"),
    ]
    for args, fragment in cases:
        result = run_cli(*args)
        assert result.code == 2 and fragment in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "o.csv").exists()


def test_schemas_and_taxonomies_a_person_mistypes_are_refused(run_cli, tmp_path):
    table, _ = _synthetic(tmp_path)
    writes = {
        "yesno.yaml": ("attributes:\n  region: {kind: nominal, domain: [yes, no]}\n",
                       "category True is a boolean"),
        "nested.yaml": ("attributes:\n  region: {kind: nominal, domain: [[North, South]]}\n",
                        "is not a single value"),
        "bomb.yaml": ("a: &a [x, x]\nb: &b [*a, *a]\nattributes: {region: {kind: nominal}}\n",
                      "aliases (*name) are not allowed"),
        "latin.yaml": ("attributes:\n  region: {kind: nominal, taxonomy: latin.csv}\n",
                       "latin.csv is not UTF-8"),
    }
    (tmp_path / "latin.csv").write_bytes("S\u00fcd;*\nNorth;*\n".encode("latin-1"))
    for name, (text, fragment) in writes.items():
        (tmp_path / name).write_text(text)
        result = run_cli("microaggregate", table, "-o", tmp_path / "o.csv", "--k", "3",
                         "--schema", tmp_path / name)
        assert result.code == 2 and fragment in result.stderr, (name, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1


def test_hierarchical_t_closeness_of_a_release_checks_as_it_was_reported(run_cli, tmp_path):
    """`check --distance hierarchical` on a release whose taxonomy concepts it reads."""
    import json

    (tmp_path / "tax.csv").write_text("a;A;*\nb;A;*\nc;B;*\nd;B;*\n")
    (tmp_path / "s.yaml").write_text(
        "attributes:\n  x: {role: quasi, kind: numeric, domain: [0, 100]}\n"
        "  c: {role: confidential, kind: nominal, taxonomy: tax.csv}\n")
    table = tmp_path / "t.csv"
    pd.DataFrame({"x": range(40), "c": list("abcd") * 10}).to_csv(table, index=False)
    out = tmp_path / "r.csv"
    made = run_cli("tclose", table, "-o", out, "--k", "4", "--t", "0.3", "--schema",
                   tmp_path / "s.yaml", "--distance", "hierarchical", "--json")
    assert made.code == 0, made.stderr
    reported = json.loads(made.stdout)["largest_emd"]["c"]
    checked = run_cli("check", out, "--k", "4", "--t", "0.3", "--quasi", "x",
                      "--confidential", "c", "--schema", tmp_path / "s.yaml", "--distance",
                      "hierarchical", "--json")
    assert checked.code == 0, checked.stderr
    assert json.loads(checked.stdout)["t_closeness"][0]["largest_emd"] == pytest.approx(
        reported)


def test_an_input_named_like_a_stale_temporary_is_never_removed(run_cli, tmp_path):
    table, _ = _synthetic(tmp_path)
    schema = tmp_path / ".o.csv.microagg-999999999-x.tmp"  # what a killed run would leave
    schema.write_text("attributes:\n  age: {kind: numeric}\n")
    result = run_cli("microaggregate", table, "-o", tmp_path / "o.csv", "--k", "3",
                     "--schema", schema)
    assert result.code == 0, result.stderr
    assert schema.exists()


def test_quoted_names_hold_commas_and_an_unchanged_release_says_so(run_cli, tmp_path):
    data = tmp_path / "c.csv"
    pd.DataFrame({"income, net": [1.0, 1.0, 2.0, 2.0], "b": [3.0, 3.0, 4.0, 4.0]}).to_csv(
        data, index=False)
    result = run_cli("microaggregate", data, "-o", tmp_path / "o.csv", "--k", "2",
                     "--columns", '"income, net",b')
    assert result.code == 0, result.stderr
    assert "no value changed" in result.stdout


def test_an_unforeseen_failure_is_one_line_that_says_it_is_a_bug(run_cli, tmp_path,
                                                                 monkeypatch):
    import microagg.data.io as io

    def broken(*args, **kwargs):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(io, "read_table", broken)
    result = run_cli("microaggregate", _numbers(tmp_path), "-o", tmp_path / "o.csv", "--k",
                     "2")
    assert result.code == 3 and len(result.stderr.strip().splitlines()) == 1
    assert "unexpected ZeroDivisionError" in result.stderr and "bug in microagg" in result.stderr
    assert not (tmp_path / "o.csv").exists()
    monkeypatch.setenv("MICROAGG_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        run_cli("microaggregate", _numbers(tmp_path), "-o", tmp_path / "o.csv", "--k", "2")


def test_a_name_split_on_its_comma_gets_a_hint(run_cli, tmp_path):
    data = tmp_path / "c.csv"
    pd.DataFrame({"income, net": [1.0, 1.0, 2.0, 2.0], "b": [3.0, 3.0, 4.0, 4.0]}).to_csv(
        data, index=False)
    result = run_cli("microaggregate", data, "-o", tmp_path / "o.csv", "--k", "2",
                     "--columns", "income, net")
    assert result.code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "did you mean 'income, net'?" in result.stderr
    assert "(the data has: 'income, net', b)" in result.stderr


def test_a_first_row_longer_than_the_header_is_refused_by_every_command(run_cli, tmp_path):
    """Read as pandas reads it, the first row's extra field would make the first column row
    labels and shift every value one column: each command refuses it in one line naming the
    file and the line, and writes nothing."""
    good = tmp_path / "good.csv"
    pd.DataFrame({"a": [1, 2, 3, 4, 5, 6], "b": [1, 1, 2, 2, 3, 3]}).to_csv(good, index=False)
    shifted = tmp_path / "shifted.csv"
    shifted.write_text("a,b\n1,1,9\n2,1\n3,2\n4,2\n5,3\n6,3\n")
    out = tmp_path / "out"
    out.mkdir()
    commands = [
        ["microaggregate", shifted, "-o", out / "m.csv", "--k", "2"],
        ["check", shifted, "--k", "2"],
        ["suppress", shifted, "-o", out / "s.csv", "--keys", "a,b", "--k", "2"],
        ["risk", shifted, "--keys", "a,b", "--records-out", out / "r.csv"],
        ["recode", shifted, "-o", out / "c.csv", "--breaks", "a=0:3:6"],
        ["evaluate", good, shifted],
        ["evaluate", shifted, good],
        ["schema", shifted, "-o", out / "s.yaml"],
    ]
    for args in commands:
        result = run_cli(*args)
        lines = result.stderr.strip().splitlines()
        assert result.code == 2, (args, result.stdout, result.stderr)
        assert len(lines) == 1 and lines[0].startswith("microagg: error: "), result.stderr
        assert str(shifted) in lines[0] and "line 2 has 3 fields" in lines[0], lines[0]
        assert list(out.iterdir()) == [], args


def test_a_name_with_a_line_break_is_read_and_named_in_microaggs_words(run_cli, tmp_path):
    """A header may hold a quoted line break; an option naming such a column without double
    quotes is refused in microagg's words (not the csv module's), naming it."""
    source = tmp_path / "nl.csv"
    source.write_text('"a\nb",c\n1,2\n3,4\n5,6\n7,8\n')
    quoted = run_cli("check", source, "--k", "2", "--quasi", '"a\nb",c')
    assert quoted.code == 1 and "smallest class 1" in quoted.stdout, quoted.stderr
    for option in (["--quasi", "c,a\nb"], ["--quasi", "a\nb"]):
        result = run_cli("check", source, "--k", "2", *option)
        lines = result.stderr.strip().splitlines()
        assert result.code == 2 and len(lines) == 1, result.stderr
        assert lines[0] == ("microagg: error: --quasi: the name 'a\\nb' holds a line break; "
                            "write a name that holds one in double quotes, as a CSV header "
                            "does"), lines[0]


@pytest.mark.parametrize("output", ["", ".", ".."])
def test_an_output_that_names_no_file_is_refused_in_one_line(run_cli, tmp_path, monkeypatch,
                                                           output):
    """An output path that names a folder rather than a file ("" is the current folder) is a
    refusal naming it, before any work, and nothing is written in either folder."""
    work = tmp_path / "work"
    work.mkdir()
    source = _numbers(work)
    monkeypatch.chdir(work)
    result = run_cli("microaggregate", source, "-o", output, "--k", "2")
    lines = result.stderr.strip().splitlines()
    assert result.code == 2 and len(lines) == 1, result.stderr
    assert "names a folder, not a file" in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["in.csv", "work"]


@pytest.mark.parametrize("args", [
    ["microaggregate", "--k", "2", "--columns", "x,x"],
    ["mask", "--method", "rank-swap", "--fraction", "0.5", "--columns", "x,y,x"],
    ["tclose", "--k", "2", "--t", "0.5", "--quasi", "x,x", "--confidential", "y"],
    ["dp", "--epsilon", "1", "--method", "laplace", "--columns", "x,x", "--bounds",
     "x=0:60"],
    ["dp", "--epsilon", "1", "--method", "laplace", "--columns", "x", "--bounds",
     "x=0:60,x=0:70"],
])
def test_a_column_named_twice_is_refused_as_the_keys_commands_refuse_it(run_cli, tmp_path,
                                                                        args):
    """A list of columns that names one twice is a slip (a wrong name copied over the one
    meant): every command refuses it in one line naming the column, as `suppress --keys`
    does, and writes nothing."""
    source = tmp_path / "in.csv"
    pd.DataFrame({"x": [1.0, 2.0, 3.0, 50.0, 5.0, 6.0], "y": [1, 2, 1, 2, 1, 2]}).to_csv(
        source, index=False)
    result = run_cli(args[0], source, "-o", tmp_path / "o.csv", *args[1:])
    lines = result.stderr.strip().splitlines()
    assert result.code == 2 and len(lines) == 1, result.stderr
    assert "names column 'x' twice" in lines[0] and "common." not in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_top_coding_an_infinite_value_is_one_line(run_cli, tmp_path):
    """The refusal of an infinite value comes alone, without numpy's warning about the
    infinite values it subtracted on the way."""
    source = tmp_path / "in.csv"
    source.write_text("x\n1\ninf\n-inf\n4\n5\n")
    result = run_cli("topcode", source, "-o", tmp_path / "o.csv", "--columns", "x",
                     "--top", "3")
    lines = result.stderr.strip().splitlines()
    assert result.code == 2 and len(lines) == 1, result.stderr
    assert "'x' has an infinite value in row 2" in lines[0], lines[0]


@pytest.mark.parametrize("cells", [[{"a": i} for i in range(30)], [[i, i] for i in range(30)]])
def test_distinct_nested_cells_are_refused_as_nested(run_cli, tmp_path, cells):
    """Nested cells all distinct (a struct or list column of a Parquet file) are refused as
    nested, not judged as a column of distinct text (whose test cannot hash them)."""
    nested = tmp_path / "nested.parquet"
    pd.DataFrame({"x": [float(i % 7) for i in range(30)], "tags": cells}).to_parquet(nested)
    result = run_cli("microaggregate", nested, "-o", tmp_path / "o.csv", "--k", "2")
    lines = result.stderr.strip().splitlines()
    assert result.code == 2 and len(lines) == 1, result.stderr
    assert "column 'tags' holds lists or mappings (row 1)" in lines[0], lines[0]


def test_a_schema_is_not_guessed_from_a_table_without_records(run_cli, tmp_path):
    """A header alone says nothing of the kinds (every column would be guessed nominal):
    `schema` refuses it, as every other command refuses a table without records."""
    source = tmp_path / "header.csv"
    source.write_text("age,income\n")
    result = run_cli("schema", source, "-o", tmp_path / "s.yaml")
    lines = result.stderr.strip().splitlines()
    assert result.code == 2 and len(lines) == 1, result.stderr
    assert "holds no records" in lines[0] and str(source) in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["header.csv"]


def test_a_failure_after_a_signal_is_said_as_the_interrupt(run_cli, tmp_path, monkeypatch):
    """A signal that cut an import short, the interrupt caught by a library, leaves a half-made
    module whose failure comes later: once a signal was received, that failure is the
    interrupt's line and code, not an unexpected error."""
    import signal

    import microagg.data.io as io
    import microagg.interrupts as interrupts

    monkeypatch.setattr(interrupts._state, "received", None)  # restored afterwards
    monkeypatch.setattr(interrupts._state, "said", False)

    def cut_short(*args, **kwargs):
        interrupts._state.received = int(signal.SIGINT)  # as the handler records it
        raise AttributeError("module 'numpy' has no attribute 'minimum'")

    monkeypatch.setattr(io, "read_table", cut_short)
    result = run_cli("microaggregate", _numbers(tmp_path), "-o", tmp_path / "o.csv", "--k",
                     "2")
    lines = result.stderr.strip().splitlines()
    assert result.code == 130 and len(lines) == 1, result.stderr
    assert lines[0].startswith("microagg: error: interrupted;"), lines[0]


def test_ctrl_c_while_the_signal_handlers_import_is_one_line(tmp_path):
    """Ctrl-C can land before the handlers exist, while Python imports its `signal` module
    for them: one line and 130, not the interpreter's traceback."""
    import subprocess
    import sys

    code = ("import sys\n"
            "class Cut:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'microagg.interrupts':\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Cut())\n"
            "from microagg.cli import entry\n"
            "entry()\n")
    done = subprocess.run([sys.executable, "-c", code, "check", "x.csv"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert done.stderr.splitlines() == ["microagg: error: interrupted; no output was written"]


def test_nonsense_the_sweep_found_accepted_is_refused_in_one_line(run_cli, tmp_path):
    """A numeric domain of booleans, two household columns, a recipe step naming no column,
    a table with no value, a host that is no host name, a recipe reading a URL, and unknown
    columns (blamed on the option that names them): each one line, exit 2, nothing
    written."""
    pd.DataFrame({"age": [20, 30, 40, 50], "sex": ["f", "m", "f", "m"],
                  "hh": [1, 1, 2, 2], "hh2": [1, 2, 3, 4]}).to_csv(tmp_path / "t.csv",
                                                                    index=False)
    pd.DataFrame({"a": [None, None], "b": ["", " "]}).to_csv(tmp_path / "empty.csv",
                                                           index=False)
    (tmp_path / "bool.yaml").write_text(
        "attributes:\n  age: {kind: numeric, role: quasi, domain: [false, true]}\n")
    (tmp_path / "hh.yaml").write_text(
        "attributes:\n  hh: {role: household}\n  hh2: {role: household}\n")
    (tmp_path / "r.yaml").write_text(
        "steps:\n  - {family: keys, method: local-suppression, k: 2, keys: []}\n")
    (tmp_path / "url.yaml").write_text(
        "input: s3://bucket/t.csv\nsteps:\n  - {family: keys, method: local-suppression, "
        "k: 2, keys: [sex]}\n")
    cases = [
        (["check", tmp_path / "t.csv", "--k", "2", "--schema", tmp_path / "bool.yaml"],
         "domain bounds must be numbers, got [false, true]"),
        (["check", tmp_path / "t.csv", "--k", "2", "--schema", tmp_path / "hh.yaml"],
         "'hh' and 'hh2' both have the role household"),
        (["run", tmp_path / "r.yaml", "--input", tmp_path / "t.csv", "-o", tmp_path / "o.csv"],
         "names no column"),
        (["schema", tmp_path / "empty.csv", "-o", tmp_path / "s.yaml"],
         "holds no value, every cell is missing"),
        (["ui", "--allow-host", "bad host/evil"], "is not a host name or an address"),
        (["recode", tmp_path / "t.csv", "-o", tmp_path / "o.csv", "--breaks", "nope=0:1:2"],
         "--levels/--breaks: unknown column 'nope'"),
        (["microaggregate", tmp_path / "t.csv", "-o", tmp_path / "o.csv", "--k", "2",
          "--columns", "age", "--weight", "nope"], "error: --weight: unknown column 'nope'"),
        (["check", tmp_path / "t.csv", "--k", "2", "--quasi", "age", "--l", "2",
          "--sensitive", "nope"], "error: --sensitive: unknown column 'nope'"),
        (["run", tmp_path / "url.yaml", "-o", tmp_path / "o.csv"],
         "the recipe's 'input' is a URL (s3://…)"),
    ]
    for args, said in cases:
        done = run_cli(*args)
        assert done.code == 2, (args, done.stdout, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and said in done.stderr, done.stderr
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "s.yaml").exists()
