"""The comparison of methods for categorical keys on UCI Adult, its risks checked by sdcMicro.

Runs :func:`microagg.compare_keys` on Adult (32,561 records; keys age, education,
marital-status, occupation, race, sex, native-country with their missing values; weight
fnlwgt; age recoded by intervals of width 5 doubling per level, education, marital-status,
occupation and native-country up their ARX taxonomies) for a target of at most 0.02
expected re-identifications and for no violation of k = 5, and prints each method's value,
risk, information loss and status.

Each method's release at its value is then made again by the method objects as the commands
make it (``microagg suppress | recode | pram | microaggregate``), written to CSV, and
measured by sdcMicro (reproduction/sdcmicro_risk.R: ``measure_risk`` and
``kAnon_violations``): the risk the comparison reports and sdcMicro's on the same release are
printed side by side with their relative difference. For PRAM the comparison counts only the
records whose keys PRAM kept (docs/algorithms.md); its figure is recomputed from sdcMicro's
per-record risks over those records, for every seed the comparison ran at the chosen value.

Usage: python reproduction/sdcmicro_compare_keys.py [--seeds 10]
(needs Rscript with sdcMicro; MICROAGG_DATA or ../shared/datasets for adult.csv)
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from microagg import datasets
from microagg.evaluation.key_compare import compare_keys
from microagg.options import CompareMethod
from microagg.release.methods import MDAV, GlobalRecoding, InvariantPram, LocalSuppression

HERE = Path(__file__).parent
KEYS = ["age", "education", "marital-status", "occupation", "race", "sex", "native-country"]
RECODE = ["age", "education", "marital-status", "occupation", "native-country"]
HEIGHTS = {"education": 3, "marital-status": 2, "occupation": 2, "native-country": 2}
ROLES = {"fnlwgt": "weight"}


def recoded(frame: pd.DataFrame, schema, level: int) -> pd.DataFrame:
    """Adult's keys recoded at ``level`` as the recoding candidates recode them."""
    width = 5 * 2 ** (level - 1)
    method = GlobalRecoding(levels={k: min(level, h) for k, h in HEIGHTS.items()},
                            breaks={"age": [width * i for i in range(math.ceil(120 / width)
                                                                     + 1)]})
    return method.release(frame, keys=KEYS, schema=schema, roles=ROLES).frame


def remade(method: CompareMethod, value: float, frame, schema, run: int = 0) -> pd.DataFrame:
    """The release of ``method`` at ``value`` by the method objects."""
    if method is CompareMethod.LOCAL_SUPPRESSION:
        return LocalSuppression(k=int(value)).release(frame, keys=KEYS, schema=schema,
                                                      roles=ROLES).frame
    if method is CompareMethod.RECODE_THEN_SUPPRESS:
        return LocalSuppression(k=int(value)).release(recoded(frame, schema, 1), keys=KEYS,
                                                      roles=ROLES).frame
    if method is CompareMethod.GLOBAL_RECODING:
        return recoded(frame, schema, int(value))
    if method is CompareMethod.MDAV:
        return MDAV(k=int(value)).release(frame, schema=schema, columns=KEYS,
                                          roles=ROLES).frame
    return InvariantPram(retention=value).release(frame, keys=KEYS, schema=schema, roles=ROLES,
                                                  rng=np.random.default_rng((0, run))).frame


def sdcmicro(written: pd.DataFrame, folder: Path) -> tuple[dict[str, float], pd.DataFrame]:
    """sdcMicro's summary and per-record risks of the keys of ``written``."""
    path = folder / "release.csv"
    written[[*KEYS, "fnlwgt"]].to_csv(path, index=False, na_rep="")
    subprocess.run(["Rscript", str(HERE / "sdcmicro_risk.R"), str(path), str(folder),
                    ",".join(KEYS), "fnlwgt"], check=True, capture_output=True)
    summary = pd.read_csv(folder / "summary.csv")
    return (dict(zip(summary["name"], summary["value"].astype(float), strict=True)),
            pd.read_csv(folder / "records.csv"))


def kept(frame: pd.DataFrame, written: pd.DataFrame) -> np.ndarray:
    same = [(frame[k].astype(object).where(frame[k].notna(), None).to_numpy()
             == written[k].astype(object).where(written[k].notna(), None).to_numpy())
            for k in KEYS]
    return np.logical_and.reduce(same)


def check(label: str, kind: str, result, frame, schema, folder: Path) -> None:
    for m in result.methods:
        chosen = next(e for e in m.evaluations if e.value == m.value)
        runs = len(chosen.measures) if m.method is CompareMethod.INVARIANT_PRAM else 1
        theirs = []
        for run in range(runs):
            written = remade(m.method, m.value, frame, schema, run)
            summary, records = sdcmicro(written, folder)
            if kind == "violations":
                theirs.append(float(((records["fk"] < 5).to_numpy()
                                     & (kept(frame, written) if runs > 1 else True)).sum()))
            elif m.method is CompareMethod.INVARIANT_PRAM:
                theirs.append(float(records["risk"].to_numpy()[kept(frame, written)].sum()))
            else:
                theirs.append(summary["expected_reidentifications"])
                assert summary["violations_5"] == float((records["fk"] < 5).sum())
        value = float(np.mean(theirs))
        relative = abs(m.risk - value) / abs(value) if value else abs(m.risk)
        print(json.dumps({"target": label, "method": m.method.value, "parameter": m.parameter,
                          "value": m.value, "status": m.status.value, "risk": m.risk,
                          "sdcmicro_risk": value, "relative_difference": relative,
                          "sdcmicro_runs": runs, "information_loss": m.utility.loss,
                          "cells_changed_percent": m.utility.changed_percent,
                          "cells_suppressed_percent": m.utility.suppressed_percent}),
              flush=True)
    print(json.dumps({"target": label, "ranking": [m.value for m in result.ranking],
                      "original_risk": result.data["original_risk"]}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    data = datasets.load("adult")
    frame, schema = data.frame, data.schema
    common = {"keys": KEYS, "weight": "fnlwgt", "schema": schema, "recode": RECODE,
              "widths": {"age": 5}, "seeds": args.seeds}
    targets = [("expected re-identifications at most 0.02", "expected-reidentifications",
                compare_keys(frame, target_risk=0.02, **common)),
               ("no violation of k = 5", "violations",
                compare_keys(frame, target_risk=0, risk_kind="violations", k=5, **common))]
    with tempfile.TemporaryDirectory() as folder:
        for label, kind, result in targets:
            check(label, kind, result, frame, schema, Path(folder))


if __name__ == "__main__":
    main()
