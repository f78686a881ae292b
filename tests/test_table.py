import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import pandas as hpd

from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.data.table import decode, encode
from microagg.errors import InputError


def _frame():
    return pd.DataFrame(
        {
            "age": [30, 41, 52],
            "income": [1000.5, 2000.0, 3000.25],
            "job": ["clerk", "nurse", "clerk"],
            "level": [1, 3, 2],
        }
    )


def _schema():
    return Schema(
        (
            Attribute("age", Role.QUASI, Kind.NUMERIC, domain=(0, 120)),
            Attribute("income", Role.CONFIDENTIAL, Kind.NUMERIC),
            Attribute("job", Role.QUASI, Kind.NOMINAL),
            Attribute("level", Role.QUASI, Kind.ORDINAL, domain=(1, 2, 3)),
        )
    )


def test_encode_layout():
    table = encode(_frame(), _schema())
    assert table.numeric_names == ("age", "income")
    assert table.categorical_names == ("job", "level")
    np.testing.assert_array_equal(table.numeric, [[30, 1000.5], [41, 2000.0], [52, 3000.25]])
    assert table.categories["job"] == ("clerk", "nurse")  # observed, sorted
    assert table.categories["level"] == ("1", "2", "3")  # declared order
    np.testing.assert_array_equal(table.codes, [[0, 0], [1, 2], [0, 1]])
    assert table.numeric.dtype == np.float64 and table.codes.dtype == np.int64


def test_decode_restores_values_dtypes_and_order():
    frame = _frame()
    back = decode(encode(frame, _schema()))
    pd.testing.assert_frame_equal(back, frame)


def test_decode_of_non_integral_means_gives_floats():
    frame = _frame()
    table = encode(frame, _schema())
    masked = table.numeric.copy()
    masked[:, 0] = masked[:, 0].mean()  # 41.0: still integral
    back = decode(table, numeric=masked)
    assert back["age"].dtype == np.int64
    masked[:, 0] = [30.5, 30.5, 52]
    back = decode(table, numeric=masked)
    assert back["age"].dtype == np.float64
    assert list(back["age"]) == [30.5, 30.5, 52.0]


def test_decode_with_extended_categories():
    table = encode(_frame(), _schema())
    codes = table.codes.copy()
    codes[:, 0] = 2
    back = decode(table, codes=codes, categories={"job": ("clerk", "nurse", "Health staff")})
    assert list(back["job"]) == ["Health staff"] * 3


@pytest.mark.parametrize("bad", [np.nan, None, "", "   "])
def test_missing_value_names_column_and_row(bad):
    frame = _frame().astype({"job": object})
    frame.loc[1, "job"] = bad
    with pytest.raises(InputError) as info:
        encode(frame, _schema())
    assert "column 'job'" in str(info.value) and "row 2" in str(info.value)
    assert "`drop_incomplete`" in str(info.value)


def test_drop_incomplete_keeps_positions_and_index():
    frame = _frame()
    frame.loc[0, "income"] = np.nan
    table = encode(frame, _schema(), drop_incomplete=True)
    assert table.n_rows == 2
    np.testing.assert_array_equal(table.row_positions, [1, 2])
    assert list(decode(table).index) == [1, 2]


def test_all_rows_incomplete():
    frame = _frame()
    frame["income"] = np.nan
    with pytest.raises(InputError, match="no complete row"):
        encode(frame, _schema(), drop_incomplete=True)


def test_text_in_numeric_column():
    frame = _frame().astype({"income": object})
    frame.loc[2, "income"] = "a lot"
    with pytest.raises(InputError, match=r"'income' is numeric but row 3 holds the text 'a lot'"):
        encode(frame, _schema())


def test_numeric_strings_are_accepted():
    frame = _frame().astype({"income": str})
    table = encode(frame, _schema())
    np.testing.assert_array_equal(table.numeric[:, 1], [1000.5, 2000.0, 3000.25])


def test_outside_domain_is_refused_or_clamped():
    frame = _frame()
    frame.loc[1, "age"] = 130
    with pytest.raises(InputError, match=r"130 in row 2 is outside the declared domain \[0, 120\]"):
        encode(frame, _schema())
    table = encode(frame, _schema(), clamp=True)
    assert table.numeric[1, 0] == 120


def test_category_outside_declared_domain():
    frame = _frame()
    frame.loc[0, "level"] = 7
    with pytest.raises(InputError, match="'7' in row 1 is not one of the declared categories"):
        encode(frame, _schema())


def test_infinite_value():
    frame = _frame()
    frame.loc[0, "income"] = np.inf
    with pytest.raises(InputError, match="infinite value in row 1"):
        encode(frame, _schema())


def test_empty_table_and_no_columns():
    with pytest.raises(InputError, match="no rows"):
        encode(_frame().iloc[:0], _schema())
    with pytest.raises(InputError, match="no columns"):
        encode(pd.DataFrame(index=[0, 1]))


def test_numeric_matrix_selection_and_kind_error():
    table = encode(_frame(), _schema())
    income = table.numeric_matrix(["income"]).ravel()
    np.testing.assert_array_equal(income, [1000.5, 2000.0, 3000.25])
    with pytest.raises(InputError, match="column 'job' is nominal"):
        table.numeric_matrix(["job"])


@settings(max_examples=60, deadline=None)
@given(
    hpd.data_frames(
        [
            hpd.column("i", dtype=np.int64, elements=st.integers(-10**9, 10**9)),
            hpd.column("f", dtype=np.float64,
                       elements=st.floats(-1e12, 1e12, allow_nan=False, allow_infinity=False)),
            hpd.column("s", elements=st.sampled_from(["a", "b", "c d", "é"])),
        ],
        index=hpd.range_indexes(min_size=1, max_size=30),
    )
)
def test_round_trip_property(frame):
    frame["s"] = frame["s"].astype(str)
    back = decode(encode(frame))
    pd.testing.assert_frame_equal(back, frame)
