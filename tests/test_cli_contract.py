"""The command line's promises under bad or hostile input: exit 2 with one line, nothing
written unless everything is, no input overwritten, nothing on stderr that a DP release must
not publish."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def _numbers(tmp_path: Path, name: str = "in.csv") -> Path:
    path = tmp_path / name
    pd.DataFrame({"x": [1.0, 2.0, 3.0, 50.0, 5.0, 6.0, 7.0, 8.0]}).to_csv(path, index=False)
    return path


def test_dp_prints_clamped_counts_only_when_asked(run_cli, tmp_path):
    """The number of values clamped into the declared domain describes the data, not the
    release: it reaches stderr only with --show-clamped."""
    source = _numbers(tmp_path)
    common = ("dp", source, "--epsilon", "1", "--k", "2", "--bounds", "x=0:10")
    quiet = run_cli(*common, "-o", tmp_path / "a.csv")
    assert quiet.code == 0, quiet.stderr
    assert "clamped" not in quiet.stderr and "1 value" not in quiet.stderr
    shown = run_cli(*common, "-o", tmp_path / "b.csv", "--show-clamped")
    assert shown.code == 0, shown.stderr
    assert "1 value(s) of 'x' lay outside its declared domain" in shown.stderr
