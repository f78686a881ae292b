"""What the web app computes, against the command line: a method step as the app runs it (a
worker thread, the upload read again, the progress callback that counts records and checks
for the session's end) and as ``microagg run`` runs the same recipe; the SUDA2 search on UCI
Adult's default keys, with the cost the app states before it; and an Excel release written.

Each case runs in a fresh process and prints one JSON line: ``seconds`` (the step's own time,
``StepResult.seconds``, or the operation's), ``cpu_seconds`` where the process's CPU time
says more than the clock on a shared machine, and the figures of the case. The step runs
three ways: ``cli`` (``microagg run`` in a subprocess; ``seconds`` from its report),
``library`` (what ``microagg run`` computes, in the process, for its CPU time) and ``app``;
medians of ``--repeat`` rounds. ``--cold`` adds the step on an empty numba cache (a fresh
installation: every kernel compiled).

Usage: MICROAGG_DATA=../shared/datasets python benchmarks/bench_app_speed.py [--cold]
       [--only step|suda2|xlsx] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _harness import median_of_rounds, peak_rss_mib, run_cases

STEP = {"family": "microaggregate", "method": "mdav", "k": 5}


def _data(name: str) -> Path:
    from microagg import datasets

    found = datasets.data_dir(f"{name}.csv")
    if found is None:
        raise SystemExit(f"{name}.csv is not in the reference data (MICROAGG_DATA)")
    return found / f"{name}.csv"


def _app_schema(path: Path) -> Any:
    """The schema the data tab builds for an upload left as read (roles from the names)."""
    from microagg.ui.state import build_schema, read_upload

    frame, inferred, _ = read_upload(path)
    return frame, build_schema(inferred, {})


def _app_step(path: Path) -> dict[str, Any]:
    """The step as the steps tab runs it: in a worker thread, from the upload, with the
    progress callback that counts records and checks for the session's end."""
    from microagg.recipe.model import Step
    from microagg.ui.progress import Feed
    from microagg.ui.session import State
    from microagg.ui.state import begin_run

    frame, schema = _app_schema(path)
    feed, check = Feed("step 1"), State.new().checker()

    def work() -> Any:
        run = begin_run(path, frame, schema, None, "matches-any")
        report = feed.records(len(run.frame))

        def records(done: int) -> None:
            check()
            report(done)

        return run.then(Step.of(STEP), records=records)

    cpu, started = time.process_time(), time.perf_counter()
    done = asyncio.run(asyncio.to_thread(work))
    return {"seconds": round(done.results[-1].seconds, 3),
            "cpu_seconds": round(time.process_time() - cpu, 3),
            "wall_seconds": round(time.perf_counter() - started, 3)}


def _library_step(path: Path) -> dict[str, Any]:
    """The step as ``microagg run`` computes it (``Recipe.run``: the recipe's input read,
    the step applied on the calling thread), in this process, for its CPU time."""
    from microagg.recipe.model import Recipe, Step
    from microagg.recipe.runner import RecipeRun

    _, schema = _app_schema(path)
    cpu, started = time.process_time(), time.perf_counter()
    done = RecipeRun.start(Recipe(input=path, schema=schema)).then(Step.of(STEP))
    return {"seconds": round(done.results[-1].seconds, 3),
            "cpu_seconds": round(time.process_time() - cpu, 3),
            "wall_seconds": round(time.perf_counter() - started, 3)}


def _cli_step(path: Path) -> dict[str, Any]:
    """``microagg run`` of the recipe the app would write for the same step."""
    import yaml

    _, schema = _app_schema(path)
    folder = Path(tempfile.mkdtemp())
    recipe = folder / "recipe.yaml"
    attributes = {a.name: {"role": a.role.value, "kind": a.kind.value} for a in schema}
    recipe.write_text(yaml.safe_dump({"format": "microagg-recipe/1", "input": str(path),
                                      "schema": {"attributes": attributes},
                                      "steps": [STEP]}))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from microagg.cli import entry; entry()", "run",
                    str(recipe), "-o", str(folder / "out.csv")], check=True,
                   capture_output=True)
    wall = time.perf_counter() - started
    report = json.loads((folder / "out.csv.report.json").read_text())
    return {"seconds": report["steps"][0]["seconds"], "wall_seconds": round(wall, 3)}


def _suda2(keys: int) -> dict[str, Any]:
    from microagg.core.frequencies import key_codes
    from microagg.data.schema import Role
    from microagg.risk import suda2
    from microagg.risk.suda import search_cost

    frame, schema = _app_schema(_data("adult"))
    names = [a.name for a in schema if a.role is Role.QUASI][:keys]
    codes = key_codes(frame, names)
    suda2(codes[:5, :2])  # the kernels loaded
    searched = [0]

    def progress(done: int) -> None:
        searched[0] = done

    cpu, started = time.process_time(), time.perf_counter()
    result = suda2(codes, names, progress=progress)
    cost = search_cost(len(frame), keys)
    return {"seconds": round(time.perf_counter() - started, 3),
            "cpu_seconds": round(time.process_time() - cpu, 3),
            "stated_seconds": round(cost.seconds, 1), "search": cost.search,
            "steps_searched": searched[0], "msus": sum(result.msus_by_size)}


def _xlsx(writer: str) -> dict[str, Any]:
    import pandas as pd

    from microagg.data.formats import write_format

    frame = pd.read_csv(_data("adult"))
    path = Path(tempfile.mkdtemp()) / "adult.xlsx"
    cpu, started = time.process_time(), time.perf_counter()
    if writer == "pandas":
        with open(path, "wb") as handle:
            frame.to_excel(handle, index=False, engine="openpyxl")
    else:
        write_format(frame, path, "xlsx")
    return {"seconds": round(time.perf_counter() - started, 3),
            "cpu_seconds": round(time.process_time() - cpu, 3),
            "cells": int(frame.size), "bytes": path.stat().st_size}


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    if case["case"] == "step":
        path = _data(case["data"])
        measured = {"app": _app_step, "cli": _cli_step, "library": _library_step}[
            case["path"]](path)
    elif case["case"] == "suda2":
        measured = _suda2(case["keys"])
    else:
        measured = _xlsx(case["writer"])
    return {**case, **measured, "peak_rss_mib": round(peak_rss_mib(), 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case")
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--only", choices=["step", "suda2", "xlsx"])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the step cases")
    args = parser.parse_args()
    if args.case:
        case = json.loads(args.case)
        if case.get("cache") == "cold":
            os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp()  # read by numba on import
        print(json.dumps(run_case(case)))
        return
    cases: list[dict[str, Any]] = []
    if args.only in (None, "step"):
        steps = [{"case": "step", "data": data, "path": path, "cache": "warm"}
                 for data in ("census", "adult") for path in ("cli", "library", "app")]
        for result in median_of_rounds(__file__, steps, args.repeat):
            print(json.dumps(result), flush=True)
        if args.cold:
            cases += [{"case": "step", "data": "census", "path": path, "cache": "cold"}
                      for path in ("cli", "app")]
    if args.only in (None, "suda2"):
        cases += [{"case": "suda2", "data": "adult", "keys": m} for m in (9, 14)]
    if args.only in (None, "xlsx"):
        cases += [{"case": "xlsx", "data": "adult", "writer": w} for w in ("pandas", "direct")]
    run_cases(__file__, cases, timeout=1800)


if __name__ == "__main__":
    main()
