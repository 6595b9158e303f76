"""Serving one request: the latency of a batch-1 forward pass, the CPU's home ground.

Inference needs no gradients, so torch.inference_mode() skips autograd's bookkeeping,
and there is no backward pass or optimiser step. At batch 1 the work is tiny, which
is why CPUs serve many models in production: the fixed costs a GPU adds (launches,
copying the request over the bus) can exceed the arithmetic it saves.

Each timed call is one request served: the request arrives in host memory, is copied
to the device, runs, and the answer is copied back, which waits for the device. So a
call is a latency, not a share of a pipelined batch; on the CPU both copies are free.

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
BENCH_VERSION = 2
PARAMS = {"batch": "positive", "width": "positive"}
DEPENDS = ["training_step"]
BATCHES = [1, 16]


def plan(device_list: list[str], quick: bool) -> list[dict]:
    widths = [32] if quick else WIDTHS
    return [{"device": d, "batch": b, "width": w} for d in device_list for w in widths for b in BATCHES]


def measure(point: dict, threads: int, quick: bool) -> dict:
    model, _, _ = make_model(point["width"], point["device"])
    model.eval()
    request = torch.randn(point["batch"], INPUTS)  # arrives in host memory, as a request does
    samples = time_it(lambda: serve(model, request, point["device"]), threads=threads, device=point["device"],
                      min_run_time=budget(quick))
    return {"unit": "s", "samples": samples}


def serve(model, request: torch.Tensor, device: str) -> torch.Tensor:
    """One request in, one answer out: copy in, forward, copy back (which waits for the device)."""
    with torch.inference_mode():
        return model(request.to(device)).to("cpu")


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        samples = measure(point, all_threads(), quick=False)["samples"]
        print(f"{point['device']:>5} width {point['width']:>5} batch {point['batch']:>3}: "
              f"{sorted(samples)[len(samples) // 2] * 1e6:8.1f} µs per forward")
