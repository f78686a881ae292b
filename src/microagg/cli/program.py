"""The ``microagg`` program: the app (whose commands are imported one at a time, when they run:
:mod:`microagg.cli.app`), and the one place where errors become a line and an exit code.

Exit codes: 0 success; 1 a ``check`` found the property violated; 2 bad input (a one-line
message on stderr names the file, column, value or option at fault, and no output is
written); 3 an unforeseen error (a bug in microagg, said in one line); 128 + the signal's
number when a signal ended it (130 for Ctrl-C, 143 for SIGTERM; :mod:`microagg.interrupts`).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import importlib
import os
import sys
import threading
from typing import Any

import typer

import microagg.interrupts as interrupts
from microagg.cli.app import app
from microagg.cli.common import warn as _warn
from microagg.errors import MicroaggError

__all__ = ["INTERNAL", "INTERRUPTED", "app", "entry", "finish", "main"]

INTERRUPTED = 130  # 128 + SIGINT, the shell's convention
INTERNAL = 3


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code.

    Every error becomes one line on stderr and code 2: usage errors (an unknown option, a
    value that does not parse), every :class:`MicroaggError` a command raises, and what the
    file system answers (a full disk). A signal that ends the command (Ctrl-C, SIGTERM …:
    :mod:`microagg.interrupts`) is one line and code 128 + its number. ``microagg`` alone
    prints the help.
    """
    import logging
    import warnings

    no_args, usage = _usage_errors()
    # The Dask engine runs an event loop in this process; when a command stops it, the loop
    # logs the tasks it abandons, even after the command has said what happened in one line.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            code = _click_command().main(args=argv, prog_name="microagg",
                                         standalone_mode=False)
    except no_args as exc:  # a command group alone: its help
        sys.stdout.write(exc.format_message().rstrip() + "\n")
        return 0
    except usage as exc:
        command = exc.ctx.command_path if exc.ctx is not None else "microagg"
        _error(f"{exc.format_message()} (see {command} --help)")
        return 2
    except (typer.Abort, KeyboardInterrupt):
        interrupts.say()
        return interrupts.exit_code()
    except MicroaggError as exc:
        _error(str(exc))
        return 2
    except OSError as exc:  # a file system's answer no check foresaw (full disk, permissions)
        where = f"{exc.filename}: " if exc.filename else ""
        _error(f"{where}{exc.strerror or exc}; no output was written")
        return 2
    except MemoryError:
        _error("not enough memory for this input; no output was written")
        return 2
    except Exception as exc:
        # Ctrl-C inside a compiled kernel surfaces as a SystemError; one that cut an import
        # short, caught by a library, leaves a half-made module whose failure comes later
        if _interrupted(exc) or interrupts.received() is not None:
            interrupts.say()
            return interrupts.exit_code()
        if os.environ.get("MICROAGG_DEBUG"):
            raise
        _error(f"unexpected {type(exc).__name__}: {exc} - this is a bug in microagg, not in "
               "your input: please report it with the command line (MICROAGG_DEBUG=1 shows "
               "the traceback); no output was written")
        return INTERNAL
    code = code if isinstance(code, int) else 0
    # Typer's own answer to an interrupt, whatever the signal; or one that a library caught
    # (the web app's server stops on it and returns)
    if code == INTERRUPTED or interrupts.received() is not None:
        interrupts.say()
        return interrupts.exit_code()
    return code


@functools.cache
def _click_command() -> Any:
    """The app as one Click group, built once; its commands are built when looked up. Option
    values are parsed without pydantic where they can be (:mod:`microagg.cli.coercion`)."""
    from microagg.cli.coercion import install

    install()
    return typer.main.get_command(app)


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` was caused, however indirectly, by Ctrl-C."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _usage_errors() -> tuple[Any, Any]:
    """Click's "no arguments: show the help" and usage errors, wherever Typer keeps them
    (recent Typer vendors Click as ``typer._click``)."""
    try:
        exceptions = importlib.import_module("typer._click.exceptions")
    except ImportError:  # Typer on Click itself
        exceptions = importlib.import_module("click.exceptions")
    return exceptions.NoArgsIsHelpError, exceptions.UsageError


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Any = None, line: str | None = None) -> None:
    """A Python warning on one line of stderr, like the command's own warnings."""
    _warn(str(message))


def _error(message: str) -> None:
    from microagg.release.flags import render

    text = " ".join(render(str(message)).split())
    sys.stderr.write(f"microagg: error: {text}\n")


def entry() -> None:
    """The ``microagg`` program: :func:`main`, then exit with its code (:func:`finish`)."""
    code = main()
    finish(code)
    raise SystemExit(code)


def finish(code: int) -> None:
    """End the process with ``code`` once the command has ended. After Ctrl-C the command
    has said so in one line; what the interpreter's exit handlers print while they stop an
    interrupted Dask cluster is left unsaid.

    When no other thread runs, the process leaves without the interpreter's teardown: the
    exit handlers run and both streams are flushed, then ``os._exit``. The teardown would only
    free what pandas and numba built (about 0.4 s of every run: the last garbage collection,
    then every module's objects one by one); every output was closed and renamed before.
    Otherwise (a thread still running, as after Ctrl-C in a Dask run) this returns, and the
    caller exits as usual. Either way a signal from now on ends the process at once
    (:func:`microagg.interrupts.finishing`)."""
    interrupts.finishing(code)
    if interrupts.received() is not None or code == INTERRUPTED:
        sys.stderr.flush()
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
    if threading.active_count() == 1:
        gc.freeze()  # nothing left to collect that matters before the process ends
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe, a closed stream
                stream.flush()
        os._exit(code)
