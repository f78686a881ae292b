"""The compile notice (:mod:`microagg.cli.kernel_notice`): said once per process, only for
microagg's kernels, and true about where numba puts them and whom that serves."""

from __future__ import annotations

import os
from pathlib import Path

from microagg.cli.kernel_notice import (
    PREFIX,
    NoticeOnce,
    cache_scope,
    is_microagg_kernel,
    notice_text,
)

SOURCE = os.path.join(os.sep, "site", "microagg", "partition", "mdav.py")


def test_said_once_and_only_for_microaggs_kernels():
    notice = NoticeOnce()
    assert not notice.should_say("numba.typed.typedlist")  # numba's helpers: silent
    assert not notice.should_say(None)
    assert not notice.should_say("microaggregator")  # a package whose name merely starts so
    assert notice.should_say("microagg.partition._kernels")
    assert not notice.should_say("microagg.evaluation.risk")  # later kernels: already said
    assert not NoticeOnce().said
    assert is_microagg_kernel("microagg") and not is_microagg_kernel("")


def test_scope_follows_numbas_choice_of_folder():
    beside = os.path.join(os.path.dirname(SOURCE), "__pycache__")
    assert cache_scope(beside, SOURCE, None) == "installation"
    assert cache_scope(beside, SOURCE, "") == "installation"
    configured = os.path.join(os.sep, "shared", "numba")
    assert cache_scope(os.path.join(configured, "partition_ab12"), SOURCE,
                       configured) == "configured"
    assert cache_scope(os.path.join(os.sep, "shared", "numba-other", "x"), SOURCE,
                       configured) == "user"  # a sibling folder is not under it
    user = os.path.join(os.sep, "home", "ann", ".cache", "numba", "partition_ab12")
    assert cache_scope(user, SOURCE, None) == "user"
    assert cache_scope(None, SOURCE, None) == "unknown"


def test_text_names_the_folder_and_whom_it_serves():
    beside = os.path.join(os.path.dirname(SOURCE), "__pycache__")
    texts = {scope: notice_text(scope, path) for scope, path in (
        ("installation", beside), ("user", "/home/ann/.cache/numba/p"),
        ("configured", "/shared/numba/p"), ("unknown", None))}
    for text in texts.values():
        assert text.startswith(PREFIX) and text.endswith("\n") and text.count("\n") == 1
        assert "first run only" not in text  # another command may compile other kernels
    assert beside in texts["installation"] and "installation" in texts["installation"]
    assert "this user" in texts["user"] and "not writable" in texts["user"]
    assert str(Path("/shared/numba")) in texts["configured"]
    assert len(set(texts.values())) == len(texts)
