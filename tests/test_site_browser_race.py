"""Browser tests of "Race your browser": the race's model trained in Chromium on WebGPU (SwiftShader) and WebAssembly."""

import json
import math
import re
from urllib.parse import urlparse

import jsonschema
import pytest
from test_site_yours import Watched

from build_hooks import store
from scripts.bench_browser_race import OVER  # everything about the run is said

DATA = re.compile(r'(<script type="application/json" id="race-data">)(.*?)(</script>)', re.S)
LIBRARY = ("vendor/tfjs/", "browser-race.js")
WIDTH = 32


def with_plan(**changes):
    """Serve the race page with its browser plan changed (SwiftShader is slow: fewer, smaller steps)."""
    def rewrite(html):
        def change(match):
            data = json.loads(match.group(2))
            data["browser"].update(changes)
            text = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            return match.group(1) + text + match.group(3)
        return DATA.sub(change, html)
    return rewrite


# Batches 8 and 16 of the quick plan's 512 rows: a few seconds an epoch on SwiftShader, not 13 s at batch 1.
SMALL = {"batches": [8, 16], "widths": [WIDTH], "min_rounds": 3, "max_rounds": 3, "budget_s": 60}




def race_the_browser(watched, timeout_s=240):
    page = watched.page
    page.locator("#browser-start").click()
    page.wait_for_function(OVER, timeout=timeout_s * 1000)


def downloaded(page):
    with page.expect_download() as download:
        page.locator("#browser-download").click()
    return json.loads(open(download.value.path()).read())


def shown_time(page, lane_id, batch):
    """Start the race at this batch; the lane's displayed time in seconds."""
    batches = json.loads(page.locator("#race-data").text_content())["batches"]
    page.locator("#race-batch").fill(str(batches.index(batch)))
    page.locator("#race-width").select_option(str(WIDTH))
    page.get_by_role("button", name="Start", exact=True).click()
    return float(page.locator(f'[data-lane="{lane_id}"] .race-lane__time').get_attribute("data-seconds"))


def on_site_only(watched):
    """No request left 127.0.0.1 (a downloaded file is a local blob, not a request off the site)."""
    assert all(urlparse(u).hostname == "127.0.0.1" for u in watched.requests if not u.startswith("blob:")), watched.requests
    assert watched.errors == []


@pytest.fixture(scope="module")
def raced(browser, site_url):
    """One browser race with WebGPU, kept open for the tests that read it."""
    watched = Watched(browser, site_url, rewrite=with_plan(**SMALL))
    before = list(watched.requests)
    race_the_browser(watched)
    yield {"watched": watched, "before": before, "doc": downloaded(watched.page)}
    watched.page.close()


def test_training_runs_in_a_worker_never_on_the_page(raced):
    """The page itself never loads TensorFlow.js: every step ran in the worker, so no epoch could hold the page
    (the longest task with one competing process is scripts/bench_browser_race.py's to measure and report)."""
    page = raced["watched"].page
    assert page.evaluate("typeof window.tf") == "undefined" and page.evaluate("typeof window.crossoverTrain") == "undefined"
    assert "worker" not in page.locator("#browser-problem").text_content()


def test_nothing_of_the_library_loads_before_the_button_is_pressed(raced):
    """The race page requests no TensorFlow.js file and no browser-race module until the reader presses the button."""
    assert not [u for u in raced["before"] if any(part in u for part in LIBRARY)]
    assert [u for u in raced["watched"].requests if "vendor/tfjs/tf.es2017.min.js" in u]


def test_both_browser_lanes_join_with_the_times_the_page_measured(raced):
    """The GPU (WebGPU, adapter named) and CPU (WebAssembly, 1 thread) lanes join; the race replays the run's medians."""
    page, doc = raced["watched"].page, raced["doc"]
    assert raced["watched"].page.locator("#browser-problem").text_content() == ""
    names = page.locator(".race-lane--yours .race-lane__name").all_text_contents()
    adapter = doc["machine_info"]["gpu"]["name"]
    assert adapter and any(f"Your browser: GPU (WebGPU, {adapter}" in n for n in names), names
    assert any("Your browser: CPU (WebAssembly, 1 thread)" in n for n in names), names
    points = {(b["params"]["device"], b["params"]["batch"]): b for b in doc["benchmarks"]}
    assert set(points) == {(d, b) for d in ("webgpu", "wasm") for b in SMALL["batches"]}
    for (device, batch), bench in points.items():
        stats = bench["stats"]
        assert len(stats["data"]) == 3 and all(math.isfinite(s) and s > 0 for s in stats["data"])
        assert math.isfinite(bench["extra_info"]["loss"]) and bench["extra_info"]["loss"] > 0
        assert shown_time(page, f"yours-browser-{device}", batch) == stats["median"]
    verdict = page.locator("#browser-verdict").text_content()
    software = doc["machine_info"]["gpu"]["fallback_adapter"]
    assert software or "swiftshader" not in adapter.lower()  # SwiftShader is a CPU emulating a GPU
    assert verdict.startswith("Your browser's GPU is a software emulation") == software, verdict
    assert f"In your browser, at width {WIDTH}: " in verdict
    status = page.locator("#browser-status").text_content()  # browser and date as a reader names them
    assert re.search(r"in Chrome \d+ on Linux", status) and "Mozilla" not in status, status
    assert not re.search(r"\d{4}-\d\d-\d\dT", status), status
    on_site_only(raced["watched"])


def test_the_downloaded_file_is_in_the_schema_names_its_stack_and_is_not_a_build_file(raced, tmp_path):
    """The file passes the build's schema, its provenance says TensorFlow.js and the browser, and the build refuses it."""
    doc = raced["doc"]
    jsonschema.Draft202012Validator(store.schema()).validate(doc)
    assert doc["software"]["stack"] == "tensorflow.js" and doc["software"]["tfjs"] == "4.22.0"
    assert "Chrome" in doc["software"]["browser"]
    path = tmp_path / "browser.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(store.ResultsError) as err:
        store.load(path)
    assert err.value.field == "$.software.stack"


def test_the_downloaded_file_is_accepted_again_by_add_your_machine(raced, browser, site_url, tmp_path):
    """'Add your machine' takes the browser's file back: its two lanes join, named as the browser run's were."""
    path = tmp_path / "crossover-browser.json"
    path.write_text(json.dumps(raced["doc"]))
    watched = Watched(browser, site_url)
    assert watched.add(path) == ""
    names = watched.page.locator(".race-lane--yours .race-lane__name").all_text_contents()
    assert len(names) == 2 and any("Your browser: CPU (WebAssembly, 1 thread)" in n for n in names)
    assert "file crossover-browser.json" in watched.page.locator("#race-lanes .race-lane__provenance").text_content()
    on_site_only(watched)
    watched.page.close()


def test_the_browsers_own_file_added_again_replaces_its_lanes(raced, browser, site_url, tmp_path):
    """Adding the browser's downloaded file beside its kept run leaves two lanes, not a second identical pair."""
    path = tmp_path / "crossover-browser.json"
    text = json.dumps(raced["doc"])
    path.write_text(text)
    watched = Watched(browser, site_url)
    watched.page.evaluate("value => localStorage.setItem('crossover.browser.v1', value)",
                          json.dumps({"text": text, "name": "crossover-browser.json"}))
    watched.open()
    watched.page.wait_for_selector('[data-lane="yours-browser-webgpu"]')
    assert watched.add(path) == ""
    names = watched.page.locator(".race-lane--yours .race-lane__name").all_text_contents()
    assert len(names) == 2 and len(set(names)) == 2, names
    on_site_only(watched)
    watched.page.close()


def test_keep_and_forget_work_for_the_browser_run(raced):
    """Kept, the browser's lanes survive a reload; forgotten, they are gone and stay gone."""
    watched = raced["watched"]
    page = watched.page
    page.locator("#browser-keep").check()
    watched.open()
    page.wait_for_selector('[data-lane="yours-browser-webgpu"]')
    assert "Restored from this browser" in page.locator("#browser-status").text_content()
    assert page.locator("#browser-keep").is_checked()
    page.get_by_role("button", name="Forget my browser's lanes").click()
    assert page.locator(".race-lane--yours").count() == 0
    watched.open()
    assert page.locator(".race-lane--yours").count() == 0 and not page.locator("#browser-keep").is_checked()
    on_site_only(watched)


def test_without_webgpu_the_page_says_so_and_races_the_cpu(browser, site_url):
    """With navigator.gpu removed the page says there is no WebGPU and only the WebAssembly lane joins;
    a time box too short for a second round measures one round instead of running long."""
    watched = Watched(browser, site_url, init_script="delete Navigator.prototype.gpu",
                      rewrite=with_plan(**{**SMALL, "min_rounds": 1, "budget_s": 0.01}))
    race_the_browser(watched)
    page = watched.page
    assert "offers no WebGPU" in page.locator("#browser-problem").text_content()
    names = page.locator(".race-lane--yours .race-lane__name").all_text_contents()
    assert len(names) == 1 and "Your browser: CPU (WebAssembly, 1 thread)" in names[0]
    doc = downloaded(page)
    assert {len(b["stats"]["data"]) for b in doc["benchmarks"]} == {1}
    assert doc["machine_info"]["gpu"] is None
    assert "only the CPU lane ran" in page.locator("#browser-verdict").text_content()
    on_site_only(watched)
    watched.page.close()


FAKE_ADAPTER = """Object.defineProperty(Navigator.prototype, "gpu", {get: () => ({
  requestAdapter: async () => ({info: {description: 42, vendor: {}, architecture: null}, features: new Set(),
                                limits: {}, requestDevice: async () => { throw new Error("a fake adapter"); }}),
  getPreferredCanvasFormat: () => "bgra8unorm"})})"""


def test_without_a_worker_the_page_trains_and_an_odd_adapter_still_races_the_cpu(browser, site_url):
    """Where no worker can start, the race runs on the page and says so; there, a WebGPU adapter whose description is
    not a string (and whose device never starts) breaks nothing: the WebAssembly lane joins, no script error is thrown."""
    watched = Watched(browser, site_url, init_script=FAKE_ADAPTER + "; delete window.Worker;",
                      rewrite=with_plan(**{**SMALL, "min_rounds": 1, "budget_s": 0.01}))
    race_the_browser(watched)
    names = watched.page.locator(".race-lane--yours .race-lane__name").all_text_contents()
    assert any("CPU (WebAssembly" in name for name in names), names
    assert "could not start a worker, so the race ran on the page" in watched.page.locator("#browser-problem").text_content()
    assert not [e for e in watched.errors if "is not a function" in e], watched.errors
    watched.page.close()


def test_stop_keeps_what_was_finished(browser, site_url):
    """Stop ends the run and says so; whatever joined has fewer rounds than planned."""
    watched = Watched(browser, site_url, rewrite=with_plan(**{**SMALL, "min_rounds": 5, "max_rounds": 5}))
    page = watched.page
    page.locator("#browser-start").click()
    page.wait_for_function("document.getElementById('browser-eta').textContent.includes(' left')", timeout=120_000)
    page.locator("#browser-stop").click()
    # How soon is scripts/bench_browser_race.py's to report (a timing here would measure the suite's load).
    page.wait_for_function("!document.getElementById('browser-start').disabled", timeout=120_000)
    page.wait_for_function(OVER, timeout=120_000)
    assert "Stopped" in page.locator("#browser-problem").text_content()
    if page.locator("#browser-download").is_visible():
        doc = downloaded(page)
        assert max(len(b["stats"]["data"]) for b in doc["benchmarks"]) < 5
        reached = sorted({b["params"]["batch"] for b in doc["benchmarks"]})
        said = f"batch {reached[0]}" if len(reached) == 1 else f"batches {reached[0]} to {reached[-1]}"
        assert f"({said}, " in page.locator("#browser-status").text_content()  # where it stopped, not the plan
    on_site_only(watched)
    watched.page.close()


def test_race_lanes_are_told_apart_by_more_than_colour(browser, site_url):
    """Every chart line has its own colour class and dash pattern, a letter at its end, and a legend entry naming it."""
    watched = Watched(browser, site_url)
    page = watched.page
    if page.locator("#race-machine").is_visible():  # every machine's lanes, not only the measured GPU's pair
        page.locator("#race-machine").select_option("")
    page.locator("#race-width").select_option(str(WIDTH))
    lines = page.locator("#race-chart path.race-chart__line")
    assert lines.count() >= 3
    styles = [(lines.nth(i).get_attribute("class"), lines.nth(i).get_attribute("stroke-dasharray") or "")
              for i in range(lines.count())]
    assert len({c for c, _ in styles}) == len(styles) and len({d for _, d in styles}) == len(styles), styles
    ends = page.locator("#race-chart text.race-chart__end")
    letters = ends.all_text_contents()
    assert ends.count() == lines.count() and len(set(letters)) == len(letters)
    legend = page.locator("#race-chart-legend li").all_text_contents()
    for letter in letters:
        assert any(item.strip().startswith(letter + ": ") for item in legend), (letter, legend)
    for i in range(lines.count()):  # each letter sits at its own line's end, beside it
        lane = lines.nth(i).get_attribute("data-lane")
        assert page.locator(f'#race-chart text.race-chart__end[data-lane="{lane}"]').count() == 1
    on_site_only(watched)
    watched.page.close()


def test_a_device_too_slow_for_the_box_leaves_batches_out_and_stops_after_two_rounds(browser, site_url):
    """Past the two largest batches, a smaller one that would not fit the box is left out, and the page says so; when
    a third round would overrun twice the box, the run keeps two rounds (a spread) and stops."""
    watched = Watched(browser, site_url, init_script="delete Navigator.prototype.gpu",
                      rewrite=with_plan(**{**SMALL, "batches": [4, *SMALL["batches"]], "min_rounds": 3, "max_rounds": 5,
                                           "budget_s": 0.001}))
    race_the_browser(watched)
    doc = downloaded(watched.page)
    assert {len(b["stats"]["data"]) for b in doc["benchmarks"]} == {2}
    assert sorted(b["params"]["batch"] for b in doc["benchmarks"]) == SMALL["batches"]
    assert "To fit the time box, batch 4 was left out." in watched.page.locator("#browser-problem").text_content()
    on_site_only(watched)
    watched.page.close()


def test_when_two_batches_still_overrun_the_box_the_smaller_is_timed_on_part_of_each_epoch(browser, site_url):
    """With only two batches and a box too short for their whole epochs, the smaller batch is timed on part of each
    epoch and scaled; the page and the file's note say which batch, on how many of its steps."""
    watched = Watched(browser, site_url, init_script="delete Navigator.prototype.gpu",
                      rewrite=with_plan(**{**SMALL, "batches": [1, 16], "min_rounds": 2, "max_rounds": 2,
                                           "budget_s": 0.001}))
    steps = json.loads(watched.page.locator("#race-data").text_content())["browser"]["rows"]  # at batch 1
    race_the_browser(watched)
    said = f"batch 1 was timed on 32 of its {steps} steps per epoch, each epoch scaled from them"
    assert f"To fit the time box, {said}." in watched.page.locator("#browser-problem").text_content()
    doc = downloaded(watched.page)
    assert said in doc["experiments"]["epoch_time"]["note"]
    assert sorted(b["params"]["batch"] for b in doc["benchmarks"]) == [1, 16]
    assert {len(b["stats"]["data"]) for b in doc["benchmarks"]} == {2}
    assert next(b for b in doc["benchmarks"] if b["params"]["batch"] == 1)["extra_info"]["steps"] == steps
    on_site_only(watched)
    watched.page.close()


def test_while_it_runs_the_page_names_the_running_backend_and_lanes_join_size_by_size(browser, site_url):
    """Once epochs run, the status no longer says 'Loading', the progress names the backend about to run, and both
    lanes join as soon as the first size has run on both, while the run goes on."""
    watched = Watched(browser, site_url, rewrite=with_plan(**{**SMALL, "min_rounds": 2, "max_rounds": 2}))
    page = watched.page
    page.locator("#browser-start").click()
    page.wait_for_function("document.getElementById('browser-eta').textContent.includes(' left')", timeout=120_000)
    assert "Loading" not in page.locator("#browser-status").text_content()
    assert re.search(r"^Round \d of \d: batch \d+ on (WebGPU|WebAssembly)", page.locator("#browser-eta").text_content())
    page.wait_for_function("document.querySelectorAll('.race-lane--yours').length === 2", timeout=120_000)
    assert page.locator("#browser-start").is_disabled()  # still running
    # The largest batch runs first: the shortest epochs.
    assert f"So far: batch {SMALL['batches'][-1]}; the run goes on." in page.locator("#browser-status").text_content()
    page.locator("#browser-stop").click()
    page.wait_for_function(OVER, timeout=120_000)
    on_site_only(watched)
    watched.page.close()
