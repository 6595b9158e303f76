"""Where does a training step's time go? torch.profiler's table of one step, operation by operation.

The profiler records every ATen operation a step runs (PyTorch's internal tensor
functions: addmm is a matrix product plus bias, threshold_backward is ReLU's
gradient, ...) with the time spent in each one itself, excluding the operations it
calls ("self" time). Many short operations mean overhead; a few long ones mean the
arithmetic or the memory traffic dominates.

The samples are host time on every device: on a GPU that is the time the CPU spends
issuing each kind of operation (dispatch and kernel launch), which is what bounds a
small step. On CUDA the GPU's own kernel time per kind is recorded beside it where the
profiler could read it (it needs NVIDIA's CUPTI); where it could not, the point says
"not available" rather than a zero.

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
BENCH_VERSION = 4  # 4: operations credited to a step by time, so CUDA's backward thread counts
PARAMS = {"batch": "positive", "width": "positive", "kind": "label"}
DEPENDS = ["training_step"]
EXTRA_INFO = {"calls_per_step": "count", "ops": "text"}
EXTRA_INFO_OPTIONAL = {"device_s": "s", "device_time": "text"}  # CUDA: kernel self time, or why there is none
NO_KERNEL_TIMES = "not available: the profiler recorded no kernel times (CUPTI missing or disabled)"
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
STEP_LABEL = "crossover-step-"  # the profiler range around each step


def kind_of(op: str) -> str:
    name = op.removeprefix("aten::")
    return next((kind for kind, names in KINDS.items() if name in names), OTHER)


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [{"device": d, "batch": BATCH, "width": WIDTH, "kind": kind} for d in device_list
            for kind in [*KINDS, OTHER]]


def profile_steps(step, device: str, steps: int) -> list[dict[str, tuple[float, int, float]]]:
    """For each of `steps` profiled steps: {ATen operation: (host self seconds, calls, kernel self seconds)}.

    One profiling session over all steps, each step inside a labelled range, so every
    operation can be credited to the step it ran in.
    """
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    for _ in range(3):
        step()  # warm-up outside the profile
    with profile(activities=activities) as prof:
        for index in range(steps):
            with record_function(f"{STEP_LABEL}{index}"):
                step()
                if device == "cuda":
                    torch.cuda.synchronize()
    return per_step(prof.events(), steps, device)


def per_step(events, steps: int, device: str) -> list[dict[str, tuple[float, int, float]]]:
    """The profiler's events credited to the labelled step each ran in."""
    ranges = step_ranges(events)
    profiles: list[dict[str, tuple[float, int, float]]] = [{} for _ in range(steps)]
    for event in events:
        index = _step_of(event, ranges)
        if index is None or not event.name.startswith("aten::"):
            continue
        kernel = _device_time(event) / 1e6 if device == "cuda" else 0.0
        host, calls, before = profiles[index].get(event.name, (0.0, 0, 0.0))
        profiles[index][event.name] = (host + event.self_cpu_time_total / 1e6, calls + 1, before + kernel)
    return profiles


def step_ranges(events) -> list[tuple[float, float, int]]:
    """(start, end, index) of every labelled step range, in the profiler's clock."""
    return sorted((event.time_range.start, event.time_range.end, int(event.name.rsplit("-", 1)[1]))
                  for event in events if event.name.startswith(STEP_LABEL))


def _device_time(event) -> float:
    """Self GPU time in µs (named self_cuda_time_total before torch 2.4, deprecated since)."""
    if hasattr(event, "self_device_time_total"):
        return event.self_device_time_total
    return event.self_cuda_time_total


def _step_of(event, ranges: list[tuple[float, float, int]]) -> int | None:
    """The index of the labelled step an event ran during, if any.

    By time, not by the event's parents: on CUDA, backward runs on autograd's own thread, whose
    operations have no parent in the thread that opened the step's range. Steps run one after the
    other (a CUDA step ends with a synchronize), so their ranges do not overlap."""
    start = event.time_range.start
    return next((index for first, last, index in ranges if first <= start <= last), None)


# One profiling session serves every kind of a round: {(device, batch, width, quick): (profiles, kinds read)}.
_session: dict[tuple, tuple[list, set[str]]] = {}


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Self time per step of one kind of operation, one sample per profiled step.

    The kinds of one round read one profile: a session is recorded when a kind asks that
    already read the last one (the next round), not once per kind.
    """
    key = (point["device"], point["batch"], point["width"], quick)
    profiles, read = _session.get(key, (None, set()))
    if profiles is None or point["kind"] in read:
        torch.set_num_threads(threads)
        step = make_step(point["batch"], point["width"], point["device"])
        profiles, read = profile_steps(step, point["device"], QUICK_STEPS if quick else STEPS), set()
        _session[key] = (profiles, read)
    read.add(point["kind"])
    return summarise(profiles, point["kind"], point["device"])


def summarise(profiles: list[dict[str, tuple[float, int, float]]], kind: str, device: str) -> dict:
    """One kind's host self time per step (the samples), its calls, and on CUDA its kernel time."""
    mine = [{op: v for op, v in p.items() if kind_of(op) == kind} for p in profiles]
    samples = [sum(host for host, _, _ in ops.values()) for ops in mine]
    names = sorted({op.removeprefix("aten::") for ops in mine for op in ops})
    extra = {"calls_per_step": max(sum(c for _, c, _ in ops.values()) for ops in mine),
             "ops": ", ".join(names) or "none"}
    if device == "cuda":
        every_kernel = [kernel for p in profiles for _, _, kernel in p.values()]
        if not any(every_kernel):  # no kernel time for ANY operation: the profiler could not see the GPU
            extra["device_time"] = NO_KERNEL_TIMES
        else:
            kernels = sorted(sum(k for _, _, k in ops.values()) for ops in mine)
            extra["device_s"] = kernels[len(kernels) // 2]
    return {"unit": "s", "samples": [max(s, 1e-9) for s in samples],  # a kind this device never ran: ~0
            "extra": extra}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        result = measure(point, torch.get_num_threads(), quick=False)
        median = sorted(result["samples"])[len(result["samples"]) // 2]
        print(f"{point['device']:>5} {point['kind']:<45} {median * 1e6:9.1f} µs "
              f"({result['extra']['calls_per_step']} calls: {result['extra']['ops']})")
