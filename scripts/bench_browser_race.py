"""Time "Race your browser" as a reader meets it: headless Chromium (WebGPU by SwiftShader) on the built site.

    python scripts/bench_browser_race.py [--busy N] [--runs K] [--site DIR]

With N competing busy processes (default 1: the issue's "one competing busy process"), it presses the button
K times (default 1) and reports, per run: seconds until both lanes first show, seconds until the run is over,
the longest task that held the page (the Long Tasks API, from the press on), and how long Stop took when pressed
in a second run. A report, not a test: timings on a shared machine are only meaningful when it is otherwise idle.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scripts.screenshot import CHROMIUM, CHROMIUM_ARGS, ROOT, serve  # noqa: E402

LONG_TASKS = """window.__longTasks = [];
new PerformanceObserver(function (list) {
  list.getEntries().forEach(function (e) { window.__longTasks.push([e.startTime, e.duration]); });
}).observe({type: "longtask", buffered: true});"""
BOTH_LANES = "document.querySelectorAll('.race-lane--yours').length >= 2"
OVER = "!document.getElementById('browser-start').disabled"


def busy() -> None:
    while True:
        pass


def one_run(browser, url: str) -> dict:
    page = browser.new_page()
    page.add_init_script(LONG_TASKS)
    page.goto(url)
    page.wait_for_selector("#browser-start:not([disabled])")
    pressed = page.evaluate("performance.now()")
    page.locator("#browser-start").click()
    page.wait_for_function(BOTH_LANES, timeout=600_000, polling=100)
    lanes = page.evaluate("performance.now()")
    page.wait_for_function(OVER, timeout=600_000, polling=100)
    over = page.evaluate("performance.now()")
    tasks = [d for start, d in page.evaluate("window.__longTasks") if start >= pressed]
    page.close()
    return {"lanes_s": (lanes - pressed) / 1000, "over_s": (over - pressed) / 1000,
            "longest_task_ms": max(tasks, default=0)}


def stop_latency(browser, url: str) -> float:
    """Milliseconds from pressing Stop mid-epoch to the page being ready for another run."""
    page = browser.new_page()
    page.goto(url)
    page.locator("#browser-start").click()
    page.wait_for_function("document.getElementById('browser-eta').textContent.includes(' left')", timeout=600_000)
    pressed = page.evaluate("performance.now()")
    page.locator("#browser-stop").click()
    page.wait_for_function(OVER, timeout=600_000, polling=10)
    took = page.evaluate("performance.now()") - pressed
    page.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=1)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--site", type=Path, default=ROOT / "site")
    args = parser.parse_args()
    if not (args.site / "race" / "index.html").exists():
        sys.exit(f"no built race page under {args.site}: run 'make site' (or pass --site)")
    hogs = [multiprocessing.Process(target=busy, daemon=True) for _ in range(args.busy)]
    for hog in hogs:
        hog.start()
    server, base = serve(args.site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            print(f"{args.busy} busy process(es); {multiprocessing.cpu_count()} cores")
            print(f"{'run':>3} {'both lanes':>11} {'run over':>9} {'longest task':>13}")
            for run in range(1, args.runs + 1):
                r = one_run(browser, base + "race/")
                print(f"{run:>3} {r['lanes_s']:>10.1f}s {r['over_s']:>8.1f}s {r['longest_task_ms']:>11.0f}ms")
            print(f"Stop to ready: {stop_latency(browser, base + 'race/'):.0f} ms")
            browser.close()
    finally:
        server.shutdown()
        for hog in hogs:
            hog.terminate()


if __name__ == "__main__":
    main()
