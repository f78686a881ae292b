"""The risk measures of categorical keys against the R package sdcMicro itself, run by
reproduction/sdcmicro_risk.R (skipped where Rscript with sdcMicro is not installed).

docs/algorithms.md ("Risk of categorical keys") lists where the readings differ: sdcMicro's
ldiversity and suda2 read a missing key as a category, its DIS score is computed in single
precision from the uniques alone in a hash bucket. The comparisons below are on what both
compute alike; reproduction/sdcmicro_risk.py shows the rest on Adult."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg import categorical_risk

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "reproduction" / "sdcmicro_risk.R"


def _sdcmicro_available() -> bool:
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(sdcMicro)"],
                          capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _sdcmicro_available(),
                                reason="Rscript with the R package sdcMicro is not installed")


def _run(source: str, out: Path, keys: list[str], weight: str, household: str,
         sensitive: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    subprocess.run(["Rscript", str(SCRIPT), source, str(out), ",".join(keys), weight,
                    household, ",".join(sensitive)], check=True, capture_output=True)
    data = pd.read_csv(out / "data.csv", keep_default_na=False, na_values=[""])
    summary = pd.read_csv(out / "summary.csv").set_index("name")["value"]
    return data, pd.read_csv(out / "records.csv"), summary


def _check_frequencies_and_risk(ours, theirs: pd.DataFrame, summary: pd.Series) -> None:
    assert ours.fk.tolist() == theirs["fk"].tolist()
    np.testing.assert_allclose(ours.Fk, theirs["Fk"], rtol=1e-12)
    np.testing.assert_allclose(ours.risk, theirs["risk"], rtol=1e-12)
    # sdcMicro forms 1 - prod(1 - r): cancellation when every r is small
    np.testing.assert_allclose(ours.household_risk, theirs["household_risk"], rtol=1e-9)
    assert ours.global_risk == pytest.approx(summary["global_risk"], rel=1e-12)
    assert ours.expected_reidentifications == pytest.approx(
        summary["expected_reidentifications"], rel=1e-12)
    for k in (2, 3, 5):
        assert ours.violations[k] == summary[f"violations_{k}"]
        assert ours.weighted_violations[k] == summary[f"weighted_violations_{k}"]


def test_testdata(tmp_path):
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    data, theirs, summary = _run("testdata", tmp_path, keys, "sampling_weight", "ori_hid",
                                 ["hhcivil", "age"])
    ours = categorical_risk(data, keys, weight="sampling_weight", household="ori_hid")
    _check_frequencies_and_risk(ours, theirs, summary)
    np.testing.assert_allclose(ours.suda.scores, theirs["suda_score"], rtol=1e-15)
    for j, key in enumerate(keys):
        np.testing.assert_allclose(ours.suda.record_contributions[:, j],
                                   theirs[f"contribution_{key}"], rtol=1e-12)
        assert ours.suda.contributions[key] == pytest.approx(
            summary[f"suda_contribution_{key}"], rel=1e-12)
    # sdcMicro's DIS factor and exponent are single-precision floats
    np.testing.assert_allclose(ours.suda.dis_scores, theirs["dis_score"], rtol=1e-6)
    for sensitive in ("hhcivil", "age"):
        result = categorical_risk(data, keys, sensitive=sensitive).l_diversity
        assert result.distinct.tolist() == theirs[f"l_distinct_{sensitive}"].tolist()
        np.testing.assert_allclose(result.entropy, theirs[f"l_entropy_{sensitive}"],
                                   rtol=1e-12)
        assert result.recursive.tolist() == theirs[f"l_recursive_{sensitive}"].tolist()


def test_missing_keys(tmp_path):
    rng = np.random.default_rng(11)
    n = 400
    frame = pd.DataFrame({"a": rng.integers(1, 4, n), "b": rng.integers(1, 5, n),
                          "c": rng.integers(1, 3, n), "d": rng.integers(1, 6, n),
                          "w": rng.uniform(1, 30, n).round(3), "hh": rng.integers(1, 150, n),
                          "s": rng.integers(1, 4, n)}).astype({"a": float, "b": float,
                                                               "d": float})
    for key, share in (("a", 0.05), ("b", 0.1), ("d", 0.03)):
        frame.loc[rng.random(n) < share, key] = np.nan
    # records missing every key: sdcMicro's freqCalc counts them apart, and so does microagg
    frame.loc[[5, 77, 300], ["a", "b", "c", "d"]] = np.nan
    source = tmp_path / "keys.csv"
    frame.to_csv(source, index=False)
    keys = ["a", "b", "c", "d"]
    data, theirs, summary = _run(str(source), tmp_path / "out", keys, "w", "hh", ["s"])
    ours = categorical_risk(data, keys, weight="w", household="hh")  # matches-any: alpha = 1
    _check_frequencies_and_risk(ours, theirs, summary)
    assert ours.all_missing == 3 and ours.fk[[5, 77, 300]].tolist() == [len(data)] * 3
    exact = categorical_risk(data, keys, sensitive="s", missing="category")
    assert exact.l_diversity.distinct.tolist() == theirs["l_distinct_s"].tolist()
    np.testing.assert_allclose(exact.l_diversity.entropy, theirs["l_entropy_s"], rtol=1e-12)
    assert exact.l_diversity.recursive.tolist() == theirs["l_recursive_s"].tolist()
    # a record without a missing key has the same MSUs in both readings
    complete = data[keys].notna().all(axis=1).to_numpy()
    np.testing.assert_allclose(exact.suda.scores[complete],
                               theirs["suda_score"].to_numpy()[complete], rtol=1e-15)


def test_free1_with_two_records_without_keys():
    """sdcMicro's free1, every key of its first two records blanked: f_k of every record
    and the 3,974 records below k = 3 agree (reproduction/sdcmicro_missing_fk.py)."""
    script = ROOT / "reproduction" / "sdcmicro_missing_fk.py"
    done = subprocess.run([sys.executable, str(script), "--blank", "2", "free1",
                           "REGION,SEX,AGE,MARSTAT,KINDPERS,EDUC1,ETNI"],
                          capture_output=True, text=True, check=True)
    row = json.loads(done.stdout.splitlines()[-1])
    assert row["records_whose_fk_differ"] == 0 and row["all_keys_missing"] == 2
    assert row["microagg_below_3"] == row["sdcMicro_below_3"] == 3974
