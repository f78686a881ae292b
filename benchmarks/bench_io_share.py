"""How much of a 10⁶-record command is reading and writing: each command runs in-process
through the command line's own entry (``microagg.cli.program.main``) with its CSV reading
(``cli.common.read_input``) and its table writing (``cli.common.write_as``) timed, and once
more from the shell for the whole wall time. Data: n × 10 uniform values in [0, 1] with 6
decimals (the files of bench_cli_vs_r.py), declared in a schema with domains [0, 1].

Usage: python benchmarks/bench_io_share.py [--rows 1000000] [--repeat 3]
       [--commands ir,ou,insensitive,dp-ir]
Prints one JSON object per command: read, write and in-process seconds (medians of
``--repeat`` runs, each in a fresh process after a warm-up run that compiles the kernels),
the I/O share of the in-process time (which leaves out starting Python and importing), and
the whole command's wall time from the shell with the I/O share of it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

COMMANDS = {
    "ir": ["microaggregate", "--method", "individual-ranking", "--k", "5"],
    "ou": ["microaggregate", "--method", "optimal-univariate", "--k", "5"],
    "insensitive": ["microaggregate", "--method", "insensitive", "--k", "1000"],
    "dp-ir": ["dp", "--method", "individual-ranking", "--epsilon", "1", "--k", "10"],
}


def _timed(argv: list[str]) -> None:
    """Run the command line in this process with its reading and writing timed; print the
    three times as JSON."""
    import microagg.cli.common as common
    from microagg.cli.program import main

    spent = {"read": 0.0, "write": 0.0}

    def timing(name: str, action):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return action(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - start
        return timed

    common.read_input = timing("read", common.read_input)
    common.write_as = timing("write", common.write_as)
    start = time.perf_counter()
    code = main(argv)
    total = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"the command failed with code {code}")
    print(json.dumps({**spent, "in_process": total}))


def _clean(output: Path) -> None:
    for path in output.parent.glob(output.name + "*"):
        path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--commands", default=",".join(COMMANDS))
    parser.add_argument("--timed", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.timed is not None:
        _timed(args.timed)
        return
    import pandas as pd

    microagg = shutil.which("microagg")
    if microagg is None:
        raise SystemExit("microagg is not on PATH (activate the environment it is installed in)")
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        data, schema, output = base / "u.csv", base / "u.yaml", base / "out.csv"
        rng = np.random.default_rng(0)
        columns = [f"a{j}" for j in range(10)]
        pd.DataFrame(rng.uniform(0, 1, (args.rows, 10)).round(6), columns=columns).to_csv(
            data, index=False)
        schema.write_text("attributes:\n" + "".join(
            f"  {c}: {{role: quasi, kind: numeric, domain: [0, 1]}}\n" for c in columns))
        for name in args.commands.split(","):
            argv = [*COMMANDS[name][:1], str(data), "-o", str(output), "--schema", str(schema),
                    *COMMANDS[name][1:]]
            runs = []
            for attempt in range(args.repeat + 1):  # the first compiles and is not kept
                done = subprocess.run([sys.executable, __file__, "--timed", *argv],
                                      capture_output=True, text=True, check=True)
                _clean(output)
                if attempt:
                    runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            shell = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run([microagg, *argv], capture_output=True, check=True)
                shell.append(time.perf_counter() - start)
                _clean(output)
            read = statistics.median(r["read"] for r in runs)
            write = statistics.median(r["write"] for r in runs)
            inside = statistics.median(r["in_process"] for r in runs)
            shares = [(r["read"] + r["write"]) / r["in_process"] for r in runs]
            print(json.dumps({
                "command": " ".join(COMMANDS[name]), "rows": args.rows, "columns": 10,
                "read_seconds": round(read, 3), "write_seconds": round(write, 3),
                "in_process_seconds": round(inside, 3),
                "io_share": round(statistics.median(shares), 3),
                "io_shares": [round(s, 3) for s in shares],
                "io_share_of_shell": round((read + write) / statistics.median(shell), 3),
                "shell_seconds": round(statistics.median(shell), 3),
                "shell_runs": [round(s, 3) for s in shell]}), flush=True)


if __name__ == "__main__":
    main()
