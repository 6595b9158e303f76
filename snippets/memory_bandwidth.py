"""How fast can a device move memory? Copy tensors of growing size and count the bytes moved.

A copy reads every byte once and writes it once, so it moves 2 x size bytes. Work
with little arithmetic per byte (activations, optimiser updates, elementwise ops)
runs at this speed, not at the FLOP rate. Which speed depends on where the data
lives: copies small enough to stay in a cache run faster than the largest one,
which streams from main memory (DRAM, or a GPU's HBM).

Run it alone:  python snippets/memory_bandwidth.py
"""

from __future__ import annotations

import torch

try:
    from snippets.benchmarking import all_threads, budget, devices, time_it
except ImportError:
    from benchmarking import all_threads, budget, devices, time_it

NAME = "memory_bandwidth"
BENCH_VERSION = 2
PARAMS = {"bytes": "positive"}
EXTRA_INFO = {"bytes": "B"}  # read + written per call
SIZES = [2**k for k in range(16, 29, 2)]  # 64 KiB ... 256 MiB per tensor: cache sizes, then past them
QUICK_SIZES = [2**16, 2**22]


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [{"device": d, "bytes": size} for d in device_list for size in (QUICK_SIZES if quick else SIZES)]


def measure(point: dict, threads: int, quick: bool) -> dict:
    n = point["bytes"] // 4
    src = torch.ones(n, device=point["device"])
    dst = torch.empty(n, device=point["device"])
    samples = time_it(lambda: dst.copy_(src), threads=threads, device=point["device"],
                      min_run_time=budget(quick), warmup=2)
    return {"unit": "s", "samples": samples, "extra": {"bytes": 2 * point["bytes"]}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        seconds = min(measure(point, all_threads(), quick=False)["samples"])
        print(f"{point['device']:>5} {point['bytes'] / 2**20:>8.2f} MiB: {2 * point['bytes'] / seconds / 1e9:.1f} GB/s")
