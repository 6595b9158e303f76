"""Tests for build_hooks.deferred: figures and code leave a page only until it is written."""

from build_hooks import deferred
from build_hooks.render import Html


def test_without_mkdocs_nothing_is_deferred():
    """Outside a build (the autouse fixture's state) every figure and block stays in place."""
    html = Html('<figure><svg width="1"><path/></svg></figure>')
    assert deferred.figures(html) == html and deferred.keep(html) == html


def test_kept_html_comes_back_in_place(monkeypatch):
    """Under MkDocs each SVG and code block becomes a comment, and restore puts each back."""
    monkeypatch.setattr(deferred, "_kept", {})
    page = str(deferred.figures(Html('<p>a</p><svg id="1"></svg><p>b</p><svg id="2"></svg>')))
    page += deferred.code_blocks('<div class="highlight"><pre><code>x = 1</code></pre></div>')
    assert "<svg" not in page and "highlight" not in page
    assert deferred.restore(page) == ('<p>a</p><svg id="1"></svg><p>b</p><svg id="2"></svg>'
                                      '<div class="highlight"><pre><code>x = 1</code></pre></div>')


def test_a_forged_comment_without_the_token_stays_text(monkeypatch):
    """A results file cannot guess this process's token, so an imitation restores nothing."""
    monkeypatch.setattr(deferred, "_kept", {"0": "<script>"})
    assert deferred.restore("<!--crossover-deferred-0000-0-->") == "<!--crossover-deferred-0000-0-->"


def test_a_notebook_code_cell_is_kept_back_from_search_too(monkeypatch):
    """A notebook's highlighted code cell (mkdocs-jupyter's classes) leaves the indexed page and comes back."""
    monkeypatch.setattr(deferred, "_kept", {})
    cell = '<div class="highlight-ipynb hl-python highlight"><pre><span></span>pin_memory=True</pre></div>'
    page = deferred.code_blocks(f"<p>a</p>{cell}")
    assert "pin_memory" not in page and deferred.restore(page) == f"<p>a</p>{cell}"
