"""Where the task graphs run: a ``dask.distributed`` client on a scheduler address, or on a
LocalCluster started (and stopped) for the duration of one command."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

from microagg.errors import InputError

__all__ = ["dask_client", "require_dask"]


def require_dask() -> None:
    """Raise a one-line :class:`InputError` when Dask is not installed."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise InputError('`engine` dask needs Dask: pip install "microagg[scale]"') from None


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A connected ``distributed.Client``.

    With ``scheduler`` (``tcp://host:8786``) it joins that cluster and leaves it running;
    otherwise it starts a LocalCluster of ``workers`` single-threaded worker processes (default:
    one per CPU; each task's numeric kernels then run on one thread, so the cluster never
    oversubscribes the machine) and stops it on exit, whatever happens."""
    require_dask()
    from distributed import Client, LocalCluster

    if scheduler is not None and workers is not None:
        raise InputError("`workers` sizes a local cluster; with `scheduler` the cluster "
                         "already exists")
    if workers is not None and workers < 1:
        raise InputError(f"`workers` must be at least 1, got {workers}")
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="20s")
        except OSError as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        with client:
            yield client
        return
    n = workers or os.cpu_count() or 1
    with contextlib.ExitStack() as stack:
        with _workers_quiet():  # the worker processes inherit the null stderr
            cluster = stack.enter_context(LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                silence_logs=logging.CRITICAL))
        client = stack.enter_context(Client(cluster))
        stack.enter_context(_quiet("asyncio", "distributed"))
        yield client


@contextlib.contextmanager
def _quiet(*names: str) -> Iterator[None]:
    """Silence these loggers below CRITICAL: the scheduler and the client run in this
    process, and when a command stops (an error, Ctrl-C) their event loop logs the tasks it
    abandons; the command's own one-line message is what the user needs."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@contextlib.contextmanager
def _workers_quiet() -> Iterator[None]:
    """Start the local cluster's processes with their stderr on the null device. On Ctrl-C
    the terminal interrupts every process of the command: the worker processes die, each once
    printing its traceback (13-84 lines in all) before the command's one line. Their errors
    reach the command through the scheduler, not through their stderr, so nothing is lost;
    the command's own handling of Ctrl-C is untouched."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
