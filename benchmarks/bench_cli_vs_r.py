"""The whole command line against Rscript + sdcMicro on the same files: MDAV with k = 5 on
n × 10 uniform values in [0, 1] (6 decimals), read from CSV and written to CSV, each timed
from the shell (process start-up, reading, the partition, writing; microagg's also writes its
report, OUT.report.json). Both run warm: microagg's kernels compiled and cached, R's package
installed; the median of ``--repeat`` runs of each.

The R side is ``sdcMicro::microaggregation(x, variables=names(x), aggr=5, method="mdav")``
and ``write.csv`` of its masked table. It needs ``Rscript`` with sdcMicro installed (built
from source: docs/reproduction.md); without it, only microagg's times are printed.

microagg is timed twice: each command in a process of its own (``MICROAGG_WORKER=off``,
``microagg_seconds``), then with a resident worker started once beforehand
(``microagg worker start``, ``microagg_worker_seconds``): the command line then hands the
command to the worker, which runs it in a forked child with the kernels already loaded. The
worker's own start (its warm-up) is reported as ``worker_start_seconds`` and is not in the
per-command times. ``--no-worker`` skips it.

Usage: python benchmarks/bench_cli_vs_r.py [--rows 10000,100000] [--repeat 3] [--no-worker]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

R_SCRIPT = """
args <- commandArgs(trailingOnly=TRUE)
suppressPackageStartupMessages(library(sdcMicro))
x <- read.csv(args[1])
m <- microaggregation(x, variables=names(x), aggr=5, method="mdav")
write.csv(m$mx, args[2], row.names=FALSE)
"""


def _seconds(command: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    import pandas as pd

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-worker", action="store_true")
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
            cold = {**os.environ, "MICROAGG_WORKER": "off"}
            ours = [sys_cli(microagg, data, base / "m.csv", cold)]  # warm-up (kernels cached)
            ours = [sys_cli(microagg, data, base / "m.csv", cold) for _ in range(args.repeat)]
            result = {"rows": n, "columns": 10, "k": 5,
                      "microagg_seconds": round(statistics.median(ours), 3),
                      "microagg_runs": [round(s, 3) for s in ours]}
            if not args.no_worker:
                result.update(_with_worker(microagg, data, base, args.repeat))
            start_up = [_seconds([microagg, "--version"]) for _ in range(args.repeat)]
            result["microagg_version_seconds"] = round(statistics.median(start_up), 3)
            if rscript is not None:
                theirs = [_seconds([rscript, str(script), str(data), str(base / "r.csv")])
                          for _ in range(args.repeat)]
                result["rscript_sdcmicro_seconds"] = round(statistics.median(theirs), 3)
                result["rscript_runs"] = [round(s, 3) for s in theirs]
                result["speedup"] = round(result["rscript_sdcmicro_seconds"]
                                          / result["microagg_seconds"], 2)
                if "microagg_worker_seconds" in result:
                    result["speedup_with_worker"] = round(
                        result["rscript_sdcmicro_seconds"] / result["microagg_worker_seconds"], 2)
            print(json.dumps(result), flush=True)


def _with_worker(microagg: str, data: Path, base: Path, repeat: int) -> dict:
    """The command's times with a resident worker, started in a private socket folder of its
    own and stopped afterwards; the worker's start time; and whether its output equals the
    output of the command run on its own."""
    runtime = Path(tempfile.mkdtemp(prefix="mb", dir="/tmp"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    env.pop("MICROAGG_WORKER", None)
    try:
        start = _seconds([microagg, "worker", "start"], env)
        runs = [sys_cli(microagg, data, base / "w.csv", env) for _ in range(repeat)]
        status = subprocess.run([microagg, "worker", "status", "--json"], env=env,
                                capture_output=True, text=True, check=True)
        served = json.loads(status.stdout)["commands"]
    finally:
        subprocess.run([microagg, "worker", "stop"], env=env, capture_output=True)
        shutil.rmtree(runtime, ignore_errors=True)
    if served != repeat:
        raise SystemExit(f"the worker ran {served} of {repeat} commands")
    return {"microagg_worker_seconds": round(statistics.median(runs), 3),
            "microagg_worker_runs": [round(s, 3) for s in runs],
            "worker_start_seconds": round(start, 3),
            "worker_output_identical": (base / "w.csv").read_bytes()
            == (base / "m.csv").read_bytes()}


def sys_cli(microagg: str, data: Path, output: Path, env: dict[str, str] | None = None
            ) -> float:
    for stale in (output, output.with_name(output.name + ".report.json")):
        stale.unlink(missing_ok=True)
    return _seconds([microagg, "microaggregate", str(data), "-o", str(output), "--k", "5"],
                    env)


if __name__ == "__main__":
    main()
