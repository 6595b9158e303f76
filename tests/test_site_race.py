"""Browser tests of the race widget in Debian's Chromium."""

import json
import re

import pytest

from conftest import build_site, quick_env, synthetic_doc

HOSTILE = '<script>window.__pwned = 1</script><img src="/pwned.png" onerror="window.__pwned = 2">'


def measured(built_site, batch, width):
    """The median epoch time for a configuration, read from the published data file."""
    merged = json.loads((built_site / "data" / "results.json").read_text())
    for bench in merged["machines"][0]["benchmarks"]:
        p = bench["params"]
        if bench["group"] == "epoch_time" and p["batch"] == batch and p["width"] == width and p["device"] == "cpu":
            return bench["stats"]["median"]
    raise LookupError((batch, width))


def open_race(browser, url, **options):
    page = browser.new_page(**options)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "race/")
    page.wait_for_selector("#race:not([hidden])")
    return page, errors


def set_batch(page, batch):
    batches = json.loads(page.locator("#race-data").text_content())["batches"]
    page.locator("#race-batch").fill(str(batches.index(batch)))


@pytest.mark.parametrize("batch", [1, 16])
def test_displayed_times_equal_measured_values(browser, site_url, built_site, batch):
    """After a race the CPU lane shows exactly the measured median for that batch and width."""
    page, errors = open_race(browser, site_url, reduced_motion="reduce")
    set_batch(page, batch)
    width = int(page.locator("#race-width").input_value())
    page.get_by_role("button", name="Start").click()
    time = page.locator(".race-lane[data-lane] .race-lane__time").first
    assert float(time.get_attribute("data-seconds")) == measured(built_site, batch, width)
    assert re.fullmatch(r"[\d.]+ (s|ms|µs)", time.text_content())
    result = page.locator("#race-result").text_content()
    estimates = page.locator(".race-lane--estimate")
    if estimates.count():  # CPU-only build: the GPU lane is the labelled cost-model estimate
        assert "(estimate)" in estimates.first.get_attribute("aria-label") and "(estimate)" in result
    else:
        assert "Only one device was measured" in result
    assert errors == []
    page.close()


def test_animated_race_finishes_on_the_measured_value(browser, site_url, built_site):
    """With motion allowed the lane animates and ends on the measured time, marked as winner."""
    page, errors = open_race(browser, site_url)
    set_batch(page, 16)
    width = int(page.locator("#race-width").input_value())
    page.get_by_role("button", name="Start").click()
    page.wait_for_selector(".race-lane--winner", timeout=15000)
    cpu_time = page.locator(".race-lane[data-lane]:not(.race-lane--estimate) .race-lane__time").first
    assert float(cpu_time.get_attribute("data-seconds")) == measured(built_site, 16, width) and errors == []
    page.close()


def test_keyboard_only_operation(browser, site_url):
    """Tab reaches the batch slider, arrow keys change it, Enter on Start runs the race."""
    page, _ = open_race(browser, site_url, reduced_motion="reduce")
    page.locator("#race-batch").focus()
    page.keyboard.press("Home")
    assert page.locator("#race-batch-value").text_content() == "1"
    page.keyboard.press("ArrowRight")
    assert page.locator("#race-batch-value").text_content() != "1"
    page.keyboard.press("Tab")  # width select
    page.keyboard.press("Tab")  # start button (the machine picker is hidden with one machine)
    assert page.evaluate("document.activeElement.id") == "race-start"
    page.keyboard.press("Enter")
    assert page.locator("#race-result").text_content()
    page.close()


def test_guided_step_sets_controls(browser, site_url):
    """A guided-step button sets the batch control and starts the race."""
    page, _ = open_race(browser, site_url, reduced_motion="reduce")
    page.get_by_role("button", name="1 · batch 1").click()
    assert page.locator("#race-batch-value").text_content() == "1"
    assert page.locator("#race-result").text_content()
    page.close()


def test_hostile_machine_name_is_text_and_runs_nothing(browser, tmp_path):
    """A results file whose machine name holds HTML shows it as text; no script runs, no image loads."""
    from scripts.screenshot import serve

    results = tmp_path / "results"
    results.mkdir()
    doc = synthetic_doc("hostile-fixture", brand=HOSTILE,
                        step_times={("cpu", 32, 1): 1e-4, ("cpu", 32, 64): 2e-4},
                        epoch_times={("cpu", 32, 1): 1.0, ("cpu", 32, 64): 0.2})
    (results / "hostile.json").write_text(json.dumps(doc))
    result = build_site(tmp_path / "site", quick_env(tmp_path / "cache", results))
    assert result.returncode == 0, result.stderr[-3000:]
    server, base = serve(tmp_path / "site")
    try:
        requests = []
        page = browser.new_page(reduced_motion="reduce")
        page.on("request", lambda r: requests.append(r.url))
        for path in ["race/", "batch-size/", "data/", "measurements/"]:
            page.goto(base + path)
            assert page.evaluate("window.__pwned") is None
        page.goto(base + "race/")
        page.locator("#race-machine").select_option("hostile-fixture")
        page.get_by_role("button", name="Start").click()
        assert HOSTILE in page.locator("#race-lanes").text_content()
        assert page.evaluate("window.__pwned") is None
        assert not any("pwned" in url for url in requests)
        page.close()
    finally:
        server.shutdown()
