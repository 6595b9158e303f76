"""Rendered facts and sections, kept on disk under a key of everything they are computed from.

A view is a function of the dataset and of code only, so its output is reused while all of
these are unchanged:

  - the dataset's digest (the bytes of every results file it was loaded from, dataset.load),
  - the source of the view's module and of the view modules it imports,
  - the shared code every view calls: build_hooks/*.py, snippets/*.py and the schema.

Editing prose therefore re-renders nothing; editing one view re-renders that view's facts
and sections only; editing shared code, or a new measurement, re-renders all of them. A
warm build skips matplotlib entirely (plots imports it on first use).

Each rendering also records which experiments it read (dataset.recording_reads), so a page
can say which snippet measured the number it shows. Strings from results files are stored
as text (untrusted.portable), never as this process's placeholders. A view that reads more
than the dataset (the code reference reads the pages) says so with `also_reads`, a function
returning a digest of what else it read.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from build_hooks import config, digests, untrusted
from build_hooks.dataset import Dataset, recording_reads
from build_hooks.render import Html

FORMAT = 1  # bump when the entry layout below changes
# Indented too: a view may import another inside a function (views import each other late).
VIEW_IMPORT = re.compile(r"^[ \t]*from build_hooks\.views(?:\.(\w+) import| import (\w+))", re.M)


@dataclass(frozen=True)
class Rendered:
    value: str | Html
    reads: tuple[str, ...]  # the experiments the view read, in name order


# This process's renderings by key: `mkdocs serve` reuses them without touching the disk.
_memory: dict[str, Rendered] = {}
_used: set[str] = set()  # keys this build asked for (prune keeps only these)
# Every rendering of this process by (kind, name): what the page shows as "measured by".
reads: dict[tuple[str, str], tuple[str, ...]] = {}
_build_code: str | None = None  # the shared code's digest, read once per build (new_build)


def new_build() -> None:
    """Read the shared code's digest once for the build that starts (the MkDocs hook calls it);
    outside a build it is read for every rendering."""
    global _build_code
    _build_code = digests.shared_code()
    digests.loaded_code_is_current()  # notes the modules this build runs, as they were loaded


def module_digest(module: str) -> str:
    """A digest of one view module's file and of the view modules it imports."""
    views = config.PROJECT_ROOT / "build_hooks" / "views"
    seen: list[Path] = []
    pending = [views / f"{module.rsplit('.', 1)[-1]}.py"]
    while pending:
        path = pending.pop()
        if path in seen or not path.exists():
            continue
        seen.append(path)
        pending += [views / f"{a or b}.py" for a, b in VIEW_IMPORT.findall(path.read_text())]
    return digests.files(sorted(seen))


def key(kind: str, name: str, view: Callable, data: Dataset, shared: str) -> str | None:
    """The cache key of one rendering, or None for a dataset made in memory (no digest)."""
    if data.digest is None:
        return None
    # A view that reads more than the dataset names it (a function returning a digest of it).
    extra = getattr(view, "also_reads", lambda: "")()
    return digests.digest(f"{FORMAT}|{kind}|{name}".encode(), data.digest.encode(), shared.encode(),
                          module_digest(view.__module__).encode(), extra.encode())


def folder() -> Path:
    return config.settings().cache_dir / "views"


def rendered(kind: str, name: str, view: Callable, data: Dataset, render: Callable[[], str | Html],
             shared: str | None = None) -> str | Html:
    """`render()`'s value for this view and dataset: from this process, from disk or freshly made."""
    entry_key = key(kind, name, view, data, shared or _build_code or digests.shared_code())
    entry = _lookup(entry_key) if entry_key else None
    if entry is None:
        with recording_reads() as read:
            value = render()
        entry = Rendered(value, tuple(sorted(read)))
        if entry_key:
            _save(entry_key, kind, entry)
    if entry_key:
        _memory[entry_key] = entry
        _used.add(entry_key)
    reads[(kind, name)] = entry.reads
    return entry.value


def _lookup(entry_key: str) -> Rendered | None:
    if entry_key in _memory:
        return _memory[entry_key]
    path = folder() / f"{entry_key}.json"
    text = digests.load_entry(path)  # None: absent, damaged or not sealed (render afresh)
    if text is None:
        return None
    try:
        stored = json.loads(text)
        os.utime(path)  # in use: prune keeps it
        text = untrusted.from_portable(stored["parts"])
        value = Html(text) if stored["kind"] == "section" else text
        return Rendered(value, tuple(stored["reads"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a layout from other code: render afresh


def _save(entry_key: str, kind: str, entry: Rendered) -> None:
    """Write one entry (digests.save_entry: atomic, and a failure only costs speed), unless a module
    this process runs was edited after it was loaded: its rendering is the old code's, not the key's."""
    if not digests.loaded_code_is_current():
        return
    digests.save_entry(folder() / f"{entry_key}.json", json.dumps(
        {"kind": kind, "parts": untrusted.portable(str(entry.value)), "reads": list(entry.reads)}))


STALE_S = 3600  # an entry no build has used for an hour is dropped: re-rendering it costs only time


def prune() -> None:
    """After a build: drop entries that neither it nor any build in the last STALE_S used."""
    target = folder()
    if not target.is_dir():
        return
    now = time.time()
    for path in target.glob("*.json"):
        try:
            if path.stem not in _used and now - path.stat().st_mtime > STALE_S:
                path.unlink()
        except OSError:
            pass
    _used.clear()
