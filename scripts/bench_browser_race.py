"""Time "Race your browser" as a reader meets it: headless Chromium (WebGPU by SwiftShader) on the built site.

    python scripts/bench_browser_race.py [--busy N] [--runs K] [--site DIR]

With N competing busy processes (default 1: the issue's "one competing busy process"), it presses the button
K times (default 1) and reports, per run: seconds until both lanes first show, seconds until the run is over,
the longest task that held the page (the Long Tasks API, from the press on), and, in K more runs, how long Stop took
when pressed mid-epoch (from the click to the page being ready again, timed inside the page). A report, not a
test: timings on a shared machine are only meaningful when it is otherwise idle.
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
READY = "!document.getElementById('browser-start').disabled"  # training has ended: another run can start
OVER = "document.getElementById('browser').dataset.run === 'over'"  # and everything about the run is said


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


# Timed inside the page, from the click event to the start button's re-enabling (a mutation observer sees it as it
# happens): timed from Python, Playwright's click and polling added about 250 ms of their own under one busy process.
STOP_TIMER = """() => {
  const timing = window.__stopTiming = {};
  document.getElementById("browser-stop").addEventListener("click", function (e) { timing.clicked = e.timeStamp; },
    { capture: true, once: true });
  const start = document.getElementById("browser-start");
  new MutationObserver(function () {
    if (!start.disabled && timing.clicked !== undefined && timing.ready === undefined) timing.ready = performance.now();
  }).observe(start, { attributes: true });
}"""


def stop_latency(browser, url: str) -> float:
    """Milliseconds from a Stop click mid-epoch to the page being ready for another run (training ended)."""
    page = browser.new_page()
    page.goto(url)
    page.locator("#browser-start").click()
    page.wait_for_function("document.getElementById('browser-eta').textContent.includes(' left')", timeout=600_000)
    page.evaluate(STOP_TIMER)
    page.locator("#browser-stop").click()
    page.wait_for_function(READY, timeout=600_000)
    took = page.evaluate("window.__stopTiming.ready - window.__stopTiming.clicked")
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
            stops = [stop_latency(browser, base + "race/") for _ in range(args.runs)]
            print("Stop to ready:", ", ".join(f"{ms:.0f} ms" for ms in stops))
            browser.close()
    finally:
        server.shutdown()
        for hog in hogs:
            hog.terminate()


if __name__ == "__main__":
    main()
