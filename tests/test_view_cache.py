"""Tests for build_hooks.view_cache: a rendering is reused exactly while its data and code are unchanged."""

import pytest

from build_hooks import config, untrusted, view_cache
from build_hooks.dataset import Dataset, Machine
from conftest import synthetic_doc


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSOVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(view_cache, "_memory", {})
    return tmp_path / "cache" / "views"


def data(digest="d1"):
    return Dataset([Machine(synthetic_doc(), "f", "t")], digest=digest)


def a_view(data):
    """A view for the tests."""
    return "text"


def test_a_rendering_is_reused_from_disk_until_the_data_or_code_changes(cache):
    """Same digest and code: no second render, even in a fresh process; another digest or code renders."""
    calls = []

    def render():
        calls.append(1)
        return "rendered " + untrusted.placeholder("<b>name</b>")

    first = view_cache.rendered("fact", "x", a_view, data(), render, shared="code-1")
    view_cache._memory.clear()  # as a new process would start
    again = view_cache.rendered("fact", "x", a_view, data(), render, shared="code-1")
    assert len(calls) == 1 and untrusted.restore(again) == untrusted.restore(first)
    assert "<bdi>&lt;b&gt;name&lt;/b&gt;</bdi>" in untrusted.restore(again)
    view_cache.rendered("fact", "x", a_view, data("d2"), render, shared="code-1")
    view_cache.rendered("fact", "x", a_view, data(), render, shared="code-2")
    assert len(calls) == 3 and len(list(cache.glob("*.json"))) == 3


def test_a_dataset_made_in_memory_is_never_cached(cache):
    """Without a digest nothing is written and every call renders."""
    calls = []
    for _ in range(2):
        view_cache.rendered("fact", "x", a_view, data(None), lambda: calls.append(1) or "t", shared="c")
    assert len(calls) == 2 and not cache.exists()


def test_a_view_that_reads_more_keys_on_it_and_the_reads_are_recorded(cache):
    """also_reads joins the key; the experiments a view asked the dataset about are recorded."""
    seen = {"pages": "v1"}

    def view(d):
        """Reads the pages too."""
        return d.machines[0].benchmarks("training_step") and "t"

    view.also_reads = lambda: seen["pages"]
    d = data()
    view_cache.rendered("fact", "y", view, d, lambda: view(d), shared="c")
    assert view_cache.reads[("fact", "y")] == ("training_step",)
    before = set(cache.glob("*.json"))
    seen["pages"] = "v2"
    view_cache.rendered("fact", "y", view, d, lambda: view(d), shared="c")
    assert len(set(cache.glob("*.json")) - before) == 1


def test_a_damaged_entry_is_rendered_afresh(cache):
    """A truncated entry (an interrupted write elsewhere) costs one render, not an error."""
    view_cache.rendered("fact", "x", a_view, data(), lambda: "first", shared="c")
    for path in cache.glob("*.json"):
        path.write_text("{")
    view_cache._memory.clear()
    assert view_cache.rendered("fact", "x", a_view, data(), lambda: "second", shared="c") == "second"


def test_a_section_comes_back_as_html(cache):
    """A cached section is Html again, so render_section's type check still holds for it."""
    from build_hooks.render import Html

    view_cache.rendered("section", "s", a_view, data(), lambda: Html("<p>x</p>"), shared="c")
    view_cache._memory.clear()
    value = view_cache.rendered("section", "s", a_view, data(), lambda: pytest.fail("rendered"), shared="c")
    assert isinstance(value, Html) and value == "<p>x</p>"


def test_the_cache_lives_under_the_cache_dir(cache):
    """Entries sit beside the host cache (CROSSOVER_CACHE_DIR), never in the project."""
    assert view_cache.folder() == config.settings().cache_dir / "views"


def test_a_module_edited_after_it_was_loaded_stores_no_rendering(cache, tmp_path, monkeypatch):
    """Under `mkdocs serve`, render.py edited on disk while the old code still runs: the rendering is shown but
    not stored under the new file's key; once the module is loaded afresh (a new build), storing resumes."""
    import sys
    import types

    from build_hooks import digests

    source = tmp_path / "edited.py"
    source.write_text("HEADER = 'old'\n")
    module = types.ModuleType("build_hooks._edited_probe")
    module.__file__ = str(source)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(digests, "_loaded", {})
    view_cache.new_build()  # the build starts: the probe is noted as loaded
    source.write_text("HEADER = 'new'\n")
    import os
    os.utime(source, ns=(1, 1))  # its file is now not what was loaded
    view_cache.rendered("fact", "x", a_view, data(), lambda: "old code's text", shared="code-new")
    assert list(cache.glob("*.json")) == []
    fresh = types.ModuleType(module.__name__)  # loaded afresh, as a fresh build would
    fresh.__file__ = str(source)
    monkeypatch.setitem(sys.modules, module.__name__, fresh)
    view_cache._memory.clear()
    view_cache.rendered("fact", "x", a_view, data(), lambda: "new code's text", shared="code-new")
    assert len(list(cache.glob("*.json"))) == 1


@pytest.mark.parametrize("damage", ["forged", "fifo", "endless", "folder", "not utf-8"])
def test_an_entry_that_is_not_what_this_cache_wrote_is_rendered_afresh(cache, damage):
    """A forged number, a FIFO, a link to /dev/zero, a folder or undecodable bytes in an entry's place are never
    published and never hang: the view renders again."""
    import json
    import os

    view_cache.rendered("fact", "x", a_view, data(), lambda: "took 5 ms", shared="c")
    (entry,) = cache.glob("*.json")
    view_cache._memory.clear()
    if damage == "forged":  # a well-formed entry with another number, sealed by nothing
        entry.write_text(entry.read_text().replace("5 ms", "0.001 ms"))
    else:
        entry.unlink()
        {"fifo": lambda: os.mkfifo(entry), "endless": lambda: entry.symlink_to("/dev/zero"),
         "folder": entry.mkdir, "not utf-8": lambda: entry.write_bytes(b"\xff\xfe" + json.dumps({}).encode())}[damage]()
    assert view_cache.rendered("fact", "x", a_view, data(), lambda: "took 5 ms", shared="c") == "took 5 ms"


def test_a_views_digest_covers_view_modules_it_imports_inside_a_function_too():
    """module_digest follows an indented import (training_step imports race inside a function), so editing race.py
    re-renders the cheat sheet's crossover table instead of serving it stale."""
    from build_hooks import digests

    views = config.PROJECT_ROOT / "build_hooks" / "views"
    assert "    from build_hooks.views.race import" in (views / "training_step.py").read_text()
    covered = view_cache.module_digest("build_hooks.views.training_step")
    alone = digests.files([views / "training_step.py"])
    assert covered != alone
    assert view_cache.VIEW_IMPORT.findall("def f():\n    from build_hooks.views.race import grid_leads\n") == [
        ("race", "")]
