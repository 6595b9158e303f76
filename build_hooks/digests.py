"""Content digests of files and of the project's shared code (what caches key on), and the
one way a cache entry is written."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

from build_hooks import config

# The code every view and every results-file check may call (view modules are keyed one by one),
# and the snippets, whose declarations the checks read (from wherever experiments finds them).
SHARED_CODE = ("build_hooks/*.py", "build_hooks/results.schema.json")
_by_signature: dict[tuple, str] = {}


def digest(*parts: bytes) -> str:
    """SHA-256 of the parts, each length-prefixed so no two sequences of parts collide."""
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little") + part)
    return h.hexdigest()


def files(paths: list[Path]) -> str:
    """A digest of these files' names and bytes, re-read only when a size or mtime changed.

    Names count from the project root (a file elsewhere by its name alone), so a copy of the
    project with a copy of its cache shares the renderings: what is keyed is the code, not where.
    """
    signature = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    if signature not in _by_signature:
        _by_signature[signature] = digest(*(_name(p).encode() + b"\0" + p.read_bytes() for p in paths))
    return _by_signature[signature]


def _name(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(config.PROJECT_ROOT))
    except ValueError:
        return path.name


# (module object id, file mtime) of every project module the first time a build saw it loaded.
_loaded: dict[str, tuple[int, int]] = {}
PROJECT_PACKAGES = ("build_hooks", "snippets")


def loaded_code_is_current() -> bool:
    """Whether every project module this process runs is its file as it is now on disk.

    A cache keys a rendering on the files on disk; `mkdocs serve` reloads only the views, so a
    module edited since it was imported would render with its old code under the new file's
    key, and every later build would publish that. Each loaded module's file time is noted the
    first time it is seen (a module reloaded is a new object, noted afresh), and a module whose
    file has changed since makes this False: its renderings must not be stored.
    """
    current = True
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not path or name.split(".")[0] not in PROJECT_PACKAGES:
            continue
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            continue
        seen = _loaded.get(name)
        if seen is None or seen[0] != id(module):
            _loaded[name] = (id(module), mtime)
        elif seen[1] != mtime:
            current = False
    return current


def shared_code() -> str:
    """One digest of build_hooks/*.py, the schema and the snippets."""
    from build_hooks import experiments

    root = config.PROJECT_ROOT
    paths = [p for pattern in SHARED_CODE for p in root.glob(pattern)] + list(experiments.SNIPPETS.glob("*.py"))
    return files(sorted(paths))


def save_entry(path: Path, text: str) -> None:
    """Write one cache entry atomically (a reader sees the old file or the new one, never half);
    a cache that cannot be written only costs the next build time, so failure is silent."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except OSError:
        pass
