"""Run one measurement per subprocess and print JSON lines (time and peak memory)."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any


def installed_env() -> dict[str, str]:
    """The environment for timing a command as an installed package runs it: with Python's
    bytecode caches written and read (pip compiles them at installation). A
    ``PYTHONDONTWRITEBYTECODE`` inherited from the shell would make every run compile each
    of microagg's modules again from source (about 0.25 s of a command at 10⁴ rows)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def peak_rss_mib() -> float:
    """Peak resident memory of this process, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(case: dict[str, Any], prepare: Callable[[], Any], run: Callable[[Any], Any],
            warmup: Callable[[], Any] | None = None) -> dict[str, Any]:
    """Time ``run(prepare())`` after an optional warm-up (JIT compilation)."""
    if warmup is not None:
        warmup()
    data = prepare()
    start = time.perf_counter()
    run(data)
    seconds = time.perf_counter() - start
    return {**case, "seconds": round(seconds, 3), "peak_rss_mib": round(peak_rss_mib(), 1)}


def run_cases(script: str, cases: list[dict[str, Any]], timeout: float) -> None:
    """Run ``script --case JSON`` for every case in a fresh process; print one JSON line each."""
    for case in cases:
        try:
            done = subprocess.run([sys.executable, script, "--case", json.dumps(case)],
                                  capture_output=True, text=True, timeout=timeout, check=True)
            print(done.stdout.strip().splitlines()[-1], flush=True)
        except subprocess.TimeoutExpired:
            print(json.dumps({**case, "seconds": None, "error": f"timeout after {timeout}s"}),
                  flush=True)
        except subprocess.CalledProcessError as exc:
            print(json.dumps({**case, "seconds": None, "error": exc.stderr.strip()[-300:]}),
                  flush=True)


def _run_once(script: str, case: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, script, "--case", json.dumps(case)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    seconds = [r["seconds"] for r in runs]
    return {**runs[0], "seconds": statistics.median(seconds), "runs": seconds,
            "peak_rss_mib": max(r["peak_rss_mib"] for r in runs)}


def median_of_runs(script: str, case: dict[str, Any], repeat: int) -> dict[str, Any]:
    """Run ``script --case JSON`` ``repeat`` times, each in a fresh process; the case with the
    median seconds, every run's seconds, the peak RSS and any other field of the first run."""
    return _median([_run_once(script, case) for _ in range(repeat)])


def median_of_rounds(script: str, cases: list[dict[str, Any]],
                     repeat: int) -> list[dict[str, Any]]:
    """:func:`median_of_runs` for every case, the runs taken in ``repeat`` rounds of all the
    cases, so that a machine whose speed drifts (a shared or virtual one) slows every case
    alike; the results in the order of ``cases``."""
    runs: list[list[dict[str, Any]]] = [[] for _ in cases]
    for _ in range(repeat):
        for at, case in enumerate(cases):
            runs[at].append(_run_once(script, case))
    return [_median(r) for r in runs]
