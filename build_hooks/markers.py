"""A Markdown extension that fills the page API's markers from the build's data.

    {{ fact: name }}       inline: replaced by the fact's Markdown text
    {{ section: name }}    alone on a (possibly indented) line: replaced by the section's HTML

It is a plain Python-Markdown extension (listed under `markdown_extensions` in
mkdocs.yml), so any tool that renders with Python-Markdown can use it; nothing here
depends on MkDocs. Markers inside fenced code blocks and inline code are left as they
are, so a page can show the syntax. A marker that is malformed, unclosed or names an
unknown fact or section stops the build, naming the line and the marker (MkDocs adds
the page). Strings from results files become text only after Markdown has run. A page
built from quick-mode data starts with a visible warning.
"""

from __future__ import annotations

import re

from markdown import Extension
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor

from build_hooks import page, site_data, untrusted

FACT = re.compile(r"\{\{\s*fact:\s*([a-z0-9_]+)\s*\}\}")
SECTION = re.compile(r"^(?P<indent>\s*)\{\{\s*section:\s*(?P<name>[a-z0-9_]+)\s*\}\}\s*$")
# Anything that starts like a marker; what the patterns above did not consume is malformed.
MARKER_START = re.compile(r"\{\{\s*(fact|section)\b")
# Inline code spans: the same run of backticks opens and closes one.
CODE_SPAN = re.compile(r"(`+).+?\1")


class MarkerError(ValueError):
    """A marker that cannot be filled: unknown name, missing data or malformed syntax."""


def fill_line(line: str, number: int, data, stash=None) -> str:
    """One line with its markers filled; `stash(html)` keeps a section's HTML from Markdown."""
    section = SECTION.match(line)
    if section:
        name = section.group("name")
        try:
            html = page.render_section(name, data)
        except (page.UnknownName, page.MissingData) as exc:
            raise MarkerError(f"line {number}: marker '{line.strip()}': {exc}") from exc
        return section.group("indent") + (stash(html) if stash else html)
    out, last = [], 0
    for span in CODE_SPAN.finditer(line):
        out.append(_fill_prose(line[last:span.start()], number, data))
        out.append(span.group(0))
        last = span.end()
    out.append(_fill_prose(line[last:], number, data))
    return "".join(out)


def _fill_prose(prose: str, number: int, data) -> str:
    def fill(match: re.Match) -> str:
        try:
            return page.render_fact(match.group(1), data)
        except (page.UnknownName, page.MissingData) as exc:
            raise MarkerError(f"line {number}: marker '{match.group(0)}': {exc}") from exc

    leftover = MARKER_START.search(FACT.sub("", prose))
    if leftover:
        snippet = prose[leftover.start():leftover.start() + 40]
        raise MarkerError(f"line {number}: malformed marker '{snippet}'; write {{{{ fact: name }}}} "
                          "inside a sentence or {{ section: name }} alone on a line, with a name "
                          "of lowercase letters, digits and _")
    return FACT.sub(fill, prose)


def fill(markdown: str, data) -> str:
    """A page's Markdown with every marker filled (what the extension does; used by tests)."""
    return "\n".join(fill_line(line, n, data) for n, line in enumerate(markdown.split("\n"), 1))


QUICK_BANNER = ['!!! warning "Quick mode: not representative"',
                "    This build measured tiny sizes only (`CROSSOVER_QUICK=1`, used by the tests). "
                "Its numbers are real but say little about this hardware.", ""]


class _FillMarkers(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        data = site_data.current()
        # markdown-exec renders a block's output with a copy of the page's converter and
        # marks it with _original_md: the banner belongs to the page only.
        banner = QUICK_BANNER if data.quick and not hasattr(self.md, "_original_md") else []
        if not any("{{" in line for line in lines):
            return banner + lines
        return banner + [fill_line(line, number, data, self.md.htmlStash.store)
                         for number, line in enumerate(lines, 1)]


class _RestoreText(Postprocessor):
    def run(self, text: str) -> str:
        return untrusted.restore(text)


class MarkersExtension(Extension):
    def extendMarkdown(self, md) -> None:
        # After superfences (25) has stashed fenced code, before raw HTML blocks (20) are
        # stashed, so markers inside `<div markdown>` are filled and code blocks are not.
        md.preprocessors.register(_FillMarkers(md), "crossover_markers", 22)
        # Last: after raw HTML (sections, markdown-exec output) is back in the text.
        md.postprocessors.register(_RestoreText(md), "crossover_untrusted_text", 1)


def makeExtension(**kwargs) -> MarkersExtension:  # noqa: N802 (Python-Markdown's entry point)
    return MarkersExtension(**kwargs)
