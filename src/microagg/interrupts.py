"""Signals that end a command: an exception where they arrive, held where a step must not be
cut in two.

The command line (:func:`microagg.cli.entry`) calls :func:`install` first, before the
commands are imported. From then on SIGINT (Ctrl-C), SIGTERM, SIGHUP and SIGBREAK (each where
the platform has it: Windows has no SIGHUP, only Windows has SIGBREAK) raise
:class:`Interrupted` in the main thread, once. The exception unwinds the command like any
error, so that every temporary is removed on the way out; the command line says so in one line
and exits with 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM). Later signals are
ignored while the command winds down, so that nothing cuts its clean-up short. A signal that
was ignored when the process started (``nohup``, a background job of a shell without job
control) stays ignored. An interrupt raised inside a finalizer, which Python would swallow, is
delivered again; once the command winds down, what finalizers say about the writes it cut
short is not printed. A library that catches the interrupt and returns (the web app's server
stops on a signal) does not hide it: the command line still ends with its line and code.

Steps that must not be cut in two (a temporary made and recorded, the outputs renamed into
place together, temporaries removed) run under :func:`held`: a signal that arrives during one
is delivered when it ends, and :func:`pending` tells the step that it will be. :func:`held`
works without :func:`install` too (a library caller's handlers, or Python's own
KeyboardInterrupt, are held and then called), and does nothing outside the main thread, where
no signal handler runs.

Once the command has returned, :func:`finishing` makes a late signal end the process at once
with the same line and code, since nothing is left to clean up. The line says whether outputs
were renamed into place before the signal (:func:`wrote`): an output is complete or absent.

Standard library only, and nothing POSIX-only: this module runs before anything else on every
command's path.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path
    from types import FrameType

__all__ = ["Interrupted", "ending", "exit_code", "exit_within", "finishing", "held", "install",
           "message", "pending", "received", "say", "wrote"]

NAMES = ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")
"""The signals that end a command, by name; those the platform lacks are skipped."""


class Interrupted(KeyboardInterrupt):
    """The process received ``signum``, a signal that ends the command (:data:`NAMES`). A
    KeyboardInterrupt, so that it unwinds everything an interrupt unwinds."""

    def __init__(self, signum: int) -> None:
        super().__init__(_name(signum))
        self.signum = signum


class _State:
    def __init__(self) -> None:
        self.installed = False  # the command line's handlers are in place (its process)
        self.received: int | None = None  # the first signal, which ends the command
        self.said = False  # its line was written
        self.depth = 0  # nesting of held()
        self.caught: int | None = None  # a signal that arrived inside held()
        self.written: list[str] = []  # outputs renamed into place
        self.ending: str | None = None  # what a command that writes no output says it did


_state = _State()


def _signals() -> list[int]:
    return [int(getattr(signal, name)) for name in NAMES if hasattr(signal, name)]


def _name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def install() -> None:
    """Make every signal that ends a command raise :class:`Interrupted` (module docstring).
    Call it from the main thread of the command line's process."""
    if not _main_thread():
        return
    for signum in _signals():
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, _on_signal)
    _state.installed = True
    previous = sys.unraisablehook

    def unraisable(info: Any) -> None:
        if isinstance(info.exc_value, Interrupted) and _state.received is not None:
            # raised inside a finalizer, which swallows exceptions: raise it again where it
            # can end the command (the handler runs again at the next occasion)
            # (from another thread: from this one the handler would run right here)
            signum, _state.received = _state.received, None
            _thread.start_new_thread(_interrupt_main, (signum,))
        elif _state.received is None:
            previous(info)
        # else the command is winding down: what a finalizer says about a write the signal
        # cut short (a half-written file closed under it) is not the command's line

    sys.unraisablehook = unraisable


def _interrupt_main(signum: int) -> None:
    """Send ``signum`` to the main thread (from another one): a real signal where the
    platform can aim one at a thread, which also ends a wait in a system call."""
    main = threading.main_thread().ident
    if hasattr(signal, "pthread_kill") and main is not None:
        signal.pthread_kill(main, signum)
    else:
        _thread.interrupt_main(signal.Signals(signum))


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _state.received is not None:
        return  # the command is winding down already
    _state.received = signum
    raise Interrupted(signum)


def _hold(signum: int, frame: FrameType | None) -> None:
    if _state.caught is None:
        _state.caught = signum


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Run the block whole: a signal that arrives during it is delivered when it ends (to the
    handler that was in place: :class:`Interrupted`, Python's KeyboardInterrupt, a caller's
    own, or the signal's default action)."""
    if not _main_thread():  # no handler runs here
        yield
        return
    if _state.depth:  # inside another held block, which delivers
        _state.depth += 1
        try:
            yield
        finally:
            _state.depth -= 1
        return
    saved: dict[int, Any] = {}
    try:
        for signum in _signals():
            handler = signal.getsignal(signum)
            if handler not in (signal.SIG_IGN, None):
                signal.signal(signum, _hold)
                saved[signum] = handler
    except ValueError:  # not the main interpreter: no handler of ours runs here
        pass
    _state.depth = 1
    try:
        yield
    finally:
        _state.depth = 0
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        caught, _state.caught = _state.caught, None
        if caught is not None and caught in saved:
            _deliver(saved[caught], caught)


def _deliver(handler: Any, signum: int) -> None:
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)  # its default action, now that the step is whole


def pending() -> bool:
    """Whether a signal arrived inside the current :func:`held` block that will end the
    command when the block ends (a step can then undo what it did instead of finishing)."""
    if _state.caught is None:
        return False
    return not (_state.installed and _state.received is not None)


def received() -> int | None:
    """The signal that ended the command, if one did."""
    return _state.received


def exit_code() -> int:
    """128 + the number of the signal that ended the command (130, SIGINT's, when the
    interrupt came from elsewhere: a KeyboardInterrupt raised by hand)."""
    return 128 + (_state.received if _state.received is not None else int(signal.SIGINT))


def wrote(paths: Iterable[str | Path]) -> None:
    """Note outputs renamed into place, which an interrupt's line then names (the command
    line's process only: a library caller's writes are not kept)."""
    if _state.installed:
        _state.written.extend(str(p) for p in paths)


def unwrote(paths: Iterable[str | Path]) -> None:
    """Forget outputs :func:`wrote` noted that the command deletes again (a working data
    set of a recipe's step), so that an interrupt's line does not name them."""
    gone = {str(p) for p in paths}
    _state.written[:] = [p for p in _state.written if p not in gone]


def ending(text: str) -> None:
    """Say ``text`` after the signal instead of what was written: a command that writes no
    output (a server) says what it did as it stopped."""
    _state.ending = text


def exit_within(seconds: float, signum: int | None = None) -> None:
    """End the process with :func:`exit_code` if it is still running ``seconds`` from now:
    a signal (``signum``, when a library's handler caught it and it was not received here)
    ended the command, but a thread it cannot stop (a worker in a compiled loop) would keep
    the interpreter from exiting, or a library from returning. Its line is said unless it
    was, and the streams are flushed."""
    def end() -> None:
        if _state.received is None:
            _state.received = signum
        say()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(exit_code())

    timer = threading.Timer(seconds, end)
    timer.daemon = True
    timer.start()


def message() -> str:
    """What an interrupted command says: which signal (Ctrl-C is plain "interrupted"), and
    that no output was written, or which outputs were, complete, before the signal (or what
    :func:`ending` says)."""
    signum = _state.received
    cause = ("interrupted" if signum is None or signum == int(signal.SIGINT)
             else f"interrupted by {_name(signum)}")
    if _state.ending is not None:
        return f"{cause}; {_state.ending}"
    if _state.written:
        return (f"{cause} after writing {', '.join(_state.written)} (complete); nothing else "
                "was written")
    return f"{cause}; no output was written (outputs are renamed into place last)"


def say() -> None:
    """Write the interrupted command's line on stderr: once in the command line's process."""
    if _state.installed and _state.said:
        return
    _state.said = True
    with contextlib.suppress(OSError, ValueError):  # a closed stream: nowhere to say it
        sys.stderr.write(f"microagg: error: {message()}\n")
        sys.stderr.flush()


def finishing(code: int) -> None:
    """The command has returned ``code`` and left nothing to clean up: from now on a signal
    ends the process at once, with the line (unless one was said) and its code."""
    if not (_state.installed and _main_thread()):
        return

    def late(signum: int, frame: FrameType | None) -> None:
        status = code
        if _state.received is None:
            _state.received = signum
            say()
            status = exit_code()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(status)

    for signum in _signals():
        if signal.getsignal(signum) is _on_signal:
            signal.signal(signum, late)
