"""The command line's side of the resident worker (``microagg worker start``): find this
user's worker for this installation, hand it the command, relay its exit code.

A worker is a process that has imported the commands and loaded their compiled kernels once;
for each command it forks a child that runs the command exactly as ``microagg`` would, with the
caller's working folder, environment, umask and standard streams (the file descriptors
themselves are passed over the socket, so a terminal stays a terminal and a pipe a pipe). The
child is discarded when the command ends: no data, state or random generator outlives a
command, and the worker itself never reads a user's file.

A command runs in a worker only where it would run the same without one. Commands run here
when ``MICROAGG_WORKER`` is ``off`` (``0``, ``no``, ``false``), for ``worker`` and ``ui``, with
``--engine``, when the working folder is gone, and when no worker has this caller's key
(:func:`worker_key`: the installed code, the interpreter, its site-packages, the variables of
:data:`KEYED_VARIABLES`, and the process's conditions: mount namespace and root, cgroup,
nice value, CPU affinity and resource limits). A command lives as long as its caller: Ctrl-C,
Ctrl-Z, a hang-up, a termination or a quit signal the caller receives is passed on (unless the
caller ignores it, as under ``nohup``), and a caller killed outright takes its command with it
(the worker's side, :mod:`microagg.cli.worker_server`). A worker that does not start the
command within :data:`START_SECONDS` is given up and the command runs here.

This module imports the standard library only: without a worker the command line pays a few
``stat`` calls for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import stat
import struct
import sys
from pathlib import Path
from typing import Any

__all__ = ["CREDENTIALS", "HEADER", "KEYED_VARIABLES", "STATUS", "delegate", "read_exactly",
           "request", "safe_folder", "socket_path", "worker_folder", "worker_key"]

KEYED_VARIABLES = ("NUMBA_", "OMP_", "MKL_", "OPENBLAS_", "PYTHON", "LANG", "LC_", "TZ")
"""Environment variables (by prefix) read once at import by microagg or its libraries: a
worker serves only callers whose values are the worker's."""

LOCAL_COMMANDS = ("worker", "ui")
"""Commands never handed to a worker: its own control, and the web app (a server itself)."""

START_SECONDS = 20.0
"""How long a caller waits for the worker to start its command before running it itself."""

CONTROL_SECONDS = 5.0
"""How long ``worker status`` and ``worker stop`` wait for the worker's answer."""

FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
"""Signals a caller passes on to its command, unless the caller ignores them."""

HEADER = struct.Struct("!I")
"""A message's length, before its JSON."""

STATUS = struct.Struct("!cq")
"""The worker's word on a command: b"P" and its process id, b"X" and its exit code."""

CREDENTIALS = struct.Struct("3i")
"""``SO_PEERCRED``'s answer: process id, user id, group id."""


def worker_folder() -> Path:
    """The folder of this user's worker sockets: ``$XDG_RUNTIME_DIR/microagg`` (an absolute
    ``XDG_RUNTIME_DIR`` only, as the XDG specification says), else ``/tmp/microagg-UID``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        return Path(runtime) / "microagg"
    return Path(f"/tmp/microagg-{os.getuid()}")


def safe_folder(folder: Path) -> bool:
    """Whether ``folder`` is a directory (not a link) owned by this user, closed to others."""
    try:
        status = os.lstat(folder)
    except OSError:
        return False
    return (stat.S_ISDIR(status.st_mode) and status.st_uid == os.getuid()
            and status.st_mode & 0o077 == 0)


def worker_key() -> str:
    """What a worker must share with the caller to run its commands: microagg's installed
    files (their resolved paths and modification times), the interpreter, its site-packages
    folders (their times change when a package is installed or removed),
    :data:`KEYED_VARIABLES`, and the conditions a process runs under (mount namespace and
    root, cgroup, nice value, CPU affinity, resource limits)."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for folder, _, files in sorted(os.walk(package)):
        for name in sorted(files):
            if name.endswith((".py", ".so", ".pyd")):
                path = os.path.join(folder, name)
                digest.update(f"{path}\0{os.stat(path).st_mtime_ns}\0".encode())
    digest.update(f"{sys.prefix}\0{sys.version}\0{sys.flags}\0".encode())
    import sysconfig

    for entry in sorted({sysconfig.get_paths()[name] for name in ("purelib", "platlib")}):
        with contextlib.suppress(OSError):
            digest.update(f"{entry}\0{os.stat(entry).st_mtime_ns}\0".encode())
    for name in sorted(os.environ):
        if name.startswith(KEYED_VARIABLES):
            digest.update(f"{name}={os.environ[name]}\0".encode())
    digest.update(repr(_conditions()).encode())
    return digest.hexdigest()[:16]


def _conditions() -> tuple[Any, ...]:
    """The process's conditions a command inherits and a worker's child would not take from
    its caller: mount namespace and root, cgroup, nice value, CPU affinity, resource limits."""
    import resource

    found: list[Any] = []
    for link in ("/proc/self/ns/mnt", "/proc/self/root"):
        try:
            found.append(os.readlink(link))
        except OSError:
            found.append(None)
    try:
        found.append(Path("/proc/self/cgroup").read_text())
    except OSError:
        found.append(None)
    found.append(os.getpriority(os.PRIO_PROCESS, 0))
    found.append(sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None)
    found.append([resource.getrlimit(getattr(resource, name)) for name in sorted(
        name for name in dir(resource) if name.startswith("RLIMIT_"))])
    return tuple(found)


def socket_path(key: str | None = None) -> Path:
    """The socket of the worker for ``key`` (default: this caller's :func:`worker_key`)."""
    return worker_folder() / f"worker-{key or worker_key()}.sock"


def runs_here(args: list[str]) -> bool:
    """Whether the command ``args`` must run in this process rather than in a worker."""
    if os.environ.get("MICROAGG_WORKER", "").lower() in ("off", "0", "no", "false"):
        return True
    if not args or args[0] in LOCAL_COMMANDS or args[0].startswith("-"):
        return True
    return any(arg == "--engine" or arg.startswith("--engine=") for arg in args)


def delegate(args: list[str]) -> int | None:
    """Run the command ``args`` in this user's worker and return its exit code, or None when
    no worker serves this caller (then the command runs here)."""
    if runs_here(args):
        return None
    folder = worker_folder()
    if not safe_folder(folder):
        return None
    path = socket_path()
    if not path.exists():
        return None
    try:
        cwd = os.getcwd()
    except OSError:  # the working folder is gone: only this process can still run there
        return None
    fds = _standard_fds()  # before the socket, so that it never takes a closed 0, 1 or 2
    try:
        connection = _connect(path, START_SECONDS)
    except OSError:
        return None
    with connection:
        command = _Command()
        previous = _forward_signals(command)
        try:
            return _converse(connection, args, cwd, fds, command)
        except KeyboardInterrupt:  # Ctrl-C before the command started: it never will
            sys.stderr.write("microagg: error: interrupted; no output was written\n")
            return 130
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)


class _Command:
    """The command in the worker as its caller knows it: its process once started, and the
    signals passed on to it."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.passed: list[int] = []


def _converse(connection: socket.socket, args: list[str], cwd: str, fds: list[int],
              command: _Command) -> int | None:
    header = {"args": args, "cwd": cwd, "env": dict(os.environ), "umask": _umask(),
              "ignored": [name for name in FORWARDED
                          if signal.getsignal(getattr(signal, name)) == signal.SIG_IGN]}
    try:
        _send(connection, header, fds=fds)
        kind, value = _read_status(connection)
    except OSError:
        return None  # the worker is gone or did not answer in time: run it here
    if kind is None:
        return None
    code = value
    if kind == b"P":  # the command started in process ``value``
        connection.settimeout(None)
        command.pid = value  # the signal handlers may now pass signals on
        kind, code = _read_status(connection)
    if kind is not None:
        return code
    if command.passed:  # the command ended by a signal passed on: end as it would here
        signal.signal(command.passed[-1], signal.SIG_DFL)
        os.kill(os.getpid(), command.passed[-1])
    sys.stderr.write("microagg: error: the command's process in the worker ended without an "
                     "exit status (it was killed); outputs are renamed into place last, so "
                     "none was written unless the command had finished\n")
    return 3


def request(control: str, path: Path | None = None) -> dict[str, Any]:
    """Send a control request (``status``, ``stop``) to the worker at ``path``; its answer.
    Raises OSError when no worker answers within :data:`CONTROL_SECONDS`."""
    with _connect(path or socket_path(), CONTROL_SECONDS) as connection:
        _send(connection, {"control": control})
        length = HEADER.unpack(read_exactly(connection, HEADER.size))[0]
        return json.loads(read_exactly(connection, length))


def _connect(path: Path, seconds: float) -> socket.socket:
    """A connection to the socket at ``path``, refused unless its listener is this user."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(seconds)
        connection.connect(str(path))
        raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, CREDENTIALS.size)
        if CREDENTIALS.unpack(raw)[1] != os.getuid():
            raise PermissionError("the worker's socket is not this user's")
    except OSError:
        connection.close()
        raise
    return connection


def _send(connection: socket.socket, message: dict[str, Any], fds: list[int] | None = None
          ) -> None:
    body = json.dumps(message).encode()
    head = HEADER.pack(len(body))
    if fds:
        socket.send_fds(connection, [head], fds)
    else:
        connection.sendall(head)
    connection.sendall(body)


def _standard_fds() -> list[int]:
    """This process's standard input, output and error, each closed one opened on /dev/null
    (it takes the closed number, so nothing opened later can)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)
    return [0, 1, 2]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_exactly(connection: socket.socket, size: int) -> bytes:
    """``size`` bytes from ``connection``; ConnectionError if it ends before."""
    chunks = b""
    while len(chunks) < size:
        chunk = connection.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("the connection ended")
        chunks += chunk
    return chunks


def _read_status(connection: socket.socket) -> tuple[bytes | None, int]:
    """The worker's next word: (b"P", the command's process id) when it starts, (b"X", its
    exit code) when it ends, (None, 0) when the connection ends first. A time-out (the
    command did not start in time) is raised as OSError."""
    try:
        kind, value = STATUS.unpack(read_exactly(connection, STATUS.size))
    except ConnectionError:
        return None, 0
    return kind, int(value)


def _forward_signals(command: _Command) -> dict[int, Any]:
    """Handlers that pass :data:`FORWARDED` signals the caller does not ignore on to the
    command, and Ctrl-Z and its continuation as a stop and a continue. Before the command has
    started, Ctrl-C stops the wait."""
    def forward(number: int, frame: Any) -> None:
        if command.pid is None:
            if number == signal.SIGINT:
                raise KeyboardInterrupt
            return
        command.passed.append(number)
        with contextlib.suppress(ProcessLookupError):
            os.kill(command.pid, number)

    def suspend(number: int, frame: Any) -> None:
        if command.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(command.pid, signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)  # stop here too, as the shell expects
        signal.signal(signal.SIGTSTP, suspend)

    def resume(number: int, frame: Any) -> None:
        if command.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(command.pid, signal.SIGCONT)

    previous: dict[int, Any] = {}
    for name in FORWARDED:
        number = getattr(signal, name)
        if signal.getsignal(number) != signal.SIG_IGN:
            previous[number] = signal.signal(number, forward)
    if signal.getsignal(signal.SIGTSTP) != signal.SIG_IGN:
        previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, suspend)
        previous[signal.SIGCONT] = signal.signal(signal.SIGCONT, resume)
    return previous
