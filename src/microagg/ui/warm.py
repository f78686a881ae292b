"""The compiled kernels of a first step, made ready before the first user asks for one.

numba compiles a kernel on its first call and keeps it in its on-disk cache, so a step costs
what the command line costs (loading the cached kernels: about a second) only once the
cache holds its kernels. On a fresh installation it does not: MDAV with k = 5 on the 1,080
records of CASC Census took 105 s of compilation the first time, 1.5 s after. Compiled in
the server, the first step would also hold the interpreter's lock for that time, and every
session would wait with it. So :func:`start` runs :func:`main` in a separate process at a
low priority when the server starts: it runs the app's first steps (MDAV with and without
a weight, and the risk measures the steps table shows) on a small table, which fills the
cache; the server's own first step then loads the kernels from it. With the cache filled
already, the process ends within a few seconds.

Usage: ``python -m microagg.ui.warm``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

import numpy as np
import pandas as pd

__all__ = ["main", "start"]


def _table(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x": rng.normal(size=n), "y": rng.integers(0, 90, n),
                         "group": rng.choice(["a", "b", "c"], n),
                         "weight": rng.integers(1, 50, n).astype(float)})


def main() -> None:
    """Run the app's first steps on a small table (the kernels they load are compiled and
    cached on the way), and the risk measures of its risk tab."""
    from microagg.core.frequencies import key_codes
    from microagg.data.schema import Schema
    from microagg.recipe.model import Recipe, Step
    from microagg.recipe.runner import RecipeRun
    from microagg.risk import l_diversity, suda2
    from microagg.risk.suda import load_kernels
    from microagg.ui.state import ColumnEdit, build_schema

    frame = _table()
    inferred = Schema.infer(frame, strict=False)
    for weight in ("other", "weight"):  # as the data tab builds the schema
        schema = build_schema(inferred, {"group": ColumnEdit(role="confidential"),
                                         "weight": ColumnEdit(role=weight)})
        run = RecipeRun.start(Recipe(schema=schema, seed=1), frame)
        done = run.then(Step.of({"family": "microaggregate", "method": "mdav", "k": 3}),
                        records=lambda _: None)
        _ = done.results[-1].risk, done.risk_before
    codes = key_codes(frame, ["y", "group"])
    suda2(codes)
    load_kernels()
    l_diversity(codes, codes[:, 1])


def start() -> subprocess.Popen[bytes] | None:
    """:func:`main` in a separate process at the lowest priority (``None`` where it cannot
    start: the first step then compiles what it needs)."""
    def lower() -> None:  # pragma: no cover - runs in the child
        if hasattr(os, "nice"):
            with contextlib.suppress(OSError):
                os.nice(19)

    try:
        return subprocess.Popen([sys.executable, "-m", "microagg.ui.warm"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                preexec_fn=lower if hasattr(os, "nice") else None,
                                creationflags=getattr(subprocess, "IDLE_PRIORITY_CLASS", 0))
    except OSError:
        return None


if __name__ == "__main__":
    main()
