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

With --dask PERSONS it runs instead ``microagg swap --engine dask --workers 2`` (the whole
command: a LocalCluster of 2 single-threaded workers started and stopped, the data set read
and written as Parquet, the report beside it) on a synthetic census of PERSONS persons in
partitions of 10⁶ written by this script (numpy: households of 1-6 persons in 3 > 15 > 225
areas, lau2 below them carried along, the columns of createDat's persons).

Usage: python benchmarks/bench_swap.py [--households 28500,285000] [--repeat 3]
       python benchmarks/bench_swap.py --dask 10000000
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


def census_parts(persons: int, folder: Path, seed: int = 2021) -> int:
    """A synthetic census of about ``persons`` persons as Parquet files of 10⁶ rows (whole
    households each); returns the number of households."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    size = rng.choice(np.arange(1, 7), int(persons / 3.2) + 1,
                      p=[0.25, 0.3, 0.18, 0.17, 0.07, 0.03])
    size = size[:np.searchsorted(np.cumsum(size), persons) + 1]
    households = size.size
    nuts1 = rng.integers(1, 4, households)
    nuts2 = nuts1 * 10 + rng.integers(1, 6, households)
    nuts3 = nuts2 * 100 + rng.integers(1, 16, households)
    lau2 = nuts3 * 10 + rng.integers(1, 6, households)
    ends = np.cumsum(size)
    start = 0
    for part, stop in enumerate(range(1_000_000, int(ends[-1]) + 1_000_000, 1_000_000)):
        last = int(np.searchsorted(ends, stop, side="right"))
        rows = slice(start, last)
        n = int(size[rows].sum())
        pd.DataFrame({
            "nuts1": np.repeat(nuts1[rows], size[rows]),
            "nuts2": np.repeat(nuts2[rows], size[rows]),
            "nuts3": np.repeat(nuts3[rows], size[rows]),
            "lau2": np.repeat(lau2[rows], size[rows]),
            "hid": np.repeat(np.arange(start, last) + 1, size[rows]),
            "hsize": np.repeat(size[rows], size[rows]),
            "ageGroup": rng.integers(1, 8, n), "gender": rng.integers(1, 3, n),
            "national": rng.choice(np.arange(1, 6), n, p=[0.9, 0.05, 0.03, 0.015, 0.005]),
        }).to_parquet(folder / f"part-{part:03d}.parquet", index=False)
        start = last
        if start >= households:
            break
    return households


def on_dask(persons: int) -> dict:
    """``microagg swap --engine dask --workers 2`` on :func:`census_parts`, timed."""
    import time

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name) / "census"
        folder.mkdir()
        households = census_parts(persons, folder)
        out = Path(name) / "swapped"
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "microagg", "swap", str(folder), "-o",
                               str(out), "--household", "hid", "--hierarchy",
                               ",".join(HIERARCHY), "--risk-variables", ",".join(RISK),
                               "--similar", "hsize", "--k", "3", "--swap-rate", "0.05",
                               "--carry-along", ",".join(CARRY), "--seed", "1",
                               "--engine", "dask", "--workers", "2", "--json"],
                              capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - started
        report = json.loads(done.stdout)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"benchmark": "record-swapping", "engine": "dask", "workers": 2,
            "persons": persons, "households": households, "seconds": round(seconds, 1),
            "households_swapped": report["households_swapped"],
            "peak_rss_mib_largest_process": round(rss, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case")
    parser.add_argument("--households", default="28500,285000")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--dask", type=int)
    args = parser.parse_args()
    if args.dask:
        print(json.dumps(on_dask(args.dask)))
        return
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
