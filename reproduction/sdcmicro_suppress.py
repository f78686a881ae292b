"""Local suppression to k-anonymity: microagg's LocalSuppression beside sdcMicro's
localSuppression on the same table, k and keys, a missing value matching any value.

* ``--data testdata``: sdcMicro's own ``testdata`` (4,580 records; keys urbrur, roof,
  walls, water, electcon, relat, sex; weight sampling_weight, household ori_hid), exported
  by the R script.
* ``--data adult``: UCI Adult (32,561 records; keys age, workclass, education,
  marital-status, race, sex, native-country, the seven quasi-identifiers of Li et al. 2007;
  workclass and native-country have missing values, "?"); weight fnlwgt.

Runs reproduction/sdcmicro_suppress.R (Rscript with sdcMicro installed; sdcMicro's Adult
run takes minutes) unless ``--sdcmicro PREFIX`` names the files of an earlier run, then
microagg on the same keys, and prints one JSON object: the suppressions per key and in
total of both, their run times, and the smallest f_k of both written tables counted by
microagg's frequencies (sdcMicro's table read back from its CSV) and by sdcMicro's freqCalc.

Usage: python reproduction/sdcmicro_suppress.py --data testdata|adult --k K
           [--sdcmicro PREFIX] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd

from microagg import datasets
from microagg.core.frequencies import sample_frequencies
from microagg.release.methods import LocalSuppression

HERE = Path(__file__).resolve().parent
KEYS = {"testdata": ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"],
        "adult": ["age", "workclass", "education", "marital-status", "race", "sex",
                  "native-country"]}
ROLES = {"testdata": {"sampling_weight": "weight", "ori_hid": "household"},
         "adult": {"fnlwgt": "weight"}}


def run_sdcmicro(data: str, k: int, prefix: Path) -> None:
    source = "testdata" if data == "testdata" else str(datasets.data_dir("adult.csv")
                                                        / "adult.csv")
    subprocess.run(["Rscript", str(HERE / "sdcmicro_suppress.R"), source, str(k),
                    str(prefix)], check=True)


def table(data: str, prefix: Path) -> pd.DataFrame:
    if data == "testdata":
        return pd.read_csv(f"{prefix}.input.csv")
    return datasets.load("adult").frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=sorted(KEYS), default="testdata")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--sdcmicro", type=Path, help="prefix of an earlier R run's files")
    parser.add_argument("--workdir", type=Path, help="where the R run writes its files")
    args = parser.parse_args()
    keys = KEYS[args.data]
    prefix = args.sdcmicro
    if prefix is None:
        folder = args.workdir or Path(tempfile.mkdtemp(prefix="sdcmicro_suppress_"))
        prefix = folder / f"{args.data}_k{args.k}"
        run_sdcmicro(args.data, args.k, prefix)
    theirs = json.loads(Path(f"{prefix}.sdcmicro.json").read_text())
    theirs_table = pd.read_csv(f"{prefix}.sdcmicro.csv", keep_default_na=False,
                               na_values=[""])
    frame = table(args.data, prefix)
    started = time.perf_counter()
    release = LocalSuppression(k=args.k).release(frame, keys=keys, roles=ROLES[args.data])
    seconds = time.perf_counter() - started
    ours = release.report
    print(json.dumps({
        "data": args.data, "k": args.k, "keys": keys, "records": len(frame),
        "sdcmicro": {"version": theirs["sdcmicro"], "seconds": round(theirs["seconds"], 2),
                     "total": theirs["total"], "suppressions": theirs["suppressions"],
                     "smallest_fk_freqcalc": theirs["smallest_fk"],
                     "smallest_fk_microagg": int(sample_frequencies(theirs_table, keys).min())},
        "microagg": {"seconds": round(seconds, 2), "total": ours.total_suppressions,
                     "suppressions": ours.suppressions, "greedy": ours.greedy_suppressions,
                     "restored": ours.restored,
                     "smallest_fk": ours.k_anonymity.smallest_class},
        "ratio": round(ours.total_suppressions / max(theirs["total"], 1), 4),
    }))


if __name__ == "__main__":
    main()
