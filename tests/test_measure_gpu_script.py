"""scripts/measure-gpu rehearsed on the CPU (ALLOW_CPU=1, quick): forecast, limit, resume, publish, check."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_project

KEPT = ["training_step", "epoch_time", "call_overhead"]  # and benchmarking.py, which every snippet imports
SLEEPY = '''"""A test-only experiment whose point outlasts the script's limit."""
import time

NAME = "zz_sleepy"
BENCH_VERSION = 1
PARAMS = {"n": "positive"}
DEVICES = ["cpu"]


def plan(device_list, quick):
    return [{"device": "cpu", "n": 1}]


def measure(point, threads, quick):
    time.sleep(SECONDS)
    return {"unit": "s", "samples": [0.01, 0.011, 0.012]}


SECONDS = %s
'''


# It runs the whole script, measuring for real, twice: the full tier (make test) only.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the project with three experiments, a sleepy one, and the reference trimmed to match."""
    root = copy_project(tmp_path_factory.mktemp("project"))
    for path in (root / "snippets").glob("*.py"):
        if path.stem not in KEPT + ["benchmarking", "__init__"]:
            path.unlink()
    (root / "snippets" / "zz_sleepy.py").write_text(SLEEPY % 120)
    for path in (root / "results").glob("*.json"):
        doc = json.loads(path.read_text())
        doc["experiments"] = {k: v for k, v in doc["experiments"].items() if k in KEPT}
        doc["benchmarks"] = [b for b in doc["benchmarks"] if b["group"] in KEPT]
        path.write_text(json.dumps(doc))
    return root


def run_script(project: Path, out: Path, limit_s: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable, "ALLOW_CPU": "1", "QUICK": "1", "LIMIT_S": str(limit_s)}
    for var in ("CROSSOVER_CACHE_DIR", "CROSSOVER_RESULTS_DIR", "CROSSOVER_QUICK"):
        env.pop(var, None)
    return subprocess.run(["bash", str(project / "scripts" / "measure-gpu"), str(out)], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_a_run_stopped_at_its_limit_keeps_what_finished_and_resumes(project, tmp_path):
    """Stopped mid-experiment at the limit: finished experiments stay; the next run measures only the rest, publishes and checks."""
    out = tmp_path / "out"
    first = run_script(project, out, limit_s=64)  # 30 s kept for publishing; the sleepy point outlasts the rest
    assert first.returncode == 3, first.stdout + first.stderr
    assert "forecast" in first.stdout and "not forecast (no committed CPU measurement of them): zz_sleepy" in first.stdout
    assert "run 'scripts/measure-gpu" in first.stdout
    cache = next((out / "cache").glob("*.quick.json"))
    kept = json.loads(cache.read_text())["experiments"]
    assert set(kept) == set(KEPT)  # headline experiments first, all saved; the sleepy one not
    (project / "snippets" / "zz_sleepy.py").write_text(SLEEPY % 0.01)
    second = run_script(project, out, limit_s=300)
    assert second.returncode == 0, second.stdout + second.stderr
    resumed = json.loads(cache.read_text())["experiments"]
    assert {k: resumed[k]["measured_at"] for k in KEPT} == {k: kept[k]["measured_at"] for k in KEPT}
    assert "zz_sleepy" in resumed
    assert "plausible" in second.stdout and "rehearsal done" in second.stdout
    assert list((out / "results").glob("*.json"))
    assert not any(p.stat().st_mtime > cache.stat().st_mtime for p in (project / "results").glob("*.json"))
