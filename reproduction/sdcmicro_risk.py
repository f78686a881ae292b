"""The risk measures of categorical keys against the R package sdcMicro, on its ``testdata``
and on UCI Adult.

Runs reproduction/sdcmicro_risk.R (sdcMicro's ``measure_risk``, ``kAnon_violations``,
``ldiversity`` and ``suda2``) into a temporary folder, computes the same measures with
:func:`microagg.categorical_risk` on the table R wrote, and prints one JSON object per data
set and measure: the largest relative difference over the records (|ours − theirs| / |theirs|,
0 where both are equal) and how many records differ by more than 1e-9.

Where microagg reads missing values otherwise than sdcMicro (docs/algorithms.md, "Risk of
categorical keys"), a second line ("as sdcMicro") recomputes the measure with sdcMicro's
reading, to show that the reading is the whole difference:

* l-diversity groups the records by their exact keys (a missing key is a category) and
  sdcMicro reads every missing sensitive value as a value of its own;
* suda2 never puts a missing value in an MSU, counts as sample uniques only the records
  alone in their bucket of its 16-bit hash table, and computes the DIS factor and the
  exponent Q in single precision.

Usage: python reproduction/sdcmicro_risk.py [--keep DIR]
(needs Rscript with sdcMicro; MICROAGG_DATA or ../shared/datasets for adult.csv)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from microagg.core.frequencies import key_codes, matching_counts
from microagg.data.datasets import data_dir
from microagg.options import MissingValues
from microagg.risk import categorical_risk, l_diversity
from microagg.risk.suda import _Search

HERE = Path(__file__).parent
CASES = {
    "testdata": {"source": "testdata",
                 "keys": ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"],
                 "weight": "sampling_weight", "household": "ori_hid",
                 "sensitive": ["hhcivil", "age"]},
    "adult": {"source": "adult.csv",
              "keys": ["age", "education", "marital-status", "occupation", "race", "sex",
                       "native-country"],
              "weight": "fnlwgt", "household": None, "sensitive": ["income", "workclass"]},
}


def r_name(name: str) -> str:
    """The column name as R's make.names writes it."""
    return name.replace("-", ".")


def compare(ours: np.ndarray, theirs: np.ndarray) -> dict[str, float | int]:
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.abs(ours - theirs) / np.abs(theirs)
    relative[ours == theirs] = 0.0
    relative[~np.isfinite(relative)] = np.inf
    return {"max_relative_difference": float(relative.max(initial=0.0)),
            "records_differing": int((relative > 1e-9).sum())}


def emit(data: str, measure: str, ours, theirs, reading: str = "microagg") -> None:
    print(json.dumps({"data": data, "measure": measure, "reading": reading,
                      **compare(ours, theirs)}), flush=True)


def run_r(case: dict, out: Path) -> None:
    source = case["source"]
    if source != "testdata":
        folder = data_dir(source)
        if folder is None:
            sys.exit(f"{source} not found: set MICROAGG_DATA")
        source = str(folder / source)
    subprocess.run(["Rscript", str(HERE / "sdcmicro_risk.R"), source, str(out),
                    ",".join(case["keys"]), case["weight"] or "-", case["household"] or "-",
                    ",".join(case["sensitive"])], check=True, capture_output=True, text=True)


def sdcmicro_suda(codes: np.ndarray, r_codes: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SUDA scores, DIS scores and per-record contributions read as sdcMicro's suda2 reads
    the keys (module docstring)."""
    n, m = codes.shape
    fk = matching_counts(codes, MissingValues.CATEGORY)
    uniques = np.flatnonzero(fk == 1)
    search = _Search.prepare(codes, uniques, MissingValues.CATEGORY)
    missing = (codes[uniques] < 0).astype(np.int64) @ (1 << np.arange(m, dtype=np.int64))
    search.present = ((1 << m) - 1) & ~missing  # a missing value is never in an MSU
    search.run()
    scores = np.zeros(n)
    scores[uniques] = search.score
    shares = np.zeros((n, m))
    shares[uniques] = search.contribution / np.where(search.score > 0, search.score, 1)[:, None]
    # NbUniqueTotal: the records alone in their bucket of the 16-bit hash of the codes
    hashes = np.zeros(n, dtype=np.int64)
    for j in range(m):
        carry = (hashes & 0x8000) != 0
        hashes = (((hashes << 1) & 0xFFFF) + r_codes[:, j] + carry) & 0xFFFF
    bucket_size = np.bincount(hashes, minlength=1 << 16)[hashes]
    u = np.float32(int((bucket_size == 1).sum()))
    pairs = np.float32(int((fk == 2).sum()))
    fraction = np.float32(0.01)
    dis = u * fraction / (u * fraction + pairs * (np.float32(1) - fraction))
    q = float(np.float32(1) + (np.float32(8) - np.float32(m)) / np.float32(20))
    scored = scores > 0
    powered = scores[scored] ** q
    constant = float(u / dis - u)
    out = np.zeros(n)
    out[scored] = 1.0 / (1.0 + constant / (powered * np.sum(1.0 / powered)))
    return scores, out, shares


def one(name: str, case: dict, folder: Path) -> None:
    out = folder / name
    start = time.perf_counter()
    run_r(case, out)
    r_seconds = time.perf_counter() - start
    data = pd.read_csv(out / "data.csv", keep_default_na=False, na_values=[""])
    theirs = pd.read_csv(out / "records.csv")
    summary = pd.read_csv(out / "summary.csv").set_index("name")["value"]
    keys = [r_name(k) for k in case["keys"]]
    weight = r_name(case["weight"]) if case["weight"] else None
    household = r_name(case["household"]) if case["household"] else None
    start = time.perf_counter()
    risk = categorical_risk(data, keys, weight=weight, household=household)
    ours_seconds = time.perf_counter() - start
    records = risk.records()
    for column in ("fk", "Fk", "risk", "household_risk"):
        if column in theirs:
            emit(name, column, records[column], theirs[column])
    for measure, value in (("global_risk", risk.global_risk),
                           ("expected_reidentifications", risk.expected_reidentifications)):
        emit(name, measure, [value], [summary[measure]])
    if household is not None:
        emit(name, "household_expected_reidentifications",
             [risk.household_risk.sum()], [summary["household_expected_reidentifications"]])
    for k in (2, 3, 5):
        emit(name, f"violations k={k}", [risk.violations[k]], [summary[f"violations_{k}"]])
        emit(name, f"weighted violations k={k}", [risk.weighted_violations[k]],
             [summary[f"weighted_violations_{k}"]])
    codes = key_codes(data, keys)
    r_codes = pd.read_csv(out / "codes.csv").to_numpy(dtype=np.int64)
    readings = [("microagg", risk.suda.scores, risk.suda.dis_scores,
                 risk.suda.record_contributions), ("as sdcMicro", *sdcmicro_suda(codes, r_codes))]
    for reading, scores, dis, shares in readings:
        emit(name, "suda_score", scores, theirs["suda_score"], reading)
        emit(name, "dis_score", dis, theirs["dis_score"], reading)
        raw = shares * scores[:, None]
        for j, key in enumerate(keys):
            emit(name, f"suda contribution of {key} (per record)", shares[:, j],
                 theirs[f"contribution_{key}"], reading)
            emit(name, f"suda contribution of {key}", [100 * raw[:, j].sum() / scores.sum()],
                 [summary[f"suda_contribution_{key}"]], reading)
    for sensitive in (r_name(s) for s in case["sensitive"]):
        values = key_codes(data, [sensitive])[:, 0]
        exact = l_diversity(codes, values, MissingValues.CATEGORY, attribute=sensitive)
        each_missing_apart = values.copy()  # sdcMicro: every missing value another value
        missing = np.flatnonzero(values < 0)
        each_missing_apart[missing] = values.max(initial=-1) + 1 + np.arange(missing.size)
        apart = l_diversity(codes, each_missing_apart, MissingValues.CATEGORY)
        for kind in ("distinct", "entropy", "recursive"):
            reference = theirs[f"l_{kind}_{sensitive}"]
            emit(name, f"l-diversity {kind} of {sensitive}", getattr(exact, kind), reference,
                 "microagg, missing keys as a category")
            if missing.size:
                emit(name, f"l-diversity {kind} of {sensitive}", getattr(apart, kind),
                     reference, "as sdcMicro")
    print(json.dumps({"data": name, "records": len(data),
                      "sdcMicro_seconds": {"measure_risk": summary["measure_risk_seconds"],
                                           "suda2": summary["suda2_seconds"],
                                           "Rscript_total": round(r_seconds, 2)},
                      "microagg_seconds": round(ours_seconds, 3)}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="write sdcMicro's outputs to this folder (kept)")
    args = parser.parse_args()
    if subprocess.run(["Rscript", "-e", "library(sdcMicro)"], capture_output=True).returncode:
        sys.exit("Rscript with the package sdcMicro is needed")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(args.keep) if args.keep else Path(temporary)
        for name, case in CASES.items():
            one(name, case, folder)


if __name__ == "__main__":
    main()
