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


@pytest.mark.parametrize("name", experiments.REGISTRY)
def test_every_planned_point_has_the_params_its_snippet_declares(name):
    """PARAMS is what plan() makes, quick and full, on every device: the load check refuses nothing real."""
    module = experiments.load(name)
    devices = experiments.supported_devices(name, ["cpu", "cuda", "mps"])
    points = module.plan(devices, True) + module.plan(devices, False)
    for params in points:
        assert experiments.check_params(name, params) is None, params
    declared = set(experiments.params_spec(name))
    assert not points or {k for p in points for k in p} - {"device"} == declared


@pytest.mark.parametrize("params, key, says", [
    ({"device": "cpu", "batch": "<img src=x onerror=alert(1)>", "width": 8}, "batch", "whole number"),
    ({"device": "cpu", "batch": 1, "width": 8.0}, "width", "whole number"),
    ({"device": "cpu", "batch": 0, "width": 8}, "batch", "at least 1"),
    ({"device": "cpu", "batch": True, "width": 8}, "batch", "whole number"),
    ({"device": "cpu", "batch": 1}, "width", "missing"),
    ({"device": "cpu", "batch": 1, "width": 8, "note": "x"}, "note", "not a param"),
    ({"device": "tpu", "batch": 1, "width": 8}, "device", "does not measure"),
], ids=["html", "float", "zero", "bool", "missing", "unknown", "device"])
def test_params_that_break_the_declaration_are_named(params, key, says):
    """A wrong param is reported by key, with what it should be."""
    problem = experiments.check_params("training_step", params)
    assert problem is not None and problem[0] == key and says in problem[1]


@pytest.mark.parametrize("value", ['1" autofocus onfocus="alert(1)" x="', "<b>", "CROSSOVERTEXTABCTXETREVOSSORC",
                                   "Matrix products", ""])
def test_a_label_param_is_plain_words(value):
    """A label may not carry quotes, markup, capitals (a placeholder's letters) or be empty."""
    params = {"device": "cpu", "batch": 64, "width": 512, "kind": value}
    assert experiments.check_params("step_profile", params)[0] == "kind"


def test_every_timer_call_names_its_device():
    """Every time_it / time_repeats call in snippets/ passes device=, so no GPU point is timed without its waits."""
    import ast

    for path in experiments.SNIPPETS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in {"time_it", "time_repeats"}:
                assert "device" in {k.arg for k in node.keywords}, f"{path.name}:{node.lineno}"
