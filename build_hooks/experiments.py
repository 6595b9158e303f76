"""The registry of experiments and the keys that decide when one must be re-measured.

An experiment is a module in snippets/ with NAME, BENCH_VERSION, plan() and measure(),
and optionally DEPENDS (other snippets it imports). Its cache key covers its own
source, those it depends on and the shared timing helper, so editing any of them
re-measures it; prose never enters the key.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from build_hooks.config import PROJECT_ROOT

SNIPPETS = PROJECT_ROOT / "snippets"
SHARED_SOURCES = [SNIPPETS / "benchmarking.py"]
# The order pages and the progress bar list them in.
REGISTRY = [
    "training_step", "epoch_time", "gemm_rate", "matmul_shapes", "call_overhead", "memory_bandwidth",
    "transfer", "precision", "activation_memory", "data_loader", "sync_cost",
    "threads", "data_parallel",
]


def source_path(name: str) -> Path:
    return SNIPPETS / f"{name}.py"


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
    return module


def key_for(module: ModuleType, mode: str) -> str:
    """The cache key of a loaded experiment module."""
    return cache_key(module.NAME, module.BENCH_VERSION, mode, getattr(module, "DEPENDS", []))


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
