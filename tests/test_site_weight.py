"""What a first visit downloads, counted in Chromium: every page within its budget; search, source
listings and the race's validator arrive only when a reader asks for them."""

import re

import pytest

from test_site_accessibility import pages

KIB = 1024
FIRST_LOAD_BUDGET = 450 * KIB  # every byte a first visit fetches, uncompressed, theme included
# The race page carries the race and "Add your machine" (yours.js, 40 KiB): loading that only when
# a reader reaches for it would bring the page under 450 KiB too; until then it has its own budget.
BUDGET = {"race/": 480 * KIB}
ON_DEMAND = ("search_index.json", "/workers/search.", "/code-behind/", "cfworker-json-schema", "results.schema.json")


def first_load(browser, url: str, width: int = 1280) -> tuple[dict[str, int], object]:
    """(bytes per URL fetched until the network is idle, the open page) for a first visit to `url`."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    fetched: dict[str, int] = {}
    page.on("response", lambda response: fetched.__setitem__(response.url, len(response.body())))
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(200)  # a script that fetches after load would be counted too
    return fetched, page


def test_every_first_load_fits_450_kib(browser, site_url, built_site):
    """No page's first visit downloads more than 450 KiB (HTML, theme, scripts, images), uncompressed (race/ 480)."""
    over = {}
    for name in pages(built_site):
        fetched, page = first_load(browser, site_url + name)
        page.close()
        if sum(fetched.values()) > BUDGET.get(name, FIRST_LOAD_BUDGET):
            over[name] = {"KiB": sum(fetched.values()) // KIB,
                          "largest": sorted(fetched.items(), key=lambda kv: -kv[1])[:3]}
    assert not over, over


def test_a_first_visit_fetches_nothing_it_has_not_been_asked_for(browser, site_url, built_site):
    """No page fetches the search index or worker, a source listing or the validator before a reader acts."""
    early = {}
    for name in pages(built_site):
        fetched, page = first_load(browser, site_url + name)
        page.close()
        found = [url for url in fetched if any(part in url for part in ON_DEMAND)]
        if found:
            early[name] = found
    assert not early, early


@pytest.mark.parametrize("reach", ["click the box", "press /", "tap the icon on a phone"])
def test_search_loads_when_reached_for_and_finds(browser, site_url, reach):
    """Reaching for search (box, shortcut or phone icon) loads the index and lists results for a term."""
    fetched, page = first_load(browser, site_url + "glossary/", width=375 if "phone" in reach else 1280)
    if reach == "click the box":
        page.locator("input.md-search__input").click()
    elif reach == "press /":
        page.keyboard.press("/")
    else:
        page.locator("label[for='__search']").first.click()
    page.keyboard.type("pinned", delay=20)
    page.wait_for_selector(".md-search-result__item", timeout=60_000)
    assert any(url.endswith("search/search_index.json") for url in fetched)
    page.close()


def test_a_highlight_link_loads_search_at_once(browser, site_url):
    """A page opened from a search result (?h=term) fetches the index without waiting for a reader."""
    fetched, page = first_load(browser, site_url + "transfer/?h=pinned")
    page.close()
    assert any(url.endswith("search/search_index.json") for url in fetched)


def test_opening_a_code_block_shows_its_listing(browser, site_url):
    """Opening a "Code behind this" block fetches its source listing and shows it highlighted in place."""
    fetched, page = first_load(browser, site_url + "batch-size/")
    block = page.locator("details.crossover-code").first
    block.locator("summary").first.click()
    listing = block.locator(":scope > .crossover-code__listing .highlight code")
    listing.wait_for(timeout=10_000)
    assert "def " in listing.inner_text()
    assert any("/code-behind/" in url for url in fetched)
    page.close()


def test_without_scripts_a_code_block_links_its_listing(browser, site_url, built_site):
    """Without JavaScript every block keeps a link to its listing, and the listing file holds the source."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + "batch-size/")
    href = page.locator("details.crossover-code .crossover-code__listing a").first.get_attribute("href")
    context.close()
    listing = (built_site / "batch-size" / href).resolve().read_text(encoding="utf-8")
    assert 'highlight"><pre>' in listing and "def " in re.sub(r"<[^>]+>", "", listing)

