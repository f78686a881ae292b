"""The documentation builds with warnings as errors, and documents every public name.

Every public module (no part of its dotted name starts with ``_``) that declares ``__all__``
must have each of those names documented in the built reference, where it is listed or
where it is defined; the user guide must have a page for each section of the README.
"""

import html
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import microagg

ROOT = Path(__file__).resolve().parents[1]
# README sections that are not part of the user guide: the docs' own index, CONTRIBUTING.md
# and the licence page cover them.
NOT_IN_GUIDE = {"Development", "Documentation", "Licence"}


def _inventory(path: Path) -> set[str]:
    """The Python objects an ``objects.inv`` (Sphinx's inventory, version 2) lists."""
    raw = path.read_bytes()
    header_end = 0
    for _ in range(4):  # four lines of plain text, then zlib
        header_end = raw.index(b"\n", header_end) + 1
    assert raw.startswith(b"# Sphinx inventory version 2")
    names = set()
    for line in zlib.decompress(raw[header_end:]).decode("utf-8").splitlines():
        match = re.match(r"(\S+)\s+py:\w+\s", line)
        if match:
            names.add(match.group(1))
    return names


def _public_modules() -> list:
    names = ["microagg"] + [
        info.name for info in pkgutil.walk_packages(microagg.__path__, "microagg.")
        if not any(part.startswith("_") for part in info.name.split(".")[1:])]
    modules = [importlib.import_module(name) for name in names]
    return [module for module in modules if hasattr(module, "__all__")]


def _entries(module, name: str) -> set[str]:
    """The names under which ``module.name`` may be documented."""
    value = getattr(module, name)
    found = {f"{module.__name__}.{name}"}
    if inspect.ismodule(value):
        found.add(value.__name__)
    elif hasattr(value, "__module__") and hasattr(value, "__qualname__"):
        found.add(f"{value.__module__}.{value.__qualname__}")
    return found


def _public_names() -> list[tuple[object, str]]:
    from microagg.release.methods import METHODS

    names = [(module, name) for module in _public_modules() for name in module.__all__
             if name != "__version__"]
    return names + [(microagg, method.__name__) for method in METHODS]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")],
        capture_output=True, text=True)
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    return out / "html"


@pytest.mark.slow
def test_every_public_name_is_documented(built):
    documented = _inventory(built / "objects.inv")
    names = _public_names()
    assert len(names) > 500  # the walk found the modules
    missing = [f"{module.__name__}.{name}" for module, name in names
               if not _entries(module, name) & documented]
    assert not missing, f"{len(missing)} public names without an entry: {missing[:20]}"
    modules = {module.__name__ for module in _public_modules()}
    assert modules <= documented  # each public module has its page


def _words(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", html.unescape(re.sub(r"<[^>]+>", " ", text))))


@pytest.mark.slow
def test_the_guide_has_every_section_of_the_readme(built):
    """Each section of the README is on a page of the guide, under its own heading."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sections = {title: body for title, body in
                re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
                if title not in NOT_IN_GUIDE}
    pages = {}
    for page in (built / "guide").glob("*.html"):
        html = page.read_text("utf-8")
        for heading in re.findall(r"<h[12]>(.*?)<a class=\"headerlink\"", html):
            pages[_words(heading)] = _words(html)
    assert len(sections) >= 8
    for title, body in sections.items():
        assert _words(title) in pages, f"no page of the guide has the README's {title!r}"
        paragraph = re.sub(r"```\w*", "", body.strip().split("\n\n")[0])
        opening = " ".join(_words(paragraph).split()[:12])
        assert opening in pages[_words(title)], (title, opening)


@pytest.mark.slow
def test_the_project_pages_are_built(built):
    pages = [path.stem for path in (ROOT / "docs").glob("*.md")]
    pages += ["changelog", "contributing", "security"]
    assert all((built / f"{page}.html").is_file() for page in pages), pages


def test_the_version_is_the_same_wherever_it_is_stated():
    """pyproject.toml defines the version; the citation and the changelog's newest entry
    state the same (``microagg --version`` reads the installed metadata: tests/test_cli.py)."""
    import tomllib

    import yaml

    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text("utf-8"))
    newest = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text("utf-8"), re.M)
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert str(citation["version"]) == version
    assert newest and newest.group(1) == version
    assert citation["cff-version"] == "1.2.0" and citation["title"] and citation["authors"]
