"""A Markdown extension that fills `{{ fact: name }}` markers from the build's data.

It is a plain Python-Markdown extension (listed under `markdown_extensions` in
mkdocs.yml), so it works in any tool that renders Markdown with Python-Markdown.
Markers inside fenced code blocks and inline code are left as they are, so a page can
show the syntax. A marker that is malformed, unclosed or names an unknown fact stops
the build, naming the line and the marker. Strings from results files become text only
after Markdown has run.
"""

from __future__ import annotations

import re

from markdown import Extension
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor

from build_hooks import facts, site_data, untrusted

MARKER = re.compile(r"\{\{\s*fact:\s*([a-z0-9_]+)\s*\}\}")
MARKER_START = re.compile(r"\{\{\s*fact\b")
CODE_SPAN = re.compile(r"(`+).+?\1")


class FactError(ValueError):
    """A marker that cannot be filled: unknown fact, missing data or malformed syntax."""


def fill_line(line: str, number: int, data) -> str:
    """One line with its markers filled, code spans untouched."""
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
            return facts.render(match.group(1), data)
        except (KeyError, facts.MissingData) as exc:
            raise FactError(f"line {number}: marker '{match.group(0)}': {exc}") from exc

    leftover = MARKER_START.search(MARKER.sub("", prose))
    if leftover:
        snippet = prose[leftover.start():leftover.start() + 40]
        raise FactError(f"line {number}: malformed fact marker '{snippet}'; "
                        "write {{ fact: name }} with a name of lowercase letters, digits and _")
    return MARKER.sub(fill, prose)


def fill(markdown: str, data) -> str:
    """A page's Markdown with every marker filled (what the extension does, for tests)."""
    return "\n".join(fill_line(line, n, data) for n, line in enumerate(markdown.split("\n"), 1))


class _FillFacts(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        if not any("{{" in line for line in lines):
            return lines
        data = site_data.current()
        return [fill_line(line, number, data) for number, line in enumerate(lines, 1)]


class _RestoreText(Postprocessor):
    def run(self, text: str) -> str:
        return untrusted.restore(text)


class FactsExtension(Extension):
    def extendMarkdown(self, md) -> None:
        # After superfences (25) has stashed fenced code, before raw HTML blocks (20).
        md.preprocessors.register(_FillFacts(md), "crossover_facts", 22)
        # Last: after raw HTML (and markdown-exec's output) is back in the text.
        md.postprocessors.register(_RestoreText(md), "crossover_untrusted_text", 1)


def makeExtension(**kwargs) -> FactsExtension:  # noqa: N802
    return FactsExtension(**kwargs)
