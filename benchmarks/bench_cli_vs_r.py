"""The whole command line against Rscript + sdcMicro on the same files: MDAV with k = 5 on
n × 10 uniform values in [0, 1] (6 decimals), read from CSV and written to CSV, each timed
from the shell (process start-up, reading, the partition, writing; microagg's also writes its
report, OUT.report.json). Both run warm: microagg's kernels compiled and cached, R's package
installed; the median of ``--repeat`` runs of each, alternated; wall-clock and CPU seconds
(user + system: the steadier figure on a machine shared with other work). microagg runs with
its bytecode caches written and read, as an installed package does, whatever the shell's
``PYTHONDONTWRITEBYTECODE``.

The R side is ``sdcMicro::microaggregation(x, variables=names(x), aggr=5, method="mdav")``
and ``write.csv`` of its masked table. It needs ``Rscript`` with sdcMicro installed (built
from source: docs/reproduction.md); without it, only microagg's times are printed.

Usage: python benchmarks/bench_cli_vs_r.py [--rows 10000,100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from _harness import installed_env

R_SCRIPT = """
args <- commandArgs(trailingOnly=TRUE)
suppressPackageStartupMessages(library(sdcMicro))
x <- read.csv(args[1])
m <- microaggregation(x, variables=names(x), aggr=5, method="mdav")
write.csv(m$mx, args[2], row.names=FALSE)
"""


def _seconds(command: list[str]) -> float:
    return _timed(command)[0]


def _timed(command: list[str]) -> tuple[float, float]:
    """The wall-clock and CPU seconds (user + system) of one run of ``command``: on a
    machine shared with other work, the CPU seconds are the steadier figure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=installed_env())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    import pandas as pd

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    microagg = shutil.which("microagg")
    rscript = shutil.which("Rscript")
    if microagg is None:
        raise SystemExit("microagg is not on PATH (activate the environment it is installed in)")
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        script = base / "mdav.R"
        script.write_text(R_SCRIPT)
        for n in (int(v) for v in args.rows.split(",")):
            data = base / f"u{n}.csv"
            rng = np.random.default_rng(0)
            pd.DataFrame(rng.uniform(0, 1, (n, 10)).round(6),
                         columns=[f"a{j}" for j in range(10)]).to_csv(data, index=False)
            sys_cli(microagg, data, base / "m.csv")  # warm-up (kernels cached)
            ours: list[tuple[float, float]] = []
            theirs: list[tuple[float, float]] = []
            for _ in range(args.repeat):  # alternated, so that both meet the same load
                ours.append(sys_cli(microagg, data, base / "m.csv"))
                if rscript is not None:
                    theirs.append(_timed([rscript, str(script), str(data),
                                          str(base / "r.csv")]))
            result = {"rows": n, "columns": 10, "k": 5,
                      "microagg_seconds": round(statistics.median(w for w, _ in ours), 3),
                      "microagg_runs": [round(w, 3) for w, _ in ours],
                      "microagg_cpu_seconds": round(statistics.median(c for _, c in ours), 3)}
            start_up = [_seconds([microagg, "--version"]) for _ in range(args.repeat)]
            result["microagg_version_seconds"] = round(statistics.median(start_up), 3)
            if theirs:
                result["rscript_sdcmicro_seconds"] = round(
                    statistics.median(w for w, _ in theirs), 3)
                result["rscript_runs"] = [round(w, 3) for w, _ in theirs]
                result["rscript_sdcmicro_cpu_seconds"] = round(
                    statistics.median(c for _, c in theirs), 3)
                result["speedup"] = round(result["rscript_sdcmicro_seconds"]
                                          / result["microagg_seconds"], 2)
                result["cpu_speedup"] = round(result["rscript_sdcmicro_cpu_seconds"]
                                              / result["microagg_cpu_seconds"], 2)
            print(json.dumps(result), flush=True)


def sys_cli(microagg: str, data: Path, output: Path) -> tuple[float, float]:
    for stale in (output, output.with_name(output.name + ".report.json")):
        stale.unlink(missing_ok=True)
    return _timed([microagg, "microaggregate", str(data), "-o", str(output), "--k", "5"])


if __name__ == "__main__":
    main()
