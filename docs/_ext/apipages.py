"""The API reference's pages, written from the public modules' ``__all__``.

A public module is one of microagg whose dotted name has no part starting with ``_`` and
that declares ``__all__``. Its page documents every name of its ``__all__`` that it defines,
and lists with a link the names it re-exports from another public module, whose page
documents them. ``microagg`` itself is the first page: every name of the top-level API and
every registered method class, each linked to where it is documented.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

PACKAGE = "microagg"
FOLDER = "api"


def public_modules() -> list[ModuleType]:
    """Every public module of microagg that declares ``__all__``, by dotted name.

    Returns
    -------
    list of module
        The package first, then its modules in alphabetical order.
    """
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE] + [
        info.name for info in pkgutil.walk_packages(package.__path__, f"{PACKAGE}.")
        if not any(part.startswith("_") for part in info.name.split(".")[1:])]
    modules = [importlib.import_module(name) for name in sorted(names)]
    return [module for module in modules if hasattr(module, "__all__")]


def top_level_names() -> list[str]:
    """The names of ``microagg``'s API: its ``__all__`` and the registered method classes.

    Returns
    -------
    list of str
        Sorted, without ``__version__``.
    """
    package = importlib.import_module(PACKAGE)
    from microagg.release.methods import METHODS

    names = {*package.__all__, *(method.__name__ for method in METHODS)} - {"__version__"}
    return sorted(names, key=str.lower)


def _routine(value: Any) -> bool:
    # a function, a method, or a compiled kernel (numba's dispatcher keeps ``py_func``)
    return inspect.isroutine(value) or hasattr(value, "py_func")


def homes(modules: list[ModuleType]) -> dict[int, str]:
    """Where each class, function and module of the API is documented, by ``id``.

    A class or function is documented in the module that defines it when that module lists
    it in ``__all__``, else in the public module with the shortest name that lists it (never
    ``microagg`` itself, whose page links to the others). A module is documented on its
    own page. Other values (constants, registries) are documented wherever they are listed.

    Parameters
    ----------
    modules : list of module
        The public modules.

    Returns
    -------
    dict of int to str
        The dotted name of each value's entry, keyed by the value's ``id``.
    """
    documented = {module.__name__: module for module in modules}
    found = {id(module): name for name, module in documented.items()}
    listed = sorted((module for module in modules if module.__name__ != PACKAGE),
                    key=lambda module: (module.__name__.count("."), module.__name__))
    for module in listed:
        for name in module.__all__:
            value = getattr(module, name)
            if not (inspect.isclass(value) or _routine(value)) or id(value) in found:
                continue
            origin = documented.get(getattr(value, "__module__", ""))
            qualname = getattr(value, "__qualname__", name)
            if origin is not None and qualname in origin.__all__:
                found[id(value)] = f"{origin.__name__}.{qualname}"
            else:
                found[id(value)] = f"{module.__name__}.{name}"
    return found


def _entry(module: str, name: str, value: Any, shadowed: bool) -> list[str]:
    target = f"{module}.{name}"
    # a name bound in a package to something else than its submodule of the same name
    # (``microagg.cli.app``) is described without an index entry: the module has it
    index = ["   :no-index:"] if shadowed else []
    if inspect.isclass(value):
        options = ["   :members:", "   :show-inheritance:", *index]
        if issubclass(value, enum.Enum):
            options.append("   :undoc-members:")
        return [f".. autoclass:: {target}", *options, ""]
    if _routine(value):
        return [f".. autofunction:: {target}", *index, ""]
    if inspect.getdoc(value) == inspect.getdoc(type(value)):
        # an instance without a docstring of its own: its type says what it is
        kind = f"{type(value).__module__}.{type(value).__qualname__}"
        return [f".. py:data:: {name}", f"   :module: {module}", f"   :type: {kind}", *index,
                ""]
    return [f".. autodata:: {target}", "   :no-value:", *index, ""]


def _links(targets: list[str], module: str) -> list[str]:
    # autosummary names its items from no current module, then the module is current again
    return [".. currentmodule:: None", "", ".. autosummary::", "",
            *(f"   ~{target}" for target in targets), "", f".. currentmodule:: {module}", ""]


def module_page(module: ModuleType, found: dict[int, str], modules: set[str]) -> str:
    """The reStructuredText of one public module's page.

    Parameters
    ----------
    module : module
        A public module.
    found : dict of int to str
        Where each value is documented (:func:`homes`).
    modules : set of str
        The public modules' names.

    Returns
    -------
    str
        The module's docstring, then every name of its ``__all__``: documented here, or
        listed with a link to the page that documents it.
    """
    name = module.__name__
    lines = [name, "=" * len(name), "", f".. automodule:: {name}", ""]
    names = top_level_names() if name == PACKAGE else list(module.__all__)
    own, elsewhere = [], []
    for entry in names:
        if entry == "__version__":
            continue
        value = getattr(module, entry)
        target = found.get(id(value))
        if target is not None and target != f"{name}.{entry}":
            elsewhere.append(target)
        else:
            own.extend(_entry(name, entry, value, f"{name}.{entry}" in modules))
    if elsewhere:
        heading = "The API" if name == PACKAGE else "Re-exported here"
        lines += [heading, "-" * len(heading), "", *_links(elsewhere, name)]
    if own:
        heading = "Defined here"
        lines += [heading, "-" * len(heading), "", *own]
    return "\n".join(lines)


def index_page(modules: list[ModuleType]) -> str:
    """The API reference's contents: every public module's page.

    Parameters
    ----------
    modules : list of module
        The public modules.

    Returns
    -------
    str
        reStructuredText with one toctree.
    """
    title = "API reference"
    return "\n".join([title, "=" * len(title), "",
                      "One page per public module; ``microagg`` holds the top-level API.", "",
                      ".. toctree::", "   :maxdepth: 1", "",
                      *(f"   {module.__name__}" for module in modules), ""])


def write_pages(folder: Path) -> list[str]:
    """Write the API pages into ``folder``, leaving unchanged files untouched.

    Parameters
    ----------
    folder : Path
        The pages' folder inside the documentation's source.

    Returns
    -------
    list of str
        The documented module names.
    """
    modules = public_modules()
    found = homes(modules)
    names = {module.__name__ for module in modules}
    pages = {f"{module.__name__}.rst": module_page(module, found, names) for module in modules}
    pages["index.rst"] = index_page(modules)
    folder.mkdir(exist_ok=True)
    for stale in set(path.name for path in folder.glob("*.rst")) - set(pages):
        (folder / stale).unlink()
    for filename, text in pages.items():
        path = folder / filename
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return sorted(names)


def _builder_inited(app: Any) -> None:
    write_pages(Path(app.srcdir) / FOLDER)


def setup(app: Any) -> dict[str, Any]:
    """Register the page writer with Sphinx.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.

    Returns
    -------
    dict
        The extension's metadata.
    """
    app.connect("builder-inited", _builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
