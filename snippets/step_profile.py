"""Where does a training step's time go? torch.profiler's table of one step, operation by operation.

The profiler records every ATen operation a step runs (PyTorch's internal tensor
functions: addmm is a matrix product plus bias, threshold_backward is ReLU's
gradient, ...) with the time spent in each one itself, excluding the operations it
calls ("self" time). Many short operations mean overhead; a few long ones mean the
arithmetic or the memory traffic dominates.

Run it alone:  python snippets/step_profile.py
"""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile, record_function

try:
    from snippets.benchmarking import devices
    from snippets.training_step import make_step
except ImportError:
    from benchmarking import devices
    from training_step import make_step

NAME = "step_profile"
BENCH_VERSION = 1
PARAMS = {"batch": "positive", "width": "positive", "kind": "label"}
DEPENDS = ["training_step"]
EXTRA_INFO = {"calls_per_step": "count", "ops": "text"}
BATCH, WIDTH, STEPS, QUICK_STEPS = 64, 512, 20, 5
# Every ATen operation falls in one kind; self times do not overlap, so the kinds add up.
KINDS = {
    "matrix products": ("mm", "addmm", "bmm", "matmul", "linear", "_addmm_activation"),
    "activations and gradients of elementwise ops": ("relu", "threshold_backward", "clamp_min", "add", "mul",
                                                     "sub", "div", "where", "ge", "gt", "lt", "le"),
    "loss and reductions": ("sum", "mean", "log_softmax", "_log_softmax", "_log_softmax_backward_data",
                            "nll_loss", "nll_loss_forward", "nll_loss_backward", "nll_loss_nd", "cross_entropy_loss"),
    "optimiser update": ("add_", "mul_", "addcmul_", "addcdiv_", "sgd", "_foreach_add_", "_foreach_mul_",
                         "_foreach_add", "_fused_sgd_"),
    "bookkeeping (views, copies, allocation)": ("t", "view", "transpose", "expand", "copy_", "empty", "empty_like",
                                                "zeros_like", "ones_like", "fill_", "zero_", "detach", "as_strided",
                                                "reshape", "clone", "resize_", "empty_strided", "_to_copy", "to",
                                                "new_empty_strided", "select", "slice", "unsqueeze", "squeeze"),
}
OTHER = "everything else"


def kind_of(op: str) -> str:
    name = op.removeprefix("aten::")
    return next((kind for kind, names in KINDS.items() if name in names), OTHER)


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [{"device": d, "batch": BATCH, "width": WIDTH, "kind": kind} for d in device_list
            for kind in [*KINDS, OTHER]]


def profile_steps(step, device: str, steps: int) -> list[dict[str, tuple[float, int]]]:
    """For each of `steps` profiled steps: {ATen operation: (self seconds, calls)}.

    One profiling session over all steps, each step inside a labelled range, so every
    operation can be credited to the step it ran in.
    """
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    for _ in range(3):
        step()  # warm-up outside the profile
    with profile(activities=activities) as prof:
        for index in range(steps):
            with record_function(f"crossover-step-{index}"):
                step()
                if device == "cuda":
                    torch.cuda.synchronize()
    profiles: list[dict[str, tuple[float, int]]] = [{} for _ in range(steps)]
    for event in prof.events():
        index = _step_of(event)
        if index is None or not event.name.startswith("aten::"):
            continue
        seconds = (_device_time(event) if device == "cuda" else event.self_cpu_time_total) / 1e6
        before = profiles[index].get(event.name, (0.0, 0))
        profiles[index][event.name] = (before[0] + seconds, before[1] + 1)
    return profiles


def _device_time(event) -> float:
    """Self GPU time in µs (named self_cuda_time_total before torch 2.4)."""
    return getattr(event, "self_device_time_total", None) or getattr(event, "self_cuda_time_total", 0.0)


def _step_of(event) -> int | None:
    """The index of the labelled step range an event ran inside, if any."""
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith("crossover-step-"):
            return int(parent.name.rsplit("-", 1)[1])
        parent = parent.cpu_parent
    return None


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Self time per step of one kind of operation, one sample per profiled step."""
    torch.set_num_threads(threads)
    step = make_step(point["batch"], point["width"], point["device"])
    profiles = profile_steps(step, point["device"], QUICK_STEPS if quick else STEPS)
    mine = [{op: v for op, v in p.items() if kind_of(op) == point["kind"]} for p in profiles]
    samples = [sum(seconds for seconds, _ in ops.values()) for ops in mine]
    names = sorted({op.removeprefix("aten::") for ops in mine for op in ops})
    return {"unit": "s", "samples": [max(s, 1e-9) for s in samples],  # a kind absent on this device: ~0
            "extra": {"calls_per_step": max(sum(c for _, c in ops.values()) for ops in mine),
                      "ops": ", ".join(names) or "none"}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        result = measure(point, torch.get_num_threads(), quick=False)
        median = sorted(result["samples"])[len(result["samples"]) // 2]
        print(f"{point['device']:>5} {point['kind']:<45} {median * 1e6:9.1f} µs "
              f"({result['extra']['calls_per_step']} calls: {result['extra']['ops']})")
