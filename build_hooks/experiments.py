"""The experiments: found in snippets/, described without importing torch, keyed for the cache.

An experiment is a module `snippets/<name>.py` that assigns NAME and BENCH_VERSION and
defines plan() and measure(). It may declare, as plain literals:

    PARAMS = {"batch": "positive"}         the params of its points (required; see PARAM_KINDS)
    DEPENDS = ["training_step"]            other snippets it imports (part of its cache key)
    EXTRA_INFO = {"flops": "FLOP"}         extra_info keys every measured point carries
    EXTRA_INFO_OPTIONAL = {"n": "count"}   keys some points carry
    POINT_TIMEOUT_S = 600                  a longer budget per point than the default
    UNIT = "bytes"                         what each point's stats measure (default "s": seconds)
    DEVICES = ["cpu", "cuda", "mps"]       the device kinds it can measure (default: CPU and CUDA)
    GPU_SLOT = False                       left out of a GPU machine's time-limited slot (the
                                           build host measures it; see suite()); the default
                                           for an experiment whose DEVICES are the CPU alone

Units are "FLOP", "B", "s", "count" (finite numbers >= 0) or "text" (a short string).
A param is "positive" (an integer >= 1), "count" (an integer >= 0), "flag" (true or
false), "label" (a few plain words) or a list of the strings it may be; every point also
has a "device" among the experiment's DEVICES. A results file whose params break this is
refused at load, so a view can format a batch as a number and a precision as a word.
Those literals are read from the source with `ast`, so the build can list experiments,
compute cache keys and check results files without importing torch; only measuring
imports the module. Adding a file is all it takes to register one.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import math
import re
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

from build_hooks.config import PROJECT_ROOT

SNIPPETS = PROJECT_ROOT / "snippets"
SHARED_SOURCES = [SNIPPETS / "benchmarking.py"]
UNITS = {"FLOP", "B", "s", "count", "text"}
TEXT_LIMIT = 200  # characters of a "text" extra_info value (an error message, a label)
# Written by the runner for every timed point (measure.py): caveats, and what the Gate re-measured.
BUILT_IN_EXTRA = {"noisy": "flag", "under_load": "flag", "remeasured": "count", "unsettled": "flag"}


def source_path(name: str) -> Path:
    return SNIPPETS / f"{name}.py"


@cache
def _declared(path: Path, mtime_ns: int) -> dict:
    """The literal top-level assignments of a snippet (cached per file version)."""
    declared = {}
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        try:
            value = ast.literal_eval(node.value)
        except ValueError:
            continue  # not a literal (a computed constant): not a declaration
        if isinstance(target, ast.Name):
            declared[target.id] = value
        elif isinstance(target, ast.Tuple) and all(isinstance(t, ast.Name) for t in target.elts):
            declared.update(zip((t.id for t in target.elts), value))  # INPUTS, CLASSES = 512, 10
    return declared


def declared(name: str) -> dict:
    """What snippets/<name>.py declares as literals: NAME, BENCH_VERSION, constants."""
    path = source_path(name)
    return _declared(path, path.stat().st_mtime_ns)


def discover() -> list[str]:
    """Every snippet that is an experiment (assigns BENCH_VERSION), in name order."""
    return sorted(p.stem for p in SNIPPETS.glob("*.py")
                  if "BENCH_VERSION" in p.read_text() and "BENCH_VERSION" in declared(p.stem))


REGISTRY = discover()


def refresh() -> bool:
    """Find the experiments again, in place (a running `mkdocs serve` sees a snippet added or removed);
    True when the list changed."""
    found = discover()
    changed = found != REGISTRY
    REGISTRY[:] = found
    return changed


DEFAULT_DEVICES = ["cpu", "cuda"]


def suite(gpu_slot: bool) -> list[str]:
    """The experiments a run measures: all of them, or in a GPU machine's slot (CROSSOVER_GPU_SLOT)
    those that measure a GPU and do not declare GPU_SLOT = False (the slot's six minutes are spoken for)."""
    return [name for name in REGISTRY if not gpu_slot or declared(name).get("GPU_SLOT", _measures_a_gpu(name))]


def _measures_a_gpu(name: str) -> bool:
    return any(kind != "cpu" for kind in declared(name).get("DEVICES", DEFAULT_DEVICES))


def supported_devices(name: str, available: list[str]) -> list[str]:
    """The devices of `available` this experiment measures (MPS only where it declares it)."""
    kinds = declared(name).get("DEVICES", DEFAULT_DEVICES)
    return [d for d in available if d in kinds]


def extra_info_spec(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """(required, optional) extra_info keys and units an experiment declares."""
    found = declared(name)
    required, optional = found.get("EXTRA_INFO", {}), found.get("EXTRA_INFO_OPTIONAL", {})
    for key, unit in {**required, **optional}.items():
        if unit not in UNITS:
            raise ValueError(f"snippets/{name}.py declares extra_info '{key}' in unit '{unit}'; "
                             f"units are {', '.join(sorted(UNITS))}")
    return required, optional


def unit(name: str) -> str:
    """The unit an experiment's points are measured in: seconds unless its snippet declares UNIT."""
    return declared(name).get("UNIT", "s")


def check_extra_info(name: str, extra: dict, measured: bool = True) -> str | None:
    """What is wrong with one point's extra_info (None when it is right).

    A point without a timing (out of memory) need not carry the required keys.
    """
    required, optional = extra_info_spec(name)
    allowed = {**required, **optional, **BUILT_IN_EXTRA}
    for key in required if measured else []:
        if key not in extra:
            return f"'{key}' is missing ({name} declares it in EXTRA_INFO)"
    for key, value in extra.items():
        unit = allowed.get(key)
        if unit is None:
            return f"'{key}' is not a key {name} declares (known: {', '.join(sorted(allowed))})"
        if unit == "flag":
            ok = isinstance(value, bool)
        elif unit == "text":
            ok = isinstance(value, str) and len(value) <= TEXT_LIMIT
        else:
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
                  and math.isfinite(value) and value >= 0)
        if not ok:
            return f"'{key}' must be {_EXPECTED.get(unit, f'a finite number >= 0 ({unit})')}"
    return None


_EXPECTED = {"text": f"a string of at most {TEXT_LIMIT} characters", "flag": "true or false"}

PARAM_KINDS = {"positive", "count", "flag", "label"}
# Plain words: what a view may print as a label; no markup, quotes or placeholders can hide in it.
LABEL = re.compile(r"[a-z0-9][a-z0-9 _,()-]{0,63}")


def params_spec(name: str) -> dict[str, str | list[str]]:
    """The params an experiment's points carry (besides "device"), as its snippet declares them."""
    spec = declared(name).get("PARAMS")
    if not isinstance(spec, dict):
        raise ValueError(f"snippets/{name}.py must declare PARAMS as a literal dict of its points' params")
    for key, kind in spec.items():
        if not (isinstance(kind, list) and all(isinstance(v, str) for v in kind)) and kind not in PARAM_KINDS:
            raise ValueError(f"snippets/{name}.py declares param '{key}' as {kind!r}; a param is one of "
                             f"{', '.join(sorted(PARAM_KINDS))} or a list of strings")
    return spec


def check_params(name: str, params: dict) -> tuple[str, str] | None:
    """(key, what is wrong) with one point's params, or None when they are what the experiment plans."""
    spec = params_spec(name)
    if not supported_devices(name, [params.get("device")]):
        return "device", f"{name} does not measure the device {params.get('device')!r}"
    for key in spec:
        if key not in params:
            return key, f"missing ({name} declares it in PARAMS)"
    for key, value in params.items():
        if key == "device":
            continue
        kind = spec.get(key)
        if kind is None:
            return key, f"not a param {name} declares (known: {', '.join(['device', *spec])})"
        if not _param_ok(kind, value):
            return key, f"must be {_PARAM_EXPECTED.get(kind) if isinstance(kind, str) else 'one of ' + ', '.join(kind)}"
    return None


def _param_ok(kind: str | list[str], value: object) -> bool:
    if isinstance(kind, list):
        return value in kind
    if kind == "flag":
        return isinstance(value, bool)
    if kind == "label":
        return isinstance(value, str) and LABEL.fullmatch(value) is not None
    whole = isinstance(value, int) and not isinstance(value, bool)
    return whole and value >= (1 if kind == "positive" else 0)


_PARAM_EXPECTED = {"positive": "a whole number of at least 1", "count": "a whole number of at least 0",
                   "flag": "true or false",
                   "label": "a few plain words (lowercase letters, digits, spaces and _ , ( ) -, at most 64)"}


def load(name: str) -> ModuleType:
    """Import an experiment fresh from its file (a long-running `mkdocs serve` sees edits)."""
    if name not in REGISTRY:
        raise KeyError(f"unknown experiment '{name}'; known: {', '.join(REGISTRY)}")
    spec = importlib.util.spec_from_file_location(f"snippets.{name}", source_path(name))
    module = importlib.util.module_from_spec(spec)
    # Registered under its package name, as a normal import would be, so that its
    # functions pickle by reference (worker processes started with "spawn" need that).
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    for attr in ("NAME", "BENCH_VERSION", "plan", "measure"):
        if not hasattr(module, attr):
            raise AttributeError(f"snippets/{name}.py does not define {attr}")
    if module.NAME != name:
        raise AttributeError(f"snippets/{name}.py sets NAME = {module.NAME!r}; it must be {name!r}")
    return module


def key_of(name: str, mode: str) -> str:
    """The cache key of an experiment, read from its source without importing it."""
    found = declared(name)
    return cache_key(name, found["BENCH_VERSION"], mode, found.get("DEPENDS", []))


def current_keys(mode: str, names: list[str] | None = None) -> dict[str, str]:
    """{name: cache key of its code as it is now} for `names` (every experiment by default)."""
    return {name: key_of(name, mode) for name in (names or REGISTRY)}


def cache_key(name: str, bench_version: int, mode: str, depends: list[str] = ()) -> str:
    """Digest of what decides an experiment's result apart from machine and libraries."""
    digest = hashlib.sha256()
    for path in [source_path(name), *map(source_path, depends), *SHARED_SOURCES]:
        digest.update(path.read_bytes())
    digest.update(json.dumps([name, bench_version, mode]).encode())
    return digest.hexdigest()[:20]


def environment_key(provenance: dict, mode: str) -> str:
    """Digest of the hardware and library versions: a change re-measures everything."""
    # The clock is left out: where only the current frequency is readable it wanders.
    software = {k: v for k, v in provenance["software"].items() if k != "os"}
    identity = [provenance["machine_id"], provenance["machine_info"]["gpu"], software, mode]
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:20]
