"""Kernels come from numba's cache: a run after the first compiles nothing and says nothing."""

import json
import subprocess
import sys
from pathlib import Path

# Runs the command lines given as JSON in argv[1] in one process and writes to argv[2] the
# functions numba compiled meanwhile (module.qualname (argument types)).
_RUN_COUNTING_COMPILES = """
import json, sys
from numba.core import event
from microagg.cli import main

compiled = []

class Count(event.Listener):
    def on_start(self, compile_event):
        function = compile_event.data["dispatcher"].py_func
        compiled.append(f"{function.__module__}.{function.__qualname__} "
                        f"{compile_event.data['args']}")

    def on_end(self, compile_event):
        pass

event.register("numba:compile", Count())
for args in json.loads(sys.argv[1]):
    code = main(args)
    if code:
        sys.exit(f"microagg {' '.join(args)} exited with {code}")
with open(sys.argv[2], "w") as out:
    json.dump(compiled, out)
"""


def _run(commands: list[list[str]], tmp_path: Path) -> tuple[list[str], str]:
    """Run ``commands`` (microagg arguments) in a fresh process: (what numba compiled, the
    process's stderr)."""
    report = tmp_path / "compiled.json"
    result = subprocess.run([sys.executable, "-c", _RUN_COUNTING_COMPILES,
                             json.dumps(commands), str(report)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(report.read_text()), result.stderr


def test_a_second_run_compiles_nothing(tmp_path):
    # The paths built on insensitive microaggregation (microaggregate, DP, cross-moment) once
    # compiled numba's typed-list helpers on every run, and said "compiling the kernels".
    commands = [
        ["datasets", "export", "synthetic", "-o", "syn.csv", "--n", "600",
         "--schema-out", "syn.yaml"],
        ["microaggregate", "syn.csv", "-o", "m.csv", "--k", "10", "--method", "insensitive",
         "--schema", "syn.yaml"],
        ["dp", "syn.csv", "-o", "d.csv", "--epsilon", "1", "--k", "60", "--schema", "syn.yaml",
         "--columns", "age,hours"],
        ["dp", "syn.csv", "-o", "cm.csv", "--epsilon", "1", "--k", "120", "--method",
         "cross-moment", "--schema", "syn.yaml", "--columns", "age,income,hours"],
        ["risk", "syn.csv", "--keys", "region,education,household_size,age"],
    ]
    _run(commands, tmp_path)  # fills numba's cache if this is the first run
    compiled, stderr = _run(commands, tmp_path)
    assert compiled == []
    assert "compiling" not in stderr
