"""The sampling weight: one rule (microagg.data.weights) for every command that uses one, and
one message, with the value written as the file shows it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg.data.weights import sampling_weights
from microagg.errors import InputError

BAD = {"negative": (-3, "-3"), "zero": (0, "0"), "missing": (None, "no value"),
       "text": ("abc", "'abc'"), "below one": (0.5, "0.5"), "infinite": ("inf", "inf")}


def _survey(path: Path, weight: object) -> Path:
    rng = np.random.default_rng(0)
    n = 40
    frame = pd.DataFrame({"age": rng.integers(20, 60, n), "region": rng.choice(["a", "b"], n),
                          "w": rng.uniform(1, 50, n).round(1)}).astype({"w": object})
    frame.loc[3, "w"] = weight
    frame.to_csv(path, index=False)
    return path


def _commands(source: Path, out: Path) -> dict[str, list[object]]:
    return {
        "microaggregate": ["microaggregate", source, "-o", out / "m.csv", "--k", "3",
                           "--columns", "age", "--weight", "w"],
        "tclose": ["tclose", source, "-o", out / "t.csv", "--k", "3", "--t", "0.5",
                   "--quasi", "age", "--confidential", "region", "--weight", "w"],
        "suppress": ["suppress", source, "-o", out / "s.csv", "--keys", "age,region", "--k",
                     "2", "--weight", "w"],
        "pram": ["pram", source, "-o", out / "p.csv", "--keys", "region", "--seed", "1",
                 "--weight", "w"],
        "mask": ["mask", source, "-o", out / "r.csv", "--method", "rank-swap", "--param",
                 "0.1", "--seed", "1", "--columns", "age", "--weight", "w"],
        "risk": ["risk", source, "--keys", "age,region", "--weight", "w", "--records-out",
                 out / "risk.csv"],
        "compare": ["compare", source, "--target-risk-kind", "violations", "--k", "3",
                    "--target-risk", "0", "--keys", "age,region", "--methods",
                    "local-suppression", "--weight", "w", "--report", out / "c.html"],
    }


@pytest.mark.parametrize("case", list(BAD))
def test_every_command_refuses_a_bad_weight_in_the_same_words(run_cli, tmp_path, case):
    """risk took weights of at least 1, the releases any positive number (0.5 passed), and
    the releases wrote the value as numpy's repr (np.float64(nan)): now every command says
    the same line, with the value as the file shows it, and writes nothing."""
    value, shown = BAD[case]
    source = _survey(tmp_path / "in.csv", value)
    out = tmp_path / "out"
    out.mkdir()
    said = set()
    for name, args in _commands(source, out).items():
        result = run_cli(*args)
        lines = result.stderr.strip().splitlines()
        assert result.code == 2 and len(lines) == 1, (name, result.stderr)
        said.add(lines[0])
        assert list(out.iterdir()) == [], name
    assert said == {f"microagg: error: weight column 'w': row 4 holds {shown}; a sampling "
                    "weight is the number of population units a record stands for: a number "
                    "of at least 1 in every row" + (
                        " (weights scaled to the sample size: multiply them by the population "
                        "size over the sample size, which changes no weighted mean)"
                        if case == "below one" else "")}


def test_a_weight_of_one_is_a_weight_everywhere(run_cli, tmp_path):
    source = _survey(tmp_path / "in.csv", 1)
    out = tmp_path / "out"
    out.mkdir()
    for name, args in _commands(source, out).items():
        result = run_cli(*args)
        assert result.code == 0, (name, result.stderr)


def test_the_rule_names_the_row_of_the_file():
    values = pd.Series([3.0, 2.0, 0.25, 7.0], index=[10, 11, 12, 13])
    with pytest.raises(InputError, match=r"weight column 'w' of p\.csv: row 9 holds 0\.25;"):
        sampling_weights(values, "w", rows=np.array([5, 6, 8, 9]), where=" of p.csv")
    assert sampling_weights(pd.Series([1, 2]), "w").dtype == np.float64
    for refused in (pd.Series([True, True]), pd.Series(["1", "x"]),
                    pd.Series(pd.Categorical(["2", "b"]))):
        with pytest.raises(InputError, match="weight column 'w'"):
            sampling_weights(refused, "w")
