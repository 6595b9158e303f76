"""Where does a transformer's training step spend its time, next to the MLP's? torch.profiler, by kind.

The same profiler and the same rules as snippets/step_profile.py (host self time of
every ATen operation, credited to the labelled step it ran in), with its kinds of
operation extended by what a transformer adds: attention (the fused
scaled-dot-product kernel and its backward), normalisation (LayerNorm) and the
embedding look-ups. Both models are profiled here with this one grouping, so their
shares can be read side by side (the kinds of one model in one round are read from one
profiling session, so they add up over the same steps): the race's MLP at step_profile's batch and width, and
the small transformer of snippets/transformer_block.py. On the CPU only: the GPU's view
of the MLP's step is step_profile's, and a GPU machine's measuring slot has no room for
another set of profiler sessions.

Run it alone:  python snippets/transformer_profile.py
"""

from __future__ import annotations

import torch

try:
    from snippets import step_profile, transformer_block
    from snippets.training_step import make_step as make_mlp_step
except ImportError:
    import step_profile
    import transformer_block
    from training_step import make_step as make_mlp_step

NAME = "transformer_profile"
# CPU-only and not in a GPU machine's six-minute slot (its forecast is already near the limit).
GPU_SLOT = False
DEVICES = ["cpu"]
BENCH_VERSION = 1
PARAMS = {"model": ["mlp", "transformer"], "kind": "label"}
DEPENDS = ["step_profile", "training_step", "transformer_block"]
EXTRA_INFO = {"calls_per_step": "count", "ops": "text"}
MLP = {"batch": step_profile.BATCH, "width": step_profile.WIDTH}
TRANSFORMER = {"batch": 8, "d_model": 128, "seq": 64}
STEPS, QUICK_STEPS = 10, 5
_SDPA = ("scaled_dot_product_attention", "_scaled_dot_product_flash_attention_for_cpu",
         "_scaled_dot_product_flash_attention_for_cpu_backward", "_scaled_dot_product_flash_attention",
         "_scaled_dot_product_flash_attention_backward", "_scaled_dot_product_efficient_attention",
         "_scaled_dot_product_efficient_attention_backward", "_scaled_dot_product_cudnn_attention",
         "_scaled_dot_product_cudnn_attention_backward", "_efficient_attention_forward",
         "_efficient_attention_backward", "_flash_attention_forward", "_flash_attention_backward",
         "_fused_sdp_choice", "softmax", "_softmax", "_softmax_backward_data", "baddbmm")
_ADAMW = ("lerp_", "sqrt", "sqrt_", "div_", "addcdiv_", "addcmul_", "maximum", "_foreach_lerp_",
          "_foreach_sqrt", "_foreach_div_", "_foreach_addcdiv_", "_foreach_addcmul_", "_foreach_mul",
          "_foreach_div", "_foreach_sub_", "_foreach_neg", "_foreach_pow", "_foreach_add_", "_fused_adamw_")
# step_profile's kinds, each extended by the transformer's operations of that kind, and three kinds of its own.
KINDS = {
    "matrix products": step_profile.KINDS["matrix products"],
    "attention": _SDPA,
    "activations and gradients of elementwise ops":
        step_profile.KINDS["activations and gradients of elementwise ops"] + ("gelu", "gelu_backward"),
    "normalisation": ("layer_norm", "native_layer_norm", "native_layer_norm_backward"),
    "embedding look-ups": ("embedding", "embedding_backward", "embedding_dense_backward", "index_select",
                           "index_add_", "index_put_", "_index_put_impl_", "embedding_renorm_"),
    "loss and reductions": step_profile.KINDS["loss and reductions"],
    "optimiser update": step_profile.KINDS["optimiser update"] + _ADAMW,
    "bookkeeping (views, copies, allocation)": step_profile.KINDS["bookkeeping (views, copies, allocation)"]
        + ("permute", "unbind", "split", "_unsafe_view", "contiguous", "zeros", "new_zeros", "zero_", "alias",
           "unsafe_split", "narrow", "_reshape_alias", "lift_fresh", "scalar_tensor", "item",
           "_local_scalar_dense"),
}
OTHER = step_profile.OTHER


def kind_of(op: str) -> str:
    """The kind of one ATen operation, by name (every operation falls in exactly one)."""
    name = op.removeprefix("aten::")
    return next((kind for kind, names in KINDS.items() if name in names), OTHER)


def plan(device_list: list[str], quick: bool) -> list[dict]:
    """One point per model and kind, on the devices it measures (both models at fixed sizes)."""
    return [{"device": d, "model": model, "kind": kind}
            for d in device_list for model in ("mlp", "transformer") for kind in [*KINDS, OTHER]]


def make_step(model: str, device: str):
    """The training step of one model, with its batch already on `device`."""
    if model == "mlp":
        return make_mlp_step(MLP["batch"], MLP["width"], device)
    return transformer_block.make_step(TRANSFORMER["batch"], TRANSFORMER["d_model"], TRANSFORMER["seq"], device)


# The last profile taken, and the kinds already read from it: the kinds of one model in one round
# share one profiling session (their shares then add up over the same steps); a kind read again
# (the next round, or a round measured again) gets a new session.
_last: dict = {"key": None, "profiles": None, "served": set()}


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Self time per step of one kind of operation in one model, one sample per profiled step."""
    torch.set_num_threads(threads)
    key = (point["model"], point["device"], threads, quick)
    if _last["key"] != key or point["kind"] in _last["served"]:
        step = make_step(point["model"], point["device"])
        profiles = step_profile.profile_steps(step, point["device"], QUICK_STEPS if quick else STEPS)
        _last.update(key=key, profiles=profiles, served=set())
    _last["served"].add(point["kind"])
    return summarise(_last["profiles"], point["kind"])


def summarise(profiles: list[dict[str, tuple[float, int, float]]], kind: str) -> dict:
    """step_profile's summary of one kind (host self time per step, calls, names), with this file's grouping."""
    mine = [{op: v for op, v in p.items() if kind_of(op) == kind} for p in profiles]
    samples = [sum(host for host, _, _ in ops.values()) for ops in mine]
    names = sorted({op.removeprefix("aten::") for ops in mine for op in ops})
    ops_text = ", ".join(names) or "none"
    extra = {"calls_per_step": max(sum(c for _, c, _ in ops.values()) for ops in mine),
             "ops": ops_text if len(ops_text) <= 200 else ops_text[:196] + ", …"}
    return {"unit": "s", "samples": [max(s, 1e-9) for s in samples], "extra": extra}


if __name__ == "__main__":
    for point in plan(["cpu"], quick=False):
        result = measure(point, torch.get_num_threads(), quick=False)
        median = sorted(result["samples"])[len(result["samples"]) // 2]
        print(f"{point['device']:>5} {point['model']:>11} {point['kind']:<45} {median * 1e6:9.1f} µs "
              f"({result['extra']['calls_per_step']} calls: {result['extra']['ops']})")
