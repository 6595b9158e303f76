"""Tests for build_hooks.markers: markers filled from data, code left alone, strings kept text."""

import markdown
import pytest
import yaml

from build_hooks import markers, render, site_data
from build_hooks.dataset import Dataset, Machine
from conftest import ROOT, synthetic_doc, without_code_blocks

PAYLOADS = [
    "![x](http://192.0.2.1/x.png){: onerror=alert(document.domain) }",
    "[click](javascript:alert(1))",
    "<img src=x onerror=alert(1)>",
    "**bold** _it_ `code` | pipe |",
    "{: .evil } $\\alpha$ &amp;",
    "\u202e61",
]


def site_markdown() -> markdown.Markdown:
    """Python-Markdown with the extensions mkdocs.yml lists (markdown-exec's fences aside)."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    names, configs = [], {}
    for entry in config["markdown_extensions"]:
        name, options = next(iter(entry.items())) if isinstance(entry, dict) else (entry, {})
        names.append(name)
        configs[name] = {k: v for k, v in options.items() if name != "pymdownx.snippets"}
    return markdown.Markdown(extensions=names, extension_configs={k: v for k, v in configs.items() if v})


@pytest.fixture
def data(monkeypatch):
    def with_names(brand="Fixture CPU", gpu=None):
        steps = {("cpu", 32, 1): 1e-3} | ({("cuda", 32, 1): 1e-4} if gpu else {})
        dataset = Dataset([Machine(synthetic_doc(brand=brand, gpu=gpu, step_times=steps), "f", "t")])
        monkeypatch.setattr(site_data, "_current", dataset)
        return dataset
    return with_names


def test_markers_are_filled(data):
    """A {{ fact: name }} marker is replaced by the rendered fact."""
    assert markers.fill("CPU: {{ fact: host_cpu }}.", data()).startswith("CPU: CROSSOVERTEXT")
    assert without_code_blocks(site_markdown().convert("CPU: {{ fact: host_cpu }}.")) == \
        "<p>CPU: <bdi>Fixture CPU (4 threads)</bdi>.</p>\n"


def test_a_section_that_only_says_why_it_is_empty_has_no_code_box(data):
    """A section whose whole output is its 'nothing to show' line gets no Code behind box; with a table, it does."""
    data()  # no GPU: the measured-crossover table is only its line
    empty = site_markdown().convert("{{ section: crossover_table }}")
    assert "crossover-missing" in empty and "crossover-code" not in empty


def test_a_page_shows_the_code_behind_its_facts_and_sections(data):
    """Each section carries its view's code and file:line; the page's foot lists its facts' code."""
    data(gpu="Fixture GPU")
    html = site_markdown().convert("A {{ fact: host_cpu }}.\n\n{{ section: crossover_table }}\n\nMore.")
    section = html[html.index("</table>"):html.index("More.")]
    assert '<details class="crossover-code"' in section and "build_hooks/views/training_step.py:" in section
    assert "measured by <code>snippets/" in section and "<code>snippets/training_step.py:" in section and '<span class="nf">crossover_table</span>' in section
    foot = html[html.index("More."):]
    assert "Code behind the 1 fact in this page" in foot and 'href="../code/#fact-host-cpu"' in render.site_root_links(foot, 1)
    assert '<span class="nf">host_cpu</span>' in foot and "data-search-exclude" in foot


@pytest.mark.parametrize("marker", ["{{ fact: nope }}", "{{ fact: }}", "{{ fact: host-cpu }}",
                                    "{{ fact: host_cpu", "{{fact:host_cpu}", "{{ section: training_step }}"])
def test_unknown_or_malformed_markers_fail_naming_line_and_marker(data, marker):
    """A marker that names no fact, or is malformed or unclosed, stops the build with line and text."""
    data()
    with pytest.raises(markers.MarkerError, match=r"line 3: .*marker '\{\{ ?(fact|section)"):
        markers.fill(f"# Title\n\nText {marker} more.", site_data.current())


def test_markers_in_code_are_shown_as_written(data):
    """Inline code and fenced blocks keep the marker syntax, so a page can document it."""
    data()
    html = site_markdown().convert("Write `{{ fact: nope }}`.\n\n```text\n{{ fact: nope }}\n```\n")
    assert html.count("{{ fact: nope }}") == 2


@pytest.mark.parametrize("payload", PAYLOADS)
def test_untrusted_names_are_text_after_markdown(data, payload):
    """A machine name carrying Markdown, attr_list or HTML syntax comes out as escaped text."""
    data(brand=payload, gpu=payload)
    html = without_code_blocks(site_markdown().convert("{{ fact: host_cpu }}\n\n{{ fact: crossover_summary }}"))
    for tag in ("<img", "<a ", "<strong", "<em", "<code", "<table", "onerror=\"", "class=\"evil"):
        assert tag not in html
    assert "\u202e" not in html and "CROSSOVERTEXT" not in html
    visible = payload.replace("\u202e", "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert html.count(f"{visible}") >= 2


def test_quick_mode_pages_carry_a_banner_but_exec_outputs_do_not(data):
    """Pages built from quick-mode data start with a visible warning; a block's inner render does not."""
    data().machines[0].doc["mode"] = "quick"
    assert "Quick mode: not representative" in site_markdown().convert("# Title")
    inner = site_markdown()
    inner._original_md = object()  # how markdown-exec marks the converter of a block's output
    assert "Quick mode" not in inner.convert("output")


def test_a_fact_that_divides_by_a_zero_stops_the_page_naming_marker_file_and_experiment():
    """A schema-valid zero byte count makes the marker's error name the line, the fact, the file and the experiment."""
    from build_hooks.dataset import Dataset, Machine
    from conftest import complete_doc

    doc = complete_doc()
    for bench in doc["benchmarks"]:
        if bench["group"] == "grad_accumulation":
            bench["extra_info"]["activation_bytes"] = 0
    data = Dataset([Machine(doc, "results/zeros.json", "committed reference")])
    with pytest.raises(markers.MarkerError, match=r"line 1: marker '\{\{ fact: accumulation_summary \}\}'.*"
                                                  r"results/zeros.json.*grad_accumulation points"):
        markers.fill("It {{ fact: accumulation_summary }}.", data)
