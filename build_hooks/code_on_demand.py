"""The source listings of "Code behind this" blocks, downloaded when a reader opens one.

Every section carries its view's source, highlighted (a tag per token): on the data-heavy
pages that is a third to three quarters of the HTML, downloaded by every visit and read by
few. After a page is built, each listing moves to a file of its own under `code-behind/`
(named by the digest of its HTML, so a listing used on several pages is one file), and the
block keeps a link to it; so does a tab that holds nothing but a listing (a page's "Code"
tab). `javascripts/code-on-demand.js`, added to the pages that have such listings, puts the
listing back in place when its block or tab is opened; without scripts the link opens the
listing as a page.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

FOLDER = "code-behind"
# code_view.listing writes this wrapper around one Pygments block (whose escaped text cannot
# contain "</pre>"), so the first "</pre></div>" after it closes the block; a page may wrap a
# fenced block in it too (batch-size.md: the timing helper, whole).
_LISTING = re.compile(r'<div class="crossover-code__listing"(?: markdown)?>\s*'
                      r'(<div class="(?:language-\w+ )?highlight">.*?</pre></div>)'
                      r"\s*</div>", re.S)
# A tab holding nothing but one listing (a page's "Code" tab: a snippet, included whole).
_TAB_LISTING = re.compile(r'(<div class="tabbed-block">)\s*'
                          r'(<div class="(?:language-\w+ )?highlight"><pre>.*?</pre></div>)'
                          r"\s*(</div>)", re.S)
_PAGE = ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
         '<meta name="viewport" content="width=device-width, initial-scale=1">'
         '<title>Source listing - Crossover</title></head>\n<body>{}</body></html>\n')


def name_of(listing: str) -> str:
    """The listing's file name: the digest of its HTML."""
    return hashlib.sha256(listing.encode()).hexdigest()[:16] + ".html"


def extract(html: str, site_dir: Path, root: str) -> str:
    """`html` with every listing written to `site_dir/code-behind/` and replaced by a link to it;
    `root` is the path from the page to the site root ("../" for a lesson page)."""
    def moved(match: re.Match) -> str:
        return holder(match.group(1))

    def holder(listing: str) -> str:
        name = name_of(listing)
        target = site_dir / FOLDER / name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_PAGE.format(listing), encoding="utf-8")
        href = f"{root}{FOLDER}/{name}"
        return (f'<div class="crossover-code__listing" data-listing="{href}"><p><a href="{href}">'
                "Open the source listing</a> (it appears here when opened, where scripts run).</p></div>")

    html, moved_count = _LISTING.subn(moved, html)
    html, tabs_moved = _TAB_LISTING.subn(lambda m: m.group(1) + holder(m.group(2)) + m.group(3), html)
    moved_count += tabs_moved
    if not moved_count:
        return html  # no script on a page without listings
    return html.replace("</body>", f'<script src="{root}javascripts/code-on-demand.js"></script>\n</body>', 1)
