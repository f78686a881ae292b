"""The ``microagg`` command line: one module per command, each thin (parse, call the
library, print); the method options are generated from the method objects' fields
(:mod:`microagg.cli.methods`) and library messages name flags through one table
(:mod:`microagg.release.flags`).

``microagg --version`` is answered here, before the commands (and with them pandas, numpy and
numba) are imported; everything else goes to :mod:`microagg.cli.program`, imported on first
use. The signals that end a command are handled from the start (:mod:`microagg.interrupts`):
one that interrupts the imports is one line and its exit code, as anywhere else.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

__all__ = ["app", "entry", "main"]


def entry() -> None:
    """The ``microagg`` program (:func:`microagg.cli.program.entry`)."""
    try:
        import microagg.interrupts as interrupts

        interrupts.install()
    except KeyboardInterrupt:  # Ctrl-C before the handlers: while `signal` itself imports
        sys.stderr.write("microagg: error: interrupted; no output was written\n")
        os._exit(130)
    try:
        _start()
    except KeyboardInterrupt:  # outside the command's own handling: before or after it
        interrupts.say()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(interrupts.exit_code())  # nothing was reserved yet, or all is renamed


def _start() -> None:
    if sys.argv[1:] == ["--version"]:
        from microagg.version import installed_version

        sys.stdout.write(f"microagg {installed_version()}\n")
        raise SystemExit(0)
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:  # started with that stream closed: it goes nowhere
            setattr(sys, name, open(os.devnull, mode))  # noqa: SIM115
    from microagg.cli.program import entry as run

    run()


def __getattr__(name: str) -> Any:
    if name in ("app", "main"):
        from microagg.cli import program

        return getattr(program, name)
    raise AttributeError(f"module 'microagg.cli' has no attribute '{name}'")
