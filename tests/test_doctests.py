"""The Examples of every docstring in the package run as written (the package as installed,
not the source tree, so that the examples a user reads are the ones that were checked)."""

import doctest
import importlib
import pkgutil
import warnings

import microagg
from microagg.errors import PrivacyLeakWarning

MODULES = sorted(name for _, name, _ in pkgutil.walk_packages(microagg.__path__, "microagg."))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_docstring_examples_run():
    failed, attempted = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # examples seed their releases
        for name in MODULES:
            result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS)
            attempted += result.attempted
            if result.failed:
                failed.append(f"{name}: {result.failed} of {result.attempted}")
    assert not failed, f"docstring examples failed (the report above says which): {failed}"
    assert attempted >= 60, f"only {attempted} examples ran: the finder missed modules"


def test_every_method_class_has_a_running_example():
    from microagg.release.methods import METHODS

    finder = doctest.DocTestFinder(recurse=False)
    for method in METHODS:
        examples = [e for test in finder.find(method) for e in test.examples]
        assert examples, f"{method.__name__} has no Examples block"
        assert "Parameters\n----------" in (method.__doc__ or ""), method.__name__
