"""How fast the web app answers on UCI Adult (32,561 rows): the time from each action that does
not run a method (upload, a role changed, a domain or an ARX hierarchy applied, a tab or a
risk view opened, an l-diversity setting changed, a method's form, undo, the downloads
written) until the page has its new content and the server is idle, in headless Chromium;
and the time of what runs methods (the DP preview, MDAV with k = 5 on the nine usual keys,
the comparison of methods for categorical keys). Beside each time, the CPU time the server
process spent on the action (user and system, every thread; read from /proc, so on Linux
only): on a machine shared with other work the wall time grows with the load, the CPU time
hardly. Prints one JSON object; ``--screenshots DIR`` also saves the main screens (the
README's), one of them with a step's progress bar.

Usage: MICROAGG_DATA=../shared/datasets python benchmarks/bench_ui.py [--screenshots DIR]
       [--port 8799] [--chromium /usr/bin/chromium] [--risk-only]

``--risk-only`` stops after the risk tab's views: the upload, the data tab and the risk tab,
in about a minute.
"""

from __future__ import annotations

import argparse
import json
import os
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


CPU: dict[str, float] = {}
"""The server's CPU seconds for each action timed, by the action's name (filled by
:func:`_timed` once :data:`SERVER` is set)."""
SERVER: list[int] = []
"""The process id of the server measured."""


def _cpu_seconds(pid: int) -> float | None:
    """The CPU time (user and system, all threads) of process ``pid`` so far, ``None``
    where /proc does not say."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(page, action: Callable[[], None], ready: str, name: str = "") -> float:
    """Seconds from ``action`` until the selector ``ready`` is there and the server idle;
    the server's CPU seconds meanwhile go to :data:`CPU` under ``name``."""
    page.evaluate(ARM, [ready, IDLE])
    before = _cpu_seconds(SERVER[0]) if SERVER else None
    action()
    page.wait_for_function("window.benchDone !== null", polling=50)
    after = _cpu_seconds(SERVER[0]) if SERVER else None
    if name and before is not None and after is not None:
        CPU[name] = round(after - before, 2)
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
    parser.add_argument("--risk-only", action="store_true",
                        help="stop after the risk tab's views (no method runs)")
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
    SERVER.append(server.pid)
    seconds: dict[str, float] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium)
            page = browser.new_page(viewport={"width": 1400, "height": 1000},
                                    accept_downloads=True)
            page.set_default_timeout(300_000)

            def timed(name: str, action: Callable[[], object], ready: str) -> None:
                seconds[name] = _timed(page, action, ready, name)

            page.goto(f"http://127.0.0.1:{args.port}")
            page.wait_for_function(IDLE)
            timed("upload and read", lambda: page.set_input_files("#upload", str(data)),
                  "#role_0")
            for column, role in ROLES.items():
                timed(f"role of {column}", lambda c=column, r=role: page.select_option(
                      f"#role_{names.index(c)}", r), "#loaded-text")
            page.select_option("#detail_column", "age")
            page.fill("#detail_domain", "17, 90")
            timed("a column's domain applied", lambda: page.click("#detail_apply"),
                  "#declared li[data-column='age']")
            for column in HIERARCHIES:
                page.select_option("#detail_column", column)
                page.fill("#detail_domain", "")
                page.evaluate("document.querySelector('#detail_taxonomy_progress "
                              ".progress-bar').innerText = ''")  # see this upload end
                page.set_input_files("#detail_taxonomy", str(
                    hierarchies / f"adult_hierarchy_{column}.csv"))
                page.wait_for_function("document.querySelector('#detail_taxonomy_progress')"
                                       ".innerText.includes('Upload complete')")
                timed(f"ARX hierarchy of {column} applied",
                      lambda: page.click("#detail_apply"),
                      f"#declared li[data-column='{column}']")
            _shoot(page, args.screenshots, "1-data")
            timed("risk tab", lambda: page.click("text=2 · Risk"), "#box_0")
            _shoot(page, args.screenshots, "2-risk")
            timed("SUDA2 view (its search begun in the background)",
                  lambda: page.click("text=SUDA2: special uniques"), "#suda-contributions")
            _shoot(page, args.screenshots, "2-risk-suda")
            timed("SUDA2 again, another DIS fraction",
                  lambda: (page.fill("#dis_fraction", "0.02"), page.keyboard.press("Tab")),
                  "#suda-contributions")
            page.fill("#dis_fraction", "0.01")
            page.keyboard.press("Tab")
            page.wait_for_function(IDLE)
            timed("SUDA2 view, missing keys read as a category (a new search)",
                  lambda: page.select_option("#missing_semantics", "category"),
                  "#suda-contributions")
            page.select_option("#missing_semantics", "matches-any")
            page.wait_for_function(IDLE)
            timed("l-diversity view", lambda: page.click("text=l-diversity"), "#l_smallest")
            timed("l-diversity: another sensitive attribute",
                  lambda: page.select_option("#sensitive", "capital-gain"), "#l_smallest")
            timed("l-diversity: entropy", lambda: page.select_option("#l_kind", "entropy"),
                  "#l_smallest")
            page.select_option("#l_kind", "distinct")
            page.select_option("#sensitive", "income")
            page.wait_for_function("document.querySelector('#l_smallest').innerText"
                                   ".includes('distinct l-diversity of income')")
            _shoot(page, args.screenshots, "2-risk-l-diversity")
            timed("record risk view", lambda: page.click("text=Record risk"), "#top_risk")
            if args.risk_only:
                browser.close()
                _report(rows, seconds)
                return
            timed("steps tab", lambda: page.click("text=3 · Steps"), "#f_k")
            timed("method form (vmdav)", lambda: page.select_option("#method", "vmdav"),
                  "#f_gamma")
            page.select_option("#family", "dp")
            page.wait_for_selector("#preview")
            page.fill("#f_epsilon", "1")
            page.fill("#f_k", "1000")
            page.locator("#f_columns-selectized").fill("age")
            page.keyboard.press("Enter")
            page.locator("#f_columns-selectized").fill("hours-per-week")
            page.keyboard.press("Enter")
            page.fill("#f_bounds", "age=17:90, hours-per-week=1:99")
            timed("DP preview (runs the method on a public stand-in)",
                  lambda: page.click("#preview"), "#preview-ledger")
            _shoot(page, args.screenshots, "4-dp-preview")
            page.select_option("#family", "microaggregate")
            page.wait_for_selector("#f_k")
            page.select_option("#method", "mdav")
            page.wait_for_selector("#f_k")
            page.fill("#f_k", "5")
            timed("run MDAV k=5 (a method)",
                  lambda: _run_with_progress(page, args.screenshots), "#step-1")
            _shoot(page, args.screenshots, "3-steps")
            timed("compare tab", lambda: page.click("text=4 · Compare"), "#run_compare")
            timed("compare: categorical keys mode",
                  lambda: page.check("input[name='compare_mode'][value='keys']"), "#key_target")
            for method in ("local-suppression", "global-recoding"):
                page.check(f"input[name='key_methods'][value='{method}']")
            page.fill("#key_widths", "age=5")
            page.fill("#compare_seeds", "2")
            timed("compare methods for keys at local-suppression=5 (runs methods)",
                  lambda: page.click("#run_compare"), "#comparison-summary")
            _shoot(page, args.screenshots, "4-compare-keys")
            page.click("text=3 · Steps")
            page.select_option("#family", "mask")
            page.wait_for_selector("#f_gamma")
            timed("download tab (writes the release and reports)",
                  lambda: page.click("text=5 · Download"), "#release-report")
            _shoot(page, args.screenshots, "5-download")
            with page.expect_download() as download:
                start = time.perf_counter()
                page.click("#dl_recipe")
            download.value.path()
            seconds["download the recipe"] = round(time.perf_counter() - start, 3)
            page.click("text=3 · Steps")
            timed("undo", lambda: page.click("#undo"), "#no-steps")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    _report(rows, seconds)


def _report(rows: int, seconds: dict[str, float]) -> None:
    """Print the times, the CPU times and the slowest action that runs no method."""
    actions = {k: v for k, v in seconds.items()
               if "runs" not in k and "(a method)" not in k}
    print(json.dumps({"data": "adult", "rows": rows, "seconds": seconds, "cpu_seconds": CPU,
                      "slowest_action_without_a_method": max(actions, key=actions.get),
                      "slowest_seconds": max(actions.values())}, indent=2))


if __name__ == "__main__":
    main()
