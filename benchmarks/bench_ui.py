"""How fast the web app answers on UCI Adult (32,561 rows): the time from each action that does
not run a method (upload, a role changed, a tab opened, a method's form, undo, the downloads
written) until the page has its new content and the server is idle, in headless Chromium;
and the time of the one method it runs (MDAV, k = 5, on the nine usual keys). Prints one JSON
object; ``--screenshots DIR`` also saves the main screens (the README's).

Usage: MICROAGG_DATA=../shared/datasets python benchmarks/bench_ui.py [--screenshots DIR]
       [--port 8799] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

IDLE = ("!document.documentElement.classList.contains('shiny-busy') && "
        "Array.from(document.querySelectorAll('.recalculating'))"
        ".filter(e => e.offsetParent !== null).length === 0")  # hidden tabs wait, suspended
ROLES = {"education-num": "other", "capital-gain": "confidential",
         "capital-loss": "confidential", "hours-per-week": "other", "income": "confidential"}


def _timed(page, action: Callable[[], None], ready: str) -> float:
    """Seconds from ``action`` until the selector ``ready`` is there and the server idle."""
    start = time.perf_counter()
    action()
    page.wait_for_selector(ready, state="attached")
    page.wait_for_timeout(50)  # let Shiny mark the outputs it recomputes
    page.wait_for_function(IDLE, polling=20)
    return round(time.perf_counter() - start, 3)


def _serve(port: int) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-c", "from microagg.cli import entry; entry()",
                               "ui", "--port", str(port)], stdout=subprocess.DEVNULL)
    for _ in range(300):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.2)
    server.kill()
    raise SystemExit("the app did not start")


def _shoot(page, folder: Path | None, name: str) -> None:
    if folder is not None:
        page.wait_for_function(IDLE, polling=50)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--screenshots", type=Path)
    parser.add_argument("--port", type=int, default=8799)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp())
    data = work / "adult.csv"
    subprocess.run([sys.executable, "-c", "from microagg.cli import entry; entry()",
                    "datasets", "export", "adult", "-o", str(data)], check=True,
                   stdout=subprocess.DEVNULL)
    import pandas as pd

    frame = pd.read_csv(data, nrows=5)
    rows = sum(1 for _ in data.open()) - 1
    names = list(frame.columns)
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    server = _serve(args.port)
    seconds: dict[str, float] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium)
            page = browser.new_page(viewport={"width": 1400, "height": 1000},
                                    accept_downloads=True)
            page.set_default_timeout(300_000)
            page.goto(f"http://127.0.0.1:{args.port}")
            page.wait_for_function(IDLE)
            seconds["upload and read"] = _timed(
                page, lambda: page.set_input_files("#upload", str(data)), "#role_0")
            for column, role in ROLES.items():
                seconds[f"role of {column}"] = _timed(
                    page, lambda c=column, r=role: page.select_option(
                        f"#role_{names.index(c)}", r), "#loaded-text")
            _shoot(page, args.screenshots, "1-data")
            seconds["risk tab"] = _timed(page, lambda: page.click("text=2 · Risk"), "#box_0")
            _shoot(page, args.screenshots, "2-risk")
            seconds["steps tab"] = _timed(page, lambda: page.click("text=3 · Steps"),
                                          "#f_k")
            seconds["method form (vmdav)"] = _timed(
                page, lambda: page.select_option("#method", "vmdav"), "#f_gamma")
            page.select_option("#family", "dp")
            page.wait_for_selector("#preview")
            page.fill("#f_epsilon", "1")
            page.fill("#f_k", "1000")
            page.locator("#f_columns-selectized").fill("age")
            page.keyboard.press("Enter")
            page.locator("#f_columns-selectized").fill("hours-per-week")
            page.keyboard.press("Enter")
            page.fill("#f_bounds", "age=17:90, hours-per-week=1:99")
            seconds["DP preview (runs the method on a public stand-in)"] = _timed(
                page, lambda: page.click("#preview"), "#preview-ledger")
            _shoot(page, args.screenshots, "4-dp-preview")
            page.select_option("#family", "microaggregate")
            page.wait_for_selector("#f_k")
            page.select_option("#method", "mdav")
            page.wait_for_selector("#f_k")
            page.fill("#f_k", "5")
            seconds["run MDAV k=5 (a method)"] = _timed(
                page, lambda: page.click("#run_step"), "#step-1")
            _shoot(page, args.screenshots, "3-steps")
            page.select_option("#family", "mask")
            page.wait_for_selector("#f_gamma")
            seconds["download tab (writes the release and reports)"] = _timed(
                page, lambda: page.click("text=5 · Download"), "#release-report")
            _shoot(page, args.screenshots, "5-download")
            with page.expect_download() as download:
                start = time.perf_counter()
                page.click("#dl_recipe")
            download.value.path()
            seconds["download the recipe"] = round(time.perf_counter() - start, 3)
            page.click("text=3 · Steps")
            seconds["undo"] = _timed(page, lambda: page.click("#undo"),
                                     "#steps_table p")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    actions = {k: v for k, v in seconds.items() if "method" not in k or "form" in k}
    print(json.dumps({"data": "adult", "rows": rows, "seconds": seconds,
                      "slowest_action_without_a_method": max(actions, key=actions.get),
                      "slowest_seconds": max(actions.values())}, indent=2))


if __name__ == "__main__":
    main()
