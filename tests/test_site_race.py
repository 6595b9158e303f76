"""Browser tests of the race widget in Debian's Chromium."""

import json
import re
import urllib.parse

import pytest
from hostile import HOSTILE

from conftest import reach_box, tab


def measured(built_site, batch, width):
    """The median epoch time for a configuration, read from the published data file."""
    merged = json.loads((built_site / "data" / "results.json").read_text())
    for bench in merged["machines"][0]["benchmarks"]:
        p = bench["params"]
        if bench["group"] == "epoch_time" and p["batch"] == batch and p["width"] == width and p["device"] == "cpu":
            return bench["stats"]["median"]
    raise LookupError((batch, width))


def host_cpu_lane(page, built_site) -> str:
    """The selector of the build host's CPU lane (the data file's first machine), by its id in the race's data."""
    host = json.loads((built_site / "data" / "results.json").read_text())["machines"][0]["machine_id"]
    lanes = json.loads(page.locator("#race-data").text_content())["lanes"]
    lane = next(lane for lane in lanes if lane["machine_id"] == host and lane["kind"] == "CPU" and not lane["estimate"])
    return f'.race-lane[data-lane="{lane["id"]}"]'


def open_race(browser, url, **options):
    page = tab(browser, url, **options)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "race/")
    page.wait_for_selector("#race:not([hidden])")
    return page, errors


def all_machines(page):
    """Race every machine's lanes (the race opens on the measured GPU's machine where there is one)."""
    if page.locator("#race-machine").is_visible():
        page.locator("#race-machine").select_option("")


def test_the_race_opens_on_the_measured_gpus_machine(browser, site_url):
    """Where a GPU was measured, the race opens on its machine: that GPU and its own CPU, the grid's pairing."""
    page, errors = open_race(browser, site_url, reduced_motion="reduce")
    lanes = json.loads(page.locator("#race-data").text_content())["lanes"]
    measured_gpu = next((lane for lane in lanes if lane["kind"] == "GPU" and not lane.get("estimate")), None)
    if measured_gpu is not None and page.locator("#race-machine").is_visible():
        assert page.locator("#race-machine").input_value() == measured_gpu["machine_id"]
        assert page.locator(".race-lane[data-lane]").count() == 2
    assert errors == []
    page.close()


def set_batch(page, batch):
    batches = json.loads(page.locator("#race-data").text_content())["batches"]
    page.locator("#race-batch").fill(str(batches.index(batch)))


@pytest.mark.parametrize("batch", [1, 16])
def test_displayed_times_equal_measured_values(browser, site_url, built_site, batch):
    """After a race the CPU lane shows exactly the measured median for that batch and width."""
    page, errors = open_race(browser, site_url, reduced_motion="reduce")
    all_machines(page)  # the build host's CPU lane is then among the lanes
    set_batch(page, batch)
    width = int(page.locator("#race-width").input_value())
    page.get_by_role("button", name="Start").click()
    time = page.locator(host_cpu_lane(page, built_site) + " .race-lane__time")
    assert float(time.get_attribute("data-seconds")) == measured(built_site, batch, width)
    assert re.fullmatch(r"[\d.]+ (s|ms|µs)", time.text_content())
    result = page.locator("#race-result").text_content()
    estimates = page.locator(".race-lane--estimate")
    if estimates.count():  # CPU-only build: the GPU lane is the labelled cost-model estimate
        label = estimates.first.get_attribute("aria-label")
        assert label.endswith(" (estimate)")
        # The result names the two lanes that finished first; the estimate is one of them only on some data.
        name = label.removesuffix(" (estimate)")
        assert name not in result.replace(label, "")
    elif page.locator(".race-lane[data-lane]").count() > 1:  # measured lanes only: a winner or a tie, by name
        assert result.startswith(("Winner: ", "About the same: "))
        assert f" at batch {batch} and width {width}" in result  # the setting said with its verdict
    else:
        assert "Only one device was measured" in result
    assert errors == []
    page.close()


def test_animated_race_finishes_on_the_measured_value(browser, site_url, built_site):
    """With motion allowed the lane animates and ends on the measured time; a badge only for a real win."""
    page, errors = open_race(browser, site_url)
    all_machines(page)
    set_batch(page, 16)
    width = int(page.locator("#race-width").input_value())
    page.get_by_role("button", name="Start").click()
    page.wait_for_function("document.getElementById('race-result').textContent.length > 0", timeout=15000)
    won = page.locator("#race-result").text_content().startswith("Winner")
    assert page.locator(".race-lane--winner").count() == (1 if won else 0)
    cpu_time = page.locator(host_cpu_lane(page, built_site) + " .race-lane__time")
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
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "race-width"
    page.keyboard.press("Tab")
    if page.evaluate("document.activeElement.id") == "race-machine":  # shown when several machines race
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "race-start"
    page.keyboard.press("Enter")
    assert page.locator("#race-result").text_content()
    page.close()


def test_guided_step_sets_controls(browser, site_url):
    """A guided-step button sets the controls and starts the race: steps 1 to 4 walk the widest layer, where the
    crossing shows, and step 5 returns to the width the race opens at; a step brings the lanes into sight."""
    page, _ = open_race(browser, site_url, reduced_motion="reduce")
    opening = page.locator("#race-width").input_value()
    widest = page.locator("#race-width option").last.get_attribute("value")
    page.get_by_role("button", name="Step 1: batch 1 at the widest layer").click()
    assert page.locator("#race-batch-value").text_content() == "1"
    assert page.locator("#race-width").input_value() == widest
    assert page.locator("#race-result").text_content()
    page.evaluate("document.querySelector('.race__guide').scrollIntoView({block: 'start'})")  # reading the list
    page.get_by_role("button", name="Step 5: batch 512 at width 32").click()
    assert page.locator("#race-batch-value").text_content() == "512"
    assert page.locator("#race-width").input_value() == opening
    # The lanes come into sight below the header, so the reader watches the race, not the list moving.
    top = page.evaluate("document.getElementById('race-lanes').getBoundingClientRect().top")
    header = page.evaluate("document.querySelector('.md-header').getBoundingClientRect().bottom")
    assert header <= top < page.viewport_size["height"]
    page.close()


def test_hostile_machine_names_are_text_on_every_page(browser, guest_site):
    """HTML or Markdown in a machine name is shown as text on every page: no dialog, no script, no request."""
    from scripts.screenshot import serve

    pages = sorted(str(p.parent.relative_to(guest_site)) + "/" for p in guest_site.rglob("index.html"))
    server, base = serve(guest_site)
    try:
        requests, dialogs = [], []
        page = browser.new_page(reduced_motion="reduce")
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for path in pages:
            page.goto(base + ("" if path == "./" else path))
            assert page.evaluate("window.__pwned") is None, path
            assert page.locator("img[onerror], a[href^='javascript']").count() == 0, path
        for path in ["", "transfer/", "race/"]:  # pages whose prose or tables name the GPU
            page.goto(base + path)
            assert "onerror=alert(document.domain)" in page.locator("article").text_content(), path
        page.goto(base + "race/")
        race = page.evaluate("JSON.parse(document.getElementById('race-data').textContent)")
        assert any(lane["machine_id"] == "hostile-fixture" for lane in race["lanes"])
        page.locator("#race-machine").select_option("hostile-fixture")
        page.get_by_role("button", name="Start").click()
        assert HOSTILE in page.locator("#race-lanes").text_content()
        assert page.evaluate("window.__pwned") is None and not dialogs
        off_host = [url for url in requests if not url.startswith(base) and not url.startswith("data:")]
        assert not off_host and not any("pwned" in url for url in requests)
        page.close()
    finally:
        server.shutdown()


def test_race_bars_have_width_on_a_320_px_phone(browser, site_url):
    """On the narrowest phone the finished bars are visible, not collapsed to 0 px."""
    page, errors = open_race(browser, site_url, viewport={"width": 320, "height": 700}, reduced_motion="reduce")
    page.get_by_role("button", name="Start").click()
    widths = page.locator(".race-lane").evaluate_all(
        "lanes => lanes.filter(l => l.querySelector('[data-seconds]'))"  # lanes with a time at this batch
        "  .map(l => l.querySelector('.race-lane__bar').getBoundingClientRect().width)")
    assert widths and min(widths) > 0 and max(widths) > 40 and not errors
    assert page.locator("#race-batch").get_attribute("aria-valuetext").startswith("batch ")
    page.close()


@pytest.mark.parametrize("slow_lane", [5e-3, 5e-2], ids=["slowest 5x the fastest", "slowest 50x the fastest"])
def test_finished_bars_show_each_lanes_time_on_one_scale_and_a_far_slower_lane_runs_off_it(browser, site_url,
                                                                                            slow_lane):
    """After a race each bar's length is its lane's time over the slowest lane's, not 100% for all. A lane over 20
    times the fastest runs off the track with a broken end instead, so the fastest still gets a twentieth of it."""
    def data_of(real):
        return synthetic_race(real, finals={"A": 1e-3, "B": 2.0e-3, "C": 2.1e-3, "D": 2.2e-3, "E": slow_lane})
    page, errors = open_race_with(browser, site_url, data_of, reduced_motion="reduce")
    page.get_by_role("button", name="Start").click()
    lanes = page.locator(".race-lane").evaluate_all(
        "lanes => lanes.filter(l => l.querySelector('[data-seconds]')).map(l => ["
        "  Number(l.querySelector('[data-seconds]').dataset.seconds),"
        "  parseFloat(l.querySelector('.race-lane__bar').style.width),"
        "  l.querySelector('.race-lane__bar').classList.contains('race-lane__bar--broken')])")
    fastest, slowest = min(s for s, _, _ in lanes), max(s for s, _, _ in lanes)
    full = min(slowest, 20 * fastest)
    assert len(lanes) == 5 and not errors
    for seconds, width, broken in lanes:
        assert broken == (seconds > full) and abs(width - (100 if broken else 100 * seconds / full)) < 0.01
    assert any(broken for _, _, broken in lanes) == (slow_lane == 5e-2)
    page.close()


def test_sections_with_params_that_slip_past_the_load_check_run_nothing_in_a_browser(browser):
    """Chromium loads every experiment's sections built from payload params (load check bypassed): no script runs."""
    from test_views import _poison_params, view_module

    from build_hooks import experiments
    from build_hooks import page as page_api
    from build_hooks.dataset import Dataset, Machine
    from conftest import complete_doc

    tab = browser.new_page()
    errors = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    for group in experiments.REGISTRY:
        data = Dataset([Machine(_poison_params(complete_doc(gpu="Fixture GPU"), group), "f", "this build host")])
        module = view_module(group)
        names = [n for n, fn in page_api.SECTIONS.items() if module and fn.__module__ == module.__name__]
        html = []
        for name in names + [f"measurements_{group}"]:
            try:
                html.append(page_api.render_section(name, data))
            except (TypeError, ValueError, KeyError, LookupError, ZeroDivisionError):
                continue
        tab.set_content("<!doctype html><title>t</title><body>" + "".join(html) + "</body>")
        tab.wait_for_timeout(100)  # autofocus and onerror fire as the page settles
        assert tab.evaluate("window.__pwned") is None, group
    assert not errors
    tab.close()


CHART_TEXT = """svg => [...svg.querySelectorAll('text')].map(t => {
  const r = t.getBoundingClientRect(), size = parseFloat(getComputedStyle(t).fontSize);
  return {text: t.textContent, size: size * svg.getScreenCTM().a, x: r.left, y: r.top, w: r.width, h: r.height};
})"""


def synthetic_race(real: dict, finals: dict | None = None) -> dict:
    """The page's race data with made-up lanes chosen for layout, not taken from any machine: one lane ends
    exactly on the lowest grid line (its letter next to the x labels), three end close together, one is a GPU."""
    template = next(iter(next(iter(real["lanes"][0]["epochs"].values())).values()))
    finals = finals or {"A": 1e-3, "B": 2.0e-3, "C": 2.1e-3, "D": 2.2e-3, "E": 5e-2}  # seconds at the largest batch

    def epochs(final: float) -> dict:
        return {str(w): {str(b): {**template, "seconds": final * 512 / b, "q1": final * 512 / b, "q3": final * 512 / b,
                                  "steps": 1, "caveats": []} for b in real["batches"]} for w in real["widths"]}

    lanes = [{**real["lanes"][0], "id": f"lane-{i}", "kind": "GPU" if name == "E" else "CPU",
              "device": "cuda" if name == "E" else "cpu", "estimate": False, "label": f"Synthetic {name}",
              "machine": f"Synthetic {name}", "machine_id": "synthetic", "epochs": epochs(final)}
             for i, (name, final) in enumerate(finals.items())]
    return {**real, "lanes": lanes, "machines": [{"crossover": {}, "id": "synthetic", "label": "Synthetic"}]}


def open_race_with(browser, url, data_of, **options):
    """The race page with its #race-data replaced by data_of(the page's own data), before any script reads it."""
    page = tab(browser, url, **options)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def swap(route):
        body = route.fetch().text()
        found = re.search(r'(<script type="application/json" id="race-data">)(.*?)(</script>)', body, re.S)
        made = json.dumps(data_of(json.loads(found.group(2)))).replace("</", "<\\/")
        route.fulfill(body=body[:found.start(2)] + made + body[found.end(2):], content_type="text/html")

    page.route(url + "race/", swap)
    page.goto(url + "race/")
    page.wait_for_selector("#race:not([hidden])")
    return page, errors


@pytest.mark.parametrize("width", [320, 375, 1280])
def test_chart_text_is_readable_and_apart(browser, site_url, width):
    """On synthetic lanes (one ending on the lowest grid line, three close together), the chart's text is at least
    11 px on screen at every width, and no two labels' boxes overlap, letters and axis labels included."""
    page, errors = open_race_with(browser, site_url, synthetic_race, viewport={"width": width, "height": 800})
    page.locator("#race-chart").scroll_into_view_if_needed()
    labels = page.locator("#race-chart").evaluate(CHART_TEXT)
    page.close()
    assert labels and not errors
    small = [(t["text"], round(t["size"], 1)) for t in labels if t["size"] < 10.95]
    assert not small, small

    def overlap(a, b):
        return a["x"] < b["x"] + b["w"] - 0.5 and b["x"] < a["x"] + a["w"] - 0.5 and \
            a["y"] < b["y"] + b["h"] - 0.5 and b["y"] < a["y"] + a["h"] - 0.5
    clashes = [(a["text"], b["text"]) for i, a in enumerate(labels) for b in labels[i + 1:] if overlap(a, b)]
    assert not clashes, clashes


def test_without_javascript_the_race_is_drawn_and_tabled(browser, site_url):
    """With JavaScript off, the race page shows a static chart and the tables at its widths, and its intro speaks to that
    reader."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(site_url + "race/")
    numbers = page.locator("#the-numbers-behind-the-race ~ figure.crossover-figure svg")
    assert numbers.count() >= 1 and numbers.first.is_visible()
    tables = page.locator("[id^='race-table-']")
    assert tables.count() == 2  # the lessons' small network and the widest
    assert page.locator("article p", has_text="without it, the chart and tables under").count() == 1
    context.close()


def test_before_a_race_lanes_show_no_time_and_the_controls_announce_once(browser, site_url):
    """Before Start no lane claims "0 s"; the batch is told once (by the slider's value text), not by a live region too."""
    page, errors = open_race(browser, site_url)
    times = page.locator(".race-lane[data-lane] .race-lane__time").all_text_contents()
    assert times and not any(t.strip() in ("0 s", "0") for t in times), times
    live = page.eval_on_selector_all("#race output, #race [role=status], #race [aria-live]:not([aria-live=off])",
                                     "els => els.map(e => e.id || e.className)")
    assert live == ["race-result"], live  # the one region that says who won
    assert page.locator("#race-batch-value").get_attribute("aria-hidden") == "true"
    page.locator("#race-batch").focus()
    page.keyboard.press("ArrowRight")
    assert page.locator("#race-batch").get_attribute("aria-valuetext").startswith("batch ")
    assert errors == []
    page.close()


def test_a_touch_screen_is_not_asked_to_drop_a_file(browser, site_url):
    """On a phone (no hover, coarse pointer) the "drop it" hints are hidden; with a mouse they show."""
    for touch, shown in ((True, False), (False, True)):
        context = browser.new_context(has_touch=touch, is_mobile=touch, viewport={"width": 375, "height": 800})
        page = context.new_page()
        page.goto(site_url + "race/")
        reach_box(page)
        hints = page.locator("#yours .yours__drop-hint")
        assert hints.count() == 2
        assert all(hints.nth(i).is_visible() == shown for i in range(2)), touch
        context.close()


def test_the_winner_sentence_nests_no_brackets(browser, site_url):
    """After a race the result sentence never puts a bracket inside another at any batch."""
    page, errors = open_race(browser, site_url, reduced_motion="reduce")
    for batch in json.loads(page.locator("#race-data").text_content())["batches"]:
        set_batch(page, batch)
        page.get_by_role("button", name="Start").click()
        depth, deepest = 0, 0
        for char in page.locator("#race-result").text_content():
            depth += {"(": 1, ")": -1}.get(char, 0)
            deepest = max(deepest, depth)
        assert deepest <= 1, (batch, page.locator("#race-result").text_content())
    assert errors == []
    page.close()


def test_the_chart_caption_is_read_once(browser, site_url):
    """The chart's own name is short and the caption says the rest, so a screen reader hears the caption once."""
    page, errors = open_race(browser, site_url, reduced_motion="reduce")
    page.get_by_role("button", name="Start").click()
    chart = page.locator("#race-chart")
    caption = page.locator("#race-chart-caption").text_content()
    assert chart.get_attribute("aria-labelledby") is None
    name = chart.get_attribute("aria-label")
    assert name and caption and caption not in name and len(name) < len(caption)
    assert errors == []
    page.close()


def test_a_verdict_cell_on_home_opens_the_race_at_its_setting(browser, site_url):
    """Following a cell of home's verdict grid sets the race's batch, width and machine from the link and runs that
    race; a bad value is ignored, and nothing runs."""
    page = tab(browser, site_url)
    page.goto(site_url)
    cell = page.locator("#verdict-grid a.verdict").last
    href = cell.get_attribute("href")
    batch, width, machine = re.search(r"race/\?batch=(\d+)&width=(\d+)&machine=([^&]+)", href).groups()
    cell.click()
    page.wait_for_selector("#race:not([hidden])")
    assert page.locator("#race-batch-value").text_content() == batch
    assert page.locator("#race-width").input_value() == width
    assert page.locator("#race-machine").input_value() == urllib.parse.unquote(machine)  # the cell's pairing
    page.wait_for_function("document.getElementById('race-result').textContent !== ''")  # the race ran
    page.goto(site_url + "race/?batch=3&width=<b>")  # neither exists: the defaults stay
    page.wait_for_selector("#race:not([hidden])")
    assert page.locator("#race-batch-value").text_content() != "3"
    assert page.locator("#race-result").text_content() == ""
    page.close()


def twelve_lanes(real: dict) -> dict:
    """The page's race data with twelve made-up lanes (alternately CPU and GPU), to check styles at that count."""
    template = next(iter(next(iter(real["lanes"][0]["epochs"].values())).values()))
    epochs = {str(w): {str(b): {**template, "seconds": 1.0 / b, "q1": 1.0 / b, "q3": 1.0 / b, "steps": 1, "caveats": []}
                       for b in real["batches"]} for w in real["widths"]}
    lanes = [{**real["lanes"][0], "id": f"lane-{i}", "kind": "GPU" if i % 2 else "CPU", "device": "cuda" if i % 2 else "cpu",
              "estimate": False, "label": f"Synthetic {i}", "machine": "Synthetic", "machine_id": "synthetic",
              "epochs": epochs} for i in range(12)]
    return {**real, "lanes": lanes, "machines": [{"crossover": {}, "id": "synthetic", "label": "Synthetic"}]}


def test_twelve_lanes_never_share_a_style_and_each_key_matches_its_bar_and_line(browser, site_url):
    """Up to twelve lanes: letters and dash patterns all differ, and a lane's key, bar and chart line share one colour."""
    page, errors = open_race_with(browser, site_url, twelve_lanes, reduced_motion="reduce")
    page.get_by_role("button", name="Start").click()
    styles = page.evaluate("""() => [...document.querySelectorAll('#race-chart path.race-chart__line')].map(p => {
        const lane = p.getAttribute('data-lane');
        const row = document.querySelector(`.race-lane[data-lane="${lane}"]`);
        return {lane, dash: p.getAttribute('stroke-dasharray') || '', line: getComputedStyle(p).stroke,
                key: getComputedStyle(row.querySelector('.race-key')).backgroundColor,
                bar: getComputedStyle(row.querySelector('.race-lane__bar')).backgroundColor,
                letter: row.querySelector('.race-key').textContent};
    })""")
    page.close()
    assert len(styles) == 12 and not errors
    assert len({s["dash"] for s in styles}) == 12 and len({s["letter"] for s in styles}) == 12, styles
    assert all(s["line"] == s["key"] == s["bar"] for s in styles), styles


def test_without_javascript_the_gallery_says_how_to_add_a_machine(browser, site_url):
    """With JavaScript off, the gallery's file box stays hidden and a note points to adding a machine for everyone."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + "gallery/")
    note = page.locator("article p", has_text="Adding your own file here needs JavaScript")
    assert note.count() == 1 and note.is_visible() and not page.locator("#yours").is_visible()
    context.close()


def test_a_disabled_button_looks_disabled(browser, site_url):
    """The browser race's Start, disabled while it runs, is drawn faded with a not-allowed cursor."""
    page = tab(browser, site_url)
    page.goto(site_url + "race/")
    reach_box(page, "#browser")
    enabled = page.locator("#browser-start").evaluate("b => getComputedStyle(b).opacity")
    page.locator("#browser-start").evaluate("b => { b.disabled = true; }")
    style = page.locator("#browser-start").evaluate("b => [getComputedStyle(b).opacity, getComputedStyle(b).cursor]")
    page.close()
    assert float(style[0]) < float(enabled) and style[1] == "not-allowed", (enabled, style)


@pytest.mark.parametrize("width", [320, 1280])
def test_chart_letters_sit_at_their_lines_and_the_lines_fill_the_frame(browser, site_url, width):
    """On synthetic lanes: each end letter stays by its own line's end (four lines end within 11 px there, so their
    letters stack: at most three text lines away), and the y-axis is fitted to the data (the lines span most of the
    frame's height, not one decade of three)."""
    page, errors = open_race_with(browser, site_url, synthetic_race, viewport={"width": width, "height": 800})
    found = page.locator("#race-chart").evaluate("""svg => {
        const frame = svg.querySelector('.race-chart__frame');
        const ends = [...svg.querySelectorAll('path.race-chart__line')].map(p => {
            const nums = p.getAttribute('d').match(/-?[\\d.]+/g).map(Number);
            const letter = svg.querySelector(`text.race-chart__end[data-lane="${p.getAttribute('data-lane')}"]`);
            return {line: nums[nums.length - 1], letter: Number(letter.getAttribute('y')) - 3,
                    ys: nums.filter((_, i) => i % 2)};
        });
        return {ends, top: Number(frame.getAttribute('y')), height: Number(frame.getAttribute('height'))};
    }""")
    page.close()
    assert not errors
    far = [(e["line"], e["letter"]) for e in found["ends"] if abs(e["letter"] - e["line"]) > 3 * 14]
    assert not far, (far, [(e["line"], e["letter"]) for e in found["ends"]])
    ys = [y for e in found["ends"] for y in e["ys"]]
    assert max(ys) - min(ys) >= 0.6 * found["height"], (min(ys), max(ys), found["height"])


def two_lane_result(browser, site_url, cpu: dict[str, float], gpu: dict[str, float]) -> str:
    """The race's result line at batch 16 for one synthetic machine's CPU and GPU lanes (epoch seconds by batch)."""
    def data_of(real):
        def lane(i, kind, times):
            return {"id": f"lane-{i}", "kind": kind, "device": "cuda" if kind == "GPU" else "cpu", "estimate": False,
                    "label": f"Synthetic {kind}", "machine": "Synthetic", "machine_id": "synthetic",
                    "epochs": {"32": {b: {"seconds": t, "q1": t * 0.99, "q3": t * 1.01, "rows": 2048, "regime": None,
                                          "caveats": []} for b, t in times.items()}}}
        return {**real, "lanes": [lane(0, "CPU", cpu), lane(1, "GPU", gpu)], "widths": [32],
                "batches": sorted(int(b) for b in cpu), "machines": [{"crossover": {}, "id": "synthetic",
                                                                       "label": "Synthetic"}]}
    page, errors = open_race_with(browser, site_url, data_of, reduced_motion="reduce")
    set_batch(page, 16)
    page.get_by_role("button", name="Start").click()
    result = page.locator("#race-result").text_content()
    notes = page.locator(".race-lane__why").all_text_contents()  # the lanes' notes follow, on a line of their own
    page.close()
    assert not errors
    return result + "\nnotes: " + " | ".join(notes)


@pytest.mark.parametrize("gpu_seconds, doubted", [(2.5, True), (1.0, False)])
def test_a_win_over_an_epoch_whose_steps_were_quicker_at_twice_the_batch_is_doubted(browser, site_url, gpu_seconds,
                                                                                     doubted):
    """race.js applies race.at_double_pace: a CPU epoch of 3 s at batch 16, against 1 s (half the steps) at batch 32,
    is 2 s at that pace; a 2.5 s GPU win is doubtful, while a 1 s win clears even that pace and stands."""
    result = two_lane_result(browser, site_url, {"16": 3.0, "32": 1.0}, {"16": gpu_seconds, "32": 4.0})
    assert result.startswith("Out of line, not counted as a win: Synthetic GPU" if doubted else "Winner: Synthetic GPU")
    assert ("steps took longer than at twice the batch" in result) == doubted, result


@pytest.mark.parametrize("gpu_seconds, doubted", [(2.0, True), (0.5, False)])
def test_a_win_over_an_epoch_slower_than_at_half_the_batch_is_doubted(browser, site_url, gpu_seconds, doubted):
    """race.js applies race.out_of_line: a CPU epoch of 3 s at batch 16 against 1 s at batch 8 makes a 2 s GPU win
    doubtful, while a 0.5 s win clears even the faster time and stands unqualified."""
    result = two_lane_result(browser, site_url, {"8": 1.0, "16": 3.0}, {"8": 4.0, "16": gpu_seconds})
    assert result.startswith("Out of line, not counted as a win: Synthetic GPU" if doubted else "Winner: Synthetic GPU")
    assert "Both take 128 steps: " in result, result  # the reason is the replayed epochs' cost per step
    assert ("this lead would not hold" in result) == doubted, result
    assert ("off its trend: its epoch took longer than at batch 8, which runs twice the steps" in result) == doubted, result
    # A lead that holds even against the faster epoch gives that lead too, as the grid's ↑ does (1 s ÷ 0.5 s).
    assert ("Against that time, the lead is 2.0×." in result) == (not doubted), result


def test_a_cpu_only_machine_says_its_gpu_lane_was_not_measured_there(browser, site_url):
    """Choosing a machine without a GPU, in a build that has one, says the GPU was not measured on that machine, never
    that the build has no GPU results."""
    page, errors = open_race(browser, site_url, reduced_motion="reduce")
    data = json.loads(page.locator("#race-data").text_content())
    with_gpu = {lane["machine_id"] for lane in data["lanes"] if lane["kind"] == "GPU" and not lane["estimate"]}
    cpu_only = [m["id"] for m in data["machines"] if m["id"] not in with_gpu]
    if not with_gpu or not cpu_only or not page.locator("#race-machine").is_visible():
        pytest.skip("this build has no measured GPU beside a CPU-only machine")
    page.locator("#race-machine").select_option(cpu_only[0])
    said = page.locator(".race-lane--missing").text_content()
    assert "not measured on this machine" in said and "no GPU results are in this build" not in said
    assert errors == []
    page.close()
