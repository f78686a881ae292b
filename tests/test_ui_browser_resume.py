"""The web app in headless Chromium: the risk tab explains its boxes, the steps table
scrolls instead of being cut off, and a recipe downloaded from one session is loaded back in
a fresh one (a reload) with its data file: refused in one line when it names a column the
table lacks, else the file becomes the session's table, the steps run again to the same
figures and the user goes on with one more step."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_ui_browser import _loaded, adult_like, app_url, choose_method  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _rows(page) -> list[str]:
    """The rows of the steps table without their last cell (the seconds a step took)."""
    rows = page.locator("#steps tbody tr[id^='step-']").all()
    return [row.inner_text().rsplit("\t", 1)[0] for row in rows]


def _run(page, family: str, method: str, fields: dict[str, str], keys: list[str],
         step: int) -> None:
    choose_method(page, family, method)
    for name, value in fields.items():
        page.fill(f"#{name}", value)
    for key in keys:
        page.locator("#f_keys-selectized, #f_columns-selectized").first.fill(key)
        page.keyboard.press("Enter")
    page.click("#run_step")
    page.wait_for_selector(f"#step-{step}")


def test_a_recipe_downloaded_is_loaded_back_after_a_reload(app_url, tmp_path):  # noqa: F811
    pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright")
    url, _ = app_url
    data = tmp_path / "adult.csv"
    adult_like().to_csv(data, index=False)
    with _loaded(url, data) as page:
        page.click("text=2 · Risk")
        page.wait_for_selector("#risk-explained")
        explained = page.inner_text("#risk-explained")
        assert "sampling weight fnlwgt" in explained and "records unique" in explained
        assert page.inner_text("#box_5").strip().endswith("%")

        page.click("text=3 · Steps")
        _run(page, "keys", "global-recoding", {"f_breaks": "age=0:30:50:120"}, [], 1)
        _run(page, "keys", "local-suppression", {"f_k": "3"},
             ["workclass", "education", "sex"], 2)
        before = _rows(page)
        table = page.evaluate(
            "(() => { const box = document.querySelector('#steps_table');"
            " const card = box.closest('.card').getBoundingClientRect();"
            " return [getComputedStyle(box).overflowX, box.getBoundingClientRect().right,"
            " card.right, box.scrollWidth, box.clientWidth]; })()")
        assert table[0] == "auto" and table[1] <= table[2]  # inside its card, scrolling
        page.click("text=5 · Download")
        page.wait_for_selector("#dl_recipe")
        with page.expect_download() as download:
            page.click("#dl_recipe")
        recipe = tmp_path / "adult.recipe.yaml"
        download.value.save_as(recipe)

        page.goto(url)  # a reload: a new session, nothing of the first
        page.set_input_files("#recipe_data", str(data))  # the card's own data file
        wrong = tmp_path / "wrong.yaml"
        wrong.write_text(recipe.read_text().replace("sex]", "gender]"))
        assert wrong.read_text() != recipe.read_text()
        page.set_input_files("#recipe_upload", str(wrong))
        page.wait_for_selector("#err-recipe_upload .field-error")
        refusal = page.inner_text("#err-recipe_upload")
        assert "names column 'gender'" in refusal and "\n" not in refusal.strip()

        page.set_input_files("#recipe_upload", str(recipe))
        page.wait_for_selector("#resumed-notes")
        assert "2 step(s) run again" in page.inner_text("#resumed-notes")
        assert page.input_value("#role_2") == "weight"
        assert page.inner_text("#loaded-text").startswith("adult.csv:")  # the data tab's
        page.click("text=3 · Steps")
        page.wait_for_selector("#step-2")
        assert _rows(page) == before
        _run(page, "mask", "top-bottom-coding", {"f_top": "10000"}, ["capital-gain"], 3)
        assert "top-bottom-coding" in page.inner_text("#step-3")
        assert Path(recipe).read_text().count("family:") == 2
