"""The results store: reading, validating and atomically writing results files.

A results file is one machine's measurements (schema in results.schema.json, layout
after pytest-benchmark's JSON). Nothing here measures or renders.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import math
import os
import stat
import sys
import tempfile
import time
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from build_hooks import untrusted

try:  # the site build pins it; a bare GPU runner measuring with its own torch may lack it
    import jsonschema
except ImportError:  # pragma: no cover - exercised by the torch-and-numpy-only test
    jsonschema = None

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("results.schema.json")
MAX_FILE_BYTES = 64 * 1024 * 1024
# Sane bounds for what a point can be: a timing between a picosecond and a day, a byte
# count up to a petabyte. Outside them a file is broken or hostile, not a measurement.
BOUNDS = {"s": (1e-12, 86_400.0), "bytes": (0.0, 1e15)}
MAX_NUMBER = 1e18  # any other number (FLOP counts, sizes) in a results file
QUOTE_LIMIT = 80  # characters of a bad value quoted back in an error


class ResultsError(ValueError):
    """A results file that cannot be used, with the file and field that are wrong."""

    def __init__(self, path: Path | str, field: str, problem: str):
        self.path, self.field, self.problem = str(path), field, problem
        # File names and quoted values come from whoever wrote the file: no terminal controls.
        super().__init__(untrusted.terminal(f"{path}: field {field}: {problem}"))


def quote(value: object) -> str:
    """A bad value as an error shows it: short, and with no control characters."""
    text = repr(value)
    text = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + f"… ({len(text)} characters)"


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def _reject_constant(name: str):
    # Python's json accepts NaN and Infinity; JSON does not, and a NaN time is a lie.
    raise ValueError(f"{name} is not a valid JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as inf; the field is named by later checks otherwise
        raise ValueError(f"the number {quote(text)} is out of range")
    return value


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    # Python keeps the last of two equal keys; a reviewer reading the file sees the first.
    keys = [k for k, _ in pairs]
    duplicate = next((k for k in keys if keys.count(k) > 1), None)
    if duplicate is not None:
        raise ValueError(f"the key {quote(duplicate)} appears twice in one object")
    return dict(pairs)


def parse(text: str, path: Path | str) -> dict:
    """Parse and validate a results document; raise ResultsError naming the field."""
    try:
        doc = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float,
                         object_pairs_hook=_no_duplicate_keys)
    except RecursionError:
        raise ResultsError(path, "$", "not a results file (nested too deeply)") from None
    except ValueError as exc:
        raise ResultsError(path, "$", f"not valid JSON ({str(exc)[:200]})") from None
    validate(doc, path)
    return doc


def validate(doc: object, path: Path | str) -> None:
    """Check a parsed document against the schema and the rules a schema cannot say."""
    if not isinstance(doc, dict):
        raise ResultsError(path, "$", "expected a JSON object at the top level")
    version = doc.get("schema_version")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise ResultsError(
            path, "$.schema_version",
            f"written by a newer Crossover (schema {version}); this build reads schema "
            f"{SCHEMA_VERSION}: update the project before using this file",
        )
    software = doc.get("software")
    if isinstance(software, dict) and "stack" in software:  # the schema's browser_run branch
        raise ResultsError(
            path, "$.software.stack",
            "this file was measured in a web browser (TensorFlow.js, by the race page's \"Race your "
            "browser\"): it races on that page under \"Add your machine\"; the build's pages compare "
            "PyTorch measurements, so it cannot be a results file of the build",
        )
    # Without jsonschema (a measuring-only machine) the checks below still run; the site
    # build, which always has it, validates every file against the schema again.
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema()).iter_errors(doc)
    ) if jsonschema else None
    if error is not None:
        message = error.message if len(error.message) <= 2 * QUOTE_LIMIT else (
            f"{quote(error.instance)} fails the schema's '{error.validator}' rule")
        raise ResultsError(path, error.json_path, message)
    _check_numbers(doc, "$", path)
    _check_times(doc, path)
    _check_consistency(doc, path)


def _check_numbers(value: object, where: str, path: Path | str) -> None:
    """Every number anywhere in the file is finite and within MAX_NUMBER (ints included)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_numbers(item, f"{where}.{key}", path)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_numbers(item, f"{where}[{i}]", path)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or abs(value) > MAX_NUMBER:
            raise ResultsError(path, where, f"{quote(value)} is out of range (|x| <= {MAX_NUMBER:g})")


def _check_times(doc: dict, path: Path | str) -> None:
    """Date-times are real ISO 8601 instants with a time zone (the schema cannot check this)."""
    stamps = [("$.datetime", doc["datetime"])] + [
        (f"$.experiments.{name}.measured_at", meta["measured_at"]) for name, meta in doc["experiments"].items()]
    for where, value in stamps:
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            raise ResultsError(path, where, f"{quote(value)} is not an ISO 8601 date-time with a time zone")


def _check_consistency(doc: dict, path: Path | str) -> None:
    experiments = doc["experiments"]
    for i, bench in enumerate(doc["benchmarks"]):
        where = f"$.benchmarks[{i}]"
        if bench["group"] not in experiments:
            raise ResultsError(path, f"{where}.group",
                               f"'{bench['group']}' has no entry in $.experiments")
        _check_params(bench, f"{where}.params", path)
        _check_extra_info(bench, f"{where}.extra_info", path)
        stats = bench.get("stats")
        if stats is None:  # an out-of-memory point: recorded, with no timing to check
            continue
        low, high = BOUNDS.get(bench["unit"], (0.0, MAX_NUMBER))
        for key in ("median", "q1", "q3", "mean", "min", "max"):
            if not low <= stats[key] <= high:
                raise ResultsError(path, f"{where}.stats.{key}",
                                   f"{quote(stats[key])} is outside [{low:g}, {high:g}] {bench['unit']}")
        for key, i_sample, sample in [("data", i, x) for i, x in enumerate(stats["data"])] + [
                ("round_medians", i, x) for i, x in enumerate(stats.get("round_medians", []))]:
            if not low <= sample <= high:
                raise ResultsError(path, f"{where}.stats.{key}[{i_sample}]",
                                   f"{quote(sample)} is outside [{low:g}, {high:g}] {bench['unit']}")
        if not stats["min"] <= stats["median"] <= stats["max"]:
            raise ResultsError(path, f"{where}.stats.median", "outside [min, max]")


def _check_params(bench: dict, where: str, path: Path | str) -> None:
    """Each point's params are the kinds its experiment plans: a batch is a whole number >= 1."""
    from build_hooks import experiments

    if bench["group"] not in experiments.REGISTRY:
        return
    problem = experiments.check_params(bench["group"], bench["params"])
    if problem:
        key, what = problem
        raise ResultsError(path, f"{where}.{key}", f"experiment {bench['group']}, point {quote(bench['name'])}: "
                                                   f"{quote(bench['params'].get(key))} is wrong: {what}")


def _check_extra_info(bench: dict, where: str, path: Path | str) -> None:
    """Each experiment's extra_info carries the keys and units its snippet declares."""
    from build_hooks import experiments

    group = bench["group"]
    if group not in experiments.REGISTRY:
        return  # no snippet declares it, so no page shows it (its timings are checked below)
    measured = bench.get("status", "ok") == "ok"
    problem = experiments.check_extra_info(group, bench["extra_info"], measured)
    if problem:
        raise ResultsError(path, where, f"experiment {group}, point {bench['name']}: {problem}")


def read_regular_file(path: Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file at most `limit` long; never follows a link or waits on a pipe.

    A symlink (to /dev/zero, or out of the repository), a FIFO or a directory named
    *.json is refused before it is opened for reading; the limit is enforced on what is
    read, not on what stat() claims.
    """
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ResultsError(path, "$", f"cannot read ({exc.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise ResultsError(path, "$", "is a symbolic link; results files must be regular files")
    if not stat.S_ISREG(info.st_mode):
        raise ResultsError(path, "$", "is not a regular file (a directory, pipe or device)")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise ResultsError(path, "$", f"cannot read ({exc.strerror})") from None
    if len(data) > limit:
        raise ResultsError(path, "$", f"larger than the {limit}-byte limit")
    return data


def load(path: Path) -> dict:
    """Read and validate one results file (once per content and checking code: see _passed)."""
    data = read_regular_file(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(path, "$", f"not UTF-8 text (byte {exc.start})") from None
    passed = _passed(data)
    if passed is not None and passed.exists():
        return json.loads(text)  # these very bytes passed parse() under this very code
    doc = parse(text, path)
    if passed is not None:
        try:
            passed.parent.mkdir(parents=True, exist_ok=True)
            passed.touch()
        except OSError:
            pass  # an unwritable cache only costs the next build this check's time
    return doc


def _passed(data: bytes) -> Path | None:
    """Where a mark says these bytes passed every check of this code (store.py, the schema,
    the snippets' declarations: digests.shared_code); None without jsonschema, which checks less."""
    if jsonschema is None:
        return None
    from build_hooks import config, digests

    return config.settings().cache_dir / "validated" / digests.digest(data, digests.shared_code().encode())


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"


_WRITE_HINTS = {
    errno.ENOSPC: "the disk is full: free some space and run again",
    errno.EDQUOT: "the disk quota is used up: free some space and run again",
    errno.EFBIG: "the file is larger than this file system or a ulimit allows",
    errno.ENOTDIR: "a folder on its path is a file (was the folder replaced?)",
    errno.EEXIST: "a folder on its path is a file (was the folder replaced?)",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
}


def save_atomic(path: Path, doc: dict) -> None:
    """Validate, then replace `path` in one step: readers see the old file or the new one.

    A write that fails (full disk, file too big, a folder replaced by a file) raises
    ResultsError naming the file and the cause; the earlier file is left as it was.
    """
    validate(doc, path)
    try:
        _replace(path, dumps(doc))
    except OSError as exc:
        hint = _WRITE_HINTS.get(exc.errno, exc.strerror or str(exc))
        raise ResultsError(path, "$", f"cannot be written ({hint}); the earlier file, if any, is "
                                      "unchanged") from None


def _replace(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; results files are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Delete temporary files a killed save_atomic left next to `path` (call under the lock)."""
    return _remove(path.parent.glob(f".{path.name}.*.tmp"))


def _remove(paths) -> list[Path]:
    removed = list(paths)
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def sweep_temporaries(folder: Path) -> list[Path]:
    """Remove every stray *.tmp in `folder` when no writer holds its lock (else leave them for it).

    For runs that need no lock otherwise (a warm build): a temporary file is only ever
    being written by a process that holds the lock.
    """
    import fcntl

    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return []
    try:
        return _remove(folder.glob(".*.tmp")) if _try_lock(fd, fcntl) else []
    finally:
        os.close(fd)


class LockTimeout(RuntimeError):
    """Another process held the measurement lock for longer than we were willing to wait."""


LOCK_HOLDER = ".lock-holder"  # not *.json: no results file


@contextmanager
def locked(path: Path, timeout_s: float = 3 * 3600, log=print):
    """Hold an exclusive lock on `path`'s folder for a read-modify-write (two builds at once).

    The lock is flock() on the folder itself, which cannot be deleted while it holds
    results, so removing a lock file by hand cannot let two builds measure at once. The
    holder writes who it is and since when; a waiter says whom it waits for, and gives
    up with that name after `timeout_s` (a full measurement can take many minutes).
    """
    import fcntl

    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        if not _try_lock(fd, fcntl):
            holder = _holder(folder)
            log(f"crossover: waiting for another measurement of this machine to finish ({holder})")
            deadline = time.monotonic() + timeout_s
            while not _try_lock(fd, fcntl):
                if time.monotonic() > deadline:
                    raise LockTimeout(f"gave up after {timeout_s:g} s waiting for the lock on {folder} "
                                      f"({_holder(folder)}); if that process is gone, run again")
                time.sleep(0.5)
        try:  # who holds the lock, for a waiter's message: helpful, not needed
            (folder / LOCK_HOLDER).write_text(json.dumps({
                "pid": os.getpid(), "command": " ".join(sys.argv)[:200],
                "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}))
        except OSError:  # a full disk: no half-written holder file left behind
            (folder / LOCK_HOLDER).unlink(missing_ok=True)
        try:
            yield
        finally:
            (folder / LOCK_HOLDER).unlink(missing_ok=True)
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _try_lock(fd: int, fcntl) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _holder(folder: Path) -> str:
    """Who holds the lock, as its holder recorded it."""
    try:
        info = json.loads((folder / LOCK_HOLDER).read_text())
        return f"process {info['pid']} ({info['command']}) since {info['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "holder unknown"
