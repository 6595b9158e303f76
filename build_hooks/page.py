"""The page API: the only names a Markdown page uses to show data.

    {{ fact: name }}       inline, inside a sentence: a number or a claim from the data
    {{ section: name }}    alone on a line: a figure, table or widget data block (HTML)

A view module in `build_hooks/views/` registers what it offers with `@fact` and
`@section`; the function's name is the name a page uses. Both are functions of the
dataset only, so a page can never pass arguments, loop or reach into internals. An
unknown name raises, listing the known ones. Views only read JSON data: nothing here
imports torch.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from build_hooks import untrusted
from build_hooks.dataset import Dataset
from build_hooks.render import Html, MissingData

__all__ = ["FACTS", "SECTIONS", "BadData", "MissingData", "UnknownName", "fact", "section",
           "render_fact", "render_section", "names"]
View = Callable[[Dataset], str]
FACTS: dict[str, View] = {}
SECTIONS: dict[str, View] = {}


class UnknownName(KeyError):
    """A page named a fact or section that no view registers."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0])


def _register(registry: dict[str, View], kind: str, fn: View) -> View:
    if fn.__name__ in registry and registry[fn.__name__] is not fn:
        raise ValueError(f"two views register the {kind} '{fn.__name__}': "
                         f"{registry[fn.__name__].__module__} and {fn.__module__}")
    registry[fn.__name__] = fn
    return fn


def fact(fn: View) -> View:
    """Register `fn(data) -> Markdown text` as `{{ fact: <function name> }}`."""
    return _register(FACTS, "fact", fn)


def section(fn: View) -> View:
    """Register `fn(data) -> Html` as `{{ section: <function name> }}` (render's Html, never a str)."""
    return _register(SECTIONS, "section", fn)


def load_views() -> None:
    """Import every module in build_hooks/views, which registers its facts and sections."""
    from build_hooks import views

    for module in pkgutil.iter_modules(views.__path__):
        importlib.import_module(f"{views.__name__}.{module.name}")


def _lookup(registry: dict[str, View], kind: str, name: str) -> View:
    load_views()
    if name not in registry:
        raise UnknownName(f"unknown {kind} '{name}'; known: {', '.join(sorted(registry))}")
    return registry[name]


class BadData(MissingData):
    """A view met a value it cannot compute with (a zero it divides by): the data, not the code, is wrong."""


def _guarded(kind: str, name: str, view: View, data: Dataset):
    try:
        return view(data)
    except ArithmeticError as exc:  # schema-valid but absurd: a byte count of 0, a time of 0 ...
        group = view.__module__.rsplit(".", 1)[-1]
        files = ", ".join(m.source for m in data.with_experiment(group)) or "the results files"
        raise BadData(untrusted.terminal(f"the {kind} '{name}' cannot be computed from {files} ({exc}: a zero "
                                         f"or absurd value in its {group} points)")) from None


def render_fact(name: str, data: Dataset) -> str:
    return _guarded("fact", name, _lookup(FACTS, "fact", name), data)


def render_section(name: str, data: Dataset) -> Html:
    """A section's HTML. A plain str is refused: it would be HTML a view formatted by hand, where
    one forgotten escape lets a results file's text become markup."""
    rendered = _guarded("section", name, _lookup(SECTIONS, "section", name), data)
    if not isinstance(rendered, Html):
        raise TypeError(f"section '{name}' returned {type(rendered).__name__}, not Html: build it with "
                        "render.html, table, figure, note or missing so every value is escaped")
    return rendered


def names() -> dict[str, list[str]]:
    """Every fact and section name, for the contributor guide and the tests."""
    load_views()
    return {"fact": sorted(FACTS), "section": sorted(SECTIONS)}
