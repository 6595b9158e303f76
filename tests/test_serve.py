"""`mkdocs serve` on an unmeasured checkout: pages at once, this machine joins as it is measured, Ctrl-C ends both."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

import pytest
from playwright.sync_api import Error as PlaywrightError

from build_hooks import experiments
from conftest import MKDOCS, ROOT, quick_env

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return None


def opened(page, url: str) -> bool:
    """Whether `url` loaded in `page`: a request made while the server rebuilds waits for the build, so may time out."""
    try:
        response = page.goto(url, timeout=60_000)
    except PlaywrightError:
        return False
    return response is not None and response.ok


def wait_for(check, timeout_s: float, every_s: float = 1.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every_s)
    return None


def test_serve_answers_at_once_and_this_machine_joins_while_it_is_measured(browser, tmp_path):
    """With nothing measured, serve answers from the committed results with a banner saying this machine is being
    measured; a lane of this machine (its quick-mode epochs) appears on the race page while serving; Ctrl-C (SIGINT
    to the terminal's process group) ends server and measurer, leaves no process, and keeps what finished."""
    cache = tmp_path / "cache"
    quick_rows = experiments.declared("epoch_time")["QUICK"]["rows"]  # committed files are full mode: other rows
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    log = (tmp_path / "serve.log").open("w")
    began = time.monotonic()
    server = subprocess.Popen([*MKDOCS, "serve", "--livereload", "--dev-addr", f"127.0.0.1:{port}"], cwd=ROOT,
                              env={**quick_env(cache), "PYTHONFAULTHANDLER": "1"}, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True,  # its own process group, as a terminal gives it
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        home = wait_for(lambda: get(url), 300)
        answered_s = time.monotonic() - began
        assert home, (tmp_path / "serve.log").read_text()[-3000:]
        assert "This machine is being measured" in home and "experiments done" in home
        print(f"home page answered after {answered_s:.0f} s")  # reported, not asserted: a timing depends on load

        # The race page stays open, as a reader's would: live reload replaces it each time an experiment lands.
        page = browser.new_page()
        assert wait_for(lambda: opened(page, url + "race/"), 300, every_s=3), "the race page never loaded"

        def host_lane():
            try:
                data = page.evaluate("document.getElementById('race-data')?.textContent ?? null")
            except PlaywrightError:  # read while live reload replaced the page: not yet
                return None
            lanes = json.loads(data)["lanes"] if data else []
            return [lane for lane in lanes if not lane["estimate"] and any(
                point["rows"] == quick_rows for by_batch in lane["epochs"].values() for point in by_batch.values())]
        assert wait_for(host_lane, 300, every_s=3), (tmp_path / "serve.log").read_text()[-3000:]
        page.close()
    finally:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(90)
        except subprocess.TimeoutExpired:
            server.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack into the log
            time.sleep(2)
            os.killpg(server.pid, signal.SIGKILL)
            pytest.fail("serve outlived Ctrl-C by 90 s:\n" + (tmp_path / "serve.log").read_text()[-6000:])
    assert wait_for(lambda: not _group_alive(server.pid), 30), "a process of the server's group outlived Ctrl-C"
    kept = json.loads(next(cache.glob("*.quick.json")).read_text())
    assert "epoch_time" in kept["experiments"]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
