"""The README's examples run as written, in order, in an empty folder."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from microagg import datasets

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(bash|python)\n(.*?)```", text,
                                                            re.S)
            if "pip install" not in m.group(2)]  # the install commands are CI's own job


def test_readme_has_examples():
    kinds = [kind for kind, _ in _blocks()]
    assert kinds.count("bash") >= 3 and kinds.count("python") >= 2


@pytest.mark.slow
def test_readme_examples_run_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                 f"{os.environ.get('PATH', '')}"}
    has_reference_data = datasets.data_dir("census.csv") is not None
    ran = 0
    for kind, code in _blocks():
        if "census" in code and not has_reference_data:
            continue  # the README says these need MICROAGG_DATA
        if kind == "bash":
            result = subprocess.run(["bash", "-euo", "pipefail", "-c", code], env=env,
                                    capture_output=True, text=True)
            assert result.returncode == 0, f"{code}\n{result.stdout}\n{result.stderr}"
        else:
            exec(compile(code, str(README), "exec"), {"__name__": "readme"})
        ran += 1
    assert ran >= 4
    _stated_classes_hold(tmp_path)


def _stated_classes_hold(folder: Path) -> None:
    """The class counts the README states for its t-closeness examples are what they give."""
    import pandas as pd

    text = " ".join(README.read_text(encoding="utf-8").split())
    merged = re.search(r"it ends with (\d+) classes, where t-closeness-first keeps classes of "
                       r"(\d+) to (\d+) records", text)
    assert merged, "the README no longer states the classes of its t-closeness examples"
    quasi = ["age", "income", "hours"]
    assert pd.read_csv(folder / "merged.csv").groupby(quasi).ngroups == int(merged.group(1))
    sizes = pd.read_csv(folder / "tclose.csv").groupby(quasi).size()
    assert (sizes.min(), sizes.max()) == (int(merged.group(2)), int(merged.group(3)))


@pytest.mark.slow
def test_readme_states_the_number_of_tests():
    """The README's count is the number of tests `python -m pytest` collects."""
    root = README.parent
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                             "-p", "no:cacheprovider"], cwd=root, capture_output=True,
                            text=True)
    collected = re.search(r"(\d+) tests? collected", result.stdout)
    assert collected, result.stdout[-2000:]
    stated = re.search(r"\((\d+) tests; a test checks", README.read_text(encoding="utf-8"))
    assert stated and int(stated.group(1)) == int(collected.group(1))
