"""Records whose keys are all missing: under ``matches-any`` they match every record only
through missing values, so they are counted apart as sdcMicro's freqCalc counts them (their
f_k is n; they count for no record that has every key, and for a record missing some keys
as any record does). Two blank records must not make a table of unique records look
3-anonymous: ``check``, ``risk`` and the release reports say how many there are, and the
releases that promise k-anonymity keep it by that count."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from microagg import MDAV, LocalSuppression, categorical_risk
from microagg.core.frequencies import all_missing, key_codes, key_frequencies
from microagg.core.verifiers import k_anonymity, t_closeness
from tests import reference

KEYS = ["region", "sex", "age"]


def _uniques_and_two_blank(n: int = 30, seed: int = 0) -> pd.DataFrame:
    """``n`` records, each unique on the keys, then two records without any key."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"region": [f"r{i % 7}" for i in range(n)],
                          "sex": [("f", "m")[i // 7 % 2] for i in range(n)],
                          "age": [20 + i for i in range(n)],
                          "income": rng.integers(1, 5, n) * 1000})
    blank = pd.DataFrame({"region": [None, None], "sex": [None, None], "age": [np.nan] * 2,
                          "income": [3000, 4000]})
    return pd.concat([frame, blank], ignore_index=True)


def test_frequencies_count_blank_records_apart_as_sdcmicro():
    """freqCalc(alpha = 1) on this table, worked by hand from its code (and checked with
    sdcMicro 5.8.1): (2, 2) is matched by (NA, 2) only; (NA, 2) by (2, 2), itself and both
    blank records; a blank record by all 6 records."""
    codes = np.array([[0, 0], [0, 0], [1, 1], [-1, -1], [-1, 1], [-1, -1]])
    fk, Fk = key_frequencies(codes, weights=np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0]))
    assert fk.tolist() == [2, 2, 2, 6, 4, 6]
    assert Fk.tolist() == [3.0, 3.0, 20.0, 63.0, 60.0, 63.0]
    assert all_missing(codes).tolist() == [False, False, False, True, False, True]
    assert fk.tolist() == reference.frequencies_direct(codes.tolist(), "matches-any")


def test_one_key_follows_the_same_rule():
    """With one key, a record missing it counts for no record that has it (sdcMicro's
    freqCalc has a branch of its own for one key that counts it: docs/algorithms.md)."""
    fk, _ = key_frequencies(np.array([[0], [0], [1], [-1], [-1]]))
    assert fk.tolist() == [2, 2, 1, 5, 5]


def test_two_blank_records_do_not_make_unique_records_3_anonymous():
    frame = _uniques_and_two_blank()
    result = k_anonymity(frame, KEYS)
    assert result.smallest_class == 1 and not result.holds(3)
    assert result.all_missing == 2 and result.largest_class == len(frame)
    assert k_anonymity(frame, KEYS, "category").all_missing == 2


def test_check_says_how_many_and_fails(run_cli, tmp_path):
    path = tmp_path / "blank.csv"
    _uniques_and_two_blank().to_csv(path, index=False)
    text = run_cli("check", path, "--k", "3", "--quasi", ",".join(KEYS))
    assert text.code == 1, text.stderr
    assert "VIOLATED" in text.stdout
    assert "2 records with all quasi-identifiers missing" in text.stdout
    result = run_cli("check", path, "--k", "3", "--quasi", ",".join(KEYS), "--json")
    report = json.loads(result.stdout)
    assert result.code == 1 and report["holds"] is False
    assert report["k_anonymity"]["all_missing"] == 2
    assert report["k_anonymity"]["smallest_class"] == 1


def test_risk_counts_the_violations_sdcmicro_counts(run_cli, tmp_path):
    frame = _uniques_and_two_blank()
    result = categorical_risk(frame, KEYS)
    assert result.all_missing == 2 and result.to_dict()["all_missing"] == 2
    assert result.violations[3] == 30 and result.sample_uniques == 30  # kAnon_violations
    assert result.fk[-2:].tolist() == [32, 32]
    # SUDA2: the unique records still have their MSUs (the blank ones match none of them)
    assert (result.suda.scores[:30] > 0).all() and (result.suda.scores[30:] == 0).all()
    path = tmp_path / "blank.csv"
    frame.to_csv(path, index=False)
    text = run_cli("risk", path, "--keys", ",".join(KEYS))
    assert text.code == 0, text.stderr
    assert "2 records with all keys missing" in text.stdout


def test_matching_sets_leave_blank_records_out_of_complete_records_classes():
    frame = _uniques_and_two_blank(12)
    emd = t_closeness(frame, KEYS, "income", missing="matches-any").emd
    expected = max(reference.class_emd_direct(frame["income"].to_numpy(float), members,
                                               "ordered")
                   for members in reference.matching_sets(frame, KEYS))
    assert emd.max() == pytest.approx(expected)
    sizes = [len(s) for s in reference.matching_sets(frame, KEYS)]
    assert sizes == [1] * 12 + [14, 14]


def test_mdav_sets_blank_records_apart_and_stays_k_anonymous():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.normal(size=40).round(2), "b": rng.normal(size=40).round(2)})
    frame.loc[[3, 21], ["a", "b"]] = np.nan
    frame.loc[7, "a"] = np.nan
    release = MDAV(k=3).release(frame)
    counts = reference.matching_counts(key_codes(release.frame, ["a", "b"]))
    assert counts.min() >= 3
    report = release.report
    assert report.k_anonymity.holds and report.k_anonymity.all_missing == 2
    assert any("2 records with all masked columns missing" in n for n in report.notes)
    assert report.clusters["smallest"] >= 3
    assert release.frame.loc[[3, 21]].isna().all().all()


def test_suppression_report_counts_blank_records():
    frame = pd.DataFrame({"sex": ["m", "m", "m", "f", "f", "f", None, None],
                          "region": ["a", "a", "b", "b", "b", "a", None, None]})
    release = LocalSuppression(k=2).release(frame, keys=["sex", "region"])
    codes = key_codes(release.frame, ["sex", "region"])
    assert reference.matching_counts(codes).min() >= 2
    report = release.report
    assert report.k_anonymity.holds and report.k_anonymity.all_missing >= 2
    assert report.after.all_missing == report.k_anonymity.all_missing
    assert report.before.all_missing == 2
    assert any("with all keys missing" in n for n in report.notes)
