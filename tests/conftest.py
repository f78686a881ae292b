"""Shared fixtures: reference data lookup and a command-line runner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from microagg import datasets
from microagg.cli import main


def pytest_collection_modifyitems(config, items):
    """Skip tests marked ``reference_data`` when the reference files cannot be found."""
    if datasets.data_dir("census.csv") is not None:
        return
    skip = pytest.mark.skip(reason="reference data not found (set MICROAGG_DATA)")
    for item in items:
        if "reference_data" in item.keywords:
            item.add_marker(skip)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli(capsys) -> Callable[..., CliResult]:
    """Run ``microagg ARGS...`` in-process and capture its exit code and output."""

    def run(*args: str | Path) -> CliResult:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of 2 worker processes for the tests of one module (the Dask engine)."""
    pytest.importorskip("distributed")
    from microagg.at_scale.cluster import dask_client

    with dask_client(workers=2) as c:
        yield c


@pytest.fixture(scope="session")
def census():
    return datasets.load("census")


@pytest.fixture(scope="session")
def adult_complete():
    return datasets.load("adult", drop_incomplete=True)
