"""Signals that end a command (microagg.interrupts): at any moment, the exit code 128 + the
signal's number, one line on stderr, and nothing left behind, neither a temporary nor a partial
output. The commands run as real processes and get real signals while they import their
modules, read, compute and write."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32",
                                reason="sends POSIX signals to a child process")

PATIENCE = 300.0  # seconds a step may take on a loaded machine before the test gives up
NOTHING = "no output was written (outputs are renamed into place last)"


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    """30,000 records: about 2 s to microaggregate, 2 s more to write as .xlsx."""
    rng = np.random.default_rng(0)
    n = 30_000
    path = tmp_path_factory.mktemp("data") / "w.csv"
    pd.DataFrame({"a": rng.integers(0, 100, n), "b": rng.normal(50, 10, n).round(2),
                  "c": rng.normal(0, 1, n).round(3),
                  "d": rng.choice(["x", "y", "z"], n)}).to_csv(path, index=False)
    return path


def _folder(tmp_path: Path, table: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    shutil.copy(table, folder / table.name)
    return folder


def _start(folder: Path, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "microagg", *args], cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def _wait(process: subprocess.Popen[str], ready: Callable[[], bool]) -> None:
    """Until ``ready()``; fails if the process ends first or the wait exceeds PATIENCE."""
    deadline = time.monotonic() + PATIENCE
    while not ready():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the process never reached the awaited step"
        time.sleep(0.01)


def _temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(".") and p.suffix == ".tmp"]


def _error_line(process: subprocess.Popen[str], signum: int) -> str:
    """The process's one line, once it has ended with 128 + ``signum``. The first-run notice
    that kernels are compiled, and import timings when asked for, are not errors."""
    _, stderr = process.communicate(timeout=PATIENCE)
    lines = [line for line in stderr.splitlines()
             if not line.startswith(("import time:", "microagg: compiling the kernels"))]
    assert process.returncode == 128 + signum, stderr
    assert len(lines) == 1 and lines[0].startswith("microagg: error: interrupted"), stderr
    return lines[0]


def _untouched(folder: Path, *inputs: str) -> None:
    assert sorted(p.name for p in folder.iterdir()) == sorted(inputs)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_modules_import(tmp_path, table, signum):
    """The signal arrives while pandas and numpy are imported, before any command exists:
    one line, not a traceback of the imports."""
    folder = _folder(tmp_path, table)
    process = _start(folder, "microaggregate", "w.csv", "-o", "m.csv", "--k", "5",
                     env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert process.stderr is not None
    imported = ""
    deadline = time.monotonic() + PATIENCE
    while "numpy" not in imported:  # numpy is first imported after the handlers are set
        imported = process.stderr.readline()
        assert imported and time.monotonic() < deadline, process.communicate()
    process.send_signal(signum)
    line = _error_line(process, signum)
    assert NOTHING in line and (signum == signal.SIGINT or "SIGTERM" in line), line
    _untouched(folder, "w.csv")


@pytest.mark.parametrize(("signum", "step"), [
    (signal.SIGTERM, "reading"), (signal.SIGINT, "computing"), (signal.SIGTERM, "computing"),
    (signal.SIGINT, "writing"), (signal.SIGTERM, "writing")])
def test_a_signal_while_a_release_reads_computes_or_writes(tmp_path, table, signum, step):
    """Reading starts once the outputs are reserved (their temporaries appear); computing
    follows; the table's temporary fills while it is written. Whatever the step, the
    temporaries go and no output appears (or, had the renames been done, all of them)."""
    folder = _folder(tmp_path, table)
    process = _start(folder, "microaggregate", "w.csv", "-o", "m.xlsx", "--k", "5",
                     "--columns", "a,b,c", "--labels-out", "labels.csv")
    _wait(process, lambda: len(_temporaries(folder)) == 3)
    if step == "computing":
        time.sleep(0.3)
    elif step == "writing":
        _wait(process, lambda: any(p.name.startswith(".m.xlsx.microagg-")
                                   and p.stat().st_size > 0 for p in _temporaries(folder)))
    process.send_signal(signum)
    if process.wait(timeout=PATIENCE) == 0:  # the command was done before the signal came
        _untouched(folder, "w.csv", "m.xlsx", "m.xlsx.report.json", "labels.csv")
        return
    line = _error_line(process, signum)
    if "after writing" in line:  # the signal came after the renames: every output is whole
        _untouched(folder, "w.csv", "m.xlsx", "m.xlsx.report.json", "labels.csv")
    else:
        assert NOTHING in line, line
        _untouched(folder, "w.csv")


@pytest.mark.parametrize("command", ["suppress", "risk", "run"])
def test_sigterm_leaves_no_temporary_behind(tmp_path, table, command):
    """These left their hidden temporaries behind when terminated."""
    folder = _folder(tmp_path, table)
    args = {"suppress": ["suppress", "w.csv", "-o", "s.csv", "--keys", "a,b,c,d", "--k", "3"],
            "risk": ["risk", "w.csv", "--keys", "a,b,c,d", "--records-out", "r.csv"],
            "run": ["run", "recipe.yaml", "-o", "r.csv"]}[command]
    inputs = ["w.csv"]
    if command == "run":
        (folder / "recipe.yaml").write_text(
            "input: w.csv\nsteps:\n  - {family: microaggregate, method: mdav, k: 5, "
            "columns: [a, b, c]}\n")
        inputs.append("recipe.yaml")
    outputs = {"suppress": ["s.csv", "s.csv.report.json"], "risk": ["r.csv"],
               "run": ["r.csv", "r.csv.report.json", "r.csv.recipe.yaml"]}[command]
    process = _start(folder, *args)
    _wait(process, lambda: bool(_temporaries(folder)))
    time.sleep(0.3)
    process.send_signal(signal.SIGTERM)
    line = _error_line(process, signal.SIGTERM)
    if "after writing" in line:  # the command was done first: its outputs whole, no temporary
        _untouched(folder, *inputs, *outputs)
    else:
        assert NOTHING in line, line
        _untouched(folder, *inputs)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
def test_a_hang_up_ignored_from_the_start_stays_ignored(tmp_path, table):
    """Under nohup (SIGHUP ignored when the process starts) the command carries on."""
    folder = _folder(tmp_path, table)
    start = ("import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
             "os.execv(sys.executable, [sys.executable, '-m', 'microagg', *sys.argv[1:]])")
    process = subprocess.Popen([sys.executable, "-c", start, "microaggregate", "w.csv", "-o",
                                "m.csv", "--k", "5", "--columns", "a,b,c"], cwd=folder,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait(process, lambda: bool(_temporaries(folder)))
    process.send_signal(signal.SIGHUP)
    _, stderr = process.communicate(timeout=PATIENCE)
    assert process.returncode == 0, stderr
    _untouched(folder, "w.csv", "m.csv", "m.csv.report.json")


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=PATIENCE)


def test_a_signal_during_the_renames_undoes_them(tmp_path):
    """The signal arrives between two renames of one command's outputs: the step ends whole,
    then undoes itself, so the older output is back and the new one is gone."""
    (tmp_path / "a.csv").write_text("old table\n")
    result = _python("""
        import os, signal
        from pathlib import Path
        import microagg.interrupts as interrupts
        from microagg.data.io import write_all

        interrupts.install()
        real = os.replace
        def replace(source, target):
            real(source, target)
            if Path(target).name == "a.csv":
                signal.raise_signal(signal.SIGTERM)
        os.replace = replace
        try:
            write_all([(Path("a.csv"), lambda p: p.write_text("new table")),
                       (Path("a.json"), lambda p: p.write_text("{}"))])
        except interrupts.Interrupted as exc:
            print("interrupted", exc.signum == signal.SIGTERM, interrupts.exit_code())
            print(interrupts.message())
    """, tmp_path)
    assert result.stdout.splitlines() == ["interrupted True 143", f"interrupted by SIGTERM; "
                                          f"{NOTHING}"], result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]
    assert (tmp_path / "a.csv").read_text() == "old table\n"


def test_a_signal_after_the_renames_says_the_outputs_are_whole(tmp_path):
    """Once the command has returned, a signal ends the process at once with its code and a
    line naming what was written; a second one changes nothing."""
    result = _python("""
        import os, signal
        from pathlib import Path
        import microagg.interrupts as interrupts
        from microagg.data.io import write_all

        interrupts.install()
        write_all([(Path("a.csv"), lambda p: p.write_text("table"))])
        interrupts.finishing(0)
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            sum(range(1000))
        print("not reached")
    """, tmp_path)
    assert result.returncode == 143 and result.stdout == "", result
    assert result.stderr.splitlines() == ["microagg: error: interrupted by SIGTERM after "
                                          "writing a.csv (complete); nothing else was written"]


def test_an_interrupt_a_finalizer_swallows_is_raised_again(tmp_path):
    """A signal whose handler runs inside a finalizer raises there, where Python prints and
    drops the exception: it is raised again after the finalizer (ending a wait at once), and
    nothing is printed."""
    result = _python("""
        import gc, signal, time
        import microagg.interrupts as interrupts

        interrupts.install()
        class Finalized:
            def __del__(self):
                signal.raise_signal(signal.SIGINT)
                sum(range(100))  # the handler runs here, inside the finalizer
        start = time.monotonic()
        try:
            Finalized()
            gc.collect()
            while time.monotonic() < start + 60:  # the signal raised again ends the loop
                pass
            print("not interrupted")
        except interrupts.Interrupted as exc:
            print("interrupted", exc.signum == signal.SIGINT, time.monotonic() - start < 30)
    """, tmp_path)
    assert result.stdout.splitlines() == ["interrupted True True"], result
    assert result.stderr == ""


def test_held_steps_and_library_callers(tmp_path):
    """Without the command line's handlers a held step keeps Python's own KeyboardInterrupt
    for its end, and outside one, nothing is held."""
    result = _python("""
        import signal
        import microagg.interrupts as interrupts

        done = []
        try:
            with interrupts.held():
                signal.raise_signal(signal.SIGINT)
                sum(range(100))
                done.append(interrupts.pending())
        except KeyboardInterrupt as exc:
            print("after the step", done, type(exc).__name__)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        print(interrupts.pending(), interrupts.received())
    """, tmp_path)
    assert result.stdout.splitlines() == ["after the step [True] KeyboardInterrupt",
                                          "False None"], result


def test_an_interrupt_a_library_catches_still_ends_the_command(tmp_path):
    """A library that stops on a signal and returns (the web app's server does) hides it from
    the command: the command line still gives the signal's code and line."""
    result = _python("""
        import signal
        import microagg.interrupts as interrupts
        from microagg.cli import program

        interrupts.install()
        class Swallowing:
            def main(self, **_):
                try:
                    signal.raise_signal(signal.SIGTERM)
                except KeyboardInterrupt:
                    pass  # a server that stops on the signal and returns
                return 0
        program._click_command = Swallowing
        print(program.main(["demo"]))
    """, tmp_path)
    assert result.stdout.splitlines() == ["143"], result
    assert result.stderr.splitlines() == [f"microagg: error: interrupted by SIGTERM; {NOTHING}"]


def test_ctrl_c_stops_the_web_app_with_its_code(tmp_path):
    pytest.importorskip("shiny")
    import socket

    with socket.socket() as probe:  # a port no one listens on
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    process = _start(tmp_path, "ui", "--port", port)
    assert process.stdout is not None
    assert process.stdout.readline().startswith("microagg ui: http://127.0.0.1:")
    time.sleep(1.0)  # the server has started listening
    process.send_signal(signal.SIGINT)
    assert _error_line(process, signal.SIGINT) == ("microagg: error: interrupted; the server "
                                                   "stopped and removed its temporary files")


def test_the_compiled_suda2_search_runs_off_the_callers_thread(monkeypatch):
    """A signal that arrived while the caller's thread was inside the compiled SUDA2 search
    could end the command with SIGSEGV (`risk` under SIGTERM, about 1 run in 20). The search
    runs on a thread of its own, with or without a progress callback, so that the caller
    waits in Python, where the signal is handled."""
    import threading

    from microagg.risk import _suda_kernels, _suda_records, suda2

    threads = []
    for module, name in ((_suda_kernels, "search"), (_suda_records, "record_search")):
        compiled = getattr(module, name)

        def spy(*args, _compiled=compiled):
            threads.append(threading.current_thread())
            return _compiled(*args)

        monkeypatch.setattr(module, name, spy)
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 4, (300, 5))
    suda2(codes, list("abcde"), "matches-any")
    assert threads and all(t is not threading.main_thread() for t in threads)
