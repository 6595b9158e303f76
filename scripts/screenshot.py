"""Screenshot built pages in headless Chromium, light and dark: look before you ship.

    python scripts/screenshot.py [page ...]    # e.g. batch-size/ (default: every built page);
                                               # 375 px and 1280 px wide, light and dark
    python scripts/screenshot.py --race [batch ...]   # the race after it ran (default 1 64 512)
Writes PNGs to screenshots/ (ignored by git). Serves site/ on 127.0.0.1 itself.
"""

from __future__ import annotations

import functools
import http.server
import json
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
# --enable-unsafe-webgpu: headless Chromium then offers WebGPU (served by SwiftShader, a CPU
# emulation: slow, but the same code path), so "Race your browser" can be tested.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--enable-unsafe-webgpu"]


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@contextmanager
def browsing():
    """Headless Chromium pointed at the built site: yields (browser, base URL, output folder)."""
    out = ROOT / "screenshots"
    out.mkdir(exist_ok=True)
    server, base = serve(ROOT / "site")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser, base, out
            browser.close()
    finally:
        server.shutdown()


def race(batches: list[int]) -> None:
    """Screenshots of the race after it finishes at each batch size, light and dark."""
    with browsing() as (browser, base, out):
        for scheme in ("light", "dark"):
            page = browser.new_page(viewport={"width": 1280, "height": 1100}, color_scheme=scheme,
                                    reduced_motion="reduce")
            page.goto(base + "race/")
            known = json.loads(page.locator("#race-data").text_content())["batches"]
            for batch in batches:
                page.locator("#race-batch").fill(str(known.index(batch)))
                page.get_by_role("button", name="Start").click()
                page.locator("#race").screenshot(path=out / f"race-b{batch}-{scheme}.png")
                print(out / f"race-b{batch}-{scheme}.png")


WIDTHS = {"phone": 375, "desktop": 1280}


def main(pages: list[str]) -> None:
    """Full-page screenshots of `pages`, on a phone and a desktop, light and dark."""
    with browsing() as (browser, base, out):
        for screen, width in WIDTHS.items():
            for scheme in ("light", "dark"):
                page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                        is_mobile=screen == "phone", has_touch=screen == "phone")
                for path in pages:
                    page.goto(base + path)
                    name = path.strip("/").replace("/", "_") or "index"
                    target = out / f"{name}-{screen}-{scheme}.png"
                    page.screenshot(path=target, full_page=True)
                    print(target)
                page.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--race"]:
        race([int(b) for b in sys.argv[2:]] or [1, 64, 512])
    else:
        built = sorted(str(p.parent.relative_to(ROOT / "site")) + "/" for p in (ROOT / "site").rglob("index.html"))
        main(sys.argv[1:] or [p.removeprefix("./") for p in built if p != "404/"])
