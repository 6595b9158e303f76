"""The code behind a number, where the number appears.

Under every section, and at the foot of every page for the facts in its sentences, a
collapsed block shows the view function that wrote it (its `file:line`, linking to its
entry in the code reference) and names the snippet that measured what it read. The
source is read with `inspect` from the very function the build called, highlighted by
Pygments in the classes the theme colours for light and dark mode.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from build_hooks import config, digests, experiments
from build_hooks.render import SITE_ROOT, Html, first_only, html, join

REFERENCE_PAGE = "code/"  # docs/code.md: every fact and section, with the pages that use it


@dataclass(frozen=True)
class Source:
    path: str  # relative to the project
    line: int
    code: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@cache  # per function object: an edited view, imported again, is a new one
def of_view(view: Callable) -> Source:
    """The source of a registered fact or section function (its decorator line included)."""
    lines, first = inspect.getsourcelines(view)
    path = Path(inspect.getsourcefile(view)).resolve().relative_to(config.PROJECT_ROOT)
    return Source(str(path), first, "".join(lines))


def of_measurement(group: str) -> Source | None:
    """The `measure` function of snippets/<group>.py, read without importing it (no torch)."""
    path = experiments.source_path(group)
    if not path.exists():
        return None
    return _measure_function(path, path.stat().st_mtime_ns)


@cache
def _measure_function(path: Path, mtime_ns: int) -> Source | None:
    text = path.read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == "measure":
            return Source(str(path.relative_to(config.PROJECT_ROOT)), node.lineno,
                          ast.get_source_segment(text, node) or "")
    return None


@lru_cache(maxsize=256)
def highlighted(code: str) -> Html:
    """Python highlighted as the theme's code blocks are (`highlight` classes, light and dark),
    kept on disk by the code's digest: a warm build does not run Pygments again."""
    path = config.settings().cache_dir / "code" / f"{digests.digest(code.encode())}.html"
    stored = digests.load_entry(path)
    if stored is not None:
        return Html(stored)
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    result = highlight(code, PythonLexer(), HtmlFormatter(cssclass="highlight", wrapcode=True))
    digests.save_entry(path, result)
    return Html(result)


def listing(code: str) -> Html:
    """The highlighted source inside a "Code behind" block; code_on_demand moves it to a file of
    its own after the build, so a page does not download source nobody opened."""
    return html('<div class="crossover-code__listing">{}</div>', highlighted(code))


def anchor(kind: str, name: str) -> str:
    """The id of a fact's or section's entry on the code reference page."""
    return f"{kind}-{name}".replace("_", "-")


def link(kind: str, name: str) -> Html:
    """The line inside a block that leads to the name's entry on the code reference page (a link
    cannot sit in a <summary>, which is itself the control that opens the block)."""
    return html('<p class="crossover-code__entry"><a href="{}{}#{}">{} {} in the code reference</a></p>',
                SITE_ROOT, REFERENCE_PAGE, anchor(kind, name), kind.capitalize(), name)


def measured_by(reads: tuple[str, ...]) -> Html:
    """"measured by snippets/a.py:12 and snippets/b.py:40", or "" when it read no experiment."""
    sources = [s for s in map(of_measurement, reads) if s is not None]
    if not sources:
        return Html("")
    return html(" · measured by {}", join((html("<code>{}</code>", s.where) for s in sources), ", "))


def block(kind: str, name: str, view: Callable, reads: tuple[str, ...]) -> Html:
    """The collapsed "Code behind this" block under a section."""
    source = of_view(view)
    # One line while closed (a phone's first screen is for the section, not a list of files); the files inside.
    return html('<details class="crossover-code" data-search-exclude><summary>Code behind this {}</summary>'
                '<p class="crossover-code__files">The view <code>{}</code>{}</p>{}{}{}</details>', kind,
                source.where, measured_by(reads), link(kind, name), listing(source.code), _measurements(reads))


_MEASURING_BLOCK = re.compile(r'<details class="crossover-code"><summary>How (\S+) is measured: .*?</details>', re.S)


def measurements_once(page_html: str) -> str:
    """Each experiment's "How it is measured" block the first time a page shows it, not under every section that
    read it: the race page carried the same six blocks under each of its five sections (#39: never the same box
    several times on a page). Every block still names its snippets in its one line. Runs on the finished page."""
    return _MEASURING_BLOCK.sub(first_only(1), page_html)


def _measurements(reads: tuple[str, ...]) -> Html:
    """The measuring functions themselves, each in its own collapsed block."""
    sources = [(g, s) for g in reads if (s := of_measurement(g)) is not None]
    return join(html('<details class="crossover-code"><summary>How {} is measured: <code>{}</code></summary>{}'
                     "</details>", group, s.where, listing(s.code)) for group, s in sources)


def facts_block(facts: list[tuple[str, Callable, tuple[str, ...]]]) -> Html:
    """At a page's foot: every fact its sentences used, each with its code."""
    if not facts:
        return Html("")
    items = join(html('<details class="crossover-code"><summary><code>{}</code>: <code>{}</code>{}</summary>{}{}'
                      "</details>", name, of_view(view).where, measured_by(reads), link("fact", name),
                      listing(of_view(view).code))
                 for name, view, reads in facts)
    count = len(facts)
    return html('<details class="crossover-code crossover-code--page" data-search-exclude>'
                "<summary>Code behind the {} fact{} in this "
                "page's sentences</summary>{}</details>", count, "s" if count != 1 else "", items)
