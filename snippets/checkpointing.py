"""Activation checkpointing: keep fewer activations, recompute them in the backward pass.

A deep MLP normally keeps every layer's output for backward. With
torch.utils.checkpoint, a segment of layers keeps only its input; during backward it
runs its forward again to recreate what it needs. Memory for activations falls to
the segment boundaries plus one segment's worth (torch keeps the last segment
whole); time rises by roughly one extra forward pass.

Run it alone:  python snippets/checkpointing.py
"""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint_sequential

try:
    from snippets.activation_memory import activation_bytes
    from snippets.benchmarking import all_threads, budget, devices, time_it
except ImportError:
    from activation_memory import activation_bytes
    from benchmarking import all_threads, budget, devices, time_it

NAME = "checkpointing"
BENCH_VERSION = 1
PARAMS = {"depth": "positive", "width": "positive", "batch": "positive", "segments": "positive",
          "checkpoint": ["off", "on"]}
ROUNDS = 15  # its cost sits near a drifting VM's noise: many short rounds (a step is ~20 ms), paired
DEPENDS = ["activation_memory"]
EXTRA_INFO = {"activation_bytes": "B"}
FULL = {"depth": 16, "width": 512, "batch": 64, "segments": 4}
QUICK = {"depth": 4, "width": 256, "batch": 16, "segments": 2}


class DeepMLP(nn.Module):
    def __init__(self, depth: int, width: int, segments: int, checkpointed: bool):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)])
        self.head = nn.Linear(width, 10)
        self.segments, self.checkpointed = segments, checkpointed

    def forward(self, x):
        if self.checkpointed:  # keep only each segment's input; recompute the rest in backward
            x = checkpoint_sequential(self.layers, self.segments, x, use_reentrant=False)
        else:
            x = self.layers(x)
        return self.head(x)


def plan(device_list: list[str], quick: bool) -> list[dict]:
    config = QUICK if quick else FULL
    return [{"device": d, **config, "checkpoint": mode} for d in device_list for mode in ("off", "on")]


def measure(point: dict, threads: int, quick: bool) -> dict:
    device = point["device"]
    model = DeepMLP(point["depth"], point["width"], point["segments"], point["checkpoint"] == "on").to(device)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(point["batch"], point["width"], device=device)
    y = torch.randint(0, 10, (point["batch"],), device=device)

    def step():
        optimiser.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        optimiser.step()

    samples = time_it(step, threads=threads, device=point["device"], min_run_time=budget(quick))
    return {"unit": "s", "samples": samples, "extra": {"activation_bytes": activation_bytes(model, x)}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        result = measure(point, all_threads(), quick=False)
        seconds = sorted(result["samples"])[len(result["samples"]) // 2]
        print(f"{point['device']:>5} checkpointing {point['checkpoint']:>3}: {seconds * 1e3:7.2f} ms per step, "
              f"{result['extra']['activation_bytes'] / 2**20:6.2f} MiB of activations")
