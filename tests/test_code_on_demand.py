"""Tests for build_hooks.code_on_demand: listings move to files of their own, the block keeps a link."""

from build_hooks import code_on_demand

LISTING = '<div class="highlight"><pre><span></span><code>x = 1\n</code></pre></div>'
PAGE = ('<html><body><details class="crossover-code"><summary>s</summary>'
        f'<div class="crossover-code__listing">{LISTING}\n</div></details></body></html>')


def test_a_listing_moves_to_its_own_file_and_leaves_a_link(tmp_path):
    """The listing is written under code-behind/ (named by its digest) and replaced by a link to it, with the script."""
    out = code_on_demand.extract(PAGE, tmp_path, "../")
    name = code_on_demand.name_of(LISTING)
    assert LISTING not in out
    assert f'data-listing="../code-behind/{name}"' in out and f'href="../code-behind/{name}"' in out
    assert '<script src="../javascripts/code-on-demand.js"></script>' in out
    assert LISTING in (tmp_path / "code-behind" / name).read_text(encoding="utf-8")


def test_a_page_without_listings_is_left_alone(tmp_path):
    """A page with no listing is returned unchanged: no script, no files."""
    page = "<html><body><pre>x</pre></body></html>"
    assert code_on_demand.extract(page, tmp_path, "") == page
    assert not (tmp_path / "code-behind").exists()


def test_a_fenced_block_wrapped_on_a_page_moves_too(tmp_path):
    """A page's own fenced block inside the wrapper (pymdownx's language class, md_in_html's attribute) moves as well."""
    listing = LISTING.replace('class="highlight"', 'class="language-python highlight"')
    page = f'<body><div class="crossover-code__listing" markdown>\n{listing}\n</div></body>'
    out = code_on_demand.extract(page, tmp_path, "../")
    assert listing not in out and "markdown" not in out


def test_a_tab_holding_only_a_listing_moves_but_a_tab_with_more_stays(tmp_path):
    """A "Code" tab (one listing and nothing else) keeps a link; a tab whose listing sits among other content is left whole."""
    listing = LISTING.replace('class="highlight"', 'class="language-python highlight"')
    code_tab = f'<div class="tabbed-block">\n{listing}\n</div>'
    result_tab = f'<div class="tabbed-block">\n<p>Result</p>{listing}\n</div>'
    out = code_on_demand.extract(f"<body>{result_tab}{code_tab}</body>", tmp_path, "../")
    assert out.count(listing) == 1 and out.index(listing) < out.index("data-listing")
