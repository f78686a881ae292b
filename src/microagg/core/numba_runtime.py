"""numba's runtime, started without importing ``scipy.linalg`` whole.

The first call of any compiled function loads numba's registries, and one of them
(``numba.np.arraymath``) checks that BLAS is there by importing ``scipy.linalg.cython_blas``;
importing that module first imports the package ``scipy.linalg`` (about 0.2 s, a third of
numba's start-up on the reference machine), although numba reads nothing but the extension
module. :func:`load_blas` loads that one extension module under its own name, so numba's
check (and its BLAS calls, which look the module up by name) find it without the package. A
later ``import scipy.linalg`` works as usual and uses the same module.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

__all__ = ["BLAS_MODULE", "load_blas"]

BLAS_MODULE = "scipy.linalg.cython_blas"


def load_blas() -> bool:
    """Load ``scipy.linalg.cython_blas`` alone, unless it (or ``scipy.linalg``) is loaded
    already; returns whether the module is loaded now. Any surprise (scipy missing, laid out
    otherwise) leaves the import to numba, as without this function."""
    if BLAS_MODULE in sys.modules or "scipy.linalg" in sys.modules:
        return BLAS_MODULE in sys.modules
    try:
        found = importlib.util.find_spec("scipy")
        if found is None or not found.submodule_search_locations:
            return False
        folder = Path(next(iter(found.submodule_search_locations))) / "linalg"
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = folder / f"cython_blas{suffix}"
            if path.is_file():
                spec = importlib.util.spec_from_file_location(BLAS_MODULE, path)
                if spec is None or spec.loader is None:
                    return False
                module = importlib.util.module_from_spec(spec)
                sys.modules[BLAS_MODULE] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[BLAS_MODULE]
                    raise
                return True
    except (ImportError, OSError):
        return False
    return False
