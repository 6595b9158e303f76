"""Content digests of files and of the project's shared code (what caches key on), and the
one way a cache entry is written."""

from __future__ import annotations

import hashlib
import os
import stat
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


# A cache entry's first line: this tag and the digest of the text after it. A truncated, damaged or
# hand-edited entry no longer matches and is treated as absent: it costs time, never a wrong page.
SEAL = "crossover-entry"
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # the largest a rendered page part or notebook may be


def save_entry(path: Path, text: str) -> None:
    """Write one cache entry atomically (a reader sees the old file or the new one, never half), sealed
    with its digest (load_entry); a cache that cannot be written only costs the next build time, so
    failure is silent."""
    body = text.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(f"{SEAL} {digest(body)}\n".encode() + body)
        os.replace(tmp, path)
    except OSError:
        pass


def read_regular(path: Path, limit: int = MAX_ENTRY_BYTES) -> bytes | None:
    """A cache file's bytes, or None when it is absent, not a regular file (a folder, pipe, device or
    link: never followed, never waited on) or larger than `limit`."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def load_entry(path: Path) -> str | None:
    """A cache entry's text, or None when it is absent or cannot be trusted: not a regular file,
    too large (read_regular), not sealed by save_entry, not UTF-8, or its text no longer matches
    its digest."""
    data = read_regular(path)
    if data is None:
        return None
    head, _, body = data.partition(b"\n")
    if head != f"{SEAL} {digest(body)}".encode():
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None
