"""The CI workflow files are valid GitHub Actions YAML with the structure GitHub requires."""


import pytest
import yaml

from conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_workflow_structure(path):
    """Each workflow parses, has triggers and jobs; each job has runs-on and steps that use or run something."""
    workflow = yaml.safe_load(path.read_text())
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert workflow.get("name") and triggers and workflow.get("jobs")
    for name, job in workflow["jobs"].items():
        assert job.get("runs-on"), name
        steps = job.get("steps")
        assert isinstance(steps, list) and steps, name
        for step in steps:
            assert ("uses" in step) != ("run" in step), (name, step)
            if "uses" in step:
                action, _, version = step["uses"].partition("@")
                assert action.count("/") == 1 and version, step["uses"]  # pinned owner/repo@version
        for need in [job.get("needs")] if isinstance(job.get("needs"), str) else job.get("needs", []):
            assert need in workflow["jobs"]


def test_workflows_cover_cpu_and_gpu():
    """There is a CPU workflow on every push and a GPU workflow on a self-hosted runner that runs the GPU script."""
    texts = {p.name: p.read_text() for p in WORKFLOWS}
    assert any("push:" in t and "make test" in t and "make site" in t for t in texts.values())
    gpu = [t for t in texts.values() if "self-hosted" in t and "scripts/measure-gpu" in t]
    assert gpu and "deploy-pages" in gpu[0]
    assert (ROOT / "scripts" / "measure-gpu").stat().st_mode & 0o111  # executable


def test_workflows_pass_the_security_linter():
    """zizmor (offline audits) finds nothing: actions pinned to commits, least-privilege permissions."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    zizmor = shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    result = subprocess.run([zizmor, "--offline", str(ROOT / ".github" / "workflows")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]


def test_the_fleet_workflow_gathers_every_machine_before_one_build():
    """The fleet workflow measures a matrix of runner kinds and builds once from all their files."""
    fleet = yaml.safe_load((ROOT / ".github" / "workflows" / "fleet.yml").read_text())
    assert len(fleet["jobs"]["measure"]["strategy"]["matrix"]["label"]) >= 2
    assert fleet["jobs"]["gather-and-build"]["needs"] == "measure"
    assert any("make site" in step.get("run", "") for step in fleet["jobs"]["gather-and-build"]["steps"])
