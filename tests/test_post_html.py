"""Tests for build_hooks.post_html: the search dialog's name and the slimmed notebook page."""

from build_hooks import post_html

NOTEBOOK = """<html><head><title>t</title></head><body>
<div class="md-search" data-md-component="search" role="dialog"></div>
<style type="text/css">.jupyter-wrapper{--jp-x: 1}</style>
<style>pre { line-height: 125%; } td.linenos .normal { color: inherit; }</style>
<!-- Load mathjax -->
<script src=""> </script>
<script type="text/x-mathjax-config">init_mathjax()</script>
<script type="module">document.querySelectorAll(".jp-Mermaid > pre.mermaid")</script>
<div class="jp-Cell jp-CodeCell"><h1 id="a">A<a class="anchor-link" href="#a">¶</a></h1>
<div class="highlight-ipynb hl-python"><pre>x = 1</pre></div>
<img alt="No description has been provided for this image" src="data:image/png;base64,AAAA"/></div>
<script>keep()</script>
</body></html>"""


def test_search_dialog_gets_a_name_on_every_page():
    """Material's nameless search dialog is labelled 'Search'."""
    out = post_html.fix('<div class="md-search" data-md-component="search" role="dialog">', depth=1)
    assert out == '<div class="md-search" data-md-component="search" role="dialog" aria-label="Search">'


def test_notebook_page_loses_nbconvert_styles_and_unused_loaders_only():
    """The notebook page drops nbconvert's styles, MathJax and Mermaid loaders and ¶ links, and links its own CSS."""
    out = post_html.fix(NOTEBOOK, depth=2)
    assert "<style" not in out and "mathjax" not in out.lower() and "mermaid" not in out
    assert 'src=""' not in out and "anchor-link" not in out and "No description" not in out
    assert '<link rel="stylesheet" href="../../stylesheets/notebook.css">' in out
    assert '<div tabindex="0" class="highlight-ipynb' in out and "<script>keep()</script>" in out


def test_other_pages_keep_their_styles():
    """A page without notebook cells is left alone apart from the dialog's name."""
    html = "<head></head><style>.md-x{}</style><script src='a.js'></script>"
    assert post_html.fix(html, depth=1) == html


def test_blank_lines_collapse_outside_verbatim_blocks_only():
    """Runs of blank lines and indentation become one line break, but <pre>, <script> and <textarea> keep theirs."""
    page = "<ul>\n\n    <li>a</li>\n   \n\n  <li>b</li></ul><pre>x\n\n    y</pre><script>if (a)\n\n  b()</script>"
    out = post_html.collapse_blank_lines(page)
    assert out == "<ul>\n<li>a</li>\n<li>b</li></ul><pre>x\n\n    y</pre><script>if (a)\n\n  b()</script>"


def test_a_published_stylesheet_keeps_its_rules_and_drops_its_comments():
    """slim_css removes comments (one line or several) and the white space no rule needs, a rule per line; strings,
    combinators and values stay as written."""
    css = ("/* The race */\n#race { scroll-margin-top: 3.2rem; } /* why */\n\n"
           "/* two\n   lines */\n.a  ::after, .b :is(p, li) { content: \"x ;  y\"; }\n"
           "@media screen and (max-width: 1em) {\n  .c { top: 0; }\n}\n")
    slim = post_html.slim_css(css)
    assert slim == ('#race{scroll-margin-top: 3.2rem;}\n.a ::after,.b :is(p,li){content: "x ;  y";}\n'
                    "@media screen and (max-width: 1em){.c{top: 0;}}\n")
    assert post_html.slim_css(slim) == slim


def test_a_published_script_drops_whole_line_comments_only():
    """slim_js removes lines that are only a // comment; code, comments after code and template-literal lines stay."""
    js = "// why\nvar a = 1; // kept\n  // indented why\nvar t = `x\n// inside a template\n`;\nvar u = 'http://x';\n"
    slim = post_html.slim_js(js)
    assert slim == "var a = 1; // kept\nvar t = `x\n// inside a template\n`;\nvar u = 'http://x';\n"
    assert post_html.slim_js(slim) == slim


def test_a_page_explains_each_mark_once_and_later_keys_point_up():
    """keys_once: the first key keeps every line and gets an id; a later key keeps only lines not given above, and
    a key with nothing new becomes one line pointing up to the first."""
    key = '<ul class="crossover-key" aria-label="Key to the marks">{}</ul>'.format
    noisy, few = "<li>Noisy (†): spread.</li>", "<li>Too few samples (‡): few.</li>"
    page = key(noisy) + "<table></table>" + key(noisy + few) + "<table></table>" + key(few)
    fixed = post_html.keys_once(page)
    assert fixed.count(noisy) == 1 and fixed.count(few) == 1
    assert fixed.startswith('<ul id="marks-key" class="crossover-key"')
    assert "<li>Other marks: see <a href=\"#marks-key\">the key above</a>.</li>" in fixed
    assert fixed.endswith("<li>Marks: see <a href=\"#marks-key\">the key above</a>.</li></ul>")
    assert post_html.keys_once("<p>no key</p>") == "<p>no key</p>"


def test_a_machine_label_becomes_a_heading_one_level_below_its_section():
    """machine_headings: a label under an h2 is an h3, one before any h2 (under the h1) is an h2, text kept escaped."""
    from build_hooks.dataset import Machine
    from build_hooks.render import machine_label
    from conftest import complete_doc

    doc = complete_doc()
    doc["machine_info"]["cpu"]["brand"] = "<b>x</b>"
    label = str(machine_label(Machine(doc, "f", "t")))
    page = f"<h1>T</h1>{label}<h2 id='a'>A</h2>{label}"
    fixed = post_html.machine_headings(page)
    assert fixed.count('<h2 class="crossover-machine">') == 1 and fixed.count('<h3 class="crossover-machine">') == 1
    assert "<b>" not in fixed and "&lt;b&gt;" in fixed
