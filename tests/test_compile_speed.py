"""torch.compile's experiment: its plan, its failure path and a real compiled step of the MLP."""

from __future__ import annotations

from build_hooks import experiments
from snippets import compile_speed as cs


def test_each_model_plans_its_compile_first_then_eager_and_compiled_steps():
    """Per model: one compile point at its smallest batch, then an eager and a compiled step per batch."""
    full = cs.plan(["cpu"], quick=False)
    for model, batches in cs.FULL.items():
        mine = [p for p in full if p["model"] == model]
        assert mine[0] == {"device": "cpu", "model": model, "phase": "compile", "mode": "compiled",
                           "batch": batches[0]}
        assert [(p["batch"], p["mode"]) for p in mine[1:]] == [(b, m) for b in batches for m in ("eager", "compiled")]
    assert all(experiments.check_params("compile_speed", p) is None for p in full + cs.plan(["cpu"], True))


def test_quick_mode_compiles_the_mlp_only_and_nothing_runs_off_the_cpu():
    """Quick builds skip the transformer's long compile; a GPU is never planned."""
    assert {p["model"] for p in cs.plan(["cpu"], quick=True)} == {"mlp"}
    assert cs.plan(["cuda"], quick=False) == []
    assert experiments.supported_devices("compile_speed", ["cpu", "cuda", "mps"]) == ["cpu"]


def test_a_failing_compiler_is_recorded_as_an_error_not_raised(monkeypatch):
    """When torch.compile raises, the point carries the error text (valid extra_info) instead of crashing."""
    def broken(*args, **kwargs):
        raise RuntimeError("no C++ compiler found")

    monkeypatch.setattr(cs, "compile_model", broken)
    monkeypatch.setattr(cs, "_compiled", {})
    for phase, mode in (("compile", "compiled"), ("step", "compiled")):
        result = cs.measure({"device": "cpu", "model": "mlp", "phase": phase, "mode": mode, "batch": 16}, 1, True)
        assert result["status"] == "failed" and "no C++ compiler found" in result["extra"]["error"]
        assert experiments.check_extra_info("compile_speed", result["extra"], measured=False) is None


def test_an_eager_step_needs_no_compiler():
    """The eager point times the plain step (a few milliseconds, no compilation)."""
    result = cs.measure({"device": "cpu", "model": "mlp", "phase": "step", "mode": "eager", "batch": 16}, 1, True)
    assert len(result["samples"]) >= 3 and 0 < min(result["samples"]) < 0.1


def test_compiling_the_mlp_times_its_first_step_and_serves_every_batch(quick_cache):
    """The session's real quick measurement compiled the MLP (tens of seconds cold): its compile point has one
    sample, and its compiled steps ran at every quick batch. Read from that run, not compiled a second time."""
    import json

    doc = json.loads(next(quick_cache.glob("*.quick.json")).read_text())
    points = [b for b in doc["benchmarks"] if b["group"] == "compile_speed" and b["params"]["model"] == "mlp"]
    compiled = next(b for b in points if b["params"]["phase"] == "compile")
    assert compiled.get("status", "ok") == "ok" and compiled["options"]["samples_per_round"] == [1] * len(
        compiled["options"]["samples_per_round"]) and compiled["stats"]["min"] > 0
    steps = {b["params"]["batch"] for b in points
             if b["params"]["phase"] == "step" and b["params"]["mode"] == "compiled" and b.get("status", "ok") == "ok"}
    assert steps == set(cs.QUICK["mlp"])
