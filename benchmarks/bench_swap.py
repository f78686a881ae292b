"""Targeted record swapping: microagg's RecordSwap against sdcMicro's recordSwap on
sdcMicro's synthetic census (createDat), at about 10⁵ and 10⁶ persons.

Both swap households over nuts1 > nuts2 > nuts3 with lau2 carried along, risk variables
ageGroup and national, k = 3, swap rate 0.05, similarity profile hsize, seed 1, on the same
table (written once by R's createDat). "microagg" is the whole release in memory
(RecordSwap.release: codes, risk, pairing, the columns swapped, the report with its figures
per level and the frequencies of the keys before and after), after a warm-up on 2,000
households that compiles the kernels; "sdcmicro" is the call of recordSwap in R, timed in R
(its wrapper and C++ code; the table already read). Each case runs in a fresh process;
with --repeat the cases run in rounds and the median is printed.

Usage: python benchmarks/bench_swap.py [--households 28500,285000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import measure, median_of_rounds

ROOT = Path(__file__).resolve().parent.parent
R_SCRIPT = ROOT / "reproduction" / "sdcmicro_recordswap.R"
HIERARCHY, RISK, CARRY = ["nuts1", "nuts2", "nuts3"], ["ageGroup", "national"], ["lau2"]


def one(case: dict) -> dict:
    if case["engine"] == "sdcmicro":
        with tempfile.TemporaryDirectory() as out:
            subprocess.run(["Rscript", str(R_SCRIPT), "swap", case["path"], out,
                            ",".join(HIERARCHY), ",".join(RISK), "hsize", "0.05", "3", "1",
                            ",".join(CARRY)], check=True, capture_output=True)
            times = (Path(out) / "times.csv").read_text().splitlines()
        # the R process's peak memory (the whole script: reading, risk, swapping, writing)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        return {**case, "seconds": float(times[1].split(",")[1]),
                "peak_rss_mib": round(rss, 1)}
    import pandas as pd

    from microagg.release.methods import RecordSwap

    frame = pd.read_csv(case["path"])
    method = RecordSwap(hierarchy=HIERARCHY, similar="hsize", risk_variables=RISK, k=3,
                        swap_rate=0.05, carry_along=CARRY)
    found: dict = {}

    def run(data):
        report = method.release(data, roles={"hid": "household"}, rng=1).report
        found["households_swapped"] = report.households_swapped

    small = frame[frame["hid"] <= 2000]
    result = measure(case, prepare=lambda: frame, run=run,
                     warmup=lambda: method.release(small, roles={"hid": "household"}, rng=1))
    return {**result, **found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--households", default="28500,285000")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one(json.loads(args.case))))
        return
    with tempfile.TemporaryDirectory() as folder:
        for households in map(int, args.households.split(",")):
            path = Path(folder) / f"createdat_{households}.csv"
            subprocess.run(["Rscript", str(R_SCRIPT), "create", str(households), "2021",
                            str(path)], check=True)
            with path.open() as f:
                persons = sum(1 for _ in f) - 1
            cases = [{"benchmark": "record-swapping", "engine": engine,
                      "households": households, "persons": persons, "path": str(path)}
                     for engine in ("microagg", "sdcmicro")]
            for row in median_of_rounds(__file__, cases, args.repeat):
                row.pop("path")
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
