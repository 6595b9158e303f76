"""The code reference: every fact and section, its docstring, where it is defined and who uses it."""

from __future__ import annotations

import re

from build_hooks import code_view, config, digests, page, view_cache
from build_hooks.dataset import Dataset
from build_hooks.page import section
from build_hooks.render import SITE_ROOT, Html, html, join, table

MARKER = re.compile(r"\{\{\s*(fact|section):\s*([a-z0-9_]+)\s*\}\}")


def _pages() -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(kind, name) -> the (title, url) of every page whose Markdown names it."""
    from build_hooks import mkdocs_hooks

    docs = config.PROJECT_ROOT / "docs"
    used: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for path in sorted(docs.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if path.name == mkdocs_hooks.MEASUREMENTS_PAGE:
            text = mkdocs_hooks.with_every_experiment(text)
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
        url = SITE_ROOT + ("" if path.stem == "index" else f"{path.stem}/")
        for kind, name in sorted(set(MARKER.findall(text))):
            used.setdefault((kind, name), []).append((title, url))
    return used


def _reads(kind: str, name: str, data: Dataset) -> tuple[str, ...]:
    """The experiments a view read in this build (rendering it, from the cache, if no page has yet)."""
    if (kind, name) == ("section", "code_reference"):
        return ()  # this very table: rendering it here would recurse
    if (kind, name) not in view_cache.reads:
        try:
            (page.render_fact if kind == "fact" else page.render_section)(name, data)
        except page.MissingData:
            return ()
    return view_cache.reads.get((kind, name), ())


@section
def code_reference(data: Dataset) -> Html:
    """One table of every fact and section: what it says, its file:line, what measured it, its pages."""
    used = _pages()
    rows = []
    for kind, names in page.names().items():
        for name in names:
            view = page.view(kind, name)
            source = code_view.of_view(view)
            summary = _reader_summary(view.__doc__ or "")
            measured = [s.where for s in map(code_view.of_measurement, _reads(kind, name, data)) if s]
            pages = join((html('<a href="{}">{}</a>', url, title) for title, url in used.get((kind, name), [])),
                         ", ")
            rows.append([html('<code id="{}">{}</code><br><small>{}</small>', code_view.anchor(kind, name), name, kind),
                         summary, html("<code>{}</code>", source.where),
                         join((html("<code>{}</code>", m) for m in measured), "<br>") or "none in this build",
                         pages])
    return table(["name", "what it shows", "defined at", "measured by", "used on"], rows,
                 caption="Every fact and section a page can name, and where its code lives")


def _pages_digest() -> str:
    """What code_reference reads besides the data and its own module: the pages' Markdown and
    every view's source (their docstrings and lines)."""
    root = config.PROJECT_ROOT
    return digests.files(sorted([*(root / "docs").glob("*.md"), *(root / "build_hooks" / "views").glob("*.py")]))


code_reference.also_reads = _pages_digest  # view_cache keys its rendering on these too


# A bracket that only names code, "(_doubts)" or "(race.matchup, analysis.crossover)": it helps a maintainer
# reading the source, which the listing beside the summary shows; a reader of the table gets plain words.
_NAME = r"(?=[\w.]*[_.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"  # an identifier with a "_" or a "."
_CODE_NAMES = re.compile(rf"\s*\({_NAME}(?:, {_NAME})*\)")


def _reader_summary(doc: str) -> str:
    """A docstring's first paragraph on one line, with single spaces and brackets that only name code left out."""
    first = " ".join(doc.strip().split("\n\n")[0].split())
    return _CODE_NAMES.sub("", first)


@section
def code_by_page(data: Dataset) -> Html:
    """The same facts and sections grouped by the page that names them, each a link to its row: a reader who is
    checking one page finds its code without reading the whole table."""
    known = {(kind, name) for kind, names in page.names().items() for name in names}
    by_page: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for (kind, name), places in _pages().items():
        if (kind, name) not in known:  # a marker quoted as an example ("{{ fact: name }}") names nothing
            continue
        for place in places:
            by_page.setdefault(place, []).append((kind, name))
    rows = [[html('<a href="{}">{}</a>', url, title),
             join((html('<a href="#{}">{}</a>', code_view.anchor(kind, name), name)
                   for kind, name in sorted(names, key=lambda n: n[1])), ", ")]
            for (title, url), names in sorted(by_page.items())]
    return table(["page", "its facts and sections"], rows, caption="Where each page's numbers come from, page by page")
