import numpy as np
import pandas as pd
import pytest
from scipy.stats import skew

from microagg import datasets
from microagg.errors import DataNotFoundError, InputError
from microagg.schema import Kind, Role
from microagg.table import encode


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
