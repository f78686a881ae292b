import numpy as np
import pandas as pd
import pytest

from microagg.errors import InputError
from microagg.release import mask
from microagg.release.methods import TopBottomCoding


def _naive(values, low, high):
    """Per value, by hand: above high -> high, below low -> low, else unchanged."""
    return [high if v > high else low if v < low else v for v in values]


def test_values_beyond_the_thresholds_become_the_thresholds():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"income": rng.lognormal(10, 1, 500), "age": rng.integers(0, 99, 500)})
    out = mask(frame, method="top-bottom-coding", top=60_000.0, bottom=5_000.0,
               columns=["income"]).frame
    assert out["income"].tolist() == _naive(frame["income"], 5_000.0, 60_000.0)
    assert out["age"].tolist() == frame["age"].tolist()  # not named: written unchanged


def test_quantile_thresholds_are_each_columns_own():
    frame = pd.DataFrame({"a": np.arange(101.0), "b": np.arange(101.0) * 10})
    out = TopBottomCoding(top=0.9, bottom=0.05, at="quantile").release(frame)
    # 101 evenly spaced values: quantile q of column a is 100 q exactly, of b 1000 q
    assert out.frame["a"].tolist() == _naive(frame["a"], 5.0, 90.0)
    assert out.frame["b"].tolist() == _naive(frame["b"], 50.0, 900.0)
    assert out.report.parameters == {"top": 0.9, "bottom": 0.05, "at": "quantile"}


def test_bad_thresholds_are_refused_by_name():
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    for options, message in (({}, "`top` or `bottom` is needed"),
                             ({"top": 1.5, "at": "quantile"}, "`top` must be a quantile"),
                             ({"top": 2.0, "bottom": 3.0}, "`bottom` must be below `top`"),
                             ({"top": 9.0}, "move a threshold inside the range")):
        with pytest.raises(InputError, match=message):
            mask(frame, method="top-bottom-coding", **options)


def test_the_command_line_takes_it_from_its_fields(run_cli, tmp_path):
    source = tmp_path / "in.csv"
    pd.DataFrame({"x": [1.0, 2.0, 3.0, 100.0]}).to_csv(source, index=False)
    result = run_cli("mask", source, "-o", tmp_path / "o.csv", "--method", "top-bottom-coding",
                     "--top", "10")
    assert result.code == 0, result.stderr
    assert "top-bottom-coding top=10" in result.stdout
    assert pd.read_csv(tmp_path / "o.csv")["x"].tolist() == [1.0, 2.0, 3.0, 10.0]


def test_a_quantile_threshold_is_a_value_the_column_holds():
    """Order 0.85 of 1..9, 1000: the 9th smallest value, 9 (linear interpolation would code
    at 8.65, a value no record has, and change the 9 too)."""
    frame = pd.DataFrame({"x": [*range(1, 10), 1000]})
    out = TopBottomCoding(top=0.85, at="quantile").release(frame).frame["x"]
    assert out.tolist() == [*range(1, 10), 9]
