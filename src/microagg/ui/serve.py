"""Serving the web application (uvicorn, which Shiny uses) behind :class:`~microagg.ui.guard.
Guard`: on this machine by default; beyond it only with a token.

Everything the server receives or writes lives in one owner-only temporary folder of its
own (``.microagg-ui.microagg-<pid>-….tmp``: the sessions' folders and the uploads in
transit), removed when it stops; a server that was killed leaves it behind, and the next one
to start removes the folders of servers that no longer run."""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from microagg.errors import InputError
from microagg.ui.guard import is_loopback
from microagg.ui.limits import DEFAULT, Limits

__all__ = ["TOKEN_LENGTH", "check_bind", "check_port", "new_token", "serve", "server_folder"]

PREFIX = "microagg-ui"
STOPPING_SECONDS = 2
"""Seconds a stopping server gives its connections and sessions before it cancels them;
the process ends as long again after, whatever its workers are computing."""


def new_token() -> str:
    """A token for a server beyond loopback (32 random characters)."""
    return secrets.token_urlsafe(24)


TOKEN_LENGTH = 16
"""The fewest characters of a token given with ``--token`` (:func:`new_token` makes 32)."""


def check_bind(host: str, token: str | None) -> None:
    """Refuse an address beyond loopback without a token, and a token shorter than
    :data:`TOKEN_LENGTH` characters."""
    if not is_loopback(host) and not token:
        raise InputError(
            f"--host {host} serves the app beyond this machine: anyone who reaches it could "
            "load data and read releases, so it needs a token (--token TEXT, or --new-token "
            "to make one)")
    if token and len(token) < TOKEN_LENGTH:
        raise InputError(
            f"--token has {len(token)} character(s): a token needs at least {TOKEN_LENGTH}, "
            "so that it cannot be guessed (--new-token makes one)")


def check_port(host: str, port: int) -> None:
    """Refuse ``host``:``port`` when the server could not listen there (another program
    listens on the port, or the address is not this machine's), before the address is
    printed as served."""
    import errno
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        with socket.socket(family, kind, proto) as probe:
            if os.name == "posix":  # as uvicorn binds: a port in TIME_WAIT is free
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", None)):
            raise InputError(f"port {port} is in use: choose another with --port") from None
        raise InputError(f"cannot serve on {host}:{port} "
                         f"({exc.strerror or exc}): check --host and --port") from None


def server_folder(root: Path | None = None) -> Path:
    """The server's own temporary folder, made (owner-only) in ``root`` (the system's
    temporary folder) after the folders of servers that no longer run are removed."""
    from microagg.data.io import remove_stale_temporaries, temporary_prefix

    root = Path(root or tempfile.gettempdir())
    remove_stale_temporaries(root / PREFIX, remove=shutil.rmtree)
    return Path(tempfile.mkdtemp(
        prefix=f"{temporary_prefix(root / PREFIX)}{os.getpid()}-", suffix=".tmp", dir=root))


def _server_class() -> type:
    """uvicorn's server, which also ends the process a few seconds after the first signal
    if its graceful stop hangs (a session's task that does not end when cancelled)."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self.should_exit:
                from microagg import interrupts

                interrupts.exit_within(3 * STOPPING_SECONDS, sig)
                # the tasks it cancels are no news: the signal's line says it stopped
                logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
            super().handle_exit(sig, frame)

    return Server


def serve(*, host: str = "127.0.0.1", port: int = 8000, token: str | None = None,
          allow_hosts: Sequence[str] = (), limits: Limits = DEFAULT) -> None:
    """Serve the app on ``host``:``port`` until interrupted; one line naming the extra to
    install when Shiny is absent."""
    if not 0 < port < 65536:
        raise InputError(f"--port must be between 1 and 65535, got {port}")
    check_bind(host, token)
    try:
        import uvicorn

        from microagg.ui.app import make_app
        from microagg.ui.guard import Guard
    except ImportError as exc:
        raise InputError(f"the web app needs the extra ui ({exc.name} is not installed): "
                         'pip install "microagg[ui]"') from None
    folder = server_folder()
    tempfile.tempdir = str(folder)  # the sessions' folders and Shiny's uploads go there
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    from microagg import interrupts
    from microagg.ui.warm import start

    server_class = _server_class()
    warming = start()  # the first step's kernels compiled apart, if numba has not cached them
    try:
        app = Guard(make_app(limits), bound=host, allow_hosts=allow_hosts, token=token,
                    max_upload=limits.upload_bytes)
        server_class(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                    timeout_graceful_shutdown=STOPPING_SECONDS)).run()
    finally:
        if warming is not None and warming.poll() is None:
            warming.kill()
            warming.wait()
        shutil.rmtree(folder, ignore_errors=True)
        if interrupts.received() is not None:  # a session's worker may not stop: no wait
            interrupts.exit_within(STOPPING_SECONDS)
