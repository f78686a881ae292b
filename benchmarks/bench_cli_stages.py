"""Where a small command's time goes: ``microagg microaggregate IN -o OUT --k 5`` (MDAV on
n × 10 uniform values with 6 decimals, CSV in and out, with its report), split into the stages
a fresh process goes through, each timed in CPU seconds (``time.process_time``: the figure
the machine's other load disturbs least).

The stages, in the order the command meets them: the interpreter's start (a child process
that does nothing), typer and the program, pandas, numba, the command's module (the release
methods and what they import), numba's runtime (its first compiled call loads its
registries: :func:`microagg.core.numba_runtime.load_blas`, then ``refresh``), then the
command itself; the command is run twice in the same process, so the second run is the work
alone (reading, MDAV, the report, writing) and the difference is what the first run loads
(the kernels from numba's cache, the report's modules). ``--help`` and ``microaggregate
--help`` are timed as whole processes. Medians of ``--repeat`` fresh processes.

``--work`` times instead one run of the command in one fresh process, split into what it
does: reading the CSV, the release (the partition, MDAV, apart), the release report (its
risk and utility measures), writing the table, and the whole command; each in CPU seconds
and wall-clock seconds, with the process's peak resident memory. At 10⁶ rows (``--rows
1000000 --work --repeat 1``) this says what a release costs beyond its method.

Usage: python benchmarks/bench_cli_stages.py [--rows 10000] [--repeat 5] [--work]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from _harness import installed_env

STAGES = r"""
import json, sys, time
from pathlib import Path
data, folder = Path(sys.argv[1]), Path(sys.argv[2])
marks = {}
last = time.process_time()
def mark(name):
    global last
    now = time.process_time()
    marks[name] = round(now - last, 4)
    last = now
import microagg.cli.program as program
mark("typer_and_program")
import pandas
mark("pandas")
import numba
mark("numba_import")
import microagg.cli.microaggregate
mark("command_module")
from microagg.core.numba_runtime import load_blas
load_blas()
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()
mark("numba_runtime")
for run in ("first_run", "second_run"):
    out = folder / f"{run}.csv"
    code = program.main(["microaggregate", str(data), "-o", str(out), "--k", "5"])
    assert code == 0
    mark(run)
print(json.dumps(marks))
"""


WORK = r"""
import json, resource, sys, time
from pathlib import Path
data, folder = Path(sys.argv[1]), Path(sys.argv[2])
import microagg.cli.common as common
import microagg.cli.program as program
import microagg.evaluation.release_record as record
import microagg.partition.mdav as partition
import microagg.release.families.kanonymity as kanonymity
spent = {}
def timed(owner, name, stage):
    inner = getattr(owner, name)
    def run(*args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            seconds = spent.setdefault(stage, [0.0, 0.0])
            seconds[0] += time.process_time() - cpu
            seconds[1] += time.perf_counter() - wall
    setattr(owner, name, run)
timed(common, "read_input", "read")
timed(kanonymity.KAnonymityMethod, "release", "release")
timed(partition, "mdav", "mdav")
timed(record, "release_record", "report")
timed(common, "write_as", "write")
timed(program, "main", "command")
code = program.main(["microaggregate", str(data), "-o", str(folder / "out.csv"), "--k", "5"])
assert code == 0
out = {stage: {"cpu": round(c, 3), "wall": round(w, 3)} for stage, (c, w) in spent.items()}
out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


def _child_cpu(command: list[str]) -> tuple[float, str]:
    """The CPU seconds (user + system) of one child process, and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, check=True, capture_output=True, text=True,
                          env=installed_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


def main() -> None:
    import pandas as pd

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", action="store_true",
                        help="time the command's stages in one run (read, release, MDAV, "
                             "report, write)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        data = folder / "u.csv"
        rng = np.random.default_rng(0)
        pd.DataFrame(rng.uniform(0, 1, (args.rows, 10)).round(6),
                     columns=[f"a{j}" for j in range(10)]).to_csv(data, index=False)
        program = "from microagg.cli import entry; import sys; sys.argv[0] = 'microagg'; entry()"
        runs: dict[str, list[float]] = {}
        if args.work:
            _work(data, folder, args)
            return
        _child_cpu([sys.executable, "-c", STAGES, str(data), str(folder)])  # kernels cached
        for _ in range(args.repeat):
            cpu, _ = _child_cpu([sys.executable, "-c", "pass"])
            runs.setdefault("interpreter", []).append(cpu)
            _, out = _child_cpu([sys.executable, "-c", STAGES, str(data), str(folder)])
            for stage, seconds in json.loads(out.strip().splitlines()[-1]).items():
                runs.setdefault(stage, []).append(seconds)
            for label, argv in (("help", ["--help"]),
                                ("command_help", ["microaggregate", "--help"])):
                cpu, _ = _child_cpu([sys.executable, "-c", program, *argv])
                runs.setdefault(label, []).append(cpu)
        print(json.dumps({"rows": args.rows, "columns": 10, "k": 5, "cpu_seconds": {
            stage: round(statistics.median(values), 3) for stage, values in runs.items()}}))


def _work(data: Path, folder: Path, args: argparse.Namespace) -> None:
    """Print the stages of ``--repeat`` runs of the command (``--work``), each in a fresh
    process, the kernels compiled beforehand on a small table."""
    small = folder / "small.csv"
    small.write_text(data.read_text(encoding="utf-8")[:20_000].rsplit("\n", 1)[0] + "\n",
                     encoding="utf-8")
    _child_cpu([sys.executable, "-c", WORK, str(small), str(folder)])  # kernels cached
    runs = []
    for _ in range(args.repeat):
        _, out = _child_cpu([sys.executable, "-c", WORK, str(data), str(folder)])
        runs.append(json.loads(out.strip().splitlines()[-1]))
    print(json.dumps({"rows": args.rows, "columns": 10, "k": 5, "runs": runs}))


if __name__ == "__main__":
    main()
