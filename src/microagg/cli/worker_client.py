"""The command line's side of the resident worker (``microagg worker start``): find this
user's worker for this installation, hand it the command, relay its exit code.

A worker is a process that has imported the commands and loaded their compiled kernels once;
for each command it forks a child that runs the command exactly as ``microagg`` would, with the
caller's working folder, environment, umask and standard streams (the file descriptors
themselves are passed over the socket, so a terminal stays a terminal and a pipe a pipe). The
child is discarded when the command ends: no data, state or random generator outlives a
command, and the worker itself never reads a user's file.

This module imports the standard library only: without a worker the command line pays a few
``stat`` calls for it. Commands run here, not in a worker, when ``MICROAGG_WORKER=off``, for
``worker`` and ``ui``, with ``--engine``, or when no worker matches this installation (the
installed code, the Python interpreter, its site-packages and the variables of
:data:`KEYED_VARIABLES`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import struct
import sys
from pathlib import Path
from typing import Any

__all__ = ["KEYED_VARIABLES", "delegate", "request", "socket_path", "worker_folder",
           "worker_key"]

KEYED_VARIABLES = ("NUMBA_", "OMP_", "MKL_", "OPENBLAS_", "PYTHON", "LANG", "LC_", "TZ")
"""Environment variables (by prefix) read once at import by microagg or its libraries: a
worker serves only callers whose values are the worker's."""

LOCAL_COMMANDS = ("worker", "ui")
"""Commands never handed to a worker: its own control, and the web app (a server itself)."""

_HEADER = struct.Struct("!I")
_STATUS = struct.Struct("!cq")


def worker_folder() -> Path:
    """The folder of this user's worker sockets: ``$XDG_RUNTIME_DIR/microagg``, else
    ``/tmp/microagg-UID``. Only a folder owned by this user and closed to others is used."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "microagg" if runtime else Path(f"/tmp/microagg-{os.getuid()}")
    return base


def safe_folder(folder: Path) -> bool:
    """Whether ``folder`` is a directory owned by this user with no access for others."""
    try:
        status = os.lstat(folder)
    except OSError:
        return False
    import stat

    return (stat.S_ISDIR(status.st_mode) and status.st_uid == os.getuid()
            and status.st_mode & 0o077 == 0)


def worker_key() -> str:
    """What a worker must share with the caller to run its commands: microagg's installed
    files (names and modification times), the interpreter, its site-packages folders (their
    times change when a package is installed or removed) and :data:`KEYED_VARIABLES`."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for folder, _, files in sorted(os.walk(package)):
        for name in sorted(files):
            if name.endswith((".py", ".so", ".pyd")):
                path = os.path.join(folder, name)
                digest.update(f"{path}\0{os.stat(path).st_mtime_ns}\0".encode())
    digest.update(sys.prefix.encode() + sys.version.encode())
    import sysconfig

    for entry in sorted({sysconfig.get_paths()[name] for name in ("purelib", "platlib")}):
        with contextlib.suppress(OSError):
            digest.update(f"{entry}\0{os.stat(entry).st_mtime_ns}\0".encode())
    for name in sorted(os.environ):
        if name.startswith(KEYED_VARIABLES):
            digest.update(f"{name}={os.environ[name]}\0".encode())
    return digest.hexdigest()[:16]


def socket_path(key: str | None = None) -> Path:
    """The socket of the worker for ``key`` (default: this caller's :func:`worker_key`)."""
    return worker_folder() / f"worker-{key or worker_key()}.sock"


def runs_here(args: list[str]) -> bool:
    """Whether the command ``args`` must run in this process rather than in a worker."""
    if os.environ.get("MICROAGG_WORKER", "").lower() in ("off", "0", "no"):
        return True
    if not args or args[0] in LOCAL_COMMANDS or args[0].startswith("-"):
        return True
    return any(arg == "--engine" or arg.startswith("--engine=") for arg in args)


def delegate(args: list[str]) -> int | None:
    """Run the command ``args`` in this user's worker and return its exit code, or None when
    no worker serves this caller (then the command runs here). Ctrl-C, a hang-up or a
    termination of this process is passed on to the command."""
    if runs_here(args):
        return None
    folder = worker_folder()
    if not folder.is_dir() or not safe_folder(folder):
        return None
    path = socket_path()
    if not path.exists():
        return None
    try:
        connection = _connect(path)
    except OSError:
        return None
    with connection:
        header = {"args": args, "cwd": os.getcwd(), "env": dict(os.environ),
                  "umask": _umask()}
        try:
            _send(connection, header, fds=_standard_fds())
            kind, value = _read_status(connection)
        except OSError:
            return None  # the worker went away before the command started: run it here
        if kind is None:
            return None
        code = value
        if kind == b"P":  # the command started in process ``value``
            forward = _forward_signals(value)
            try:
                kind, code = _read_status(connection)
            finally:
                for number, previous in forward.items():
                    signal.signal(number, previous)
    if kind is None:
        sys.stderr.write("microagg: error: the command ended without an exit status in the "
                         "worker (it was killed); outputs are renamed into place last, so "
                         "none was written unless the command had finished\n")
        return 2
    return code


def request(control: str, path: Path | None = None) -> dict[str, Any]:
    """Send a control request (``status``, ``stop``) to the worker at ``path``; its answer."""
    with _connect(path or socket_path()) as connection:
        _send(connection, {"control": control})
        length = _HEADER.unpack(_read_exactly(connection, _HEADER.size))[0]
        return json.loads(_read_exactly(connection, length))


def send_message(connection: socket.socket, message: dict[str, Any]) -> None:
    """One length-prefixed JSON message (the worker's answers to control requests)."""
    _send(connection, message)


def _connect(path: Path) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except OSError:
        connection.close()
        raise
    return connection


def _send(connection: socket.socket, message: dict[str, Any], fds: list[int] | None = None
          ) -> None:
    body = json.dumps(message).encode()
    head = _HEADER.pack(len(body))
    if fds:
        socket.send_fds(connection, [head], fds)
    else:
        connection.sendall(head)
    connection.sendall(body)


def _standard_fds() -> list[int]:
    """This process's standard input, output and error; /dev/null for one that is closed."""
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            fds.append(os.open(os.devnull, os.O_RDWR))
    return fds


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _read_exactly(connection: socket.socket, size: int) -> bytes:
    chunks = b""
    while len(chunks) < size:
        chunk = connection.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("the worker closed the connection")
        chunks += chunk
    return chunks


def _read_status(connection: socket.socket) -> tuple[bytes | None, int]:
    """The worker's next word: (b"P", the command's process id) when it starts, (b"X", its
    exit code) when it ends, (None, 0) when the connection ends first."""
    try:
        kind, value = _STATUS.unpack(_read_exactly(connection, _STATUS.size))
    except (ConnectionError, OSError):
        return None, 0
    return kind, int(value)


def _forward_signals(pid: int) -> dict[int, Any]:
    """Pass Ctrl-C, hang-up and termination on to the command's process ``pid``."""
    def forward(number: int, frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, number)

    previous: dict[int, Any] = {}
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        previous[number] = signal.signal(number, forward)
    return previous
