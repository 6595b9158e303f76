"""What fills memory during training? Activations saved for backward, versus batch size.

A small convolutional network on 64 x 64 colour images. Its weights are small; the
intermediate results autograd keeps for the backward pass grow with every sample
in the batch. We count those saved tensors exactly, on any device, with
saved-tensor hooks; on CUDA we also read the allocator's peak during a whole step.
If the GPU runs out of memory, the point is recorded as out-of-memory.

Run it alone:  python snippets/activation_memory.py
"""

from __future__ import annotations

import torch
from torch import nn

try:
    from snippets.benchmarking import devices
except ImportError:
    from benchmarking import devices

NAME = "activation_memory"
BENCH_VERSION = 2
UNIT = "bytes"  # the saved activations' size, not a time
PARAMS = {"batch": "positive"}
ROUNDS = 1  # byte counts, not timings: one round is exact
EXTRA_INFO = {"weight_bytes": "B"}
EXTRA_INFO_OPTIONAL = {"peak_allocated_bytes": "B", "error": "text"}  # CUDA only; out of memory
IMAGE = (3, 64, 64)
BATCHES = [2**k for k in range(0, 9)]  # 1 ... 256
QUICK_BATCHES = [1, 4]


def make_model(device: str) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10),
    ).to(device)


def activation_bytes(model: nn.Module, x: torch.Tensor) -> int:
    """Bytes autograd saves during the forward pass, not counting the weights themselves."""
    weights = {p.data_ptr() for p in model.parameters()}
    seen, total = set(), 0

    def pack(tensor):
        nonlocal total
        key = (tensor.data_ptr(), tensor.numel())
        if tensor.data_ptr() not in weights and key not in seen:
            seen.add(key)
            total += tensor.numel() * tensor.element_size()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x).sum()
    return total


def peak_step_bytes(model: nn.Module, x: torch.Tensor) -> int:
    """CUDA bytes one forward and backward pass adds at its peak, beyond what was already held.

    One pass runs first: it allocates what every later step reuses (cuBLAS and cuDNN
    workspaces, the gradients' storage on first use). Peak statistics are reset only
    after it, so batch 1 is not charged for a workspace that batch 2 then inherits.
    """
    model(x).sum().backward()  # warm-up: workspaces and handles, kept by the allocator
    model.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    model(x).sum().backward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    model.zero_grad(set_to_none=True)
    return peak


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [{"device": d, "batch": b} for d in device_list for b in (QUICK_BATCHES if quick else BATCHES)]


def measure(point: dict, threads: int, quick: bool) -> dict:
    device = point["device"]
    model = make_model(device)
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    try:
        x = torch.randn(point["batch"], *IMAGE, device=device)
        extra = {"weight_bytes": weight_bytes}
        if device == "cuda":
            extra["peak_allocated_bytes"] = peak_step_bytes(model, x)
        saved = activation_bytes(model, x)
    except torch.cuda.OutOfMemoryError as exc:  # torch.OutOfMemoryError only exists from 2.5
        return {"unit": "bytes", "status": "oom", "extra": {"error": str(exc)[:200]}}
    return {"unit": "bytes", "samples": [saved], "extra": extra}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        result = measure(point, 1, quick=False)
        shown = "out of memory" if result.get("status") == "oom" else f"{result['samples'][0] / 2**20:8.1f} MiB"
        print(f"{point['device']:>5} batch {point['batch']:>4}: activations {shown}")
