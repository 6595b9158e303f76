"""The transformer experiment: its plan, its FLOP formula and a real measurement of its smallest point."""

from __future__ import annotations

import pytest

from build_hooks import experiments
from build_hooks.views import transformer as view
from snippets import transformer_block as tb


def test_quick_plan_is_small_and_full_plan_covers_the_batch_range():
    """Quick mode measures two batches at one d_model; full mode four batches at two d_models, on every device."""
    quick = tb.plan(["cpu"], quick=True)
    assert [(p["batch"], p["d_model"]) for p in quick] == [(1, 128), (8, 128)]
    full = tb.plan(["cpu", "cuda"], quick=False)
    assert len(full) == 2 * 2 * 4 and {p["d_model"] for p in full} == {128, 256}
    assert all(experiments.check_params("transformer_block", p) is None for p in quick + full)


def test_matmul_parameters_are_twelve_d_squared_per_block_plus_the_head():
    """N = LAYERS × 12 d² + d × VOCAB, the same in the snippet and in the view (which cannot import torch)."""
    for d in (64, 128, 256):
        assert tb.matmul_params(d) == tb.LAYERS * 12 * d * d + d * tb.VOCAB == view.matmul_params(d)


def test_step_flops_are_six_n_per_token_plus_three_times_the_attention_term():
    """6·N·tokens plus 3 × 4·B·L²·d per layer, exactly."""
    b, d, seq = 4, 128, 64
    assert tb.step_flops(b, d, seq) == 6 * tb.matmul_params(d) * b * seq + 3 * tb.LAYERS * 4 * b * seq**2 * d


def test_the_matmul_part_of_the_formula_matches_pytorchs_own_count():
    """FlopCounterMode's count of one step's matrix products is 6N per token: the analytic rest is attention."""
    from snippets.training_step import count_work

    b, d, seq = 2, 64, 16
    step = tb.make_step(b, d, seq, "cpu")
    step()
    counted = count_work(step)["flops"]
    matmuls = 6 * tb.matmul_params(d) * b * seq
    assert counted in (matmuls, tb.step_flops(b, d, seq))  # some builds count the fused attention too


def test_the_model_is_causal():
    """Changing a later token never changes an earlier position's logits."""
    import torch

    model, _ = tb.make_model(64, 16, "cpu")
    tokens, _ = tb.make_batch(1, 16, "cpu")
    changed = tokens.clone()
    changed[0, 10] = (changed[0, 10] + 1) % tb.VOCAB
    with torch.no_grad():
        assert torch.allclose(model(tokens)[0, :10], model(changed)[0, :10], atol=1e-6)


@pytest.mark.parametrize("point", [{"device": "cpu", "batch": 1, "d_model": 128, "seq": 64}])
def test_measuring_the_smallest_point_records_every_declared_key(point):
    """A real quick measure() of the smallest point: positive samples and every EXTRA_INFO key, valid."""
    result = tb.measure(point, threads=1, quick=True)
    assert result["unit"] == "s" and len(result["samples"]) >= 3 and min(result["samples"]) > 0
    extra = result["extra"]
    assert experiments.check_extra_info("transformer_block", extra) is None
    assert extra["tokens"] == 64 and extra["flops"] == tb.step_flops(1, 128, 64)
    assert extra["params"] > tb.matmul_params(128)  # plus embeddings, biases and norms
    assert extra["ops"] > 100 and extra["bytes"] > 0
