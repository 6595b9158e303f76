"""Tests for build_hooks.mkdocs_hooks: banners and leftover placeholders."""

from types import SimpleNamespace

import pytest

from build_hooks import mkdocs_hooks, site_data, untrusted
from build_hooks.dataset import Dataset, Machine
from conftest import ROOT, synthetic_doc

PAGE = SimpleNamespace(file=SimpleNamespace(src_uri="lesson.md"), url="lesson/")


@pytest.fixture
def dataset(monkeypatch):
    data = Dataset([Machine(synthetic_doc(), "f", "t")])
    monkeypatch.setattr(site_data, "_current", data)
    return data


def test_placeholders_left_in_the_page_frame_are_shown_as_text(tmp_path):
    """Untrusted text that reached the title or table of contents is escaped there too."""
    out = mkdocs_hooks.on_post_page(f"<title>{untrusted.placeholder('<b>x</b>')}</title>", PAGE,
                                    {"site_dir": str(tmp_path)})
    assert out == "<title><bdi>&lt;b&gt;x&lt;/b&gt;</bdi></title>"


def test_a_placeholder_inside_a_tag_is_escaped_text_without_markup():
    """In an attribute (a card's data-label, a table's aria-label) untrusted text is escaped with no <bdi>, which an
    attribute would show as letters; in the page's text it keeps its <bdi>."""
    name = untrusted.placeholder('NVIDIA "H200" <b>')
    out = untrusted.restore(f'<td data-label="time at {name}">{name}</td>')
    assert out == ('<td data-label="time at NVIDIA &quot;H200&quot; &lt;b&gt;">'
                   '<bdi>NVIDIA &quot;H200&quot; &lt;b&gt;</bdi></td>')


def test_the_downloaded_notebook_has_no_site_only_text_or_relative_links():
    """The .ipynb a reader downloads keeps its words but not the site's relative links (dead in Jupyter or Colab)
    nor the sentences about the page it was downloaded from."""
    from build_hooks import mkdocs_hooks

    source = (ROOT / "docs" / "lab" / "crossover_lab.py").read_text()
    text = mkdocs_hooks.for_download(source)
    assert "](../" in source and "](../" not in text and "layer width the race offers" in text
    assert "button above" in source and "button above" not in text and "The page you are reading" not in text
    assert "# # Lab: find your own crossover" in text and "import torch" in text
