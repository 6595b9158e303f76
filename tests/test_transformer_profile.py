"""The transformer's profile: its kinds extend step_profile's, every operation has one kind, a real profile adds up."""

from __future__ import annotations

from build_hooks import experiments
from snippets import step_profile
from snippets import transformer_profile as tp


def test_kinds_extend_step_profiles_and_keep_its_names():
    """Every step_profile kind is kept with its operations; attention and normalisation are added."""
    for kind, names in step_profile.KINDS.items():
        assert set(names) <= set(tp.KINDS[kind])
    assert {"attention", "normalisation"} <= set(tp.KINDS)
    assert tp.kind_of("aten::_scaled_dot_product_flash_attention_for_cpu") == "attention"
    assert tp.kind_of("aten::native_layer_norm_backward") == "normalisation"
    assert tp.kind_of("aten::mm") == "matrix products" and tp.kind_of("aten::made_up") == tp.OTHER


def test_plan_has_every_kind_of_both_models_on_the_cpu_only():
    """One point per model and kind, each a valid label; only the CPU is measured."""
    points = tp.plan(["cpu"], quick=True)
    assert len(points) == 2 * (len(tp.KINDS) + 1)
    assert all(experiments.check_params("transformer_profile", p) is None for p in points)
    assert experiments.supported_devices("transformer_profile", ["cpu", "cuda"]) == ["cpu"]


def test_a_real_profile_of_the_transformer_credits_its_attention():
    """Profiling a quick transformer step finds attention and matrix-product time, and names within the text limit."""
    profiles = step_profile.profile_steps(tp.make_step("transformer", "cpu"), "cpu", 2)
    kinds = {tp.kind_of(op) for p in profiles for op in p}
    assert {"attention", "matrix products", "normalisation"} <= kinds
    for kind in [*tp.KINDS, tp.OTHER]:
        result = tp.summarise(profiles, kind)
        assert len(result["samples"]) == 2 and min(result["samples"]) > 0
        assert experiments.check_extra_info("transformer_profile", result["extra"]) is None


def test_the_kinds_of_one_round_share_one_profiling_session(monkeypatch):
    """Consecutive kinds of a model reuse one session; the same kind again, or the other model, profiles anew."""
    sessions = []

    def fake(step, device, steps):
        sessions.append(device)
        return [{"aten::mm": (1e-3, 1, 0.0)}] * steps

    monkeypatch.setattr(tp.step_profile, "profile_steps", fake)
    monkeypatch.setattr(tp, "make_step", lambda model, device: None)
    monkeypatch.setattr(tp, "_last", {"key": None, "profiles": None, "served": set()})
    kinds = [*tp.KINDS, tp.OTHER]
    for kind in kinds:
        tp.measure({"device": "cpu", "model": "mlp", "kind": kind}, 1, True)
    assert len(sessions) == 1
    tp.measure({"device": "cpu", "model": "mlp", "kind": kinds[0]}, 1, True)
    tp.measure({"device": "cpu", "model": "transformer", "kind": kinds[0]}, 1, True)
    assert len(sessions) == 3
