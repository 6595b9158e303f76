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
    gpu = [t for t in texts.values() if "self-hosted" in t]
    assert gpu and "scripts/measure-gpu" in gpu[0] and "deploy-pages" in gpu[0]
    assert (ROOT / "scripts" / "measure-gpu").stat().st_mode & 0o111  # executable
