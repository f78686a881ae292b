"""Global recoding: a category becomes the concept at the level asked of its ARX hierarchy
(the hierarchy file's own column), a number the interval of the breaks that holds it."""

import numpy as np
import pandas as pd
import pytest

from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError, ParameterError
from microagg.release.methods import GlobalRecoding

HIERARCHY = """\
Tech-support;Technical;Employed;*
Craft-repair;Technical;Employed;*
Sales;Nontechnical;Employed;*
Exec-managerial;Nontechnical;Employed;*
Other-service;Other;Not employed;*
"""


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "occupation.csv"
    path.write_text(HIERARCHY, encoding="utf-8")
    rng = np.random.default_rng(0)
    leaves = [line.split(";")[0] for line in HIERARCHY.splitlines()]
    frame = pd.DataFrame({"occupation": rng.choice(leaves, 200), "age": rng.integers(0, 90, 200),
                          "sex": rng.choice(["f", "m"], 200)})
    frame.loc[[3, 7], "occupation"] = None
    frame["age"] = frame["age"].astype(float)
    frame.loc[5, "age"] = np.nan
    schema = Schema((Attribute("occupation", Role.QUASI, Kind.NOMINAL, taxonomy=path),
                     Attribute("age", Role.QUASI, Kind.NUMERIC),
                     Attribute("sex", Role.OTHER, Kind.NOMINAL)))
    return frame, schema, path


def _column(path, level):
    """The hierarchy file's column ``level``, leaf -> concept: the answer read directly."""
    return {row[0]: row[level] for row in (line.split(";") for line in
                                           path.read_text().splitlines())}


@pytest.mark.parametrize("level", [1, 2, 3])
def test_a_level_is_the_hierarchy_files_column(data, level):
    frame, schema, path = data
    out = GlobalRecoding(levels={"occupation": level}).release(frame, schema=schema).frame
    expected = frame["occupation"].map(_column(path, level))
    assert out["occupation"].isna().equals(frame["occupation"].isna())
    present = frame["occupation"].notna()
    assert (out["occupation"][present].astype(str) == expected[present]).all()


def test_intervals_by_hand(data):
    frame, schema, _ = data
    release = GlobalRecoding(breaks="age=0:18:65:90").release(frame, schema=schema)
    out = release.frame["age"]
    expected = [None if np.isnan(a) else "[0, 18)" if a < 18 else "[18, 65)" if a < 65
                else "[65, 90]" for a in frame["age"]]
    assert [None if pd.isna(v) else v for v in out] == expected
    assert list(out.cat.categories) == ["[0, 18)", "[18, 65)", "[65, 90]"]
    report = release.report
    assert report.recoded["age"].categories_after == 3
    assert report.recoded["age"].categories_before == frame["age"].nunique()
    # the keys default to the declared quasi-identifiers and the recoded columns
    assert report.keys == ["age", "occupation"] and report.changed == ["age"]
    assert report.after.smallest_class >= report.before.smallest_class


def test_infinite_ends_and_values_outside_the_breaks(data):
    frame, schema, _ = data
    out = GlobalRecoding(breaks={"age": [-np.inf, 50, np.inf]}).release(frame, schema=schema)
    assert set(out.frame["age"].dropna()) == {"[-inf, 50)", "[50, inf)"}
    row = int(np.flatnonzero(frame["age"].to_numpy() > 80)[0])
    value = frame["age"].iloc[row]
    with pytest.raises(InputError, match=rf"value {value:g} \(row {row + 1}\) is outside"):
        GlobalRecoding(breaks={"age": [0, 50, 80]}).release(frame, schema=schema)


def test_what_cannot_be_recoded_is_refused(data):
    frame, schema, _ = data
    with pytest.raises(InputError, match="column 'sex' has no taxonomy"):
        GlobalRecoding(levels={"sex": 1}).release(frame, schema=schema)
    with pytest.raises(InputError, match="level 4 of 'occupation' is above the root"):
        GlobalRecoding(levels={"occupation": 4}).release(frame, schema=schema)
    with pytest.raises(InputError, match="column 'sex' is nominal"):
        GlobalRecoding(breaks={"sex": [0, 1]}).release(frame, schema=schema)
    with pytest.raises(ParameterError, match="`levels` or `breaks` is needed"):
        GlobalRecoding()
    with pytest.raises(ParameterError, match="at least two increasing numbers"):
        GlobalRecoding(breaks="age=5:5")
    with pytest.raises(ParameterError, match="whole number of at least 1"):
        GlobalRecoding(levels="occupation=x")


@pytest.mark.reference_data
def test_adult_native_country_to_continents():
    from microagg import datasets

    data = datasets.load("adult")
    folder = datasets.data_dir("adult.csv") / "hierarchies"
    continent = _column(folder / "adult_hierarchy_native-country.csv", 1)
    out = GlobalRecoding(levels={"native-country": 1}).release(
        data.frame, schema=data.schema).frame["native-country"]
    present = data.frame["native-country"].notna()
    assert (out[present].astype(str) == data.frame["native-country"][present].map(continent)
            ).all()
    assert out.isna().equals(~present)


@pytest.mark.parametrize("closed", ["left", "right"])
def test_every_value_lands_in_the_interval_its_closure_says(data, closed):
    """Against the definition, value by value: closed on the left, b_i <= x < b_{i+1} (the
    last interval also holds b_m); on the right, b_i < x <= b_{i+1} (the first also holds
    b_0), as sdcMicro's globalRecode (R's cut) cuts. Ages equal to a break move."""
    frame, schema, _ = data
    edges = [0, 18, 30, 65, 89]
    frame = frame.assign(age=frame["age"].where(frame["age"].isna(), frame["age"] % 90))
    frame.loc[[0, 1, 2, 9], "age"] = [0.0, 18.0, 30.0, 89.0]
    out = GlobalRecoding(breaks={"age": edges}, closed=closed).release(
        frame, schema=schema).frame["age"]
    for value, written in zip(frame["age"], out, strict=True):
        if np.isnan(value):
            assert pd.isna(written)
            continue
        if closed == "left":
            i = min(int(np.searchsorted(edges, value, "right")) - 1, len(edges) - 2)
            assert edges[i] <= value and (value < edges[i + 1] or i == len(edges) - 2)
        else:
            i = max(int(np.searchsorted(edges, value, "left")) - 1, 0)
            assert (edges[i] < value or i == 0) and value <= edges[i + 1]
        assert written == list(out.cat.categories)[i]
    expected = (["[0, 18)", "[18, 30)", "[30, 65)", "[65, 89]"] if closed == "left"
                else ["[0, 18]", "(18, 30]", "(30, 65]", "(65, 89]"])
    assert list(out.cat.categories) == expected
    assert out[1] == expected[1 if closed == "left" else 0]  # 18: a break


def test_right_closure_with_infinite_ends_and_outside_values(data):
    frame, schema, _ = data
    out = GlobalRecoding(breaks={"age": [-np.inf, 50, np.inf]}, closed="right").release(
        frame, schema=schema).frame["age"]
    assert list(out.cat.categories) == ["(-inf, 50]", "(50, inf)"]
    with pytest.raises(InputError, match="outside the breaks"):
        GlobalRecoding(breaks={"age": [1, 50, 80]}, closed="right").release(
            frame.assign(age=frame["age"].clip(upper=80).fillna(0)), schema=schema)
    with pytest.raises(ParameterError, match="`closed`"):
        GlobalRecoding(breaks={"age": [0, 90]}, closed="both")
    assert GlobalRecoding(breaks={"age": [0, 90]}, closed="right").parameters()["closed"] \
        == "right"
