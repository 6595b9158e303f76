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

from build_hooks import background, code_view, config, deferred, page, site_data, untrusted, view_cache

FACT = re.compile(r"\{\{\s*fact:\s*([a-z0-9_]+)\s*\}\}")
SECTION = re.compile(r"^(?P<indent>\s*)\{\{\s*section:\s*(?P<name>[a-z0-9_]+)\s*\}\}\s*$")
# Anything that starts like a marker; what the patterns above did not consume is malformed.
MARKER_START = re.compile(r"\{\{\s*(fact|section)\b")
# Inline code spans: the same run of backticks opens and closes one.
CODE_SPAN = re.compile(r"(`+).+?\1")
ONLY_MISSING = re.compile(r'<p class="crossover-missing">[^<]*(?:<a [^>]*>[^<]*</a>[^<]*)*</p>')


class MarkerError(ValueError):
    """A marker that cannot be filled: unknown name, missing data or malformed syntax."""


def fill_line(line: str, number: int, data, stash=None, facts: list | None = None, code: bool = True) -> str:
    """One line with its markers filled; `stash(html)` keeps a section's HTML from Markdown.

    A section comes with its "Code behind this" block (unless `code` is False); each fact
    filled is appended to `facts` (when given) for the page's own block at its foot.
    """
    section = SECTION.match(line)
    if section:
        name = section.group("name")
        try:
            html = page.render_section(name, data)
        except (page.UnknownName, page.MissingData) as exc:
            raise MarkerError(f"line {number}: marker '{line.strip()}': {exc}") from exc
        html = deferred.figures(html)
        # A section that only says why it has nothing to show ("No GPU was measured ...") gets no code box: a
        # box per empty section crowded the cheat sheet's first screen (#39). Nor does one with nothing to say here.
        if code and str(html).strip() and not ONLY_MISSING.fullmatch(str(html).strip()):
            html += deferred.keep(code_view.block("section", name, page.view("section", name),
                                                  view_cache.reads[("section", name)]))
        return section.group("indent") + (stash(html) if stash else html)
    out, last = [], 0
    for span in CODE_SPAN.finditer(line):
        out.append(_fill_prose(line[last:span.start()], number, data, facts))
        out.append(span.group(0))
        last = span.end()
    out.append(_fill_prose(line[last:], number, data, facts))
    return "".join(out)


def _fill_prose(prose: str, number: int, data, facts: list | None) -> str:
    def fill(match: re.Match) -> str:
        name = match.group(1)
        try:
            text = page.render_fact(name, data)
        except (page.UnknownName, page.MissingData) as exc:
            raise MarkerError(f"line {number}: marker '{match.group(0)}': {exc}") from exc
        if facts is not None and name not in [n for n, _, _ in facts]:
            facts.append((name, page.view("fact", name), view_cache.reads[("fact", name)]))
        return text

    leftover = MARKER_START.search(FACT.sub("", prose))
    if leftover:
        snippet = prose[leftover.start():leftover.start() + 40]
        raise MarkerError(f"line {number}: malformed marker '{snippet}'; write {{{{ fact: name }}}} "
                          "inside a sentence or {{ section: name }} alone on a line, with a name "
                          "of lowercase letters, digits and _")
    return FACT.sub(fill, prose)


def fill(markdown: str, data, code: bool = False) -> str:
    """A page's Markdown with every marker filled, as the extension fills it (used by tests): what
    the reader reads, without the "Code behind this" blocks unless `code`."""
    return "\n".join(fill_line(line, n, data, code=code) for n, line in enumerate(markdown.split("\n"), 1))


QUICK_BANNER = ['!!! warning crossover-quick "Quick mode: not representative"',  # the class: tests measure without it
                "    This build measured tiny sizes only (`CROSSOVER_QUICK=1`, used by the tests). "
                "Its numbers are real but say little about this hardware.", ""]


class _FillMarkers(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        data = site_data.current()
        # markdown-exec renders a block's output with a copy of the page's converter and
        # marks it with _original_md: the banner and the facts' code belong to the page only.
        whole_page = not hasattr(self.md, "_original_md")
        measuring = background.banner(config.settings()) if site_data.serving else []  # never in a published build
        banner = (QUICK_BANNER if data.quick else []) + measuring if whole_page else []
        if not any("{{" in line for line in lines):
            return banner + lines
        facts: list = []
        filled = [fill_line(line, number, data, self.md.htmlStash.store, facts)
                  for number, line in enumerate(lines, 1)]
        foot = (["", self.md.htmlStash.store(deferred.keep(code_view.facts_block(facts)))]
                if facts and whole_page else [])
        return banner + filled + foot


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
