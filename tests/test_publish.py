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
