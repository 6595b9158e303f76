"""Serving one request: the latency of a batch-1 forward pass, the CPU's home ground.

Inference needs no gradients, so torch.inference_mode() skips autograd's bookkeeping,
and there is no backward pass or optimiser step. At batch 1 the work is tiny, which
is why CPUs serve many models in production: the fixed costs a GPU adds (launches,
copying the request over the bus) can exceed the arithmetic it saves.

Run it alone:  python snippets/inference_latency.py
"""

from __future__ import annotations

import torch

try:
    from snippets.benchmarking import all_threads, budget, devices, time_it
    from snippets.training_step import INPUTS, WIDTHS, make_model
except ImportError:
    from benchmarking import all_threads, budget, devices, time_it
    from training_step import INPUTS, WIDTHS, make_model

NAME = "inference_latency"
BENCH_VERSION = 1
PARAMS = {"batch": "positive", "width": "positive"}
DEPENDS = ["training_step"]
BATCHES = [1, 16]


def plan(device_list: list[str], quick: bool) -> list[dict]:
    widths = [32] if quick else WIDTHS
    return [{"device": d, "batch": b, "width": w} for d in device_list for w in widths for b in BATCHES]


def measure(point: dict, threads: int, quick: bool) -> dict:
    model, _, _ = make_model(point["width"], point["device"])
    model.eval()
    x = torch.randn(point["batch"], INPUTS, device=point["device"])

    def predict():
        with torch.inference_mode():
            return model(x)

    return {"unit": "s", "samples": time_it(predict, threads=threads, min_run_time=budget(quick))}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        samples = measure(point, all_threads(), quick=False)["samples"]
        print(f"{point['device']:>5} width {point['width']:>5} batch {point['batch']:>3}: "
              f"{sorted(samples)[len(samples) // 2] * 1e6:8.1f} µs per forward")
