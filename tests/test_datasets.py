import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import skew

from microagg import datasets
from microagg.data.schema import Kind, Role, Schema
from microagg.data.table import encode
from microagg.errors import DataNotFoundError, InputError

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "datasets.md"


@pytest.mark.reference_data
def test_census_shape_and_schema(census):
    assert census.frame.shape == (1080, 13)
    assert census.schema.quasi_identifiers == tuple(census.frame.columns)
    assert all(a.kind is Kind.NUMERIC for a in census.schema)
    assert not census.frame.duplicated().any()


@pytest.mark.reference_data
def test_adult_complete_rows(adult_complete):
    assert adult_complete.frame.shape == (30162, 15)
    assert not adult_complete.frame.isna().any().any()
    assert adult_complete.schema["income"].role is Role.CONFIDENTIAL
    table = encode(adult_complete.frame, adult_complete.schema)  # every value within its domain
    assert table.categories["occupation"] == adult_complete.schema["occupation"].categories
    assert len(table.categories["native-country"]) == 41


@pytest.mark.reference_data
def test_adult_with_missing_rows():
    adult = datasets.load("adult")
    assert adult.frame.shape == (32561, 15)
    assert adult.frame.isna().any(axis=1).sum() == 32561 - 30162
    with pytest.raises(InputError, match="missing value"):
        encode(adult.frame, adult.schema)


@pytest.mark.reference_data
@pytest.mark.parametrize(("name", "shape"), [("eia", (4092, 15)), ("tarragona", (834, 13))])
def test_other_reference_files(name, shape):
    dataset = datasets.load(name)
    assert dataset.frame.shape == shape
    encode(dataset.frame, dataset.schema)


def test_missing_reference_file_message(tmp_path, monkeypatch):
    monkeypatch.setenv("MICROAGG_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError) as info:
        datasets.load("census")
    message = str(info.value)
    assert "census.csv" in message and "MICROAGG_DATA" in message and str(tmp_path) in message


def test_unknown_dataset():
    with pytest.raises(InputError, match="unknown data set 'nope'"):
        datasets.load("nope")


def test_synthetic_shape_determinism_and_domains():
    a = datasets.synthetic(2000, 8, seed=3)
    b = datasets.synthetic(2000, 8, seed=3)
    c = datasets.synthetic(2000, 8, seed=4)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert not a.frame.equals(c.frame)
    assert a.frame.shape == (2000, 10)
    assert a.schema.names[:6] == ("age", "income", "expenses", "savings", "hours",
                                  "household_size")
    for attribute in a.schema:
        assert attribute.domain is not None  # every domain declared
    encode(a.frame, a.schema)  # values inside the declared domains, no missing values


def test_synthetic_is_skewed_and_correlated():
    frame = datasets.synthetic(5000, 6, seed=0).frame
    assert skew(frame["income"]) > 1.0
    assert skew(frame["savings"]) > 1.0
    assert (frame["savings"] == 0).mean() > 0.1  # zero-inflated
    corr = np.corrcoef(np.log1p(frame["income"]), np.log1p(frame["expenses"]))[0, 1]
    assert corr > 0.3
    assert set(frame["region"]) <= {"North", "South", "East", "West", "Centre"}


def test_synthetic_rejects_bad_sizes():
    with pytest.raises(InputError, match="n >= 1"):
        datasets.synthetic(0)
    with pytest.raises(InputError, match="d >= 1"):
        datasets.synthetic(10, 0)


@pytest.mark.reference_data
@pytest.mark.parametrize(("name", "columns"), [
    ("adult-categorical", ["occupation", "native-country"]),
    ("adult-mixed", ["age", "hours-per-week", "occupation", "native-country"]),
])
def test_adult_views(name, columns):
    view = datasets.load(name)
    assert list(view.frame.columns) == columns
    assert len(view.frame) == 30162
    assert view.schema.quasi_identifiers == tuple(columns)
    table = encode(view.frame, view.schema)
    assert table.metric("occupation").n_concepts == 14 + 3 + 1  # leaves, 3 groups, root
    assert table.metric("native-country").n_concepts == 41 + 5 + 1


@pytest.mark.reference_data
def test_adult_schema_carries_taxonomies(adult_complete):
    assert adult_complete.schema["occupation"].taxonomy.name == "adult_hierarchy_occupation.csv"
    assert adult_complete.schema["income"].taxonomy.name == "adult_hierarchy_salary-class.csv"
    assert adult_complete.schema["relationship"].taxonomy is None


@pytest.mark.reference_data
def test_adult_roles_leave_no_quasi_identifier_raw(adult_complete):
    """education-num recodes education one to one; relationship is as visible as marital
    status: released raw beside a k-anonymous education, they would single people out."""
    schema = adult_complete.schema
    for name in ("education-num", "relationship", "education", "age", "hours-per-week"):
        assert schema[name].role is Role.QUASI, name
    for name in ("capital-gain", "capital-loss", "income"):
        assert schema[name].role is Role.CONFIDENTIAL, name


# -- documentation of the reference files ------------------------------------------------------

def test_docs_name_every_reference_file_and_hierarchy():
    text = DOCS.read_text(encoding="utf-8")
    for name in datasets.names():
        assert f"`{name}`" in text, name
    for ref in datasets._REFERENCE.values():
        assert f"`{ref.filename}`" in text, ref.filename
    for attribute in datasets._ADULT_HIERARCHY:
        assert f"`{datasets.hierarchy_path(Path(), attribute).name}`" in text, attribute
    for needed in ("MICROAGG_DATA", "../shared/datasets", "https://", "icence"):
        assert needed in text, needed


@pytest.mark.reference_data
def test_docs_give_the_measured_sizes():
    text = DOCS.read_text(encoding="utf-8")
    for name in ("census", "eia", "tarragona", "adult", "adult-categorical", "adult-mixed"):
        rows, cols = datasets.load(name).frame.shape
        assert f"{rows:,} x {cols}" in text, name
    folder = datasets.data_dir("adult.csv") / "hierarchies"
    for path in sorted(folder.glob("adult_hierarchy_*.csv")):
        lines = path.read_text(encoding="utf-8").splitlines()
        levels = {len(line.split(";")) for line in lines}
        assert len(levels) == 1
        assert f"`{path.name}` | {len(lines)} x {levels.pop()} |" in text, path.name


def test_missing_file_message_points_at_the_docs_on_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("MICROAGG_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError) as info:
        datasets.load("adult-mixed")
    message = str(info.value)
    assert "docs/datasets.md" in message and "README" not in message
    assert "\n" not in message and "adult.csv" in message
    assert DOCS.is_file()


# -- search path -----------------------------------------------------------------------------

def _fake_checkout(root: Path) -> Path:
    (root / "src" / "microagg").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "microagg"\n')
    return root


def _installed_package(tmp_path: Path) -> str:
    """The path of datasets.py in a virtual environment's site-packages."""
    package = tmp_path / "venv" / ".venv" / "lib" / "python3.11" / "site-packages" / "microagg"
    package.mkdir(parents=True)
    return str(package / "datasets.py")


def test_installed_package_without_env_var_searches_no_made_up_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("MICROAGG_DATA", raising=False)
    monkeypatch.setattr(datasets, "__file__", _installed_package(tmp_path))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert datasets._candidate_dirs() == []
    assert datasets.data_dir() is None
    text = datasets.search_path_text()
    assert ".venv" not in text and "MICROAGG_DATA is not set" in text
    with pytest.raises(DataNotFoundError) as info:
        datasets.load("census")
    assert ".venv" not in str(info.value) and "\n" not in str(info.value)


def test_search_path_is_beside_the_checkout_holding_the_working_directory(tmp_path,
                                                                          monkeypatch):
    monkeypatch.delenv("MICROAGG_DATA", raising=False)
    monkeypatch.setattr(datasets, "__file__", _installed_package(tmp_path))
    checkout = _fake_checkout(tmp_path / "work" / "main")
    data = tmp_path / "work" / "shared" / "datasets"
    data.mkdir(parents=True)
    (data / "census.csv").write_text("a\n1\n")
    (checkout / "tests").mkdir()
    monkeypatch.chdir(checkout / "tests")
    assert datasets._candidate_dirs() == [data]
    assert datasets.data_dir("census.csv") == data
    assert f"{data} (beside the source checkout {checkout})" in datasets.search_path_text()


def test_search_path_of_an_editable_install(tmp_path, monkeypatch):
    monkeypatch.delenv("MICROAGG_DATA", raising=False)
    checkout = _fake_checkout(tmp_path / "work" / "main")
    monkeypatch.setattr(datasets, "__file__", str(checkout / "src" / "microagg" / "datasets.py"))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert datasets._candidate_dirs() == [tmp_path / "work" / "shared" / "datasets"]


def test_env_var_is_the_only_folder_searched_when_set(tmp_path, monkeypatch):
    monkeypatch.setenv("MICROAGG_DATA", str(tmp_path))
    monkeypatch.chdir(ROOT)
    assert datasets._candidate_dirs() == [tmp_path]
    assert datasets.search_path_text() == f"{tmp_path} (MICROAGG_DATA)"


# -- datasets list ---------------------------------------------------------------------------

def test_datasets_list_prints_whole_paths_when_piped(run_cli, tmp_path, monkeypatch):
    folder = tmp_path / ("a-folder-name-long-enough-to-overflow-any-table-column-" * 2) / "v[2]"
    folder.mkdir(parents=True)
    (folder / "census.csv").write_text("a\n1\n")
    monkeypatch.setenv("MICROAGG_DATA", str(folder))
    result = run_cli("datasets", "list")
    assert result.code == 0, result.stderr
    assert f"file: {folder / 'census.csv'}" in result.stdout.splitlines()[1]
    assert "file: missing" in result.stdout and "…" not in result.stdout
    last = result.stdout.splitlines()[-1]
    assert str(folder) in last and "docs/datasets.md" in last
    rows = json.loads(run_cli("datasets", "list", "--json").stdout)
    assert all(set(row) == {"name", "shape", "description", "location"} for row in rows)
    assert rows[0]["location"] == str(folder / "census.csv")


# -- export with a schema ----------------------------------------------------------------------

_TINY_ADULT = [
    "39,State-gov,77516,Bachelors,13,Never-married,Adm-clerical,Not-in-family,White,Male,"
    "2174,0,40,United-States,<=50K",
    "50,Self-emp-not-inc,83311,Bachelors,13,Married-civ-spouse,Exec-managerial,Husband,White,"
    "Male,0,0,13,United-States,<=50K",
    "38,Private,215646,HS-grad,9,Divorced,Handlers-cleaners,Not-in-family,White,Male,0,0,40,"
    "Cuba,<=50K",
    "53,?,234721,11th,7,Married-civ-spouse,?,Husband,Black,Male,0,0,40,United-States,<=50K",
]


@pytest.fixture
def tiny_data(tmp_path, monkeypatch):
    """A reference folder with a four-row adult.csv and two of its hierarchies."""
    folder = tmp_path / "data"
    (folder / "hierarchies").mkdir(parents=True)
    header = ("age,workclass,fnlwgt,education,education-num,marital-status,occupation,"
              "relationship,race,sex,capital-gain,capital-loss,hours-per-week,native-country,"
              "income")
    (folder / "adult.csv").write_text("\n".join([header, *_TINY_ADULT]) + "\n")
    (folder / "hierarchies" / "adult_hierarchy_occupation.csv").write_text(
        "Adm-clerical;Nontechnical;*\nExec-managerial;Nontechnical;*\n"
        "Handlers-cleaners;Nontechnical;*\n")
    (folder / "hierarchies" / "adult_hierarchy_native-country.csv").write_text(
        "United-States;North America;*\nCuba;North America;*")
    monkeypatch.setenv("MICROAGG_DATA", str(folder))
    return folder


def test_exported_schema_survives_being_moved(run_cli, tiny_data, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    result = run_cli("datasets", "export", "adult-mixed", "-o", first / "am.csv",
                     "--schema-out", first / "am.yaml")
    assert result.code == 0, result.stderr
    written = sorted(p.name for p in first.iterdir())
    assert written == ["am.csv", "am.native-country.csv", "am.occupation.csv", "am.yaml"]
    assert "am.occupation.csv" in result.stdout
    source = tiny_data / "hierarchies" / "adult_hierarchy_native-country.csv"
    assert (first / "am.native-country.csv").read_bytes() == source.read_bytes()
    assert "taxonomy: am.occupation.csv" in (first / "am.yaml").read_text()
    shutil.move(first, second)
    shutil.rmtree(tiny_data)
    schema = Schema.load(second / "am.yaml")
    assert schema["occupation"].taxonomy == second / "am.occupation.csv"
    assert schema["native-country"].taxonomy.is_file()
    check = run_cli("check", second / "am.csv", "--k", "1", "--schema", second / "am.yaml")
    assert check.code == 0, check.stderr


def test_export_refuses_an_output_named_like_a_taxonomy_copy(run_cli, tiny_data, tmp_path):
    result = run_cli("datasets", "export", "adult-mixed", "-o", tmp_path / "am.occupation.csv",
                     "--schema-out", tmp_path / "am.yaml")
    assert result.code == 2 and "two different outputs" in result.stderr
    assert not (tmp_path / "am.yaml").exists()
    assert not (tmp_path / "am.occupation.csv").exists()


def test_taxonomy_copies_leave_schemas_without_taxonomy_alone(tmp_path):
    schema = datasets.synthetic(10, 2).schema
    bundled, copies = datasets.taxonomy_copies(schema, tmp_path / "s.yaml")
    assert copies == [] and bundled == schema
