"""Gradient accumulation: the same effective batch in smaller pieces, memory against time.

One optimiser step over an effective batch of B samples can run as k micro-batches of
B/k: each micro-batch's backward adds its gradients into .grad (scaled so the sum
equals one big batch's), and the optimiser steps once. Activations are only kept for
one micro-batch at a time, so activation memory falls about k-fold; the price is k
forward and backward passes, each paying the per-operation overhead again.

Run it alone:  python snippets/grad_accumulation.py
"""

from __future__ import annotations

import torch

try:
    from snippets.activation_memory import activation_bytes
    from snippets.benchmarking import all_threads, budget, devices, time_it
    from snippets.training_step import CLASSES, INPUTS, make_model
except ImportError:
    from activation_memory import activation_bytes
    from benchmarking import all_threads, budget, devices, time_it
    from training_step import CLASSES, INPUTS, make_model

NAME = "grad_accumulation"
BENCH_VERSION = 1
PARAMS = {"effective_batch": "positive", "micro_batch": "positive", "width": "positive"}
DEPENDS = ["training_step", "activation_memory"]
EXTRA_INFO = {"activation_bytes": "B", "micro_batches": "count"}
FULL = {"effective_batch": 256, "width": 2048, "micro_batches": [256, 64, 16]}
QUICK = {"effective_batch": 64, "width": 512, "micro_batches": [64, 16]}


def make_accumulated_step(effective: int, micro: int, width: int, device: str):
    """One optimiser step over `effective` samples, run as micro-batches of `micro`."""
    model, optimiser, loss_fn = make_model(width, device)
    x = torch.randn(effective, INPUTS, device=device)
    y = torch.randint(0, CLASSES, (effective,), device=device)
    pieces = list(zip(x.split(micro), y.split(micro)))

    def step():
        optimiser.zero_grad(set_to_none=True)
        for xb, yb in pieces:
            # Each piece's mean loss, weighted by its share: the gradients sum to the full batch's.
            (loss_fn(model(xb), yb) * (len(xb) / effective)).backward()
        optimiser.step()

    return step, model, pieces[0][0]


def plan(device_list: list[str], quick: bool) -> list[dict]:
    config = QUICK if quick else FULL
    return [{"device": d, "effective_batch": config["effective_batch"], "micro_batch": m, "width": config["width"]}
            for d in device_list for m in config["micro_batches"]]


def measure(point: dict, threads: int, quick: bool) -> dict:
    step, model, one_piece = make_accumulated_step(point["effective_batch"], point["micro_batch"],
                                                   point["width"], point["device"])
    samples = time_it(step, threads=threads, device=point["device"], min_run_time=budget(quick))
    return {"unit": "s", "samples": samples,
            "extra": {"activation_bytes": activation_bytes(model, one_piece),
                      "micro_batches": point["effective_batch"] // point["micro_batch"]}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        result = measure(point, all_threads(), quick=False)
        seconds = sorted(result["samples"])[len(result["samples"]) // 2]
        print(f"{point['device']:>5} {result['extra']['micro_batches']:>2} x {point['micro_batch']:>3}: "
              f"{seconds * 1e3:7.2f} ms per optimiser step, "
              f"{result['extra']['activation_bytes'] / 2**20:6.2f} MiB of activations")
