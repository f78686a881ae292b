"""The resident worker (``microagg worker start``): one process that imports the commands and
loads their compiled kernels once, then runs each command it is handed in a forked child.

How a command runs (:func:`_run_command`, in the child): the caller's standard streams (file
descriptors passed over the socket) become the child's, then its working folder, environment,
time zone and umask; the command runs through :func:`microagg.cli.program.main`, exactly as
``microagg`` runs it, and the child sends its exit code and ends. Nothing a command reads,
computes or draws outlives it: the worker itself only ever ran the warm-up on generated data,
and every random generator of a release is seeded from the operating system in the child
(:func:`microagg.core.samplers.make_rng`; numba's own generators are reseeded after a fork).

Why the warm-up can run compiled parallel loops: numba's default threading layer here (GNU
OpenMP) refuses to run in a process forked after it started, so the worker selects numba's
``workqueue`` layer, which restarts in a forked child. The loops compute each element on its
own, so the layer changes no value written.

Only this user may connect: the socket is in a folder closed to others
(:func:`microagg.cli.worker_client.safe_folder`), is itself readable by its owner only, and the
peer's user id is checked on every connection (Linux ``SO_PEERCRED``).

Run as ``python -m microagg.cli.worker_server SOCKET KEY IDLE_SECONDS`` by ``worker start``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

from microagg.cli.worker_client import CREDENTIALS, HEADER, STATUS, read_exactly

__all__ = ["WARM_UP", "serve", "warm_up"]

WARM_UP = (
    "datasets export synthetic -o syn.csv --n 600 --schema-out syn.yaml",
    "microaggregate syn.csv -o m.csv --k 5 --schema syn.yaml",
    "microaggregate syn.csv -o m.parquet --k 5 --schema syn.yaml --method vmdav",
    "microaggregate uniform.csv -o u.csv --k 5",
    "microaggregate uniform.csv -o ir.csv --k 5 --method individual-ranking",
    "microaggregate uniform.csv -o ou.csv --k 5 --method optimal-univariate",
    "microaggregate syn.csv -o ins.csv --k 20 --method insensitive --schema syn.yaml",
    "check m.csv --k 5 --quasi age,income,expenses,savings,hours,household_size",
    "evaluate syn.csv m.csv --schema syn.yaml --json",
    "evaluate uniform.csv u.csv --json",
    "tclose syn.csv -o t.csv --k 5 --t 0.2 --quasi age,income,hours --confidential savings "
    "--schema syn.yaml",
    "dp syn.csv -o dir.csv --epsilon 1 --k 100 --method individual-ranking --schema syn.yaml "
    "--columns age,hours,household_size",
    "dp syn.csv -o dins.csv --epsilon 1 --k 300 --schema syn.yaml --columns age,hours",
)
"""Commands the worker runs once on generated data before it serves, in a temporary folder:
they import what the common commands import and load their kernels (about a second)."""

REQUEST_SECONDS = 2.0
"""How long the worker waits for a connected caller's request."""



def warm_up() -> list[tuple[str, int]]:
    """Run :data:`WARM_UP` in this process, its output discarded; each command and its exit
    code (all 0 unless a command's options changed)."""
    import numpy as np
    import pandas as pd

    from microagg.cli import program

    codes = []
    saved = [os.dup(1), os.dup(2)]
    here = os.getcwd()
    try:
        with tempfile.TemporaryDirectory() as folder, open(os.devnull, "w") as null:
            os.chdir(folder)
            rng = np.random.default_rng(0)
            pd.DataFrame(rng.uniform(0, 1, (400, 4)).round(6),
                         columns=[f"a{j}" for j in range(4)]).to_csv("uniform.csv", index=False)
            os.dup2(null.fileno(), 1)
            os.dup2(null.fileno(), 2)
            for command in WARM_UP:
                codes.append((command, program.main(command.split())))
            sys.stdout.flush()
            sys.stderr.flush()
    finally:
        os.chdir(here)
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
    return codes


def serve(path: Path, key: str, idle: float) -> None:
    """Warm up, then serve commands on the socket ``path`` until ``idle`` seconds pass without
    one, a ``stop`` request, or SIGTERM. The socket appears once the worker is ready and is
    removed when it stops. A request is read within :data:`REQUEST_SECONDS`, so a caller that
    connects and stalls delays the others that long at most."""
    failed = [(command, code) for command, code in warm_up() if code != 0]
    for command, code in failed:
        sys.stderr.write(f"warm-up: microagg {command} exited {code}\n")
    import gc

    gc.collect()
    gc.freeze()  # the children's collections leave the worker's objects alone (and shared)
    started = time.time()
    served = 0
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
    signal.signal(signal.SIGTERM, _stop)
    identity = None
    try:
        listener = _listen(path)
        identity = os.stat(path).st_ino
        listener.settimeout(idle)
        while True:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                return
            with connection:
                connection.settimeout(REQUEST_SECONDS)
                if not _same_user(connection):
                    continue
                try:
                    header, fds = _receive(connection)
                except (OSError, ValueError):
                    continue
                control = header.get("control")
                if control is not None:
                    for fd in fds:
                        os.close(fd)
                    answer = {"pid": os.getpid(), "key": key, "socket": str(path),
                              "package": _package(), "started": started,
                              "commands": served, "idle_seconds": idle}
                    with contextlib.suppress(OSError):  # a caller that left before it
                        _answer(connection, answer)
                    if control == "stop":
                        return
                    continue
                served += 1
                try:
                    child = os.fork()
                except OSError:  # no process to spare: the caller runs the command itself
                    child = -1
                if child == 0:
                    listener.close()
                    _run_command(connection, header, fds)
                for fd in fds:
                    os.close(fd)
    finally:
        with contextlib.suppress(OSError):
            if identity is not None and os.stat(path).st_ino == identity:
                os.unlink(path)


def _package() -> str:
    """Where the microagg this worker imported lives."""
    return str(Path(__file__).resolve().parent.parent)


def _stop(number: int, frame: Any) -> NoReturn:
    raise SystemExit(0)


def _listen(path: Path) -> socket.socket:
    """A listening socket at ``path``, created under a temporary name, made readable by its
    owner only, then renamed into place: a caller never finds a half-ready worker."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staging = path.with_name(f"{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(staging)
    listener.bind(str(staging))
    os.chmod(staging, 0o600)
    listener.listen(16)
    os.rename(staging, path)
    return listener


def _same_user(connection: socket.socket) -> bool:
    raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, CREDENTIALS.size)
    _, uid, _ = CREDENTIALS.unpack(raw)
    return bool(uid == os.getuid())


def _receive(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """A request: its length-prefixed JSON header and the file descriptors sent with it."""
    head, fds, _, _ = socket.recv_fds(connection, HEADER.size, 3)
    try:
        if len(head) < HEADER.size:
            head += read_exactly(connection, HEADER.size - len(head))
        header = json.loads(read_exactly(connection, HEADER.unpack(head)[0]))
        if not isinstance(header, dict) or ("control" not in header and len(fds) != 3):
            raise ValueError("a request without the caller's three standard streams")
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return header, fds


def _answer(connection: socket.socket, message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    connection.sendall(HEADER.pack(len(body)) + body)


def _run_command(connection: socket.socket, header: dict[str, Any], fds: list[int]
                 ) -> NoReturn:
    """In the forked child: become the caller (streams, folder, environment, umask, ignored
    signals), run the command, send its exit code, end. Never returns to the worker's loop.
    A caller already gone (it gave up waiting) gets nothing run."""
    code = 3
    try:
        connection.settimeout(None)
        connection.sendall(STATUS.pack(b"P", os.getpid()))
    except OSError:
        os._exit(0)
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for name in header.get("ignored", ()):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        atexit._clear()  # the worker's exit handlers are not the command's
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        _reopen_streams()
        os.environ.clear()
        os.environ.update(header["env"])
        time.tzset()
        tempfile.tempdir = None  # read again from the caller's TMPDIR
        os.umask(int(header["umask"]))
        _name_process()
        try:
            os.chdir(header["cwd"])
        except OSError as exc:
            code = 2
            sys.stderr.write(f"microagg: error: {header['cwd']}: {exc.strerror}; no output "
                             "was written\n")
        else:
            from microagg.cli import program
            from microagg.cli.app import reset_console

            reset_console()
            sys.argv = ["microagg", *header["args"]]
            ended = threading.Event()
            _follow_caller(connection, ended)
            try:
                code = program.main(list(header["args"]))
            except SystemExit as exc:  # as the interpreter ends on it (a broken pipe's exit)
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            ended.set()
            program.finish(code, last=lambda: _send_code(connection, code), alongside=1)
    except BaseException:  # never back into the worker's loop, whatever happened
        code = 3
        with contextlib.suppress(BaseException):
            if os.environ.get("MICROAGG_DEBUG"):
                import traceback

                traceback.print_exc()
            sys.stderr.write("microagg: error: the worker could not run the command - this "
                             "is a bug in microagg; MICROAGG_WORKER=off runs it without the "
                             "worker\n")
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        _send_code(connection, code)
        os._exit(code)


def _send_code(connection: socket.socket, code: int) -> None:
    """The command's exit code to its caller (who may be gone: nothing then)."""
    with contextlib.suppress(BaseException):
        connection.sendall(STATUS.pack(b"X", code))


def _name_process() -> None:
    """Name the command's process ``microagg`` for ps and top (Linux), where it would
    otherwise show as the worker."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).prctl(15, b"microagg", 0, 0, 0)  # PR_SET_NAME


def _follow_caller(connection: socket.socket, ended: threading.Event) -> None:
    """Interrupt the command (as Ctrl-C does: nothing is written) if its caller goes away
    before it has ended, killed by a signal it cannot pass on: a command lives no longer than
    the process that asked for it, as without the worker. The caller sends nothing after its
    request, so the connection reads empty exactly when the caller is gone."""
    def watch() -> None:
        with contextlib.suppress(OSError):
            while connection.recv(1):
                pass
        if not ended.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=watch, daemon=True, name="microagg-caller").start()


def _reopen_streams() -> None:
    """Standard streams on the caller's descriptors, buffered as Python buffers them (a line
    at a time on a terminal)."""
    sys.stdin = open(0, encoding=sys.stdin.encoding, errors=sys.stdin.errors,  # noqa: SIM115
                     closefd=False)
    sys.stdout = open(1, "w", buffering=1 if os.isatty(1) else -1,  # noqa: SIM115
                      encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding=sys.stderr.encoding,  # noqa: SIM115
                      errors=sys.stderr.errors, closefd=False)


def _main() -> None:
    path, key, idle = sys.argv[1], sys.argv[2], float(sys.argv[3])
    from microagg.cli.worker_client import worker_key

    own = worker_key()
    if own != key:
        sys.stderr.write("this worker would not run the commands as its caller runs them: it "
                         "imports another microagg, or runs under other conditions (a "
                         "relative PYTHONPATH, another interpreter); no worker was started\n")
        raise SystemExit(1)
    # Set before numba is imported: the layer that survives a fork (the module docstring).
    os.environ["NUMBA_THREADING_LAYER"] = "workqueue"
    serve(Path(path), key, idle)


if __name__ == "__main__":
    _main()
