"""MDAV on a busy machine: the default thread choice against one thread, idle and beside
CPU-bound competitor processes.

Usage: python benchmarks/bench_busy.py [--n 100000] [--d 10] [--k 5] [--runs 5]
                                       [--competitors 1,4]
Prints one JSON object per load (0 = idle, then each number of competitors): the median
seconds of the default (threads chosen by measurement), of one thread and of all threads,
and the slowdown of each against one thread on an idle machine. The competitors are plain
Python busy loops, started before the runs and killed after them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

BURN = "while True: pass"


def timed(X: np.ndarray, k: int, threads: int | None) -> float:
    from microagg.partition.mdav import mdav

    start = time.perf_counter()
    mdav(X, k, threads=threads)
    return time.perf_counter() - start


def measure(X: np.ndarray, k: int, runs: int, settings: dict[str, int | None]
            ) -> dict[str, float]:
    """Median seconds per setting; settings take turns so that a change of load during the
    measurement affects them alike."""
    times: dict[str, list[float]] = {name: [] for name in settings}
    for _ in range(runs):
        for name, threads in settings.items():
            times[name].append(timed(X, k, threads))
    return {name: round(statistics.median(values), 3) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--competitors", default="1,4")
    args = parser.parse_args()

    from microagg.core.threads import available_threads
    from microagg.partition.mdav import mdav

    width = available_threads()
    warm = np.random.default_rng(1).standard_normal((200, args.d))
    for threads in (None, 1, width):
        mdav(warm, args.k, threads=threads)  # compile outside the timings
    X = np.random.default_rng(0).standard_normal((args.n, args.d))
    settings = {"default": None, "one_thread": 1, f"{width}_threads": width}
    idle = measure(X, args.k, args.runs, settings)
    baseline = idle["one_thread"]
    for load in [0, *(int(c) for c in args.competitors.split(",") if c)]:
        burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(load)]
        try:
            time.sleep(1.0 if load else 0.0)
            result = idle if load == 0 else measure(X, args.k, args.runs, settings)
            loadavg = os.getloadavg()[0]
        finally:
            for process in burners:
                process.kill()
                process.wait()
        print(json.dumps({
            "benchmark": "mdav-busy", "n": args.n, "d": args.d, "k": args.k,
            "runs": args.runs, "competitors": load, "cores": os.cpu_count(),
            "load_average_1min": round(loadavg, 2), "seconds": result,
            "slowdown_vs_idle_one_thread": {name: round(value / baseline, 2)
                                            for name, value in result.items()},
        }), flush=True)


if __name__ == "__main__":
    main()
