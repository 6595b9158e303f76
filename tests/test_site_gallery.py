"""A second machine (a synthetic test fixture, never shipped in results/) shows up everywhere it should."""

import json
import shutil

import pytest

from conftest import GUEST_GPU, build_site, quick_env


def test_second_machine_appears_in_gallery_race_pages_and_data(guest_site, browser):
    """Gallery, race picker and lanes, lesson tables, crossover sentence and data file all include it."""
    from scripts.screenshot import serve

    site = guest_site
    assert GUEST_GPU in (site / "gallery" / "index.html").read_text()
    assert GUEST_GPU in (site / "batch-size" / "index.html").read_text()
    assert "GPU training step faster" in (site / "cheatsheet" / "index.html").read_text()
    assert "the GPU step is faster" in (site / "batch-size" / "index.html").read_text()
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


@pytest.mark.long
def test_fifty_machines_fit_every_page_budget_and_all_reach_the_gallery(tmp_path, quick_cache):
    """With 50 committed machines, lesson pages draw a few and point to the rest; the gallery and data list all."""
    from test_site_accessibility import BUDGET, KIB, LESSON_BUDGET, pages, weight

    from build_hooks.dataset import SHOWN_MACHINES
    from conftest import complete_doc

    results = tmp_path / "results"
    results.mkdir()
    for i in range(50):
        doc = complete_doc(gpu=f"Fixture GPU {i}" if i % 3 == 0 else None, machine_id=f"fixture-{i:02d}")
        doc["mode"], doc["machine_info"]["cpu"]["brand"] = "quick", f"Fixture CPU {i:02d}"
        (results / f"fixture-{i:02d}.json").write_text(json.dumps(doc))
    cache = tmp_path / "cache"
    shutil.copytree(quick_cache, cache)
    result = build_site(tmp_path / "site", quick_env(cache, results))
    assert result.returncode == 0, result.stderr[-3000:]
    site = tmp_path / "site"
    over = {page: weight(site, page) // KIB for page in pages(site)
            if weight(site, page) > BUDGET.get(page, LESSON_BUDGET)}
    assert not over, f"pages over budget (KiB): {over}"
    gallery = (site / "gallery" / "index.html").read_text()
    assert all(f"Fixture CPU {i:02d}" in gallery for i in range(50))
    assert len(json.loads((site / "data" / "results.json").read_text())["machines"]) == 51  # and the host
    batch_size = (site / "batch-size" / "index.html").read_text()
    drawn = [i for i in range(50) if f"Fixture CPU {i:02d} (" in batch_size]
    assert 0 < len(drawn) <= SHOWN_MACHINES - 1  # the host takes the first place
    assert f"Also measured on {51 - SHOWN_MACHINES} more machines" in batch_size
