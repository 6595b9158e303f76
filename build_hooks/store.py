"""The results store: reading, validating and atomically writing results files.

A results file is one machine's measurements (schema in results.schema.json, layout
after pytest-benchmark's JSON). Nothing here measures or renders.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import jsonschema
from filelock import FileLock

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("results.schema.json")
MAX_FILE_BYTES = 64 * 1024 * 1024


class ResultsError(ValueError):
    """A results file that cannot be used, with the file and field that are wrong."""

    def __init__(self, path: Path | str, field: str, problem: str):
        self.path, self.field, self.problem = str(path), field, problem
        super().__init__(f"{path}: field {field}: {problem}")


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def _reject_constant(name: str):
    # Python's json accepts NaN and Infinity; JSON does not, and a NaN time is a lie.
    raise ValueError(f"{name} is not a valid JSON number")


def parse(text: str, path: Path | str) -> dict:
    """Parse and validate a results document; raise ResultsError naming the field."""
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise ResultsError(path, "$", f"not valid JSON ({exc})") from None
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
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema()).iter_errors(doc)
    )
    if error is not None:
        raise ResultsError(path, error.json_path, error.message)
    _check_consistency(doc, path)


def _check_consistency(doc: dict, path: Path | str) -> None:
    experiments = doc["experiments"]
    for i, bench in enumerate(doc["benchmarks"]):
        where = f"$.benchmarks[{i}]"
        if bench["group"] not in experiments:
            raise ResultsError(path, f"{where}.group",
                               f"'{bench['group']}' has no entry in $.experiments")
        _check_extra_info(bench, f"{where}.extra_info", path)
        stats = bench.get("stats")
        if stats is None:  # an out-of-memory point: recorded, with no timing to check
            continue
        for key in ("median", "q1", "q3", "mean"):
            if not math.isfinite(stats[key]):
                raise ResultsError(path, f"{where}.stats.{key}", "not a finite number")
        if not stats["min"] <= stats["median"] <= stats["max"]:
            raise ResultsError(path, f"{where}.stats.median", "outside [min, max]")


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


def load(path: Path) -> dict:
    """Read and validate one results file."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ResultsError(path, "$", f"cannot read ({exc.strerror})") from None
    if size > MAX_FILE_BYTES:
        raise ResultsError(path, "$", f"{size} bytes is larger than the {MAX_FILE_BYTES}-byte limit")
    return parse(path.read_text(encoding="utf-8"), path)


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"


def save_atomic(path: Path, doc: dict) -> None:
    """Validate, then replace `path` in one step: readers see the old file or the new one."""
    validate(doc, path)
    text = dumps(doc)
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
    stale = list(path.parent.glob(f".{path.name}.*.tmp"))
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return stale


@contextmanager
def locked(path: Path, timeout_s: float = 600):
    """Hold an exclusive lock for a read-modify-write of `path` (two builds at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=timeout_s):
        yield
