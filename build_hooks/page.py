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
import sys
from collections.abc import Callable
from pathlib import Path

from build_hooks import untrusted, view_cache
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


_loaded: dict[str, int] = {}  # view module name -> the mtime_ns of the file it was imported from


def load_views(everything: bool = False) -> None:
    """Import every module in build_hooks/views, which registers its facts and sections.

    A module whose file changed since it was imported is imported again (its old
    registrations dropped first), so `mkdocs serve` shows an edited view on the next rebuild.
    A module that was deleted takes its names with it. `everything` imports every view again
    (the list of experiments changed, and some views register a name per experiment).
    """
    from build_hooks import views

    present = {}
    for info in pkgutil.iter_modules(views.__path__):
        name = f"{views.__name__}.{info.name}"
        present[name] = (Path(views.__path__[0]) / f"{info.name}.py").stat().st_mtime_ns
    for name in [n for n in _loaded if n not in present]:
        _forget(name)
        sys.modules.pop(name, None)
        del _loaded[name]
    for name, mtime in present.items():
        if _loaded.get(name) == mtime and not everything:
            continue
        if name in _loaded:
            _forget(name)
            importlib.reload(sys.modules[name])
        else:
            importlib.import_module(name)
        _loaded[name] = mtime


def _forget(module: str) -> None:
    """Drop the facts and sections a view module registered (before it is imported again)."""
    for registry in (FACTS, SECTIONS):
        for name in [n for n, fn in registry.items() if fn.__module__ == module]:
            del registry[name]


def _lookup(registry: dict[str, View], kind: str, name: str) -> View:
    if not _loaded:  # imported once here; the build's hook calls load_views() to pick up edits
        load_views()
    if name not in registry:
        raise UnknownName(f"unknown {kind} '{name}'; known: {', '.join(sorted(registry))}")
    return registry[name]


def view(kind: str, name: str) -> View:
    """The function registered as this fact or section (for showing its code)."""
    return _lookup(FACTS if kind == "fact" else SECTIONS, kind, name)


class BadData(MissingData):
    """A view met a value it cannot compute with (a zero it divides by): the data, not the code, is wrong."""


def _guarded(kind: str, name: str, view: View, data: Dataset):
    """The view's rendering; a schema-valid file it cannot compute with raises BadData naming the files and the
    experiment, in words, instead of a traceback that names neither (the build stops on it; claims shows it)."""
    try:
        return view(data)
    except ArithmeticError as exc:  # schema-valid but absurd: a byte count of 0, a time of 0 ...
        raise _bad_data(kind, name, view, data, f"{exc}: a zero or absurd value in its {{group}} points") from None
    except (LookupError, ValueError, TypeError) as exc:  # a failed, out-of-memory or absent point it needed
        raise _bad_data(kind, name, view, data, f"{type(exc).__name__} {exc}: a point it needs is missing, failed "
                                                f"or out of memory among its {{group}} points") from None


def _bad_data(kind: str, name: str, view: View, data: Dataset, why: str) -> BadData:
    group = view.__module__.rsplit(".", 1)[-1]
    files = ", ".join(m.source for m in data.with_experiment(group)) or ", ".join(m.source for m in data.machines)
    return BadData(untrusted.terminal(f"the {kind} '{name}' cannot be computed from {files or 'the results files'} "
                                      f"({why.replace('{group}', group)})"))


def render_fact(name: str, data: Dataset) -> str:
    """A fact's Markdown text (from view_cache when neither the data nor its code changed)."""
    view = _lookup(FACTS, "fact", name)
    return view_cache.rendered("fact", name, view, data, lambda: _guarded("fact", name, view, data))


def render_section(name: str, data: Dataset) -> Html:
    """A section's HTML. A plain str is refused: it would be HTML a view formatted by hand, where
    one forgotten escape lets a results file's text become markup."""
    view = _lookup(SECTIONS, "section", name)

    def checked() -> Html:  # checked before it is cached: the cache hands back Html
        rendered = _guarded("section", name, view, data)
        if not isinstance(rendered, Html):
            raise TypeError(f"section '{name}' returned {type(rendered).__name__}, not Html: build it with "
                            "render.html, table, figure, note or missing so every value is escaped")
        return rendered

    return view_cache.rendered("section", name, view, data, checked)


def names() -> dict[str, list[str]]:
    """Every fact and section name, for the contributor guide and the tests."""
    load_views()
    return {"fact": sorted(FACTS), "section": sorted(SECTIONS)}
