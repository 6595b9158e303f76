"""Tests for build_hooks.experiments: registry loading and cache keys."""

import pytest

from build_hooks import experiments


def test_every_registered_experiment_loads_with_its_interface():
    """Each registry entry is a module with NAME matching its file, a bench_version and plan/measure."""
    for name in experiments.REGISTRY:
        module = experiments.load(name)
        assert module.NAME == name and module.BENCH_VERSION >= 1


def test_cache_key_depends_on_version_and_mode_only_through_its_inputs():
    """The key changes with bench_version and mode and is stable otherwise."""
    key = experiments.cache_key("training_step", 1, "full")
    assert key == experiments.cache_key("training_step", 1, "full")
    assert key != experiments.cache_key("training_step", 2, "full")
    assert key != experiments.cache_key("training_step", 1, "quick")


def test_environment_key_ignores_clock_but_not_libraries(doc):
    """A wandering clock reading keeps the key; a torch upgrade changes it."""
    key = experiments.environment_key(doc, "full")
    doc["machine_info"]["cpu"]["clock_hz"] = 1.234e9
    assert experiments.environment_key(doc, "full") == key
    doc["software"]["torch"] = "9.9.9"
    assert experiments.environment_key(doc, "full") != key


def test_unknown_experiment_raises():
    """Loading an unregistered name raises KeyError naming it."""
    with pytest.raises(KeyError, match="nope"):
        experiments.load("nope")


def test_only_declared_experiments_measure_apple_gpus():
    """The race's experiments declare MPS; the others keep to the CPU and CUDA."""
    from build_hooks import experiments

    available = ["cpu", "cuda", "mps"]
    assert experiments.supported_devices("epoch_time", available) == available
    assert experiments.supported_devices("training_step", available) == available
    assert experiments.supported_devices("transfer", available) == ["cpu", "cuda"]
