"""How fast the web app answers on UCI Adult (32,561 rows): the time from each action that does
not run a method (upload, a role changed, a domain or an ARX hierarchy applied, a tab or a
risk view opened, an l-diversity setting changed, a method's form, undo, the downloads
written) until the page has its new content and the server is idle, in headless Chromium;
and the time of what runs methods (the DP preview, MDAV with k = 5 on the nine usual keys,
the comparison of methods for categorical keys). Prints one JSON object; ``--screenshots
DIR`` also saves the main screens (the README's), one of them with a step's progress bar.

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
HIERARCHIES = ("workclass", "education", "marital-status", "occupation", "race",
               "native-country")
"""The keys whose ARX hierarchy (reference data, hierarchies/) is uploaded as a taxonomy."""


ARM = """([ready, idle]) => {
  window.benchDone = null;
  let busy = false;
  $(document).one('shiny:busy', () => { busy = true; });
  const start = performance.now();
  const check = () => {
    const settled = busy || performance.now() - start > 150;  // nothing to recompute
    if (settled && document.querySelector(ready) && eval(idle)) {
      window.benchDone = (performance.now() - start) / 1000;
    } else {
      setTimeout(check, 5);
    }
  };
  setTimeout(check, 5);
}"""
"""Times in the page: from just before the action until the server has been busy with it (or
150 ms have passed: an input that invalidates nothing) and is idle again, the selector is
there and no visible output is recalculating (the browser's clock: a harness polling from
outside adds up to half a second on a loaded machine)."""


def _timed(page, action: Callable[[], None], ready: str) -> float:
    """Seconds from ``action`` until the selector ``ready`` is there and the server idle."""
    page.evaluate(ARM, [ready, IDLE])
    action()
    page.wait_for_function("window.benchDone !== null", polling=50)
    return round(page.evaluate("window.benchDone"), 3)


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


def _run_with_progress(page, folder: Path | None) -> None:
    """Run the step; with ``folder``, a screenshot of its progress bar past 20 %."""
    page.click("#run_step")
    if folder is not None:
        page.wait_for_function("Array.from(document.querySelectorAll('.shiny-notification "
                               ".progress-message')).some(e => /([2-9]\\d|100) %/"
                               ".test(e.innerText))", polling=20)
        page.screenshot(path=str(folder / "3-steps-progress.png"))


def _shoot(page, folder: Path | None, name: str) -> None:
    if folder is not None:
        page.wait_for_function(IDLE, polling=50)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
        page.wait_for_timeout(300)  # the page back to its size redraws its plots
        page.wait_for_function(IDLE, polling=50)


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
    from microagg import datasets

    found = datasets.data_dir("hierarchies/adult_hierarchy_education.csv")
    if found is None:
        raise SystemExit("the Adult hierarchies are not in the reference data (MICROAGG_DATA)")
    hierarchies = found / "hierarchies"
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
            page.select_option("#detail_column", "age")
            page.fill("#detail_domain", "17, 90")
            seconds["a column's domain applied"] = _timed(
                page, lambda: page.click("#detail_apply"), "#declared li[data-column='age']")
            for column in HIERARCHIES:
                page.select_option("#detail_column", column)
                page.fill("#detail_domain", "")
                page.evaluate("document.querySelector('#detail_taxonomy_progress "
                              ".progress-bar').innerText = ''")  # see this upload end
                page.set_input_files("#detail_taxonomy", str(
                    hierarchies / f"adult_hierarchy_{column}.csv"))
                page.wait_for_function("document.querySelector('#detail_taxonomy_progress')"
                                       ".innerText.includes('Upload complete')")
                seconds[f"ARX hierarchy of {column} applied"] = _timed(
                    page, lambda: page.click("#detail_apply"),
                    f"#declared li[data-column='{column}']")
            _shoot(page, args.screenshots, "1-data")
            seconds["risk tab"] = _timed(page, lambda: page.click("text=2 · Risk"), "#box_0")
            _shoot(page, args.screenshots, "2-risk")
            seconds["SUDA2 view (its search begun in the background)"] = _timed(
                page, lambda: page.click("text=SUDA2: special uniques"),
                "#suda-contributions")
            _shoot(page, args.screenshots, "2-risk-suda")
            seconds["SUDA2 again, another DIS fraction"] = _timed(
                page, lambda: (page.fill("#dis_fraction", "0.02"),
                               page.keyboard.press("Tab")), "#suda-contributions")
            page.fill("#dis_fraction", "0.01")
            page.keyboard.press("Tab")
            page.wait_for_function(IDLE)
            seconds["SUDA2 view, missing keys read as a category (a new search)"] = _timed(
                page, lambda: page.select_option("#missing_semantics", "category"),
                "#suda-contributions")
            page.select_option("#missing_semantics", "matches-any")
            page.wait_for_function(IDLE)
            seconds["l-diversity view"] = _timed(
                page, lambda: page.click("text=l-diversity"), "#l_smallest")
            seconds["l-diversity: another sensitive attribute"] = _timed(
                page, lambda: page.select_option("#sensitive", "capital-gain"), "#l_smallest")
            seconds["l-diversity: entropy"] = _timed(
                page, lambda: page.select_option("#l_kind", "entropy"), "#l_smallest")
            page.select_option("#l_kind", "distinct")
            page.select_option("#sensitive", "income")
            page.wait_for_function("document.querySelector('#l_smallest').innerText"
                                   ".includes('distinct l-diversity of income')")
            _shoot(page, args.screenshots, "2-risk-l-diversity")
            seconds["record risk view"] = _timed(
                page, lambda: page.click("text=Record risk"), "#top_risk")
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
                page, lambda: _run_with_progress(page, args.screenshots), "#step-1")
            _shoot(page, args.screenshots, "3-steps")
            seconds["compare tab"] = _timed(page, lambda: page.click("text=4 · Compare"),
                                            "#run_compare")
            seconds["compare: categorical keys mode"] = _timed(
                page, lambda: page.check("input[name='compare_mode'][value='keys']"),
                "#key_target")
            for method in ("local-suppression", "global-recoding"):
                page.check(f"input[name='key_methods'][value='{method}']")
            page.fill("#key_widths", "age=5")
            page.fill("#compare_seeds", "2")
            seconds["compare methods for keys at local-suppression=5 (runs methods)"] = _timed(
                page, lambda: page.click("#run_compare"), "#comparison-summary")
            _shoot(page, args.screenshots, "4-compare-keys")
            page.click("text=3 · Steps")
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
                                     "#no-steps")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    actions = {k: v for k, v in seconds.items()
               if "runs" not in k and "(a method)" not in k}
    print(json.dumps({"data": "adult", "rows": rows, "seconds": seconds,
                      "slowest_action_without_a_method": max(actions, key=actions.get),
                      "slowest_seconds": max(actions.values())}, indent=2))


if __name__ == "__main__":
    main()
