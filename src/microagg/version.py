"""The installed version of microagg, read from the package's metadata on first use (0.04 s:
the command line's start-up needs none). Every module that records the version (reports,
sidecars, ``--version``) reads it here rather than from the package top, which imports
nothing from the layers below it."""

from __future__ import annotations

import functools

__all__ = ["installed_version"]


@functools.cache
def installed_version() -> str:
    """The version of the installed distribution (``0+unknown`` in a source tree that was not
    installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("microagg")
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "0+unknown"
