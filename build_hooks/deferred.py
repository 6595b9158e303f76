"""Figures and code that join a page only after the search plugin has indexed it.

A plot's SVG (thousands of paths and tick labels), a "Code behind this" block and a
highlighted code block (a tag per token) are not prose anyone searches for, yet the search
plugin would parse every tag of them on every
build (most of a warm build's time) and index their text. Under MkDocs the markers leave a
comment in their place and the on_post_page hook puts each back; without MkDocs (another
Python-Markdown tool, the tests) nothing is deferred and the markers inline them.
"""

from __future__ import annotations

import re
import secrets

from markupsafe import Markup as Html

_TOKEN = secrets.token_hex(8)  # a results file cannot guess it, so it cannot forge a comment
_COMMENT = re.compile(rf"<!--crossover-deferred-{_TOKEN}-(\d+)-->")
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
# A highlighted code block as pymdownx writes it (Pygments' spans, one per token; never nested),
# or as mkdocs-jupyter writes a notebook's code cell.
_CODE = re.compile(r'<div class="(?:language-\w+ |highlight-ipynb hl-\w+ )?highlight"><pre>.*?</pre></div>', re.S)
_kept: dict[str, str] | None = None


def enable() -> None:
    """Defer from now on (the MkDocs hooks call it at the start of every build)."""
    global _kept
    _kept = {}


def keep(html: Html) -> Html:
    """`html`, or under MkDocs a comment that restore() swaps back for it."""
    if _kept is None:
        return html
    key = str(len(_kept))
    _kept[key] = str(html)
    return Html(f"<!--crossover-deferred-{_TOKEN}-{key}-->")


def figures(html: Html) -> Html:
    """`html` with each inline SVG kept back."""
    if _kept is None:
        return html
    return Html(_SVG.sub(lambda m: str(keep(Html(m.group(0)))), str(html)))


def code_blocks(html: str) -> str:
    """A page's HTML with each highlighted code block kept back: code is read, not searched for."""
    if _kept is None:
        return html
    return _CODE.sub(lambda m: str(keep(Html(m.group(0)))), html)


def restore(page: str) -> str:
    """A built page with everything kept back in its place again."""
    if _kept is None:
        return page
    return _COMMENT.sub(lambda m: _kept.pop(m.group(1)), page)
