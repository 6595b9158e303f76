"""Search on the built site: a page ranks first for the terms it defines (Chromium, the theme's own search)."""

import pytest

RANKED = [("tensor core", "gpu-anatomy/"), ("pinned", "transfer/"), ("pinned memory", "transfer/"),
          ("roofline", "regimes/"), ("bf16", "mixed-precision/")]


def first_results(page, site_url: str, query: str) -> list[str]:
    """The pages the search box lists for `query`, best first (one per page)."""
    page.goto(site_url)
    page.locator("input.md-search__input").click()  # at desktop width the box sits in the header
    page.keyboard.type(query, delay=20)  # keystrokes, as the theme's search listens to them
    page.wait_for_selector(".md-search-result__item", timeout=60_000)
    links = page.eval_on_selector_all(".md-search-result__item > a", "els => els.map(e => e.getAttribute('href'))")
    pages = []
    for link in links:
        path = link.removeprefix(site_url).split("#")[0].split("?")[0].lstrip("./")
        if path not in pages:
            pages.append(path)
    return pages


@pytest.mark.parametrize("query, defining", RANKED)
def test_the_defining_page_ranks_first(browser, site_url, query, defining):
    """Searching a term the site defines lists the page that defines it first."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    found = first_results(page, site_url, query)
    page.close()
    assert found and found[0] == defining, (query, found[:5])
