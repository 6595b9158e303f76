"""A second machine (a synthetic test fixture, never shipped in results/) shows up everywhere it should."""

import json

from conftest import GUEST_GPU


def test_second_machine_appears_in_gallery_race_pages_and_data(guest_site, browser):
    """Gallery, race picker and lanes, lesson tables, crossover sentence and data file all include it."""
    from scripts.screenshot import serve

    site = guest_site
    assert GUEST_GPU in (site / "gallery" / "index.html").read_text()
    assert GUEST_GPU in (site / "batch-size" / "index.html").read_text()
    assert "GPU step shorter" in (site / "cheatsheet" / "index.html").read_text()
    assert "GPU step shorter" in (site / "batch-size" / "index.html").read_text()
    merged = json.loads((site / "data" / "results.json").read_text())
    assert {m["machine_id"] for m in merged["machines"]} >= {"fixture-gpu-machine"}
    server, base = serve(site)
    try:
        page = browser.new_page(reduced_motion="reduce")
        page.goto(base + "race/")
        picker = page.locator("#race-machine")
        assert picker.is_visible() and "fixture-gpu-machine" in picker.inner_html()
        picker.select_option("fixture-gpu-machine")
        assert page.locator(".race-lane[data-lane]").count() == 2  # its CPU and its GPU, measured
        assert page.locator(".race-lane--estimate").count() == 0
        page.close()
    finally:
        server.shutdown()


def test_many_machines_fit_every_page_budget_and_all_reach_the_gallery(guest_site):
    """With 52 committed machines, lesson pages draw a few and point to the rest; the gallery and data list all."""
    from test_site_accessibility import BUDGET, KIB, LESSON_BUDGET, pages, weight

    from build_hooks.dataset import SHOWN_MACHINES
    from conftest import CROWD

    site = guest_site
    over = {page: weight(site, page) // KIB for page in pages(site)
            if weight(site, page) > BUDGET.get(page, LESSON_BUDGET)}
    assert not over, f"pages over budget (KiB): {over}"
    gallery = (site / "gallery" / "index.html").read_text()
    assert all(f"Fixture CPU {i:02d}" in gallery for i in range(CROWD))
    machines = CROWD + 3  # the crowd, the two named guests and the host
    assert len(json.loads((site / "data" / "results.json").read_text())["machines"]) == machines
    batch_size = (site / "batch-size" / "index.html").read_text()
    drawn = [i for i in range(CROWD) if f"Fixture CPU {i:02d} (" in batch_size]  # where the named guests have no data
    assert len(drawn) <= SHOWN_MACHINES - 1  # the host takes the first place
    assert f"Measured on {machines - SHOWN_MACHINES} more machines" in batch_size
