"""The global risk has one unit wherever it is shown: the JSON fields hold the fraction (the
mean record risk, their meaning unchanged) and the web app, the recipe's HTML report and the
command line show it as a percentage, labelled."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from microagg.cli.risk import lines
from microagg.cli.run import _risk
from microagg.recipe import Recipe
from microagg.recipe.report import recipe_html, recipe_report
from microagg.recipe.risk import percent
from microagg.risk import categorical_risk
from microagg.ui import plots


def _value(text: str) -> float:
    """The number of a percentage as shown."""
    found = re.fullmatch(r"([0-9.]+)\xa0%", text)
    assert found, text
    return float(found.group(1))


@pytest.mark.parametrize("share", [0.0, 1e-7, 0.000162, 0.0099, 0.01, 0.0123, 0.5, 1.0])
def test_percent_is_the_fraction_times_100(share: float) -> None:
    shown = _value(percent(share))
    assert shown == pytest.approx(100 * share, rel=5e-3, abs=5e-3 if share >= 0.01 else 0)


def test_the_app_uses_the_same_percent() -> None:
    assert plots.percent is percent


@pytest.fixture(scope="module")
def run() -> object:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], 200),
                          "region": rng.choice(list("abcdefgh"), 200),
                          "town": rng.choice(list("pqrstuvwxyz"), 200)})
    return Recipe().add({"family": "keys", "method": "local-suppression", "k": 3,
                         "keys": ["sex", "region", "town"]}).run(frame)


def test_report_json_holds_the_fraction_and_html_its_percent(run: object) -> None:
    report = recipe_report(run)  # type: ignore[arg-type]
    before = report.to_dict()["risk_before"]["global_risk"]
    assert before == pytest.approx(run.risk_before.global_risk)  # type: ignore[attr-defined]
    assert 0 < before <= 1
    html = recipe_html(report)
    cells = re.findall(r"<td>([0-9.]+\xa0%)</td>", html)
    assert percent(before) in cells
    after = report.to_dict()["steps"][0]["risk_after"]["global_risk"]
    assert percent(after) in cells and after < before


def test_command_lines_show_the_percentage(run: object) -> None:
    risk = run.risk_before.to_dict()  # type: ignore[attr-defined]
    assert f"global risk {percent(risk['global_risk'])}," in _risk(risk)
    frame = run.original  # type: ignore[attr-defined]
    report = categorical_risk(frame, ["sex", "region", "town"]).to_dict()
    shown = next(line for line in lines(report) if "global risk" in line)
    assert _value(shown.split(")")[-1].strip()) == pytest.approx(
        100 * report["global_risk"], rel=5e-3)
    assert report["global_risk_percent"] == pytest.approx(100 * report["global_risk"])
