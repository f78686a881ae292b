"""A kernel compiled while its callees came from numba's cache, then loaded from the cache
itself, runs: the module holding the shared parallel pass starts numba's thread pool
(microagg.core.threads.start_thread_pool). Without it the third process below crashed."""

import os
import subprocess
import sys

import pytest

_RUN = """
import sys
import numpy as np
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3))
X[rng.random(X.shape) < 0.1] = np.nan
if sys.argv[1] == "mdav":
    from microagg.partition.mdav_missing import mdav_missing
    mdav_missing(X, 5)
else:
    from microagg.partition.tcloseness import t_closeness_first
    t_closeness_first(X, rng.integers(0, 5, 300).astype(float), 5, 0.3)
"""


@pytest.mark.slow
def test_a_kernel_linked_from_cached_callees_loads_from_the_cache(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    for step in ("mdav", "tclose", "tclose"):  # callees cached first, then the caller twice
        done = subprocess.run([sys.executable, "-c", _RUN, step], env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (step, done.returncode, done.stderr[-2000:])
