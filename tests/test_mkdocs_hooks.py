"""Tests for build_hooks.mkdocs_hooks: markers, banners and errors."""

from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

from build_hooks import mkdocs_hooks, site_data
from build_hooks.dataset import Dataset, Machine
from conftest import synthetic_doc

PAGE = SimpleNamespace(file=SimpleNamespace(src_uri="lesson.md"))


@pytest.fixture
def dataset(monkeypatch):
    data = Dataset([Machine(synthetic_doc(), "f", "t")])
    monkeypatch.setattr(site_data, "_current", data)
    return data


def test_fact_markers_are_filled(dataset):
    """A {{ fact: name }} marker is replaced by the rendered fact."""
    out = mkdocs_hooks.on_page_markdown("CPU: {{ fact: host_cpu }}.", PAGE, None, None)
    assert out == "CPU: Fixture CPU (4 threads)."


def test_unknown_marker_fails_naming_page_and_marker(dataset):
    """An unknown marker stops the build with the page and the marker in the message."""
    with pytest.raises(PluginError, match=r"lesson\.md.*\{\{ fact: nope \}\}"):
        mkdocs_hooks.on_page_markdown("{{ fact: nope }}", PAGE, None, None)


def test_quick_mode_pages_carry_a_banner(dataset):
    """Pages built from quick-mode data start with a visible warning."""
    dataset.machines[0].doc["mode"] = "quick"
    out = mkdocs_hooks.on_page_markdown("# Title", PAGE, None, None)
    assert out.startswith('!!! warning "Quick mode')
