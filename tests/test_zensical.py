"""Readiness for Zensical (Material's successor): it builds the lesson pages from the same mkdocs.yml."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_project, quick_env, without_code_blocks

LESSONS = ["batch-size", "why-gpu", "limits", "mixed-precision", "transfer", "cost-model", "gallery"]


@pytest.mark.slow
def test_zensical_builds_lesson_pages_with_sections_and_facts(tmp_path, quick_cache):
    """Without MkDocs hooks or plugins, the markers extension still fills every section and fact."""
    project = copy_project(tmp_path / "project")
    cache = tmp_path / "cache"
    shutil.copytree(quick_cache, cache)
    zensical = Path(sys.executable).parent / "zensical"
    result = subprocess.run([str(zensical), "build"], cwd=project, env=quick_env(cache),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    for name in LESSONS:
        html = (project / "site" / name / "index.html").read_text()
        # The code blocks quote f-strings ("{{}}"): an unfilled marker is looked for in what the page says.
        assert "{{" not in without_code_blocks(html) and "CROSSOVERTEXT" not in html, name
        assert "Quick mode: not representative" in html, name
    assert "crossover-figure" in (project / "site" / "batch-size" / "index.html").read_text()
