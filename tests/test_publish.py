"""Tests for build_hooks.publish: only complete, full-mode results reach results/."""

import pytest

from build_hooks import config, measure, publish, store


def test_refuses_quick_mode(tmp_path):
    """Quick-mode measurements are never published as reference results."""
    settings = config.Settings(tmp_path / "cache", tmp_path / "results", quick=True)
    with pytest.raises(ValueError, match="quick"):
        publish.publish(settings)


def test_refuses_missing_or_incomplete_measurement(tmp_path, monkeypatch, doc):
    """No host file, or one lacking experiments, is refused with what to run."""
    settings = config.Settings(tmp_path / "cache", tmp_path / "results", quick=False)
    with pytest.raises(FileNotFoundError, match="make measure"):
        publish.publish(settings)
    from build_hooks import provenance
    from snippets.benchmarking import all_threads

    machine_id = provenance.collect(all_threads())["machine_id"]
    store.save_atomic(measure.cache_path(settings, machine_id), {**doc, "machine_id": machine_id})
    with pytest.raises(ValueError, match="lacks"):
        publish.publish(settings)
    assert not (tmp_path / "results").exists()


def _complete_host_file(settings, doc):
    """A full-mode host file holding every experiment, as `make measure` would leave it."""
    from build_hooks import experiments, provenance
    from snippets.benchmarking import all_threads

    machine_id = provenance.collect(all_threads())["machine_id"]
    meta = doc["experiments"]["training_step"]
    doc = {**doc, "machine_id": machine_id,
           "experiments": {name: {**meta, "cache_key": experiments.key_of(name, "full")}
                           for name in experiments.REGISTRY}}
    store.save_atomic(measure.cache_path(settings, machine_id), doc)
    return machine_id, doc


def test_refuses_results_of_older_code(tmp_path, doc):
    """A host file whose cache keys no longer match the snippets is not published."""
    settings = config.Settings(tmp_path / "cache", tmp_path / "results", quick=False)
    machine_id, complete = _complete_host_file(settings, doc)
    complete["experiments"]["threads"]["cache_key"] = "from-an-older-snippet"
    store.save_atomic(measure.cache_path(settings, machine_id), complete)
    with pytest.raises(ValueError, match="older code for threads"):
        publish.publish(settings)


def test_publish_cleans_what_a_killed_publish_left(tmp_path, doc):
    """A temporary file left in results/ by an interrupted publish is removed by the next one."""
    settings = config.Settings(tmp_path / "cache", tmp_path / "results", quick=False)
    machine_id, _ = _complete_host_file(settings, doc)
    leftover = tmp_path / "results" / f".{machine_id}.json.abc123.tmp"
    leftover.parent.mkdir()
    leftover.write_text("half a file")
    target = publish.publish(settings)
    assert target.exists() and not leftover.exists()


def test_refuses_a_second_file_for_a_machine_already_committed(tmp_path, doc):
    """A machine committed as results/other-name.json is not published again under its own id."""
    import json

    settings = config.Settings(tmp_path / "cache", tmp_path / "results", quick=False)
    machine_id, complete = _complete_host_file(settings, doc)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "renamed.json").write_text(json.dumps(complete))
    with pytest.raises(ValueError, match="renamed.json already holds this machine"):
        publish.publish(settings)
    assert [p.name for p in (tmp_path / "results").iterdir()] == ["renamed.json"]


def test_results_that_is_a_file_is_named(tmp_path, doc):
    """results/ being a file is a message saying so, not a traceback."""
    settings = config.Settings(tmp_path / "cache", tmp_path / "results", quick=False)
    _complete_host_file(settings, doc)
    (tmp_path / "results").write_text("not a folder")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        publish.publish(settings)
