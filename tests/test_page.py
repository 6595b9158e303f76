"""Tests for build_hooks.page and build_hooks.views: every name a page uses resolves, without a build."""

import re

import pytest

from build_hooks import markers, mkdocs_hooks, page
from build_hooks.dataset import Dataset, Machine
from conftest import ROOT, complete_doc

MARKER = re.compile(r"\{\{\s*(fact|section):\s*([a-z0-9_]+)\s*\}\}")


def page_sources():
    """Every page's Markdown as the build sees it (All measurements completed by its hook)."""
    for path in (ROOT / "docs").rglob("*.md"):
        text = path.read_text()
        yield path, mkdocs_hooks.with_every_experiment(text) if path.name == mkdocs_hooks.MEASUREMENTS_PAGE else text


FENCE = re.compile(r"^(\s*)(```|~~~).*?^\1\2\s*$", re.M | re.S)


def outside_code(text: str) -> str:
    """Markdown without its fenced blocks and inline code spans, where markers are shown, not filled."""
    return markers.CODE_SPAN.sub("", FENCE.sub("", text))


def used_names() -> set[tuple[str, str]]:
    return {m.groups() for _, text in page_sources() for m in MARKER.finditer(outside_code(text))}


@pytest.mark.parametrize("gpu", [None, "Fixture GPU"])
def test_every_marker_in_docs_resolves_against_synthetic_data(gpu, request):
    """Each fact and section a page names renders from a complete synthetic dataset, CPU-only or with a GPU."""
    if gpu is None:  # CPU-only plots are drawn by test_schema_valid_variants; the GPU case draws every line kind
        request.getfixturevalue("plots_left_out")
    data = Dataset([Machine(complete_doc(gpu), "fixture", "this build host")])
    for kind, name in sorted(used_names()):
        text = page.render_fact(name, data) if kind == "fact" else page.render_section(name, data)
        # These speak of an estimated lane or crossover: with a measured GPU there is none, and they say nothing.
        # Home's short answer quotes a measured GPU's step work only: without one it adds nothing. Its flat-step
        # sentence speaks only of a measured GPU whose step stayed flat.
        # The estimate table's reading is folded away with its table where a GPU was measured. Where the race and the
        # steps cross at one batch (or there is no GPU), batch-size has no disagreement to state.
        assert (text.strip() or (gpu and name in ("estimate_trails", "estimated_crossover_table",
                                                  "gpu_estimate_reading"))
                or (not gpu and name == "home_answer_work") or name in ("home_gpu_flat", "steps_race_differ")), \
            (kind, name)


@pytest.mark.parametrize("path", sorted((ROOT / "docs").rglob("*.md")), ids=lambda p: p.name)
def test_every_page_fills_all_its_markers(path):
    """Every marker outside code is replaced (the same code the build runs); those in code stay as written."""
    data = Dataset([Machine(complete_doc(), "fixture", "this build host")])
    source = path.read_text()
    filled = markers.fill(source, data)
    assert MARKER.findall(outside_code(filled)) == []
    shown = len(MARKER.findall(source)) - len(MARKER.findall(outside_code(source)))
    assert len(MARKER.findall(filled)) == shown


def test_unknown_names_raise_listing_the_known_ones():
    """A page naming a fact or section nobody registers gets the list of real names."""
    with pytest.raises(page.UnknownName, match="known: .*crossover_summary"):
        page.render_fact("crossover_sumary", Dataset([]))
    with pytest.raises(page.UnknownName, match="known: .*training_step"):
        page.render_section("training_steps", Dataset([]))


def test_every_registered_name_is_used_by_some_page():
    """No fact or section is dead code: each is named on at least one page."""
    used = used_names()
    registered = {("fact", n) for n in page.names()["fact"]} | {("section", n) for n in page.names()["section"]}
    assert registered - used == set()


def test_all_measurements_lists_every_experiment_even_unlisted_ones():
    """An experiment the page does not list gets its heading and raw table before the provenance."""
    page_text = "# All measurements\n\n## Threads\n\n{{ section: measurements_threads }}\n\n## Provenance\n"
    completed = mkdocs_hooks.with_every_experiment(page_text)
    assert completed.count("measurements_threads") == 1
    assert "## Training step\n\n{{ section: measurements_training_step }}" in completed
    assert completed.index("measurements_training_step") < completed.index("## Provenance")


def apple_silicon_doc() -> dict:
    """A complete synthetic Mac: its GPU measured through MPS wherever an experiment runs there."""
    doc = complete_doc(gpu="Apple M1 Max GPU (MPS)", machine_id="apple-fixture", gpu_device="mps")
    doc["machine_info"]["gpu"].update(cuda_version=None, driver=None, capability=None, multiprocessors=None)
    return doc


NO_GPU_PHRASES = ["No GPU has been measured", "No GPU was measured", "no GPU measured", "measured no GPU",
                  "it has no GPU", "(no GPU)", "no CUDA or MPS device", "no GPU recorded"]


def test_every_page_treats_an_apple_gpu_measured_through_mps_as_a_gpu(plots_left_out):
    """A Mac's file: no page says it has no GPU, and its crossover and GPU lane are on the pages."""
    from build_hooks import race, untrusted

    data = Dataset([Machine(apple_silicon_doc(), "results/apple.json", "this build host")])
    # The code reference quotes the views' docstrings, which name every case: it describes no data.
    said = {path.name: untrusted.restore(markers.fill(text, data)) for path, text in page_sources()
            if path.name != "code.md"}
    for name, text in said.items():
        for phrase in NO_GPU_PHRASES:
            assert phrase not in text, (name, phrase)
    assert "the <bdi>Apple M1 Max GPU (MPS)</bdi>'s step never became the shorter" in said["batch-size.md"]
    lanes = race.race_data(data)["lanes"]
    assert [lane["kind"] for lane in lanes if lane["device"] == "mps"] == ["GPU"]
    assert not any(lane["estimate"] for lane in lanes)
