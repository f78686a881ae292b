"""Fixtures shared by the partitioner tests."""

import numba
import pytest

from microagg.partition import _kernels


@pytest.fixture
def split_passes(monkeypatch) -> int:
    """Make every pass of 128 rows or more split between two threads (chunks of 64 rows):
    returns the ``threads`` argument that forces the split passes."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has a single thread here")
    monkeypatch.setattr(_kernels, "PARALLEL_MIN_ROWS", 64)
    return 2
