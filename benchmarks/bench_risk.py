"""Speed of the risk measures of categorical keys on UCI Adult (32,561 rows, missing values
kept): 7 keys (age, education, marital-status, occupation, race, sex, native-country), the
sampling weight fnlwgt, l-diversity of income.

Cases, each in a fresh process after warm-up (numba loads its cached kernels on first use):
"all" is microagg.categorical_risk (frequencies, individual risk, violations, SUDA2,
l-diversity), "suda2" SUDA2 alone from the same table (the keys coded, then the search),
each with missing keys read as matching any value (the default) and as a category.
With --sdcmicro, also sdcMicro's measure_risk and suda2 on the same data (one run of
reproduction/sdcmicro_risk.R, its own timers).

Usage: python benchmarks/bench_risk.py [--repeat 3] [--sdcmicro]   (needs the reference data)
Prints one JSON object per case: the median seconds of ``repeat`` runs, every run, peak RSS.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, median_of_rounds

KEYS = ["age", "education", "marital-status", "occupation", "race", "sex", "native-country"]


def _run(case: dict, frame) -> None:
    from microagg.core.frequencies import key_codes
    from microagg.risk import categorical_risk, suda2

    if case["measure"] == "all":
        categorical_risk(frame, KEYS, weight="fnlwgt", sensitive="income",
                         missing=case["missing"])
    else:
        suda2(key_codes(frame, KEYS), KEYS, case["missing"])


def one(case: dict) -> dict:
    from microagg import datasets

    def prepare():
        return datasets.load("adult").frame

    def warmup():
        _run(case, prepare().iloc[:300])

    return measure(case, prepare=prepare, run=lambda frame: _run(case, frame), warmup=warmup)


def sdcmicro() -> dict:
    """sdcMicro's own timers, from one run of reproduction/sdcmicro_risk.R on Adult."""
    from microagg.data.datasets import data_dir

    folder = data_dir("adult.csv")
    script = Path(__file__).parents[1] / "reproduction" / "sdcmicro_risk.R"
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(["Rscript", str(script), str(folder / "adult.csv"), out, ",".join(KEYS),
                        "fnlwgt", "-", "income"], check=True, capture_output=True)
        summary = dict(line.rstrip().replace('"', "").split(",", 1)
                       for line in (Path(out) / "summary.csv").read_text().splitlines()[1:])
    return {"benchmark": "risk", "tool": "sdcMicro", "data": "adult",
            "measure_risk_seconds": float(summary["measure_risk_seconds"]),
            "suda2_seconds": float(summary["suda2_seconds"]),
            "ldiversity_seconds": float(summary["ldiversity_seconds_income"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sdcmicro", action="store_true")
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    cases = [{"benchmark": "risk", "tool": "microagg", "data": "adult", "rows": 32561,
              "keys": len(KEYS), "measure": measure_name, "missing": missing}
             for measure_name in ("all", "suda2") for missing in ("matches-any", "category")]
    for result in median_of_rounds(__file__, cases, args.repeat):
        print(json.dumps(result), flush=True)
    if args.sdcmicro:
        print(json.dumps(sdcmicro()), flush=True)


if __name__ == "__main__":
    main()
