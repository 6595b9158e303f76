"""Fixes to the HTML the theme and plugins write, applied to every built page.

- Material's search dialog has no accessible name (axe: aria-dialog-name); it gets one.
- The templates' blank lines collapse (outside <pre>, <textarea>, <script> and <style>).
- mkdocs-jupyter inlines nbconvert's whole JupyterLab stylesheet (about 570 KB) into the
  notebook page, plus loaders for MathJax and Mermaid that this notebook never uses. They
  are dropped; `stylesheets/notebook.css` styles the few notebook classes the page uses,
  and code cells take the theme's own highlighting (`highlight_extra_classes`), so they
  follow light and dark mode like every other page; its plot is compacted as the site's are.
- The site's own stylesheets are published without their comments (`slim_css`): the comments
  are for maintainers in `docs/stylesheets/`, and every page's first visit pays for the bytes.
  Its own scripts lose their whole-line `//` comments the same way (`slim_js`).
- A machine's name over its own figures and tables (render.machine_label) becomes a heading one level
  below the section it sits in: a screen reader can jump to it, and it is a title, not a sentence.
"""

from __future__ import annotations

import re

from build_hooks import plots

_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'

# nbconvert's blocks, recognised by what they contain (scripts never contain "</script>").
_NOTEBOOK_STYLES = re.compile(r"<style[^>]*>(?:(?!</style>).)*?(?:\.jupyter-wrapper|\.jp-Mermaid|td\.linenos)"
                              r"(?:(?!</style>).)*</style>", re.S)
_UNUSED_SCRIPTS = re.compile(r'<script src="">\s*</script>'
                             r'|<script type="text/x-mathjax-config">.*?</script>'
                             r'|<script type="module">(?:(?!</script>).)*?jp-Mermaid.*?</script>', re.S)
_COMMENTS = re.compile(r"<!-- (?:Load mathjax|MathJax configuration|End of mathjax configuration) -->")
# nbconvert's own ¶ links inside headings; the theme's table of contents already links them.
_ANCHOR_LINKS = re.compile(r'<a class="anchor-link" href="#[^"]*">¶</a>')
_NO_ALT = 'alt="No description has been provided for this image"'
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
# Where whitespace is content: everything else collapses to one line break, which renders the same.
_VERBATIM = re.compile(r"(<pre\b.*?</pre>|<textarea\b.*?</textarea>|<script\b.*?</script>|<style\b.*?</style>)", re.S)
_BLANK_RUN = re.compile(r"[ \t]*\n\s*")


def name_search_dialog(html: str) -> str:
    return html.replace(_SEARCH_DIALOG, _SEARCH_DIALOG[:-1] + ' aria-label="Search">')


def is_notebook(html: str) -> bool:
    return 'class="jp-Cell' in html


def slim_notebook(html: str, stylesheet: str) -> str:
    """The notebook page without nbconvert's inline styles and unused loaders, linking `stylesheet`."""
    html = _NOTEBOOK_STYLES.sub("", html)
    html = _ANCHOR_LINKS.sub("", _COMMENTS.sub("", _UNUSED_SCRIPTS.sub("", html)))
    html = _SVG.sub(lambda m: plots.compact(m.group(0)), html)  # the notebook's plot, as the site's are
    # Code and output areas scroll sideways on a phone: keyboard users need to reach them.
    html = html.replace('<div class="highlight-ipynb', '<div tabindex="0" class="highlight-ipynb')
    html = html.replace(_NO_ALT, 'alt="Plot drawn by the code cell above; the numbers it shows are printed below it"')
    return html.replace("</head>", f'<link rel="stylesheet" href="{stylesheet}">\n</head>', 1)


def collapse_blank_lines(html: str) -> str:
    """The theme's templates indent and space their output over thousands of blank lines (a tenth
    of a page); a run of whitespace holding a line break renders as that one break does."""
    parts = _VERBATIM.split(html)
    return "".join(part if i % 2 else _BLANK_RUN.sub("\n", part) for i, part in enumerate(parts))


# A key to the marks (render.marks_note), and one of its lines.
_KEY = re.compile(r'<ul class="crossover-key" aria-label="Key to the marks">(.*?)</ul>', re.S)
_KEY_LINE = re.compile(r"<li>.*?</li>", re.S)
FIRST_KEY_ID = "marks-key"
_SEE_ABOVE = f'see <a href="#{FIRST_KEY_ID}">the key above</a>'


def keys_once(html: str) -> str:
    """Each mark explained once per page (#39: caveats stated once): the first key keeps every line and an id; a
    later key keeps only the lines not yet given above it, and points up for the rest."""
    seen: set[str] = set()

    def one(match: re.Match) -> str:
        lines = _KEY_LINE.findall(match.group(1))
        fresh = [line for line in lines if line not in seen]
        first = not seen
        seen.update(lines)
        if first:
            return match.group(0).replace('<ul class="crossover-key"', f'<ul id="{FIRST_KEY_ID}" class="crossover-key"',
                                          1)
        if not fresh:
            return f'<ul class="crossover-key" aria-label="Key to the marks"><li>Marks: {_SEE_ABOVE}.</li></ul>'
        return ('<ul class="crossover-key" aria-label="Key to the marks">' + "".join(fresh)
                + f"<li>Other marks: {_SEE_ABOVE}.</li></ul>")

    return _KEY.sub(one, html)


_HEADING_OR_LABEL = re.compile(r'<h([1-6])\b|<p class="crossover-machine"><strong>(.*?)</strong></p>', re.S)


def machine_headings(html: str) -> str:
    """Each machine label becomes a heading one level below the last heading before it (h2 at most h3)."""
    level = 1

    def one(match: re.Match) -> str:
        nonlocal level
        if match.group(1):
            level = int(match.group(1))
            return match.group(0)
        rank = min(level + 1, 6)
        return f'<h{rank} class="crossover-machine">{match.group(2)}</h{rank}>'

    return _HEADING_OR_LABEL.sub(one, html)


def fix(html: str, depth: int) -> str:
    """Every fix a built page needs; `depth` is how many folders below the site root it lies."""
    html = machine_headings(keys_once(collapse_blank_lines(name_search_dialog(html))))
    if is_notebook(html):
        html = slim_notebook(html, "../" * depth + "stylesheets/notebook.css")
    return html


# A CSS comment; the site's stylesheets put no "/*" inside a string or url(), which this would misread.
_CSS_COMMENT = re.compile(r"/\*.*?\*/[ \t]*", re.S)


# A quoted string (kept as written), or a brace, semicolon or comma with the white space around it, or a run of
# white space: what slim_css may shorten without changing a rule.
_CSS_TOKEN = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|\s*([{};,])\s*|\s+""")


def slim_css(css: str) -> str:
    """A stylesheet without its comments and with no white space a rule needs: the same rules in fewer bytes, one
    rule per line. Strings stay as written; a run of white space elsewhere is one space (it may be a combinator)."""
    def shorter(match: re.Match) -> str:
        return match.group(1) or match.group(2) or " "
    flat = _CSS_TOKEN.sub(shorter, _CSS_COMMENT.sub("", css)).strip()
    return flat.replace("}", "}\n").replace("\n}", "}").rstrip("\n") + "\n"


def slim_js(script: str) -> str:
    """A script without its whole-line `//` comments: the same code in fewer bytes. A line inside a template literal
    (after an odd number of backticks) is kept whatever it starts with; comments after code stay."""
    kept, in_template = [], False
    for line in script.splitlines():
        if in_template or not line.lstrip().startswith("//"):
            kept.append(line)
        in_template ^= line.count("`") % 2 == 1
    return "\n".join(kept) + "\n"
