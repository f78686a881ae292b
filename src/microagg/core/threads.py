"""How many threads the compiled kernels use, and how sequential algorithms stay fast on a
shared machine.

MDAV, V-MDAV and insensitive microaggregation form one cluster after another, and every cluster
needs a few passes over the remaining rows. A pass split between threads ends at a barrier. On
an idle machine a barrier costs microseconds. When other processes keep the cores busy, a
thread that lost its core waits for a scheduler time slice (milliseconds) at every barrier, and
tens of thousands of passes turn a one-second run into minutes (measured: 10⁵ records, 112 s
against 2.2 s on one thread, with the load average near 4.5 on 2 cores).

So the kernels never open a parallel region for a pass that runs on one thread (see
``partition/_kernels.py``), and with ``threads=None`` (the default) a :class:`ThreadChooser`
decides, batch by batch, whether the passes of the next batch are split between threads: it
times the batches of each kind per unit of work and keeps the faster one, trying the other
kind again now and then on a small batch, since the load of a machine changes. On an idle
machine it settles on the threads; beside a CPU-bound process, on one thread. ``threads=1``
never splits a pass; ``threads=N`` always splits passes of enough rows in N chunks.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import numba

from microagg.errors import InputError

__all__ = ["ThreadChooser", "available_threads", "check_threads", "most_threads", "numba_threads",
           "start_thread_pool"]

# A kernel argument meaning "never split a pass" (more rows per chunk than any table has).
SERIAL = 1 << 62


def start_thread_pool() -> None:
    """Start numba's threading layer now (about 40 ms, once per process).

    numba starts it when a ``parallel=True`` kernel is compiled or called through its own
    dispatcher, but not when a kernel loaded from numba's cache reaches one only through code
    linked from another module's cache (a kernel compiled while its callees came from the
    cache): that kernel then crashes the process (numba 0.68, reproduced). A module whose
    parallel kernels are called from other modules' cached kernels calls this when imported.
    """
    numba.get_num_threads()


def available_threads() -> int:
    """Threads the kernels may use by default: numba's pool size, at most the cores this
    process may run on."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(most_threads(), cores))


def most_threads() -> int:
    """The threads numba may use in this process (``NUMBA_NUM_THREADS``)."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


def check_threads(threads: object) -> int | None:
    """``threads`` as given (None: choose automatically), refusing what numba cannot do."""
    if threads is None:
        return None
    most = most_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= most:
        raise InputError(f"threads must be a whole number from 1 to {most} (the threads "
                         f"numba may use here), got {threads!r}")
    return threads


@contextlib.contextmanager
def numba_threads(threads: int) -> Iterator[None]:
    """Run the block with numba's thread count set to ``threads`` (restored afterwards)."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(before)


@dataclass
class ThreadChooser:
    """Chooses, for each batch of a sequential algorithm, the rows-per-chunk limit of its
    passes (``parallel_min``: split passes, or :data:`SERIAL`) and the number of clusters to
    form, from the measured cost of earlier batches.

    Usage: ``parallel_min, budget = chooser.plan(rows)``, run the batch, then
    ``chooser.done(clusters, rows, seconds)``. ``rows`` is the number of rows still to
    cluster: the cost of a cluster grows with it, so costs are compared per cluster-row.
    """

    split_min: int  # rows per chunk when passes are split (partition/_kernels.py)
    threads: int | None = None
    target_seconds: float = 0.04
    explore_every: int = 16
    _cost: dict[bool, float] = field(default_factory=dict)  # seconds per cluster-row
    _budget: int = 16  # clusters per ordinary batch (about target_seconds)
    _interval: int = 16  # batches between two tries of the other kind (doubles while it loses)
    _since_explore: int = 0
    _split: bool = False
    _stage: str = "ordinary"  # or "probe" (a try of the other kind), "confirm" (a second try)
    _confirm_next: bool = False

    def __post_init__(self) -> None:
        self._interval = self.explore_every
        self.threads = check_threads(self.threads)
        self.width = available_threads() if self.threads is None else self.threads

    @property
    def adaptive(self) -> bool:
        return self.threads is None and self.width > 1

    def plan(self, rows: int) -> tuple[int, int]:
        """``(parallel_min, clusters)`` for the next batch on ``rows`` remaining rows.

        A try of the other kind starts with a probe small enough to cost at most about 1/64
        of the batches since the last try, however much slower that kind was then (split
        passes beside a CPU-bound process: about 100 times slower per cluster). Only a probe
        that comes within a factor 2 (10 for the first, which starts the threads) is
        followed by a confirmation batch a quarter of the usual size, which measures it well
        enough to switch."""
        splittable = self.width > 1 and rows >= 2 * self.split_min
        self._stage = "ordinary"
        if not self.adaptive or not splittable:
            self._split = splittable
            return self.split_min, self._budget
        if False not in self._cost:  # first measure the passes on the calling thread
            self._split = False
            return self._limit(), self._budget
        if self._confirm_next:
            self._confirm_next = False
            self._stage = "confirm"
            return self._limit(), max(1, self._budget // 4)
        if True not in self._cost:
            self._split, self._stage = True, "probe"
            return self._limit(), max(1, self._budget // 128)
        best = self._cost[True] <= self._cost[False]
        self._since_explore += 1
        if self._since_explore <= self._interval:
            self._split = best
            return self._limit(), self._budget
        self._since_explore = 0
        self._split, self._stage = not best, "probe"
        ratio = max(1.0, self._cost[self._split] / max(self._cost[best], 1e-300))
        size = int(self._budget * self._interval / (64 * ratio))
        return self._limit(), max(1, min(size, self._budget // 4))

    def done(self, clusters: int, rows: int, seconds: float) -> None:
        """Record a batch: ``clusters`` formed among ``rows`` remaining rows in ``seconds``."""
        if clusters <= 0:
            return
        cost = seconds / (clusters * max(rows, 1))
        if self.adaptive and rows >= 2 * self.split_min:
            other = self._cost.get(not self._split)
            best_before = (self._cost[True] <= self._cost[False] if len(self._cost) == 2
                           else not self._split)
            previous = self._cost.get(self._split)
            # A confirmation replaces its probe's figure (measured on a tiny batch).
            fresh = previous is None or self._stage == "confirm"
            self._cost[self._split] = (cost if previous is None or fresh
                                       else 0.5 * (previous + cost))
            # The first probe of split passes also starts the thread pool: only a clearly
            # hopeless one (10 times slower) skips the confirmation.
            promising = 2.0 if previous is not None else 10.0
            if self._stage == "probe" and other is not None and cost < promising * other:
                self._confirm_next = True
            elif self._stage != "ordinary" and len(self._cost) == 2:
                kept = (self._cost[True] <= self._cost[False]) == best_before
                self._interval = (min(16 * self.explore_every, 2 * self._interval) if kept
                                  else self.explore_every)
        per_cluster = seconds / clusters
        if self._stage == "ordinary" and per_cluster > 0 and math.isfinite(per_cluster):
            self._budget = int(min(4096, max(1, self.target_seconds / per_cluster)))

    def _limit(self) -> int:
        return self.split_min if self._split else SERIAL
