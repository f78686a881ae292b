"""The web app end to end in headless Chromium: load Adult-like data, set roles, measure the
risk, add steps (local suppression, MDAV, top coding), see an error beside its field, undo a
step, compare methods at equal risk, download the release and the recipe, and check that
``microagg run`` on the downloaded recipe writes the same release; the session's folder is
removed when the page closes.

Playwright drives Debian's Chromium (``apt-get install chromium``); without a browser, or
without the extra ``ui``, the test is skipped and says why."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.test_recipe import _matches_any

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = next((p for p in (os.environ.get("MICROAGG_CHROMIUM"), shutil.which("chromium"),
                             "/usr/bin/chromium") if p and Path(p).is_file()), None)


def adult_like(n: int = 1200, seed: int = 0) -> pd.DataFrame:
    """A table shaped like UCI Adult: categorical keys with missing values, a sampling
    weight whose name says so, numeric columns."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(17, 90, n),
        "workclass": rng.choice(["Private", "Self-emp", "Federal-gov", "Local-gov"], n,
                                p=[0.7, 0.15, 0.05, 0.1]),
        "fnlwgt": rng.integers(20_000, 400_000, n),
        "education": rng.choice(["HS-grad", "Bachelors", "Masters", "11th"], n),
        "sex": rng.choice(["Male", "Female"], n),
        "hours-per-week": rng.integers(10, 70, n),
        "capital-gain": np.where(rng.random(n) < 0.9, 0, rng.integers(1, 20_000, n)),
        "native-country": rng.choice(["United-States", "Mexico", "India"], n,
                                     p=[0.9, 0.07, 0.03]),
        "income": rng.choice(["<=50K", ">50K"], n, p=[0.75, 0.25]),
    })
    frame["workclass"] = frame["workclass"].where(rng.random(n) > 0.05)
    frame["native-country"] = frame["native-country"].where(rng.random(n) > 0.02)
    return frame


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def app_url(tmp_path):
    pytest.importorskip("shiny", reason="the web app needs the extra ui (shiny)")
    if CHROMIUM is None:
        pytest.skip("no Chromium browser installed (apt-get install chromium)")
    port = _free_port()
    temporary = tmp_path / "server-tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary)}
    server = subprocess.Popen(
        [sys.executable, "-c", "from microagg.cli import entry; entry()", "ui", "--port",
         str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.2)
    else:
        server.kill()
        pytest.fail("the app did not start: " + server.stderr.read().decode())
    yield f"http://127.0.0.1:{port}", temporary
    server.terminate()
    server.wait(timeout=20)


def _sessions(temporary: Path) -> list[Path]:
    return [p for p in temporary.iterdir() if p.name.startswith(("microagg-ui-",
                                                                  "fileupload-"))]


def test_the_web_app_end_to_end(app_url, tmp_path, run_cli):
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="the browser tests need playwright")
    url, temporary = app_url
    frame = adult_like()
    data = tmp_path / "adult.csv"
    frame.to_csv(data, index=False)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport={"width": 1400, "height": 1000},
                                accept_downloads=True)
        page.set_default_timeout(120_000)
        page.goto(url)
        page.set_input_files("#upload", str(data))
        page.wait_for_selector("#role_0")
        assert "1,200 records" in page.inner_text("#loaded-text")
        assert page.input_value("#role_2") == "weight"  # fnlwgt: suggested by its name
        for index, role in ((5, "other"), (6, "confidential"), (8, "confidential")):
            page.select_option(f"#role_{index}", role)

        page.click("text=2 · Risk")
        keys = ["age", "workclass", "education", "sex", "native-country"]
        page.wait_for_function("document.querySelector('#keys') && document.querySelector("
                               "'#keys').innerText.endsWith('native-country')")
        fk = _matches_any(frame, keys)
        box = page.locator("#box_3").inner_text()
        assert f"{int((fk < 5).sum()):,}" in box

        page.click("text=3 · Steps")
        page.select_option("#family", "keys")
        page.wait_for_function("document.querySelector('#method') && "
                               "document.querySelector('#method').value !== ''")
        page.select_option("#method", "local-suppression")
        page.wait_for_selector("#f_k")
        page.fill("#f_k", "3")
        for key in ("workclass", "education", "sex", "native-country"):
            page.locator("#f_keys-selectized").fill(key)
            page.keyboard.press("Enter")
        page.click("#run_step")
        page.wait_for_selector("#step-1")
        assert "local-suppression" in page.inner_text("#step-1")
        page.select_option("#family", "microaggregate")
        page.wait_for_selector("#f_k")
        page.fill("#f_k", "1")
        page.click("#run_step")
        page.wait_for_selector("#err-k .field-error")
        assert "--k must be an integer >= 2" in page.inner_text("#err-k")
        page.fill("#f_k", "5")
        page.click("#run_step")
        page.wait_for_selector("#step-2")
        page.select_option("#family", "mask")
        page.wait_for_function("document.querySelector('#method').value === "
                               "'correlated-noise'")
        page.select_option("#method", "top-bottom-coding")
        page.wait_for_selector("#f_top")
        page.fill("#f_top", "10000")
        page.locator("#f_columns-selectized").fill("capital-gain")
        page.keyboard.press("Enter")
        page.click("#run_step")
        page.wait_for_selector("#step-3")
        page.click("#undo")
        page.wait_for_selector("#step-3", state="detached")
        assert "mdav (k=5)" in page.inner_text("#step-2")

        page.click("text=4 · Compare")
        for method in ("correlated-noise", "multiplicative-noise"):
            page.uncheck(f"input[name='compare_methods'][value='{method}']")
        page.fill("#compare_seeds", "2")
        page.click("#run_compare")
        page.wait_for_selector("#comparison-report", timeout=300_000)

        page.click("text=5 · Download")
        page.wait_for_selector("#dl_recipe")
        files = {}
        for button in ("dl_release", "dl_recipe", "dl_report_json"):
            with page.expect_download() as download:
                page.click(f"#{button}")
            files[button] = downloads / download.value.suggested_filename
            download.value.save_as(files[button])
        assert _sessions(temporary)
        page.close()
        browser.close()

    shutil.copy(data, downloads / "adult.csv")
    again = downloads / "again.csv"
    result = run_cli("run", files["dl_recipe"], "-o", again)
    assert result.code == 0, result.stderr
    assert again.read_bytes() == files["dl_release"].read_bytes()
    deadline = time.monotonic() + 20
    while _sessions(temporary) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _sessions(temporary), "the session's folders outlived the session"
