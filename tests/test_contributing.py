"""CONTRIBUTING.md's "Add an experiment", followed literally with a toy experiment: measured, shown, fast tier green."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import build_site, copy_project, own_temp_root, quick_env

pytestmark = pytest.mark.slow  # it runs the whole fast tier again, in a copy of the project

SNIPPET = '''"""How long does sorting a vector take? A toy experiment, written from CONTRIBUTING.md."""

import torch

try:
    from snippets.benchmarking import budget, time_it
except ImportError:
    from benchmarking import budget, time_it

NAME = "toy_sort"
BENCH_VERSION = 1
PARAMS = {"n": "positive"}
EXTRA_INFO = {"bytes": "B"}
DEVICES = ["cpu"]


def plan(devices, quick):
    return [{"device": d, "n": n} for d in devices for n in ([1024] if quick else [1024, 2**20])]


def measure(point, threads, quick):
    x = torch.rand(point["n"], device=point["device"])
    samples = time_it(lambda: torch.sort(x), threads=threads, min_run_time=budget(quick), device=point["device"])
    return {"unit": "s", "samples": samples, "extra": {"bytes": x.numel() * x.element_size()}}


if __name__ == "__main__":
    print(measure({"device": "cpu", "n": 2**20}, torch.get_num_threads(), quick=False))
'''

VIEW = '''"""The toy experiment's view, written from CONTRIBUTING.md."""

from build_hooks.page import fact, section
from build_hooks.render import MissingData, medians_table


@section
def toy_sort(data):
    """The toy experiment's medians, per machine."""
    return medians_table(data, "toy_sort", [("device", "device"), ("n", "elements")])


@fact
def toy_sort_machines(data) -> str:
    """How many machines sorted."""
    machines = data.with_experiment("toy_sort")
    if not machines:
        raise MissingData("no machine has measured toy_sort")
    return f"{len(machines)} machine{'s' if len(machines) != 1 else ''} sorted"
'''


def toy_project(destination: Path) -> Path:
    """A copy of the project with the guide's three files: the snippet, the view and a page's markers."""
    project = copy_project(destination)
    (project / "snippets" / "toy_sort.py").write_text(SNIPPET)
    (project / "build_hooks" / "views" / "toy_sort.py").write_text(VIEW)
    page = project / "docs" / "pitfalls.md"
    page.write_text(page.read_text() + "\n## Sorting, a toy\n\nIn this build {{ fact: toy_sort_machines }}.\n\n"
                    "{{ section: toy_sort }}\n")
    return project


def test_the_guides_three_files_are_measured_and_shown(tmp_path, quick_cache):
    """A snippet, a view and a page's markers, as the guide says: the build measures the toy and shows it (its raw
    table joins All measurements by itself). In the same build, an edited experiment is measured again, an edited
    page shows its new prose, and nothing else is measured again."""
    project = toy_project(tmp_path / "project")
    prose = project / "docs" / "batch-size.md"
    prose.write_text(prose.read_text() + "\nAn extra sentence of prose.\n")
    edited = project / "snippets" / "gemm_rate.py"  # an experiment nothing else depends on
    edited.write_text(edited.read_text() + "\n# an edit to the experiment\n")
    cache = tmp_path / "cache"
    shutil.copytree(quick_cache, cache)
    before = json.loads(next(cache.glob("*.quick.json")).read_text())["experiments"]
    result = build_site(tmp_path / "site", quick_env(cache, project / "results"), cwd=project)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "1 machine sorted" in (tmp_path / "site" / "pitfalls" / "index.html").read_text()
    assert "elements" in (tmp_path / "site" / "pitfalls" / "index.html").read_text()
    assert "An extra sentence of prose." in (tmp_path / "site" / "batch-size" / "index.html").read_text()
    raw = (tmp_path / "site" / "measurements" / "index.html").read_text()
    assert 'id="toy-sort"' in raw and 'href="#toy-sort"' in raw  # its raw table, in the page's contents
    after = json.loads(next(cache.glob("*.quick.json")).read_text())["experiments"]
    remeasured = {"toy_sort", "gemm_rate"}
    assert after["gemm_rate"]["measured_at"] != before["gemm_rate"]["measured_at"] and "toy_sort" in after
    assert {n: m["measured_at"] for n, m in after.items() if n not in remeasured} == {
        n: m["measured_at"] for n, m in before.items() if n not in remeasured}


@pytest.mark.long
def test_the_guides_three_files_keep_the_fast_tier_green(tmp_path):
    """With the same three files, the copy's whole fast tier passes (needs no site: it runs while the site builds;
    on one worker, as the suite around it keeps the cores busy: two would import and collect everything twice)."""
    project = toy_project(tmp_path / "project")
    result = subprocess.run([sys.executable, "-m", "pytest", "-m", "not slow", "-q", "-x", "-n", "0",
                             "-p", "no:cacheprovider"], cwd=project, capture_output=True, text=True, timeout=900,
                            env=own_temp_root(tmp_path))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
