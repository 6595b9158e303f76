"""The lab notebook runs as a notebook on the CPU and writes a results file the project accepts."""

import ast

import jupytext
import pytest

from build_hooks import store
from conftest import ROOT

NOTEBOOK = ROOT / "docs" / "lab" / "crossover_lab.py"


def test_notebook_imports_nothing_from_the_project():
    """A reader's copy needs only torch, numpy and matplotlib: no import of build_hooks or snippets."""
    tree = ast.parse(NOTEBOOK.read_text())
    modules = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names}
    modules |= {node.module.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module}
    assert not modules & {"build_hooks", "snippets", "tests", "scripts"}


def test_the_builds_notebook_run_wrote_a_valid_results_file(quick_cache, built_site):
    """Executed by the site's build cell by cell in a real kernel, the notebook wrote one schema-valid results file
    and told the reader its name (its outputs' other promises: tests/test_site_lab.py)."""
    files = list(quick_cache.glob("notebook/*/results/*.json"))
    assert len(files) == 1, files
    doc = store.load(files[0])
    assert doc["mode"] == "quick" and "epoch_time" in doc["experiments"]
    from build_hooks import provenance
    assert doc["machine_id"] == provenance.machine_id(doc["machine_info"])  # one machine, one id
    # What an epoch is, not how long it took (a timing ratio depends on the machine and its load): rows / batch steps.
    epochs = [b for b in doc["benchmarks"] if b["group"] == "epoch_time"]
    assert epochs and all(b["extra_info"]["steps"] == -(-b["params"]["rows"] // b["params"]["batch"]) for b in epochs)
    page = (built_site / "lab" / "crossover_lab" / "index.html").read_text()
    assert "per epoch" in page and f"Your results file is {files[0].name}" in page


def test_lab_page_is_rendered_with_a_download_link(built_site):
    """The built site has the executed notebook page and its source next to it for download."""
    page = built_site / "lab" / "crossover_lab" / "index.html"
    html = page.read_text()
    assert 'href="crossover_lab.py"' in html and (page.parent / "crossover_lab.py").exists()
    assert "per epoch" in html and "Your results file is" in html  # outputs come from executing it in the build


def test_lab_notebook_is_offered_as_ipynb(built_site):
    """Next to the page, the notebook is downloadable as .ipynb with the same cells as its source."""
    import json

    notebook = json.loads((built_site / "lab" / "crossover_lab.ipynb").read_text())
    source = jupytext.read(NOTEBOOK)
    assert notebook["nbformat"] == 4 and len(notebook["cells"]) == len(source.cells)
    assert "crossover_lab.ipynb" in (built_site / "lab" / "crossover_lab" / "index.html").read_text()


def test_notebook_times_exactly_the_races_epochs():
    """The notebook's sizes, full and quick, are the epoch_time experiment's: its file races without gaps."""
    from snippets import epoch_time

    tree = ast.parse(NOTEBOOK.read_text())
    sizes = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                 and getattr(node.targets[0], "id", None) == "SIZES")
    for mode, quick in (("full", False), ("quick", True)):
        expected = {(p["width"], p["batch"], p["rows"]) for p in epoch_time.plan(["cpu"], quick)}
        size = sizes[mode]
        assert {(w, b, size["rows"]) for w in size["widths"] for b in size["batches"]} == expected, mode


@pytest.mark.parametrize("version", ["3.10", "3.12", "3.13"])
def test_notebook_source_compiles_on_the_pythons_readers_have(version, tmp_path):
    """Python 3.10 to 3.13 accept the notebook's syntax (the tests run it on 3.11 with torch)."""
    import glob
    import os
    import subprocess

    # pyenv's shims answer "command not found" for versions that are not selected: find the binary itself.
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = sorted(glob.glob(f"{pyenv}/versions/{version}.*/bin/python{version}")
                   + glob.glob(f"/usr/bin/python{version}") + glob.glob(f"/usr/local/bin/python{version}"))
    if not found:
        pytest.skip(f"python{version} is not installed here")
    python = found[-1]
    result = subprocess.run([python, "-c", "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')",
                             str(NOTEBOOK)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_notebook_records_the_instruction_sets_the_build_does():
    """The self-contained notebook's list of instruction-set flags is provenance.ISA_FLAGS, so one machine keeps one id."""
    import ast

    from build_hooks import provenance

    tree = ast.parse(NOTEBOOK.read_text())
    wanted = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  and getattr(node.targets[0], "id", None) == "wanted")
    assert tuple(ast.literal_eval(wanted)) == provenance.ISA_FLAGS


def test_notebook_plots_in_the_sites_palette():
    """The notebook's own copy of the plot colours is build_hooks.plots.PALETTE (Okabe-Ito), as the site's plots use."""
    from build_hooks import plots

    tree = ast.parse(NOTEBOOK.read_text())
    palette = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                   and getattr(node.targets[0], "id", None) == "PALETTE")
    assert ast.literal_eval(palette) == plots.PALETTE
