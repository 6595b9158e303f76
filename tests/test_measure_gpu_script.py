"""scripts/measure-gpu rehearsed on the CPU (ALLOW_CPU=1, quick): the real slot publishes; a failure, the limit and a resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from build_hooks import experiments, plausibility, store
from conftest import ROOT, copy_project

KEPT = ["training_step", "epoch_time", "call_overhead"]  # and benchmarking.py, which every snippet imports
TEST_ONLY = '''"""A test-only experiment: {what}."""
import time

NAME = "{name}"
BENCH_VERSION = 1
PARAMS = {{"n": "positive"}}
DEVICES = ["cpu"]
GPU_SLOT = True  # in the slot though it measures the CPU alone: the rehearsal's test needs it there


def plan(device_list, quick):
    return [{{"device": "cpu", "n": 1}}]


def measure(point, threads, quick):
    {body}
    return {{"unit": "s", "samples": [0.01, 0.011, 0.012]}}
'''


def sleepy(seconds: float) -> str:
    return TEST_ONLY.format(what="its point outlasts the script's limit", name="zz_sleepy", body=f"time.sleep({seconds})")


BROKEN = TEST_ONLY.format(what="it always fails", name="zz_broken", body='raise RuntimeError("a deliberate failure")')


def run_script(project: Path, out: Path, timeout: int = 300, **env_vars: str) -> subprocess.CompletedProcess:
    # SETTLE_S=1: the checks and the Gate run, but the rehearsal need not wait out the tests running beside it.
    env = {**os.environ, "PYTHON": sys.executable, "ALLOW_CPU": "1", "QUICK": "1", "SETTLE_S": "1", **env_vars}
    for var in ("CROSSOVER_CACHE_DIR", "CROSSOVER_RESULTS_DIR", "CROSSOVER_QUICK"):
        env.pop(var, None)
    return subprocess.run(["bash", str(project / "scripts" / "measure-gpu"), str(out)], cwd=project, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.slow
def test_the_real_slot_rehearsed_on_the_cpu_publishes_one_plausible_file(tmp_path):
    """Every snippet present, the slot's own list: exit 0, one results file holding every slot experiment,
    none unfinished, and it passes the plausibility check (the publish step that used to refuse it)."""
    out = tmp_path / "out"
    result = run_script(ROOT, out, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    published = list((out / "results").glob("*.json"))
    assert len(published) == 1
    doc = store.load(published[0])
    assert set(doc["experiments"]) == set(experiments.suite(gpu_slot=True)) and "unfinished" not in doc
    assert plausibility.violations(doc) == []
    assert "model inputs:" in result.stdout and "settle waits and re-measuring (budget)" in result.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the project with three experiments, a sleepy and a broken one, and the reference trimmed to match."""
    root = copy_project(tmp_path_factory.mktemp("project"))
    for path in (root / "snippets").glob("*.py"):
        if path.stem not in KEPT + ["benchmarking", "__init__"]:
            path.unlink()
    (root / "snippets" / "zz_sleepy.py").write_text(sleepy(120))
    (root / "snippets" / "zz_broken.py").write_text(BROKEN)
    for path in (root / "results").glob("*.json"):
        doc = json.loads(path.read_text())
        doc["experiments"] = {k: v for k, v in doc["experiments"].items() if k in KEPT}
        doc["benchmarks"] = [b for b in doc["benchmarks"] if b["group"] in KEPT]
        path.write_text(json.dumps(doc))
    return root


@pytest.mark.slow
def test_a_failure_and_the_limit_publish_what_finished_and_a_resume_completes_it(project, tmp_path):
    """A failing experiment and one stopped by the limit do not cost the run: the file is published with both
    listed as unfinished (exit 3); the next run measures only the rest and keeps what finished."""
    out = tmp_path / "out"
    # 20 s kept for publishing: KEPT have 80 s, enough on a loaded machine (the whole suite beside them took 40 s
    # away once), and zz_sleepy's 120 s always outlast them. Its point timeout is longer than the limit: on an idle
    # machine KEPT end in seconds, and the default 60 s would stop zz_sleepy before the limit could.
    first = run_script(project, out, LIMIT_S="100", CROSSOVER_POINT_TIMEOUT="300")
    assert first.returncode == 3, first.stdout + first.stderr
    assert "not forecast (no committed CPU measurement of them): zz_broken, zz_sleepy" in first.stdout
    assert "stopped at the time limit" in first.stdout and "run 'scripts/measure-gpu' again" in first.stdout
    published = store.load(next((out / "results").glob("*.json")))
    assert set(published["experiments"]) == set(KEPT)
    assert "RuntimeError: a deliberate failure" in published["unfinished"]["zz_broken"]
    assert "time limit" in published["unfinished"]["zz_sleepy"]
    cache = next((out / "cache").glob("*.quick.json"))
    kept = json.loads(cache.read_text())["experiments"]

    (project / "snippets" / "zz_sleepy.py").write_text(sleepy(0.01))
    second = run_script(project, out, LIMIT_S="300")
    assert second.returncode == 3, second.stdout + second.stderr  # zz_broken still fails
    resumed = json.loads(cache.read_text())["experiments"]
    assert {k: resumed[k]["measured_at"] for k in KEPT} == {k: kept[k]["measured_at"] for k in KEPT}
    republished = store.load(next((out / "results").glob("*.json")))
    assert "zz_sleepy" in republished["experiments"] and list(republished["unfinished"]) == ["zz_broken"]
    assert not any(p.stat().st_mtime > cache.stat().st_mtime for p in (project / "results").glob("*.json"))


@pytest.mark.parametrize("name, value", [
    ("LIMIT_S", "started[$(touch pwned)]"), ("LIMIT_S", "1e3"), ("LIMIT_S", "0"), ("LIMIT_S", "-5"),
    ("BOX_S", "nan"), ("SETTLE_S", "12 34"), ("CROSSOVER_POINT_TIMEOUT", "999999999999"),
])
def test_a_setting_that_is_not_a_whole_number_of_seconds_stops_the_script_first(tmp_path, name, value):
    """Settings are checked as whole numbers before use, never evaluated: a clear message, exit 1, nothing run."""
    result = run_script(ROOT, tmp_path / "out", timeout=30, **{name: value}, PYTHON="false")
    assert result.returncode == 1 and f"crossover: {name}=" in result.stderr, result.stderr
    assert "syntax error" not in result.stderr and not (tmp_path / "out").exists()
    assert not (ROOT / "pwned").exists() and not (tmp_path / "pwned").exists()
