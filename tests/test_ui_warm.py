"""The kernels of the app's first step, compiled into numba's cache by a process apart
(microagg/ui/warm.py)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("shiny", reason="the web app needs the extra ui (shiny)")

from microagg.ui import warm


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
def test_the_warm_up_runs_apart_at_the_lowest_priority():
    process = warm.start()
    assert process is not None
    try:
        with open(f"/proc/{process.pid}/stat") as stat:
            nice = int(stat.read().rsplit(")", 1)[1].split()[16])
        assert nice == min(19, os.nice(0) + 19)  # lowered before it ran
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_warm_up_runs_the_first_steps_with_and_without_a_weight(monkeypatch):
    from microagg.data.schema import Role
    from microagg.recipe.runner import RecipeRun

    seen = []
    then = RecipeRun.then

    def spy(self, step, *args, **kwargs):
        done = then(self, step, *args, **kwargs)
        seen.append((step.method().name, [a.name for a in self.recipe.schema
                                          if a.role is Role.WEIGHT]))
        return done

    monkeypatch.setattr(RecipeRun, "then", spy)
    warm.main()
    assert {name for name, _ in seen} == {"mdav"}
    assert sorted(weights for _, weights in seen) == [[], ["weight"]]
