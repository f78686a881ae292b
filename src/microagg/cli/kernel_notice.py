"""The one line a command says when numba compiles microagg's kernels, and where they go.

Every kernel is compiled with ``cache=True``: numba compiles one only when its on-disk cache
holds no copy for these argument types (the first run of a command after an installation or
an upgrade), and later runs load it from there. Where the cache lives is numba's choice, in
this order: ``NUMBA_CACHE_DIR`` when set; else the ``__pycache__`` folder beside the kernel's
module, shared by every user of the installation, when it is writable; else the user's own
cache folder (``~/.cache/numba`` on Linux), so that on an installation the user cannot write
to, each user compiles the kernels once. The notice names the place numba really uses, says
whether it serves the installation or this user only, and is said at most once per process,
only when a compilation of a microagg kernel starts (a load from the cache is no compilation).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PREFIX", "NoticeOnce", "cache_scope", "is_microagg_kernel", "notice_text"]

PREFIX = "microagg: compiling the kernels"
"""How the notice starts (what a test or an audit that ignores it looks for)."""


def is_microagg_kernel(module: str | None) -> bool:
    """Whether a compiled function defined in ``module`` is one of microagg's kernels (not
    one of numba's helpers, nor a user's own function).

    Parameters
    ----------
    module : str or None
        The ``__module__`` of the compiled function.

    Returns
    -------
    bool
        True for a module of the ``microagg`` package.

    Examples
    --------
    >>> is_microagg_kernel("microagg.partition._kernels"), is_microagg_kernel("numba.np")
    (True, False)
    """
    return (module or "").partition(".")[0] == "microagg"


def cache_scope(cache_path: str | None, source_file: str | None, cache_dir: str | None) -> str:
    """Whom numba's cache folder ``cache_path`` for a kernel defined in ``source_file``
    serves: ``"installation"`` (the ``__pycache__`` beside the source), ``"configured"``
    (under ``cache_dir``, numba's ``NUMBA_CACHE_DIR``), ``"user"`` (numba's fall-back, the
    user's own cache folder) or ``"unknown"``.

    Parameters
    ----------
    cache_path : str or None
        The folder numba's cache of the kernel uses.
    source_file : str or None
        The kernel's module file.
    cache_dir : str or None
        numba's configured ``NUMBA_CACHE_DIR`` (empty or None when unset).

    Returns
    -------
    str
        One of the four scopes above.
    """
    if not cache_path:
        return "unknown"
    path = os.path.normcase(os.path.abspath(cache_path))
    if cache_dir:
        root = os.path.normcase(os.path.abspath(cache_dir))
        if path == root or path.startswith(root + os.sep):
            return "configured"
    if source_file:
        beside = os.path.normcase(os.path.abspath(Path(source_file).parent / "__pycache__"))
        if path == beside:
            return "installation"
    return "user"


def notice_text(scope: str, cache_path: str | None) -> str:
    """The notice (one line, ending in a newline) for a compilation into ``cache_path``,
    whose :func:`cache_scope` is ``scope``.

    Parameters
    ----------
    scope : str
        What :func:`cache_scope` says of ``cache_path``.
    cache_path : str or None
        The folder numba compiles into.

    Returns
    -------
    str
        The line to write on stderr.
    """
    folder = str(Path(cache_path).parent) if scope == "configured" and cache_path else (
        cache_path or "numba's cache")
    reach = {
        "installation": "once for this installation",
        "configured": "once for NUMBA_CACHE_DIR",
        "user": "once for this user: the installation's folder is not writable",
    }.get(scope, "once")
    return (f"{PREFIX} this command needs ({reach}; later runs load them from {folder})"
            "...\n")


class NoticeOnce:
    """Whether to say the notice: at the first compilation of a microagg kernel in this
    process, and never again."""

    def __init__(self) -> None:
        self.said = False

    def should_say(self, module: str | None) -> bool:
        """Whether a compilation of a function of ``module`` starting now is to be
        announced (and, if so, remember that it was).

        Parameters
        ----------
        module : str or None
            The ``__module__`` of the function being compiled.

        Returns
        -------
        bool
            True once per process, for a microagg kernel.
        """
        if self.said or not is_microagg_kernel(module):
            return False
        self.said = True
        return True
