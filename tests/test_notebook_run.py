"""Tests for build_hooks.notebook_run: the lab notebook executed in a child that fills mkdocs-jupyter's cache."""

import os
import time

import pytest

from build_hooks import notebook_run

OPTIONS = {"cache_dir": "", "kernel_name": "", "theme": "", "allow_errors": False, "show_input": True,
           "no_input": False, "no_prompt": False, "remove_tag_config": {}, "highlight_extra_classes": "highlight",
           "include_requirejs": False, "custom_mathjax_url": "", "toc_depth": 6}


@pytest.fixture(autouse=True)
def own_machine_lock(tmp_path, monkeypatch):
    """These runs take a lock of their own: a site build beside them (the slow tier's other worker) may hold the
    machine's for its own notebook, and waiting for it would eat the short timeouts these tests set."""
    monkeypatch.setattr(notebook_run, "MACHINE_LOCK", tmp_path / "notebook.lock")


def plugin_config(tmp_path) -> dict:
    return {**OPTIONS, "cache_dir": str(tmp_path / "cache")}


def notebook(tmp_path, code: str):
    path = tmp_path / "nb.py"
    path.write_text(f"# %% [markdown]\n# # A notebook\n\n# %%\n{code}\n")
    return str(path)


def test_the_entry_is_the_one_mkdocs_jupyter_looks_up(tmp_path):
    """cache_path is mkdocs-jupyter's own key, so what the child stores is what the plugin reads."""
    from mkdocs_jupyter import plugin

    source = notebook(tmp_path, "print(1)")
    config = plugin_config(tmp_path)
    expected = plugin._get_cache_path(config["cache_dir"], plugin._compute_cache_key(source, config, True))
    assert notebook_run.cache_path(config, source, True) == expected
    assert notebook_run.cache_path(config, source, False) != expected


def test_an_existing_entry_runs_nothing(tmp_path, monkeypatch):
    """A cache hit (an entry matching the digest its run stored beside it) returns the entry without a child."""
    from build_hooks import digests

    source = notebook(tmp_path, "print(1)")
    config = plugin_config(tmp_path)
    entry = notebook_run.cache_path(config, source, True)
    entry.parent.mkdir(parents=True)
    entry.write_text("{}")
    digests.save_entry(entry.with_name(entry.name + ".sha256"), digests.digest(b"{}"))
    monkeypatch.setattr(notebook_run, "_run_child", lambda *a: pytest.fail("ran the notebook again"))
    assert notebook_run.fill(config, source, 10) == entry


@pytest.mark.parametrize("damage", ["forged", "unsealed", "folder", "fifo"])
def test_an_entry_that_does_not_match_its_seal_is_run_again_or_named(tmp_path, monkeypatch, damage):
    """A forged, unsealed, FIFO entry is run again (it never reaches the page); a folder in its place is named."""
    import os

    from build_hooks import digests

    source = notebook(tmp_path, "print(1)")
    config = plugin_config(tmp_path)
    entry = notebook_run.cache_path(config, source, True)
    entry.parent.mkdir(parents=True)
    seal = entry.with_name(entry.name + ".sha256")
    if damage == "folder":
        entry.mkdir()
    elif damage == "fifo":
        os.mkfifo(entry)
    else:
        entry.write_text('{"content": "<img src=x onerror=alert(1)>", "toc_tokens": []}')
    if damage == "forged":
        digests.save_entry(seal, digests.digest(b"{}"))
    runs = []
    monkeypatch.setattr(notebook_run, "_run_child", lambda job, timeout: runs.append(job))
    if damage == "folder":
        with pytest.raises(notebook_run.NotebookError, match="is a folder"):
            notebook_run.fill(config, source, 10)
        return
    assert notebook_run.fill(config, source, 10) == entry and len(runs) == 1
    assert not entry.exists()  # removed before the run writes its own


def test_a_failed_write_leaves_no_entry_and_no_fragment(tmp_path, monkeypatch):
    """A write that fails part-way (a full disk) leaves neither a truncated entry nor its temporary file."""
    entry = tmp_path / "cache" / "e.json"

    def fail(*args):
        raise OSError(27, "File too large")
    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        notebook_run.store.write_atomically(entry, "x" * 1000)  # the write main() stores the entry with
    assert list(entry.parent.iterdir()) == []


@pytest.mark.slow
def test_a_failing_notebook_names_itself_and_its_error_and_stores_nothing(tmp_path):
    """A cell that raises fails the run with NotebookError naming the file and the error; no entry is stored."""
    source = notebook(tmp_path, "raise ValueError('a cell went wrong')")
    with pytest.raises(notebook_run.NotebookError, match=r"(?s)nb\.py.*a cell went wrong"):
        notebook_run.fill(plugin_config(tmp_path), source, 120)
    assert not list((tmp_path / "cache").glob("*.json"))


@pytest.mark.slow
def test_a_notebook_that_runs_past_the_timeout_is_stopped_with_its_kernel(tmp_path):
    """Past the block timeout the child and its kernel end, the error names the timeout, and nothing is stored."""
    marker = tmp_path / "kernel.pid"
    source = notebook(tmp_path, f"import os, time\nopen({str(marker)!r}, 'w').write(str(os.getpid()))\n"
                                "time.sleep(600)")
    began = time.monotonic()
    with pytest.raises(notebook_run.NotebookError, match="ran longer than 20 s"):
        notebook_run.fill(plugin_config(tmp_path), source, 20)
    assert time.monotonic() - began < 40
    kernel = int(marker.read_text())
    deadline = time.monotonic() + 15  # the kernel's parent poller ends it once its parent is gone
    while time.monotonic() < deadline and _alive(kernel):
        time.sleep(0.5)
    assert not _alive(kernel), "the kernel outlived its stopped notebook run"
    assert not list((tmp_path / "cache").glob("*.json"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not open(f"/proc/{pid}/stat").read().split(")")[1].split()[0] == "Z"
