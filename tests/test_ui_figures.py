"""The web app's figures and the sentences beside them say what they show: the risk
histogram has bins down to the smallest risk, a column is drawn in value order (two panels
when recoded), an unchanged correlation map says so, the boxes of the risk are explained,
and PRAM's note names the keys its frequencies are over."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from microagg.recipe import Recipe
from microagg.recipe.risk import measure_risk
from microagg.ui.plots import (
    as_numbers,
    category_counts,
    correlation_change,
    distribution,
    recoded,
    risk_bins,
    risk_histogram,
)
from microagg.ui.risk_tab import risk_explained


@pytest.mark.parametrize("risks", [
    np.array([1.0, 0.5, 0.2, 1 / 3, 0.04]),
    np.array([1.5e-7, 3e-6, 2e-5, 4e-4, 7.6e-4]),  # a weighted individual risk (Adult)
    np.array([1e-12, 0.9]),
])
def test_risk_bins_hold_every_record_and_split_small_risks(risks: np.ndarray) -> None:
    edges, labels = risk_bins(risks)
    counts = np.histogram(risks, edges)[0]
    assert len(labels) == counts.size and counts.sum() == risks.size
    assert np.all(np.diff(edges) > 0) and edges[0] == 0 and edges[-1] > 1
    assert 0.01 in edges and 0.05 in edges  # the thresholds a statistical office reads
    if 1e-8 <= risks.min() < 0.01:
        assert counts[0] > 0  # the first bin is where the smallest risk is, not below
    if risks.max() < 0.01:
        assert np.count_nonzero(counts) >= 3  # not one bar "< 1 %"
    drawn = risk_histogram(risks, risks / 2)
    heights = [p.get_height() for p in drawn.axes[0].patches]
    assert sum(heights) == 2 * risks.size


def test_a_numeric_column_read_as_text_is_drawn_in_value_order() -> None:
    ages = pd.Series(["36", "31", "34", "36", None, "70", "31"], dtype="object")
    numbers = as_numbers(ages)
    assert numbers is not None and numbers.iloc[0] == 36 and np.isnan(numbers.iloc[4])
    assert as_numbers(pd.Series(["36", "x"])) is None
    assert as_numbers(pd.Series(pd.Categorical(["1", "2"], ordered=True))) is None
    figure = distribution(ages, None, "age")
    bars = [p for p in figure.axes[0].patches if p.get_height() > 0]
    lefts = [p.get_x() for p in bars]
    assert lefts == sorted(lefts)
    assert sum(p.get_height() for p in bars) == 6  # the missing value is not drawn


def test_categories_keep_their_order() -> None:
    intervals = pd.Series(["[30, 40)", "[0, 20)", "[100, 120]", "[30, 40)", "[20, 30)"])
    assert list(category_counts(intervals).index) == ["[0, 20)", "[20, 30)", "[30, 40)",
                                                      "[100, 120]"]
    ordered = pd.Series(pd.Categorical(["high", "low", "mid", "low"],
                                       categories=["low", "mid", "high"], ordered=True))
    assert list(category_counts(ordered).index) == ["low", "mid", "high"]
    nominal = pd.Series(["b", "a", "b", "c", "b", "a", None])
    counts = category_counts(nominal)
    assert list(counts.index) == ["b", "a", "c", "missing"] and counts.sum() == 7


def test_a_recoded_column_has_its_after_panel_drawn() -> None:
    rng = np.random.default_rng(0)
    age = pd.Series(rng.integers(17, 90, 500))
    after = pd.cut(age, [0, 30, 50, 120], right=False).astype(str)
    assert recoded(age, after)
    region = pd.Series(rng.choice(["north", "south", "east", "west"], 500))
    land = region.map({"north": "land", "south": "land", "east": "sea", "west": "sea"})
    assert recoded(region, land)
    pram = region.where(rng.random(500) > 0.1, "north")
    assert not recoded(region, pram) and not recoded(age, age + 1)
    figure = distribution(age, after, "age")
    assert len(figure.axes) == 2
    assert sum(p.get_height() for p in figure.axes[1].patches) == 500
    assert [t.get_text() for t in figure.axes[1].get_xticklabels()] == [
        "[0, 30)", "[30, 50)", "[50, 120)"]


def _texts(figure: object) -> str:
    return " ".join(t.get_text() for ax in figure.axes for t in ax.texts)  # type: ignore[attr-defined]


def test_correlations_unchanged_are_said_not_drawn_blank() -> None:
    rng = np.random.default_rng(1)
    before = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300),
                           "c": rng.integers(0, 9, 300), "sex": rng.choice(["f", "m"], 300)})
    after = before.assign(sex="f")
    unchanged = correlation_change(before, after)
    assert not unchanged.axes[0].images and "No correlation" in _texts(unchanged)
    recoded_c = after.assign(c=after["c"].astype(str))
    assert "no longer numeric, or dropped): c" in _texts(correlation_change(before, recoded_c))
    shuffled = before.assign(a=rng.permutation(before["a"].to_numpy()))
    changed = correlation_change(before, shuffled)
    assert changed.axes[0].images and "No correlation" not in _texts(changed)


def _numbers(text: str) -> list[float]:
    return [float(v.replace(",", "")) for v in re.findall(r"\d[\d,]*\.?\d*", text)]


def test_the_risk_boxes_are_explained() -> None:
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.choice(list("abcdefghij"), 400),
                          "b": rng.choice(list("pqrstuvw"), 400),
                          "w": rng.integers(50, 500, 400)})
    plain = measure_risk(frame, ["a", "b"])
    uniques = int((plain.fk == 1).sum())
    said = risk_explained(plain)
    assert "1/f_k" in said and f"{uniques:,} records unique" in said
    assert f"alone count {uniques:,}" in said
    weighted = measure_risk(frame, ["a", "b"], weight="w")
    said = risk_explained(weighted)
    carried = float(weighted.record_risk[weighted.fk == 1].sum())
    assert "sampling weight w" in said and f"{uniques:,} records unique" in said
    assert f"only {carried:,.2f} expected" in said
    assert carried <= weighted.expected_reidentifications < uniques


def test_the_pram_note_names_the_keys_of_its_frequencies() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], 400),
                          "race": rng.choice(list("abcd"), 400),
                          "age": rng.integers(18, 90, 400)})
    run = Recipe(seed=1).add({"family": "keys", "method": "invariant-pram",
                              "keys": ["sex", "race"]}).run(frame)
    statement = run.results[-1].record.guarantee.statement
    over = measure_risk(run.frame, ["sex", "race"])
    assert "(sex, race)" in statement
    assert f"{int((over.fk == 1).sum()):,} records are unique on sex, race" in statement
    assert f"smallest f_k over them is {over.smallest_class:,}" in statement
    # without a schema the steps table's row measures over the keys the step names: the
    # note and the row agree
    assert run.results[-1].risk.keys == ["sex", "race"]
    assert run.results[-1].risk.violations[2] == int((over.fk == 1).sum())


def test_the_steps_tables_figures_are_never_in_scientific_notation():
    from microagg.ui.steps_tab import _number, _risk_cells

    risk = measure_risk(pd.DataFrame({"a": range(20_000)}), ["a"])  # 20,000 uniques
    cells = _risk_cells(risk)
    assert all("e+" not in cell for cell in cells)
    assert "20,000.0" in cells
    assert _number(123_456.7) == "123,457" and _number(20_000) == "20,000"
    assert _number(0.0123) == "0.0123" and _number(None) == "—"


def test_the_page_names_its_icon_so_that_no_request_for_one_fails():
    from htmltools import HTMLDocument

    from microagg.ui.layout import page

    html = HTMLDocument(page()).render()["html"]
    head = html[:html.index("</head>")]
    assert re.search(r'<link rel="icon" href="data:,"', head)
