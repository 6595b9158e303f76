"""What a first visit downloads, counted in Chromium: every page within its budget; search, source
listings and the race's validator arrive only when a reader asks for them."""

import re

import pytest

from conftest import first_load, reach_box

KIB = 1024
FIRST_LOAD_BUDGET = 450 * KIB  # every byte a first visit fetches, uncompressed, theme included
ON_DEMAND = ("search_index.json", "/workers/search.", "/code-behind/", "cfworker-json-schema", "results.schema.json")


def test_every_first_load_fits_450_kib(first_visits):
    """No page's first visit downloads more than 450 KiB (HTML, theme, scripts, images), uncompressed."""
    over = {name: {"KiB": sum(fetched.values()) // KIB, "largest": sorted(fetched.items(), key=lambda kv: -kv[1])[:3]}
            for name, fetched in ((name, visit.fetched) for name, visit in first_visits.items())
            if sum(fetched.values()) > FIRST_LOAD_BUDGET}
    assert not over, over


def test_a_first_visit_fetches_nothing_it_has_not_been_asked_for(first_visits):
    """No page fetches the search index or worker, the validator, or a source listing that is not on
    (or next to) the first screen, before a reader acts."""
    early = {}
    for name, visit in first_visits.items():
        found = [url for url in visit.fetched if any(part in url for part in ON_DEMAND) and url not in visit.on_screen]
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
    index = [url for url in fetched if url.endswith("search/search_index.json")]
    if not index:  # the search worker fetches it: under load, after the page's network has gone quiet
        index = [page.wait_for_event("response", lambda r: r.url.endswith("search/search_index.json"),
                                     timeout=60_000).url]
    page.close()
    assert index


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



def test_a_code_tab_shows_its_listing_when_chosen_with_a_copy_button(browser, site_url):
    """Choosing a "Code" tab fetches its snippet's listing and shows it with the theme's copy button."""
    fetched, page = first_load(browser, site_url + "batch-size/")
    page.get_by_text("Code", exact=True).first.click()
    code = page.locator(".tabbed-block .crossover-code__listing .highlight pre > code").first
    code.wait_for(timeout=10_000)
    assert '"""' in code.inner_text()
    button = page.locator(".tabbed-block .crossover-code__listing .md-code__button[data-md-type=copy]").first
    target = button.get_attribute("data-clipboard-target")
    assert page.locator(target).count() == 1
    page.close()


def test_a_listing_in_a_tab_shown_from_the_start_loads_when_scrolled_to(browser, site_url):
    """A tab set whose first tab is a listing (the race's code) fetches it only once the reader scrolls near it."""
    fetched, page = first_load(browser, site_url + "race/")
    assert not any("/code-behind/" in url for url in fetched)
    holder = page.locator(".tabbed-block .crossover-code__listing").first
    holder.scroll_into_view_if_needed()
    holder.locator(".highlight").wait_for(timeout=10_000)
    assert any("/code-behind/" in url for url in fetched)
    page.close()


def test_the_race_pages_own_files_wait_until_a_reader_nears_them(first_visits, browser, site_url):
    """The race page's first visit leaves out yours.js ("Race your browser", "Add your machine"); scrolling to
    "Add your machine" loads it and shows the box."""
    assert not [url for url in first_visits["race/"].fetched if url.endswith("/javascripts/yours.js")]
    _, page = first_load(browser, site_url + "race/")
    reach_box(page)
    assert page.locator("#yours-file").count() == 1 and page.locator("#browser").is_visible()
    page.close()
