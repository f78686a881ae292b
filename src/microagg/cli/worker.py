"""``microagg worker``: start, stop or describe this user's resident worker, a process that
keeps the commands imported and their kernels loaded so that each command starts at once
(:mod:`microagg.cli.worker_server`; the command line's side: :mod:`microagg.cli.worker_client`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import typer

from microagg.cli.app import HELP_OPTIONS, app, out
from microagg.cli.common import print_json
from microagg.cli.worker_client import request, safe_folder, socket_path, worker_folder, worker_key
from microagg.errors import InputError

worker_app = typer.Typer(
    help="A resident worker: commands start at once (it keeps the commands imported and their "
    "kernels loaded, and runs each command in a fresh process forked from it). Linux only.",
    short_help="Resident worker: start, stop, status.", no_args_is_help=True,
    context_settings=HELP_OPTIONS)
app.add_typer(worker_app, name="worker")

SOCKET_PATH_BYTES = 107
"""The longest path a Unix socket may have on Linux (``sun_path`` less its final zero)."""

MOST_IDLE_MINUTES = 10_080
"""The longest idle time a worker may wait for (a week)."""

READY_SECONDS = 900.0
"""How long ``start`` waits for the worker's warm-up (the first one compiles the kernels)."""


@worker_app.command("start")
def worker_start(
    idle_minutes: float = typer.Option(30.0, "--idle-minutes",
                                       help="Stop after this many minutes without a command "
                                       f"(at most {MOST_IDLE_MINUTES:,})."),
) -> None:
    """Start this user's worker for this installation and wait until it serves. Commands then
    run in it (MICROAGG_WORKER=off runs one without it). A change of microagg or of the Python
    packages, other NUMBA_*, OMP_*, PYTHON*, LANG, LC_* or TZ values, or other process
    conditions (nice, CPU affinity, resource limits, cgroup, mount namespace) make commands
    run without it. A worker left from an earlier version of these files is stopped."""
    if not sys.platform.startswith("linux"):
        raise InputError("the resident worker needs Linux (it passes file descriptors over a "
                         "Unix socket and forks)")
    if not 0 < idle_minutes <= MOST_IDLE_MINUTES:
        raise InputError(f"--idle-minutes must lie in (0, {MOST_IDLE_MINUTES}], got "
                         f"{idle_minutes}")
    folder = _private_folder()
    key = worker_key()
    path = socket_path(key)
    if len(os.fsencode(path)) + 12 > SOCKET_PATH_BYTES:  # + the staging name's ".PID"
        raise InputError(f"{path} is too long for a Unix socket (at most {SOCKET_PATH_BYTES} "
                         "bytes with its staging suffix); set XDG_RUNTIME_DIR to a shorter "
                         "folder")
    with open(folder / f"worker-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one start at a time for this key
        running = _status(path)
        if running is not None:
            out.print(f"a worker already runs (pid {running['pid']}): {path}", markup=False)
            return
        for answer in _others(path):
            if answer.get("package") == _package() and _status(Path(answer["socket"]),
                                                                "stop") is not None:
                out.print(f"stopped a worker left from an earlier version of these files "
                          f"(pid {answer['pid']})", markup=False)
        pid = _launch(folder, path, key, idle_minutes)
    out.print(f"worker ready (pid {pid}): microagg commands you run with this installation "
              f"now run in it; it stops after {idle_minutes:g} idle minutes, or with "
              "`microagg worker stop`", markup=False)


def _launch(folder: Path, path: Path, key: str, idle_minutes: float) -> int:
    """Start the worker process and wait until its socket answers; its process id."""
    log = folder / f"worker-{key}.log"
    with open(log, "w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "microagg.cli.worker_server", str(path), key,
             str(idle_minutes * 60.0)],
            stdin=subprocess.DEVNULL, stdout=sink, stderr=sink, start_new_session=True,
            cwd=folder)
    out.print("starting the worker (it loads the compiled kernels once)...", markup=False)
    deadline = time.monotonic() + READY_SECONDS
    while _status(path) is None:
        if process.poll() is not None:
            last = _last_line(log)
            raise InputError(f"the worker stopped while starting (exit {process.returncode})"
                             + (f": {last}" if last else "") + f"; its log: {log}")
        if time.monotonic() > deadline:
            process.terminate()
            raise InputError(f"the worker was not ready after {READY_SECONDS:.0f} s; its log: "
                             f"{log}")
        time.sleep(0.1)
    warnings = _last_line(log)
    if warnings:
        out.print(f"note: {warnings} (the worker serves; that command only starts slower)",
                  markup=False)
    return process.pid


@worker_app.command("stop")
def worker_stop() -> None:
    """Stop this user's workers: this installation's, and any other (commands running in
    them go on). A socket left by a worker that was killed is removed."""
    stopped = 0
    for path in sorted(worker_folder().glob("worker-*.sock")):
        answer = _status(path, "stop")
        if answer is not None:
            stopped += 1
            out.print(f"worker stopped (pid {answer['pid']}, {answer['commands']} command(s) "
                      "run)", markup=False)
    if not stopped:
        out.print("no worker runs", markup=False)


@worker_app.command("status")
def worker_status(
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Whether a worker serves this user's commands with this installation."""
    path = socket_path()
    answer = _status(path)
    if json_out:
        print_json({"running": answer is not None, "socket": str(path), **(answer or {})})
        return
    others = len(_others(path))
    elsewhere = (f"; {others} other worker(s) of yours run (other installations or conditions, "
                 "or earlier versions of these files: `microagg worker stop` stops them all)"
                 if others else "")
    if answer is None:
        out.print(f"no worker runs for this installation (it would listen on {path})"
                  + elsewhere, markup=False)
        return
    started = datetime.fromtimestamp(answer["started"]).isoformat(timespec="seconds")
    out.print(f"worker pid {answer['pid']}, started {started}, {answer['commands']} "
              f"command(s) run, stops after {answer['idle_seconds'] / 60:g} idle minutes: "
              f"{path}" + elsewhere, markup=False)


def _private_folder() -> Path:
    """The sockets' folder, created closed to others; refused if it is open to them or
    owned by someone else."""
    folder = worker_folder()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{folder}: {exc.strerror}; the worker needs a private folder for "
                         "its socket") from exc
    if not safe_folder(folder):
        raise InputError(f"{folder} is not a folder owned by you and closed to others "
                         "(chmod 700 it, or set XDG_RUNTIME_DIR); the worker's socket must be "
                         "private")
    return folder


def _status(path: Path, control: str = "status") -> dict | None:
    """The worker's answer to ``control``, or None when no worker listens at ``path`` (a
    socket nobody listens on, left by a killed worker, is removed)."""
    if not path.exists():
        return None
    try:
        return request(control, path)
    except ConnectionRefusedError:
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    except (OSError, ValueError):
        return None


def _others(path: Path) -> list[dict]:
    """The answers of this user's other workers."""
    found = []
    for other in sorted(worker_folder().glob("worker-*.sock")):
        if other != path:
            answer = _status(other)
            if answer is not None:
                found.append(answer)
    return found


def _package() -> str:
    """Where the microagg of this command line lives (a worker's answer says where its own
    does)."""
    return str(Path(__file__).resolve().parent.parent)


def _last_line(log: Path) -> str:
    try:
        lines = [line for line in log.read_text().splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""

