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


AS_ON_WINDOWS = '''"""Python as on Windows for microagg's own code: importing a POSIX-only module
raises ImportError there, and os and signal lack the POSIX-only calls and signals. The
standard library and the other libraries keep their own platform branches."""
import builtins
import types

HIDDEN_MODULES = {modules}
HIDDEN = {{"os": {os_calls}, "signal": {signals}}}
_import = builtins.__import__


class _Without(types.ModuleType):
    def __init__(self, module, hidden):
        super().__init__(module.__name__)
        self._module, self._hidden = module, hidden

    def __getattr__(self, name):
        if name in self._hidden:
            raise AttributeError(f"module {{self.__name__!r}} has no attribute {{name!r}}")
        return getattr(self._module, name)


_views = {{}}


def _as_on_windows(name, globals=None, locals=None, fromlist=(), level=0):
    caller = (globals or {{}}).get("__name__") or ""
    root = name.partition(".")[0]
    if level or not (caller == "microagg" or caller.startswith("microagg.")):
        return _import(name, globals, locals, fromlist, level)
    if root in HIDDEN_MODULES:
        raise ImportError(f"No module named {{name!r}}", name=name)
    module = _import(name, globals, locals, fromlist, level)
    if root not in HIDDEN or (fromlist and name != root):
        return module
    missing = set(fromlist or ()) & set(HIDDEN[root])
    if missing:
        raise ImportError(f"cannot import name {{min(missing)!r}} from {{root!r}}")
    if root not in _views:
        _views[root] = _Without(_import(root), set(HIDDEN[root]))
    return _views[root]


builtins.__import__ = _as_on_windows
'''
"""A ``sitecustomize`` module that every Python process of the README's commands runs first."""


def _as_on_windows(folder: Path) -> str:
    """A folder holding :data:`AS_ON_WINDOWS` (hiding the modules, calls and signals that
    tests/test_portable.py looks for, but ``os.kill``, which Windows has with another meaning:
    its use is checked there), for PYTHONPATH."""
    from tests.test_portable import POSIX_ATTRIBUTES, POSIX_MODULES

    folder.mkdir()
    (folder / "sitecustomize.py").write_text(AS_ON_WINDOWS.format(
        modules=sorted(POSIX_MODULES),
        os_calls=sorted(POSIX_ATTRIBUTES["os"] - {"kill"}),  # Windows has one (it ends a process)
        signals=sorted(POSIX_ATTRIBUTES["signal"])), encoding="utf-8")
    return str(folder)


@pytest.mark.slow
def test_readme_examples_run_as_written(tmp_path, monkeypatch):
    """In an empty folder, every command run by a Python that lacks what Windows lacks."""
    windows = _as_on_windows(tmp_path / "as-on-windows")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                 f"{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(filter(None, [windows,
                                                       os.environ.get("PYTHONPATH")]))}
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
    _stated_classes_hold(work)


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
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0",
                             "-p", "no:cacheprovider"], cwd=root, capture_output=True,
                            text=True)
    collected = re.search(r"(\d+) tests? collected", result.stdout)
    assert collected, result.stdout[-2000:]
    stated = re.search(r"\((\d+) tests; a test checks", README.read_text(encoding="utf-8"))
    assert stated and int(stated.group(1)) == int(collected.group(1))
