"""The results store: reading, validating and atomically writing results files.

A results file is one machine's measurements (schema in results.schema.json, layout
after pytest-benchmark's JSON). Nothing here measures or renders.
"""

from __future__ import annotations

import datetime as dt
import errno
import functools
import json
import math
import os
import re
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
HOW_TO_MAKE_ONE = ("make one on your machine with `make measure` (python -m build_hooks.measure), or in a "
                   "browser with \"Race your browser\" on the race page")
REMEASURE = "a file Crossover writes always has this right, so measure again rather than edit the file"


class ResultsError(ValueError):
    """A results file that cannot be used: what is wrong, in words, then the field's JSON path.

    `problem` is the sentence a reader gets (validate() puts the field's name in words in front
    of it); `field` stays machine-readable, and closes the message: "… (field $.benchmarks[0].unit)".
    """

    def __init__(self, path: Path | str, field: str, problem: str):
        self.path, self.field, self.problem = str(path), field, problem
        # File names and quoted values come from whoever wrote the file: no terminal controls.
        super().__init__(untrusted.terminal(f"{path}: {problem} (field {field})"))


class _Problem(Exception):
    """What is wrong at `field`, before validate() names the field in words and the file."""

    def __init__(self, field: str, what: str, about: str | None = None):
        super().__init__(what)
        self.field, self.what, self.about = field, what, about  # about: the schema's description of the field


def quote(value: object) -> str:
    """A bad value as an error shows it: short, with no control characters, numbers as JSON names them."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    text = repr(value)
    text = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + f"… ({len(text)} characters)"


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def _reject_constant(name: str):
    # Python's json accepts NaN and Infinity; JSON does not, and a NaN time is a lie.
    raise ValueError(f"{name} is not a valid JSON number")


class _NotFinite(ValueError):
    """A number literal too large for a float (1e999): valid JSON, but no measurement."""


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as inf: refused here, where the text still says what it was
        raise _NotFinite(f"the number {text[:40]} is out of range: it reads as Infinity, and a measurement is "
                         f"always a finite number; {REMEASURE}")
    return value


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    # Python keeps the last of two equal keys; a reviewer reading the file sees the first.
    keys = [k for k, _ in pairs]
    duplicate = next((k for k in keys if keys.count(k) > 1), None)
    if duplicate is not None:
        raise ValueError(f"the key {quote(duplicate)} appears twice in one object")
    return dict(pairs)


def parse(text: str, path: Path | str, schema_passed: bool = False) -> dict:
    """Parse and validate a results document; raise ResultsError naming the field. `schema_passed`:
    a mark says these bytes passed the schema (load), so only the checks after it run."""
    try:
        doc = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float,
                         object_pairs_hook=_no_duplicate_keys)
    except _NotFinite as exc:
        raise ResultsError(path, "$", str(exc)) from None
    except RecursionError:
        raise ResultsError(path, "$", f"this is not a Crossover results file (nested too deeply): "
                                      f"{HOW_TO_MAKE_ONE}") from None
    except ValueError as exc:
        raise ResultsError(path, "$", f"not valid JSON ({str(exc)[:200]}); was the file cut short or "
                                      "edited by hand?") from None
    validate(doc, path, schema_passed)
    return doc


def validate(doc: object, path: Path | str, schema_passed: bool = False) -> None:
    """Check a parsed document against the schema and the rules a schema cannot say.

    A refusal names the field in words ("benchmark 1 (training_step[…]), its params"), says
    what is wrong and what to do, and ends with the field's JSON path.
    """
    try:
        try:
            _validate(doc, with_schema=not schema_passed)
        except (LookupError, TypeError, ValueError, AttributeError):
            if not schema_passed:
                raise
            _validate(doc)  # a forged or stale mark: the schema says what is wrong, in words
    except _Problem as problem:
        words = "" if problem.field == "$" else field_words(problem.field, doc)
        words += f" ({problem.about})" if words and problem.about else ""
        raise ResultsError(path, problem.field, f"{words}: {problem.what}" if words else problem.what) from None


def _whole_pattern(validator, pattern: str, instance: object, schema: dict):
    """The schema's "pattern", matched against the whole string. Python's `$` also matches before a final
    newline (ECMA's does not), so "id\n" would pass `^[a-z0-9-]+$` and name a second, different machine."""
    if isinstance(instance, str) and not re.search(pattern.removesuffix("$") + r"\Z", instance):
        yield jsonschema.exceptions.ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.lru_cache(maxsize=1)
def _validator():
    """Draft 2020-12 with every pattern a full match."""
    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _whole_pattern})


def _validate(doc: object, with_schema: bool = True) -> None:
    if not isinstance(doc, dict):
        raise _Problem("$", f"expected a JSON object at the top level; this is not a Crossover results file: "
                            f"{HOW_TO_MAKE_ONE}")
    _check_origin(doc)
    # Without jsonschema (a measuring-only machine) the checks below still run; the site
    # build, which always has it, validates every file against the schema again.
    error = (jsonschema.exceptions.best_match(_validator()(schema()).iter_errors(doc))
             if jsonschema and with_schema else None)
    if error is not None:
        error = _alternative_meant(error)
        raise _Problem(error.json_path, schema_problem(error), _description(error.schema))
    _check_numbers(doc, "$")
    _check_times(doc)
    _check_consistency(doc)


def _check_origin(doc: dict) -> None:
    """Files Crossover cannot read, told apart before the schema's first complaint hides what they are."""
    version = doc.get("schema_version")
    if "schema_version" not in doc:
        # pytest-benchmark's JSON, whose layout the schema borrows, has these keys and no schema_version.
        kind = ("a pytest-benchmark results file (it has machine_info and commit_info but no schema_version), "
                "which Crossover cannot read" if all(key in doc for key in ("machine_info", "commit_info"))
                else "not a Crossover results file (it has no schema_version)")
        raise _Problem("$", f"this is {kind}: {HOW_TO_MAKE_ONE}")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise _Problem("$.schema_version", f"written by a newer Crossover (schema {version}); this build reads "
                                           f"schema {SCHEMA_VERSION}: update the project before using this file")
    software = doc.get("software")
    if isinstance(software, dict) and "stack" in software:  # the schema's browser_run branch
        raise _Problem("$.software.stack",
                       "this file was measured in a web browser (TensorFlow.js, by the race page's \"Race your "
                       "browser\"): it races on that page under \"Add your machine\"; the build's pages compare "
                       "PyTorch measurements, so it cannot be a results file of the build")


# What a reader calls a field whose key does not say it; any other key is read with "_" as a space.
FIELD_NAMES = {"machine_id": "machine id", "machine_info": "machine description", "cpu": "CPU", "gpu": "GPU",
               "commit_info": "commit", "datetime": "date", "benchmarks": "list of benchmarks",
               "threads_used": "thread count", "torch": "torch version", "python": "Python version",
               "isa": "instruction-set list", "stats": "statistics", "data": "samples"}
_FIELD_PART = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def field_words(field: str, doc: object) -> str:
    """A JSON path as a reader says it: "$.benchmarks[0].params" is "benchmark 1 (its name), its params"."""
    parts = [int(index) if index else key for key, index in _FIELD_PART.findall(field)]
    anchor = None
    if parts[:1] == ["benchmarks"] and len(parts) > 1 and isinstance(parts[1], int):
        anchor, parts = _benchmark_words(doc, parts[1]), parts[2:]
    elif parts[:1] == ["experiments"] and len(parts) > 1:
        anchor, parts = f"experiment {quote(parts[1])}", parts[2:]
    item = f", item {parts.pop() + 1}" if parts and isinstance(parts[-1], int) else ""
    keys = [FIELD_NAMES.get(key, str(key).replace("_", " ")) for key in parts if not isinstance(key, int)]
    if not keys:
        return (anchor or "the file") + item
    owner = f"{anchor}, its " if anchor else "the "
    inside = f" in {'its' if anchor else 'the'} {keys[-2]}" if len(keys) > 1 else ""
    return f"{owner}{keys[-1]}{inside}{item}"


def _benchmark_words(doc: object, index: int) -> str:
    benchmarks = doc.get("benchmarks") if isinstance(doc, dict) else None
    bench = benchmarks[index] if isinstance(benchmarks, list) and index < len(benchmarks) else None
    name = bench.get("name") if isinstance(bench, dict) else None
    if not isinstance(name, str):
        return f"benchmark {index + 1}"
    return f"benchmark {index + 1} ({name if len(name) <= 60 else name[:60] + '…'})"


# The schema's patterns in words (keyed by the pattern itself, so a changed pattern is quoted, not misdescribed).
PATTERN_WORDS = {
    "^[a-z0-9][a-z0-9-]{0,80}$": "lower-case letters a-z, digits and hyphens only, starting with a letter or "
                                 "digit, at most 81 characters (such as \"my-laptop-m3\")",
    "^[a-z][a-z0-9_]{0,63}$": "a lower-case letter, then lower-case letters, digits or underscores, at most 64 "
                              "characters (such as \"epoch_time\")",
    "^[0-9a-f]{7,64}$": "a git commit id: 7 to 64 hexadecimal digits 0-9 and a-f",
    "^[a-z0-9_]{1,32}$": "lower-case letters, digits and underscores, 1 to 32 characters (such as \"avx2\")",
}
_KIND = {dict: "an object", list: "a list", str: "text", bool: "true or false", type(None): "null",
         int: "a whole number", float: "a number"}
_TYPE_WORDS = {"object": "an object", "array": "a list", "string": "text", "boolean": "true or false",
               "null": "null", "integer": "a whole number", "number": "a number"}


def _is(instance: object) -> str:
    """What a value is, in words: "null", "the text 'fast'", "the number 1.5"."""
    if isinstance(instance, (str, int, float)) and not isinstance(instance, bool):
        return f"{'the text' if isinstance(instance, str) else 'the number'} {quote(instance)}"
    return _KIND.get(type(instance), type(instance).__name__)


def _extra_keys(instance: dict, schema_at: dict) -> str:
    known = set(schema_at.get("properties", {}))
    return ", ".join(quote(key) for key in instance if key not in known)


# Each schema keyword's complaint in words: f(the bad value, the keyword's value in the schema, its subschema).
SCHEMA_WORDS = {
    "type": lambda x, v, s: f"is {_is(x)}, but must be "
                            f"{' or '.join(_TYPE_WORDS.get(t, t) for t in ([v] if isinstance(v, str) else v))}; "
                            + REMEASURE,
    "pattern": lambda x, v, s: f"{quote(x)} is not allowed: it must be {PATTERN_WORDS.get(v, f'text matching {v}')}; "
                               "change it to such a value",
    "required": lambda x, v, s: f"has no {', '.join(quote(k) for k in v if k not in x)}, which every results "
                                f"file has here; {REMEASURE}",
    "enum": lambda x, v, s: f"{quote(x)} is not one of {', '.join(quote(a) for a in v)}; change it to one of them",
    "const": lambda x, v, s: f"{quote(x)} must be {quote(v)}",
    "minimum": lambda x, v, s: f"{quote(x)} is below the smallest allowed value, {quote(v)}; {REMEASURE}",
    "exclusiveMinimum": lambda x, v, s: f"{quote(x)} must be more than {quote(v)}; {REMEASURE}",
    "maximum": lambda x, v, s: f"{quote(x)} is above the largest allowed value, {quote(v)}; {REMEASURE}",
    "exclusiveMaximum": lambda x, v, s: f"{quote(x)} must be less than {quote(v)}; {REMEASURE}",
    "minLength": lambda x, v, s: f"{quote(x)} is shorter than the {v} characters it must have at least",
    "maxLength": lambda x, v, s: f"is {len(x)} characters long; at most {v} are allowed: shorten it",
    "minItems": lambda x, v, s: f"has {len(x)} items; at least {v} are needed; {REMEASURE}",
    "maxItems": lambda x, v, s: f"has {len(x)} items; at most {v} are allowed",
    "uniqueItems": lambda x, v, s: "lists the same item twice; list each once",
    "additionalProperties": lambda x, v, s: f"has {_extra_keys(x, s)}, which this field of a Crossover results "
                                            f"file does not have: remove it",
    "oneOf": lambda x, v, s: f"is {_is(x)}, which is none of the forms this field takes; {REMEASURE}",
    "anyOf": lambda x, v, s: f"is {_is(x)}, which is none of the forms this field takes; {REMEASURE}",
    "not": lambda x, v, s: f"must not be here in this form; {REMEASURE}",
}


def schema_problem(error) -> str:
    """A jsonschema error in words: what is wrong with the value and what to do."""
    words = SCHEMA_WORDS.get(error.validator)
    what = words(error.instance, error.validator_value, error.schema) if words else (
        error.message if len(error.message) <= 2 * QUOTE_LIMIT
        else f"{quote(error.instance)} fails the schema's '{error.validator}' rule")
    # A key's complaint (propertyNames) is about its name, not its value; the top level's is about the file.
    subject = ("the name " if "propertyNames" in error.absolute_schema_path
               else "the file " if error.json_path == "$" else "")
    return subject + what


def _description(schema_at: object) -> str | None:
    """The first sentence of the schema's own description of a field, if it has one."""
    described = schema_at.get("description") if isinstance(schema_at, dict) else None
    return re.split(r"[.:;] ", described)[0].rstrip(".")[:120] if isinstance(described, str) else None


def _alternative_meant(error):
    """For "one of these forms" (a GPU record or null), the complaint of the form the value has."""
    if error.validator not in {"oneOf", "anyOf"}:
        return error
    meant = [e for e in error.context if e.validator != "type"]
    return jsonschema.exceptions.best_match(meant) if meant else error


def _check_numbers(value: object, where: str) -> None:
    """Every number anywhere in the file is finite and within MAX_NUMBER (ints included)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_numbers(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_numbers(item, f"{where}[{i}]")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or abs(value) > MAX_NUMBER:
            raise _Problem(where, f"{quote(value)} is out of range (a results file's numbers lie within "
                                  f"±{MAX_NUMBER:g}); {REMEASURE}")


def _check_times(doc: dict) -> None:
    """Date-times are real ISO 8601 instants with a time zone (the schema cannot check this)."""
    stamps = [("$.datetime", doc["datetime"])] + [
        (f"$.experiments.{name}.measured_at", meta["measured_at"]) for name, meta in doc["experiments"].items()]
    for where, value in stamps:
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            raise _Problem(where, f"{quote(value)} is not an ISO 8601 date-time with a time zone "
                                  "(such as \"2026-11-30T14:05:00+00:00\")")


def _check_date(doc: dict) -> None:
    """A file measured in the future is a typo or a doctored file, and pages draw the newest machines first."""
    try:
        when = dt.datetime.fromisoformat(doc["datetime"])
    except (ValueError, TypeError):
        return  # the schema names a malformed date
    if when.tzinfo and when > dt.datetime.now(dt.UTC) + dt.timedelta(days=1):
        raise _Problem("$.datetime", f"{quote(doc['datetime'])} is in the future: a measurement's date is when it ran; "
                                     f"{REMEASURE}")


def _check_consistency(doc: dict) -> None:
    _check_date(doc)
    experiments = doc["experiments"]
    both = sorted(set(doc.get("unfinished", {})) & set(experiments))
    if both:
        raise _Problem(f"$.unfinished.{both[0]}", f"{quote(both[0])} has results in the file's experiments too, "
                                                  f"so it cannot be unfinished; {REMEASURE}")
    for i, bench in enumerate(doc["benchmarks"]):
        where = f"$.benchmarks[{i}]"
        if bench["group"] not in experiments:
            raise _Problem(f"{where}.group", f"{quote(bench['group'])} has no entry in the file's experiments; "
                                             f"{REMEASURE}")
        _check_unit(bench, f"{where}.unit")
        _check_params(bench, f"{where}.params")
        _check_extra_info(bench, f"{where}.extra_info")
        if bench.get("stats") is not None:  # None: an out-of-memory point, recorded with no timing
            _check_stats(bench, f"{where}.stats")


def _check_stats(bench: dict, where: str) -> None:
    """Every timing of a point lies within BOUNDS for its unit, and the median within [min, max]."""
    stats, unit = bench["stats"], bench["unit"]
    low, high = BOUNDS.get(unit, (0.0, MAX_NUMBER))
    values = [(f"{where}.{key}", stats[key]) for key in ("median", "q1", "q3", "mean", "min", "max")] + [
        (f"{where}.{key}[{i}]", x) for key in ("data", "round_medians") for i, x in enumerate(stats.get(key, []))]
    for field, value in values:
        if not low <= value <= high:
            raise _Problem(field, f"{quote(value)} {unit} is outside [{low:g}, {high:g}] {unit}, the range of "
                                  f"anything a machine measures; {REMEASURE}")
    if not stats["min"] <= stats["q1"] <= stats["median"] <= stats["q3"] <= stats["max"]:
        raise _Problem(f"{where}.median", f"the quartiles are out of order: min {quote(stats['min'])}, q1 "
                                          f"{quote(stats['q1'])}, median {quote(stats['median'])}, q3 "
                                          f"{quote(stats['q3'])}, max {quote(stats['max'])} must not decrease; "
                                          f"{REMEASURE}")
    if not stats["min"] <= stats["median"] <= stats["max"]:
        raise _Problem(f"{where}.median", f"{quote(stats['median'])} is outside [min, max] = "
                                          f"[{quote(stats['min'])}, {quote(stats['max'])}]; {REMEASURE}")


def _check_unit(bench: dict, where: str) -> None:
    """A point is in its experiment's unit: another unit would move its timings out of reach of the bounds
    (an epoch 'in count' of 1e15 is not a count, it is a 1e15 s epoch)."""
    from build_hooks import experiments

    if bench["group"] in experiments.REGISTRY and bench["unit"] != experiments.unit(bench["group"]):
        raise _Problem(where, f"{quote(bench['unit'])} is not the unit of experiment {bench['group']}: its "
                              f"points are measured in {experiments.unit(bench['group'])}; {REMEASURE}")


def _check_params(bench: dict, where: str) -> None:
    """Each point's params are the kinds its experiment plans: a batch is a whole number >= 1."""
    from build_hooks import experiments

    if bench["group"] not in experiments.REGISTRY:
        return
    problem = experiments.check_params(bench["group"], bench["params"])
    if problem:
        key, what = problem
        raise _Problem(f"{where}.{key}", f"{quote(bench['params'].get(key))} is wrong for experiment "
                                         f"{bench['group']}: {what}")


def _check_extra_info(bench: dict, where: str) -> None:
    """Each experiment's extra_info carries the keys and units its snippet declares."""
    from build_hooks import experiments

    group = bench["group"]
    if group not in experiments.REGISTRY:
        return  # no snippet declares it, so no page shows it (its timings are checked below)
    measured = bench.get("status", "ok") == "ok"
    problem = experiments.check_extra_info(group, bench["extra_info"], measured)
    if problem:
        raise _Problem(where, f"{problem}; {REMEASURE}")


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
        # These very bytes passed the schema under this very code; a mark is only a local file, so the
        # checks after the schema (origin, numbers, time bounds, consistency: cheap) run all the same.
        return parse(text, path, schema_passed=True)
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
        write_atomically(path, dumps(doc))
    except OSError as exc:
        hint = _WRITE_HINTS.get(exc.errno, exc.strerror or str(exc))
        raise ResultsError(path, "$", f"cannot be written ({hint}); the earlier file, if any, is "
                                      "unchanged") from None


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` in one step (a reader sees the old file or the new one); a failed write
    raises OSError and leaves neither a partial file nor its temporary."""
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
    """Delete these temporaries; a folder by that name is no temporary of ours and stays."""
    removed = [path for path in paths if path.is_symlink() or not path.is_dir()]
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
                "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}))
        except OSError:  # a full disk: no half-written holder file left behind
            (folder / LOCK_HOLDER).unlink(missing_ok=True)
        try:
            yield
        finally:
            try:
                (folder / LOCK_HOLDER).unlink(missing_ok=True)
            except OSError:  # a courtesy note: if the folder was replaced by a file, the run's own error must show
                pass
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _try_lock(fd: int, fcntl) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _holder(folder: Path) -> str:
    """Who holds the lock, as its holder recorded it: printed to a terminal, so its control characters are shown
    as escapes (a command line can hold a screen clear)."""
    from build_hooks import digests

    try:
        info = json.loads(digests.read_regular(folder / LOCK_HOLDER, 4096) or b"null")  # never a FIFO or /dev/zero
        return untrusted.terminal(f"process {info['pid']} ({str(info['command'])[:200]}) since {info['since']}")
    except (OSError, ValueError, KeyError, TypeError):
        return "holder unknown"
