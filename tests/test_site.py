"""Site-level tests: the strict build, the shipped data and a real browser."""

import json
import shutil
import subprocess
import sys
from urllib.parse import urlparse

import pytest
import yaml

from build_hooks import store
from conftest import ROOT, build_site, quick_env


def nav_pages(entries=None) -> list[str]:
    """Every page in mkdocs.yml's nav, as the URL path the built site serves it at."""
    if entries is None:
        entries = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)["nav"]
    pages = []
    for entry in entries:
        target = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(target, list):
            pages += nav_pages(target)
        else:
            stem = target.rsplit(".", 1)[0]
            pages.append("" if stem == "index" else stem + "/")
    return pages


PAGES = nav_pages()


def test_strict_build_ships_the_data(built_site):
    """The strict build succeeds and publishes data/results.json with valid machine files."""
    merged = json.loads((built_site / "data" / "results.json").read_text())
    assert merged["machines"]
    for machine in merged["machines"]:
        store.validate({k: v for k, v in machine.items() if k not in {"origin", "source"}}, "site")


def test_pages_render_measured_results_with_provenance(built_site):
    """The batch-size page has the plot, the table, a provenance line and a data link."""
    html = (built_site / "batch-size" / "index.html").read_text()
    assert 'class="crossover-plot"' in html and "<table>" in html
    assert 'class="crossover-provenance"' in html and "../data/results.json" in html
    assert "Quick mode" in html  # the tests build in quick mode, and the page says so


@pytest.mark.slow
def test_malformed_committed_results_fail_the_build_naming_file_and_field(tmp_path):
    """A broken file in results/ stops the build with its path and field on stderr."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "broken.json").write_text('{"schema_version": 1, "mode": "full"}')
    result = build_site(tmp_path / "site", quick_env(tmp_path / "cache", results))
    assert result.returncode != 0
    assert "broken.json" in result.stderr and "field $" in result.stderr


@pytest.mark.slow
def test_a_committed_file_with_markup_in_a_param_is_refused_by_the_build(tmp_path):
    """A payload in a numeric or word param stops the strict build, naming file, point and key, before measuring."""
    from conftest import complete_doc

    doc = complete_doc(machine_id="param-payload")
    bench = next(b for b in doc["benchmarks"] if b["group"] == "grad_accumulation")
    bench["params"]["micro_batch"] = '<img src=x onerror="window.__pwned = 1">'
    results = tmp_path / "results"
    results.mkdir()
    (results / "payload.json").write_text(json.dumps(doc))
    result = build_site(tmp_path / "site", quick_env(tmp_path / "cache", results))
    assert result.returncode != 0 and not (tmp_path / "cache").exists()
    assert "results/payload.json" in result.stderr or "payload.json: field" in result.stderr
    assert "micro batch in its params:" in result.stderr and "wrong for experiment grad_accumulation" in result.stderr
    assert ".params.micro_batch)" in result.stderr


def test_browser_makes_no_request_beyond_localhost(first_visits, browser, site_url):
    """Loading every page in Chromium sends no request to any host but 127.0.0.1, and neither do dark mode and
    search (its worker and index), which a first visit does not load."""
    requests, errors = [], []
    page = browser.new_page()
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site_url + "glossary/", wait_until="networkidle")
    page.locator("label[title='Switch to dark mode']:visible").click()
    assert page.locator("body").get_attribute("data-md-color-scheme") == "slate"
    page.keyboard.press("/")
    page.keyboard.type("batch")
    page.wait_for_selector(".md-search-result__item", timeout=90_000)  # the index builds in a worker
    page.close()
    requests += [url for visit in first_visits.values() for url in visit.requests]
    foreign = [u for u in requests if urlparse(u).scheme not in {"data", "blob"}
               and urlparse(u).hostname != "127.0.0.1"]
    assert set(first_visits) >= set(PAGES)
    assert requests and foreign == [] and errors == []


def test_recall_check_counts_revealed_answers(browser, site_url):
    """Opening answers on the recall page updates the revealed/total count."""
    from playwright.sync_api import expect

    page = browser.new_page()
    page.goto(site_url + "recap/")
    count = page.locator(".recall__count")
    total = page.locator(".recall details").count()
    assert total >= 9 and count.text_content() == f"Revealed 0 of {total} answers."
    page.locator(".recall details summary").first.click()
    page.locator(".recall details summary").nth(4).click()
    # The toggle event is queued after the click returns, so wait for the text rather than read it at once.
    expect(count).to_have_text(f"Revealed 2 of {total} answers.")
    page.close()


def test_pages_parse_as_html5_and_log_no_console_errors(first_visits, built_site):
    """Every built page parses with html5lib without errors and loads in Chromium without console errors."""
    import html5lib

    for path in sorted(built_site.rglob("index.html")):
        parser = html5lib.HTMLParser(strict=False)
        parser.parse(path.read_bytes())
        assert [e for e in parser.errors if e[1] not in {"unexpected-end-tag-before-html"}] == [], path
    errors = {name: visit.errors for name, visit in first_visits.items() if visit.errors}
    assert first_visits and not errors, errors


NO_TORCH = """
import sys, importlib.abc
class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            print("crossover-test: torch imported by a warm build", file=sys.stderr)
            raise ImportError("torch is blocked in this test")
sys.meta_path.insert(0, NoTorch())
from mkdocs.__main__ import cli
sys.argv = ["mkdocs", "build", "--strict", "--site-dir", sys.argv[1]]
cli()
"""


@pytest.mark.slow
def test_warm_build_renders_without_importing_torch(tmp_path, quick_cache):
    """Once this machine is measured, a rebuild checks freshness and renders without torch."""
    cache = tmp_path / "cache"
    shutil.copytree(quick_cache, cache)
    result = subprocess.run([sys.executable, "-c", NO_TORCH, str(tmp_path / "site")], cwd=ROOT,
                            env=quick_env(cache), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and "torch imported" not in result.stderr, result.stderr[-3000:]




def test_no_page_scrolls_sideways_on_a_375_px_phone(browser, site_url):
    """At 375 px no page is wider than the screen: long code lines scroll inside their block (the cheat sheet's did not)."""
    page = browser.new_page(viewport={"width": 375, "height": 800}, is_mobile=True)
    wide = {}
    for path in PAGES:
        page.goto(site_url + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 375:
            wide[path] = width
    page.close()
    assert not wide, f"pages wider than a 375 px phone: {wide}"



def test_a_wide_tables_first_column_stays_in_view_as_it_scrolls_on_a_phone(browser, site_url):
    """At 375 px a table wider than the screen scrolls inside its wrapper, and its first column (the row's name) stays
    at the wrapper's left edge while the other columns pass under it."""
    page = browser.new_page(viewport={"width": 375, "height": 800}, is_mobile=True)
    page.goto(site_url + "batch-size/")
    wide = page.locator(".crossover-table").filter(has=page.locator("td")).evaluate_all(
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 40).map(e => e.id || e.getAttribute('aria-label'))")
    assert wide, "no wide table on batch-size to test"
    moved = page.locator(".crossover-table").filter(has=page.locator("td")).evaluate_all("""els => els
        .filter(e => e.scrollWidth > e.clientWidth + 40).map(e => {
            e.scrollLeft = e.scrollWidth;
            const first = e.querySelector('tbody td').getBoundingClientRect().left, second =
                e.querySelector('tbody td:nth-child(2)').getBoundingClientRect().left;
            return [Math.round(first - e.getBoundingClientRect().left), second < first]; })""")
    page.close()
    assert all(offset == 0 for offset, _ in moved) and any(passed for _, passed in moved), moved

FIRST_SCREEN = [  # page, what a reader must see on the first screen, the viewport
    ("", "#verdict-grid", (1366, 768)), ("", "article a[href^='race/']", (1366, 768)),
    ("race/", "#race-start", (1366, 768)), ("race/", "#race-start", (375, 667)),
    ("batch-size/", "article .crossover-table", (1366, 768)), ("why-gpu/", "article .crossover-table", (1366, 768)),
]


@pytest.mark.parametrize("path, what, viewport", FIRST_SCREEN)
def test_each_page_opens_with_its_answer(browser, site_url, path, what, viewport):
    """The first screen holds the page's key table, figure or control, as published (the tests' quick-mode warning,
    which a published site never shows, is taken out before measuring)."""
    width, height = viewport
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(site_url + path)
    page.evaluate("document.querySelectorAll('.crossover-quick').forEach(e => e.remove())")
    page.wait_for_selector(what, state="visible")
    top = page.locator(what).first.evaluate("e => e.getBoundingClientRect().top + scrollY")
    page.close()
    assert top < height, f"{what} on {path or 'home'} starts at {top:.0f} px, below the first {height} px"
