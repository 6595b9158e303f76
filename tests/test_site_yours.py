"""Browser tests of "Add your machine": a reader's results file joins the race, and a hostile one harms nothing."""

import copy
import json
import re
from urllib.parse import urlparse

import pytest

from conftest import first_load, reach_box, tab

HOSTILE = '<script>window.__pwned = 1</script><img src="/pwned.png" onerror="window.__pwned = 2">'


@pytest.fixture(scope="session")
def lab_file(quick_cache) -> dict:
    """A results file written by the lab notebook itself, in quick mode, on this machine: the site build's run."""
    (path,) = quick_cache.glob("notebook/*/results/*.json")
    return {"path": path, "doc": json.loads(path.read_text())}


def epoch_median(doc, device, width, batch):
    return next(b["stats"]["median"] for b in doc["benchmarks"] if b["group"] == "epoch_time"
                and b["params"] == {"device": device, "width": width, "batch": batch, "rows": b["params"]["rows"]})


class Watched:
    """A page with every script error, console error and request recorded: a reused tab (conftest.tab) unless it
    needs an init script, which a tab keeps for life."""

    def __init__(self, browser, url, path="race/", rewrite=None, init_script=None):
        self.page = tab(browser, url, reduced_motion="reduce") if init_script is None else \
            browser.new_page(reduced_motion="reduce")
        if init_script:  # runs before the page's own scripts (e.g. to take a browser feature away)
            self.page.add_init_script(init_script)
        self.errors, self.requests = [], []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("request", lambda r: self.requests.append(r.url))
        if rewrite:  # serve this page's HTML changed (e.g. as a full-mode build)
            def serve_changed(route):
                response = route.fetch()
                route.fulfill(response=response, body=rewrite(response.text()))
            self.page.route(url + path, serve_changed)
        self.url = url + path
        self.open()

    def open(self):
        self.page.goto(self.url)
        reach_box(self.page)

    def add(self, path):
        # The file is read asynchronously: words left from an earlier add would otherwise end the wait at once.
        self.page.evaluate("for (const id of ['yours-status', 'yours-problem']) document.getElementById(id).textContent = ''")
        self.page.set_input_files("#yours-file", str(path))
        self.page.wait_for_function(
            "document.getElementById('yours-status').textContent || document.getElementById('yours-problem').textContent")
        return self.page.locator("#yours-problem").text_content()

    def check_harmless(self):
        assert self.page.evaluate("window.__pwned") is None
        assert all(urlparse(u).hostname == "127.0.0.1" for u in self.requests), self.requests
        assert self.errors == []


def race_time(page, batch, width):
    """Start the race at this batch and width; the yours lane's displayed time in seconds."""
    batches = json.loads(page.locator("#race-data").text_content())["batches"]
    page.locator("#race-batch").fill(str(batches.index(batch)))
    page.locator("#race-width").select_option(str(width))
    page.get_by_role("button", name="Start").click()
    return float(page.locator(".race-lane--yours .race-lane__time").first.get_attribute("data-seconds"))


def test_a_lab_notebook_file_joins_the_race_with_its_medians(browser, site_url, lab_file):
    """The notebook's file adds a lane marked yours whose times are the file's medians, and a chart line."""
    watched = Watched(browser, site_url)
    page = watched.page
    assert watched.add(lab_file["path"]) == ""
    assert "Added" in page.locator("#yours-status").text_content()
    lane = page.locator(".race-lane--yours")
    assert lane.count() == 1 and "yours" in lane.get_attribute("aria-label")
    assert lab_file["path"].name in page.locator("#race-lanes .race-lane__provenance").text_content()
    for batch in (1, 16):
        assert race_time(page, batch, 32) == epoch_median(lab_file["doc"], "cpu", 32, batch)
    assert page.locator("#race-chart .race-chart__line--yours").count() == 1
    assert "(yours)" in page.locator("#race-chart-caption").text_content()
    page.locator("#race-machine").select_option(label=page.locator("#race-machine option").last.text_content())
    assert "your file has no GPU results" in page.locator(".race-lane--missing").text_content()
    watched.check_harmless()
    page.close()


def test_reloading_forgets_your_machine_unless_kept(browser, site_url, lab_file):
    """Without 'keep' a reload forgets the file; kept, it survives reloads (race and gallery) until forgotten."""
    watched = Watched(browser, site_url)
    page = watched.page
    watched.add(lab_file["path"])
    watched.open()
    assert page.locator(".race-lane--yours").count() == 0
    watched.add(lab_file["path"])
    page.locator("#yours-keep").check()  # ticked after adding: the file in the race is kept
    watched.open()
    page.wait_for_selector(".race-lane--yours")
    assert page.locator("#yours-keep").is_checked()
    page.goto(site_url + "gallery/")  # the same browser keeps it for the gallery too
    page.wait_for_selector("#yours-card:not([hidden])")
    cell = page.locator("#yours-card td[data-seconds]").first
    assert float(cell.get_attribute("data-seconds")) == epoch_median(lab_file["doc"], "cpu", 32, 1)
    watched.open()
    page.wait_for_selector(".race-lane--yours")
    page.get_by_role("button", name="Forget my machine").click()
    assert page.locator(".race-lane--yours").count() == 0
    watched.open()
    assert page.locator(".race-lane--yours").count() == 0 and not page.locator("#yours-keep").is_checked()
    watched.check_harmless()
    page.close()


def _without_epochs(doc):
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["group"] != "epoch_time"]
    doc["experiments"].pop("epoch_time")
    if not doc["benchmarks"]:
        doc["experiments"] = {}
    return doc


def _first_epoch(doc):
    return next(b for b in doc["benchmarks"] if b["group"] == "epoch_time")


def _set(path, value):
    def change(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return doc
    return change


def _negative_time(doc):
    _first_epoch(doc)["stats"]["median"] = -0.5
    return doc


def _hostile_in_bad_fields(doc):
    doc["software"]["torch"] = HOSTILE  # longer than the schema allows: refused, quoted only as text
    return doc


HOSTILE_FILES = {
    # name: (how to make the file from the lab's, what the message must say)
    "not-a-results-file": (lambda doc: {"hello": HOSTILE}, "this is not a Crossover results file (it has no schema_version)"),
    "array": (lambda doc: [1, 2], "expected a JSON object"),
    "newer-schema": (_set(["schema_version"], 2), "newer Crossover"),
    "wrong-schema-field": (_set(["machine_id"], HOSTILE), "the machine id: "),
    "full-mode-on-a-quick-site": (_set(["mode"], "full"), "built in quick mode"),
    "negative-time": (_negative_time, "its median in its statistics: -0.5 is below the smallest allowed value, 0"),
    "no-epoch-times": (_without_epochs, "the experiments: has no epoch_time experiment, and the race needs its epoch times"),
    "hostile-strings-in-checked-fields": (_hostile_in_bad_fields,
                                          "the torch version in the software: is 86 characters long; at most 50"),
}


@pytest.mark.parametrize("name", HOSTILE_FILES)
def test_a_broken_or_hostile_file_is_refused_by_name_and_the_race_still_runs(browser, site_url, lab_file,
                                                                             tmp_path, name):
    """Each broken file gets a message naming the problem; no lane joins, no script runs, no request leaves."""
    make, expected = HOSTILE_FILES[name]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(make(copy.deepcopy(lab_file["doc"]))))
    watched = Watched(browser, site_url)
    problem = watched.add(path)
    assert expected in problem and path.name in problem, problem
    assert watched.page.locator(".race-lane--yours").count() == 0
    watched.page.get_by_role("button", name="Start").click()
    assert watched.page.locator("#race-result").text_content()  # the race keeps working
    watched.check_harmless()
    watched.page.close()


@pytest.mark.parametrize("name, text, expected", [
    ("nan", lambda t: t.replace('"median": ', '"median": NaN, "x": ', 1), "not valid JSON"),
    ("infinite", lambda t: t.replace('"median": ', '"median": 1e999, "x": ', 1),
     "its median in its statistics: is Infinity: the file writes a number too large to represent (such as 1e999)"),
    ("truncated", lambda t: t[: len(t) // 2], "not valid JSON"),
    ("deeply nested", lambda t: t.replace('"cpu": {', '"cpu": {"deep": ' + "[" * 20000 + "]" * 20000 + ", ", 1),
     "was not added: this is not a Crossover results file (objects nested more than 32 deep)"),
])
def test_numbers_json_cannot_hold_are_refused(browser, site_url, lab_file, tmp_path, name, text, expected):
    """NaN, an infinite number and a cut-off file are refused with a message, never raced."""
    path = tmp_path / f"{name}.json"
    path.write_text(text(json.dumps(lab_file["doc"], indent=1)))
    watched = Watched(browser, site_url)
    assert expected in watched.add(path)
    assert watched.page.locator(".race-lane--yours").count() == 0
    watched.check_harmless()
    watched.page.close()


def test_a_50_megabyte_file_is_refused_before_it_is_read(browser, site_url, tmp_path):
    """A 50 MB file gets a size message at once; the page stays responsive."""
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(50 * 1000 * 1000)
    watched = Watched(browser, site_url)
    assert "50.0 MB" in watched.add(path)
    watched.check_harmless()
    watched.page.close()


def test_hostile_strings_that_pass_the_schema_are_shown_as_text(browser, site_url, lab_file, tmp_path):
    """HTML and script in every free-text field join the race as literal text: nothing runs, nothing loads."""
    doc = copy.deepcopy(lab_file["doc"])
    doc["machine_info"]["cpu"]["brand"] = doc["machine_info"]["cpu"]["peak_formula"] = HOSTILE
    doc["software"]["os"] = HOSTILE
    for bench in doc["benchmarks"]:
        bench["name"] = HOSTILE
    path = tmp_path / "hostile-strings.json"
    path.write_text(json.dumps(doc))
    watched = Watched(browser, site_url)
    assert watched.add(path) == ""
    label = watched.page.locator(".race-lane--yours .race-lane__name").text_content()
    assert "<script>window.__pwned = 1</script>" in label
    watched.page.get_by_role("button", name="Start").click()
    watched.check_harmless()
    watched.page.close()


def test_a_quick_mode_file_cannot_race_a_full_site(browser, site_url, lab_file):
    """On a site built in full mode, the notebook's quick-mode file is refused as quick-mode data."""
    watched = Watched(browser, site_url, rewrite=lambda html: html.replace('"mode":"quick"', '"mode":"full"'))
    assert "quick mode" in watched.add(lab_file["path"])
    watched.check_harmless()
    watched.page.close()


def test_an_apple_gpu_joins_as_a_gpu_lane_with_its_crossover(browser, site_url, lab_file, tmp_path):
    """A file with MPS epochs adds a lane labelled GPU (MPS) and the chart marks where it pulls ahead."""
    from build_hooks import stats

    doc = copy.deepcopy(lab_file["doc"])  # the notebook's layout; its times are replaced below
    doc["machine_info"]["gpu"] = {"name": "Apple M3 GPU (MPS)", "memory_bytes": 2**34, "cuda_version": None}
    doc["experiments"]["epoch_time"]["devices"] = ["cpu", "mps"]
    for bench in [b for b in doc["benchmarks"] if b["group"] == "epoch_time"]:
        # Stated times with a stated ±5% spread, so the crossover follows from this test's inputs
        # alone: the GPU is 3x slower at batch 1 and 5x faster at batch 16, far beyond the spread.
        cpu_seconds = 1.0 / bench["params"]["batch"]
        factor = 3.0 if bench["params"]["batch"] == 1 else 0.2
        bench["stats"] = stats.summarise([cpu_seconds * r for r in (0.95, 1.0, 1.05)])
        gpu = copy.deepcopy(bench)
        gpu["params"]["device"] = "mps"
        gpu["stats"] = stats.summarise([cpu_seconds * factor * r for r in (0.95, 1.0, 1.05)])
        doc["benchmarks"].append(gpu)
    path = tmp_path / "apple.json"
    path.write_text(json.dumps(doc))
    watched = Watched(browser, site_url)
    assert watched.add(path) == ""
    labels = watched.page.locator(".race-lane--yours .race-lane__name").all_text_contents()
    assert any("GPU (MPS)" in label and "Apple M3" in label for label in labels) and len(labels) == 2
    assert race_time(watched.page, 16, 32) == epoch_median(doc, "cpu", 32, 16)  # the CPU lane comes first
    assert "crossover: batch 16" in watched.page.locator("#race-chart").text_content()
    watched.check_harmless()
    watched.page.close()


def test_a_phone_page_stays_one_screen_wide_after_adding_a_file(browser, site_url, lab_file):
    """At 375 px the race page does not scroll sideways once a reader's (long-named) machine joins."""
    page = browser.new_page(viewport={"width": 375, "height": 800})
    page.goto(site_url + "race/")
    reach_box(page)
    page.set_input_files("#yours-file", str(lab_file["path"]))
    page.wait_for_selector(".race-lane--yours")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.close()


@pytest.mark.parametrize("kept", ['{"text": 5, "name": "x.json"}', "[]", "null", '"text"', "{", '{"text": "{}", "name": {"a": 1}}',
                                  '{"text": "[1, 2]", "name": "list.json"}'],
                         ids=["text not a string", "array", "null", "string", "not JSON", "name not a string",
                              "kept file not a results file"])
def test_a_poisoned_kept_value_is_dropped_with_a_message_once(browser, site_url, kept):
    """Whatever shape the browser's storage holds, the page says it dropped it, removes it and loads clean next time."""
    watched = Watched(browser, site_url)
    watched.page.evaluate("value => localStorage.setItem('crossover.yours.v1', value)", kept)
    watched.open()
    watched.page.wait_for_function("document.getElementById('yours-problem').textContent")
    assert "The file kept from an earlier visit" in watched.page.locator("#yours-problem").text_content()
    assert watched.page.evaluate("localStorage.getItem('crossover.yours.v1')") is None
    assert not watched.page.locator("#yours-keep").is_checked()
    watched.open()
    assert watched.page.locator("#yours-problem").text_content() == ""
    watched.check_harmless()
    watched.page.close()


def test_the_browser_slot_drops_a_file_its_race_did_not_make(browser, site_url, lab_file):
    """A PyTorch file kept under the browser race's key is dropped with a message, not restored as a browser run."""
    watched = Watched(browser, site_url)
    kept = json.dumps({"text": lab_file["path"].read_text(), "name": "lab.json"})
    watched.page.evaluate("value => localStorage.setItem('crossover.browser.v1', value)", kept)
    watched.open()
    watched.page.wait_for_function("document.getElementById('browser-problem').textContent")
    assert "was dropped" in watched.page.locator("#browser-problem").text_content()
    assert "Restored" not in watched.page.locator("#browser-status").text_content()
    assert watched.page.evaluate("localStorage.getItem('crossover.browser.v1')") is None
    watched.check_harmless()
    watched.page.close()


def test_the_sites_own_data_file_adds_the_machines_the_race_lacks(browser, site_url, built_site, lab_file, tmp_path):
    """results.json from "Download the data" is understood: with only this race's machines it says so in words;
    with a machine the race lacks, that machine's lanes join."""
    merged = json.loads((built_site / "data" / "results.json").read_text())
    watched = Watched(browser, site_url)
    problem = watched.add(built_site / "data" / "results.json")
    held = len(merged["machines"])
    assert f"a site's data file (results.json), holding {held} machine" in problem and "already in this race" in problem
    assert "$" not in problem and watched.page.locator(".race-lane--yours").count() == 0
    elsewhere = {**lab_file["doc"], "machine_id": "fixture-lab-elsewhere"}  # the lab ran here: another machine's id
    merged["machines"].append({"origin": "committed reference", "source": "results/lab.json", **elsewhere})
    path = tmp_path / "results.json"
    path.write_text(json.dumps(merged))
    assert watched.add(path) == ""
    lab_devices = {b["params"]["device"] for b in lab_file["doc"]["benchmarks"] if b["group"] == "epoch_time"}
    assert watched.page.locator(".race-lane--yours").count() == len(lab_devices)
    assert f"holding {held + 1} machines, the 1 new here" in watched.page.locator("#yours-status").text_content()
    watched.check_harmless()
    watched.page.close()


def test_bidi_controls_in_a_readers_file_are_stripped_as_in_the_build(browser, site_url, lab_file, tmp_path):
    """A right-to-left override in a reader's CPU name cannot reorder the lane's words: it is removed."""
    doc = copy.deepcopy(lab_file["doc"])
    doc["machine_info"]["cpu"]["brand"] = "\u202eevil\u202c CPU"
    path = tmp_path / "bidi.json"
    path.write_text(json.dumps(doc))
    watched = Watched(browser, site_url)
    assert watched.add(path) == ""
    label = watched.page.locator(".race-lane--yours .race-lane__name").first.text_content()
    assert "evil CPU" in label and "\u202e" not in label and "\u202c" not in label
    watched.check_harmless()
    watched.page.close()


# ---- messages a reader understands, and times no machine takes ----

PYTEST_BENCHMARK_FILE = {  # the layout pytest-benchmark writes, which Crossover's schema borrows
    "machine_info": {"node": "laptop", "processor": "x86_64"}, "commit_info": {"id": "abc1234", "dirty": False},
    "benchmarks": [{"group": None, "name": "test_sum", "params": None, "stats": {"min": 1e-6}}],
    "datetime": "2026-11-30T00:00:00+00:00", "version": "4.0.0",
}


def refused(browser, site_url, tmp_path, name, doc_or_text):
    """Add one file to a fresh race page: (the message it got, the page)."""
    path = tmp_path / name
    path.write_text(doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text))
    watched = Watched(browser, site_url)
    problem = watched.add(path)
    assert watched.page.locator(".race-lane--yours").count() == 0, problem
    watched.check_harmless()
    return problem, watched.page


def test_a_pytest_benchmark_file_is_called_a_pytest_benchmark_file(browser, site_url, tmp_path):
    """pytest-benchmark's JSON is named as such and told how to make a Crossover file, not about a null params."""
    problem, page = refused(browser, site_url, tmp_path, "pytest.json", PYTEST_BENCHMARK_FILE)
    assert "this is a pytest-benchmark results file" in problem, problem
    assert "Race your browser" in problem and "make measure" in problem
    assert "params" not in problem and "Instance type" not in problem
    page.close()


def test_an_html_machine_id_is_named_in_words_with_what_is_allowed(browser, site_url, lab_file, tmp_path):
    """Markup in machine_id: 'the machine id', the characters it may hold, the markup quoted as text, the path last."""
    markup = '<img src="/pwned.png" onerror="window.__pwned = 3">'  # short enough to be quoted whole
    doc = _set(["machine_id"], markup)(copy.deepcopy(lab_file["doc"]))
    problem, page = refused(browser, site_url, tmp_path, "html-id.json", doc)
    assert f"the machine id: {json.dumps(markup)} is not allowed: it must be lower-case letters a-z, digits and " \
           "hyphens only" in problem, problem
    assert problem.endswith("(field $.machine_id)") and "does not match pattern" not in problem
    page.close()


def test_an_infinite_median_is_shown_as_infinity(browser, site_url, lab_file, tmp_path):
    """A median of 1e999 (Infinity once parsed) is quoted as Infinity, never as JSON's null."""
    text = json.dumps(lab_file["doc"]).replace('"median": ', '"median": 1e999, "x": ', 1)
    problem, page = refused(browser, site_url, tmp_path, "infinite.json", text)
    assert "is Infinity" in problem and "null" not in problem, problem
    page.close()


def test_no_message_starts_with_a_json_path(browser, site_url, lab_file, tmp_path):
    """Every refusal starts with words (the field or the file's kind); a field's JSON path closes it in parentheses,
    and a whole-file problem shows none (no bare '(field $)')."""
    watched = Watched(browser, site_url)
    for name, (make, _) in HOSTILE_FILES.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(make(copy.deepcopy(lab_file["doc"]))))
        problem = watched.add(path)
        detail = problem.split(" was not added: ", 1)[1]
        assert not detail.startswith("field") and "$" not in detail.split(" (field $")[0], problem
        assert "(field $)" not in detail, problem
        assert " (field $" not in detail or detail.endswith(")"), problem
        watched.page.evaluate("document.getElementById('yours-problem').textContent = ''")
    watched.check_harmless()
    watched.page.close()


def test_an_epoch_no_machine_takes_is_refused_with_its_bounds(browser, site_url, lab_file, tmp_path):
    """An 80,000 s epoch at batch 64 is refused, stating the lanes' times there and the 1000× bounds; no lane joins."""
    from build_hooks import stats

    doc = copy.deepcopy(lab_file["doc"])
    epoch = copy.deepcopy(_first_epoch(doc))
    epoch["params"]["batch"], epoch["name"] = 64, "epoch_time[slow]"
    epoch["stats"] = stats.summarise([80_000.0] * 3)
    doc["benchmarks"].append(epoch)
    problem, page = refused(browser, site_url, tmp_path, "slow.json", doc)
    seconds = r"[\d.]+ [mµn]?s"
    assert re.search(rf"its median in its statistics: 80000 s for one epoch of \d+ rows at width {epoch['params']['width']}, "
                     rf"batch 64 is not a time any machine takes: this site's lanes take {seconds} to {seconds} .*"
                     rf"more than 1000× faster or slower than that \(outside {seconds} to {seconds}\)", problem), problem
    assert problem.endswith(f"(field $.benchmarks[{len(doc['benchmarks']) - 1}].stats.median)")
    page.close()


def test_the_validator_loads_with_the_first_file(browser, site_url, lab_file):
    """Adding a results file fetches the validator and schema, and the file then joins the race."""
    fetched, page = first_load(browser, site_url + "race/")
    reach_box(page)
    page.set_input_files("#yours-file", str(lab_file["path"]))
    page.wait_for_function("document.querySelector('#yours-status').textContent.includes('marked yours')",
                           timeout=30_000)
    assert any("cfworker-json-schema" in url for url in fetched)
    page.close()


def test_an_added_file_is_announced_under_the_lanes_with_names_of_its_own(browser, site_url, lab_file):
    """Adding a file (here from the build's own machine) says so right under the lanes, and no two lanes share a name."""
    watched = Watched(browser, site_url)
    watched.add(lab_file["path"])
    names = watched.page.eval_on_selector_all(".race-lane[data-lane]", "els => els.map(e => e.getAttribute('aria-label'))")
    assert len(names) == len(set(names)) and any(n.endswith("(yours)") for n in names), names
    result = watched.page.locator("#race-result")
    result.wait_for(state="visible")
    assert result.text_content().startswith("Added to the race: ") and "(yours)" in result.text_content()
    lanes_bottom = watched.page.locator("#race-lanes").bounding_box()
    box = result.bounding_box()
    assert 0 <= box["y"] - (lanes_bottom["y"] + lanes_bottom["height"]) < 200
    watched.check_harmless()


@pytest.mark.parametrize("text, says", [("", "the file is empty"), ("{\"a\": ", "not valid JSON")])
def test_an_empty_or_cut_file_is_named_in_words_without_a_field_path(browser, site_url, tmp_path, text, says):
    """An empty file is called empty (not 'Unexpected end of JSON input'); a whole-file problem shows no '(field $)'."""
    problem, page = refused(browser, site_url, tmp_path, "empty.json", text)
    assert says in problem and "(field $)" not in problem, problem
    assert "Unexpected end" not in problem or says != "the file is empty", problem
    page.close()


def test_a_refusal_on_a_phone_is_a_short_bold_headline_then_plain_words(browser, site_url, tmp_path):
    """At 375 px only what happened is bold; the detail that follows is in plain weight and a smaller size."""
    path = tmp_path / "empty.json"
    path.write_text("")
    page = browser.new_page(viewport={"width": 375, "height": 800})
    page.goto(site_url + "race/")
    reach_box(page)
    page.set_input_files("#yours-file", str(path))
    page.wait_for_function("document.getElementById('yours-problem').textContent")
    weights = page.evaluate("""() => { const p = document.getElementById('yours-problem');
        return {head: p.querySelector('strong').textContent, body: getComputedStyle(p).fontWeight,
                size: parseFloat(getComputedStyle(p).fontSize),
                base: parseFloat(getComputedStyle(document.getElementById('yours-status')).fontSize)}; }""")
    page.close()
    assert weights["head"] == "empty.json was not added:" and int(weights["body"]) < 600
    assert weights["size"] < weights["base"], weights
