"""How fast can a device stream memory? Copy a large tensor and count the bytes moved.

A copy reads every byte once and writes it once, so it moves 2 x size bytes. Work
with little arithmetic per byte (activations, optimiser updates, elementwise ops)
runs at this speed, not at the FLOP rate.

Run it alone:  python snippets/memory_bandwidth.py
"""

from __future__ import annotations

import torch

try:
    from snippets.benchmarking import all_threads, budget, devices, time_it
except ImportError:
    from benchmarking import all_threads, budget, devices, time_it

NAME = "memory_bandwidth"
BENCH_VERSION = 1
EXTRA_INFO = {"bytes": "B"}  # read + written per call
SIZE, QUICK_SIZE = 2**28, 2**22  # 256 MiB (well past any cache), 4 MiB


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [{"device": d, "bytes": QUICK_SIZE if quick else SIZE} for d in device_list]


def measure(point: dict, threads: int, quick: bool) -> dict:
    n = point["bytes"] // 4
    src = torch.ones(n, device=point["device"])
    dst = torch.empty(n, device=point["device"])
    samples = time_it(lambda: dst.copy_(src), threads=threads, min_run_time=budget(quick), warmup=2)
    return {"unit": "s", "samples": samples, "extra": {"bytes": 2 * point["bytes"]}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        seconds = min(measure(point, all_threads(), quick=False)["samples"])
        print(f"{point['device']:>5}: {2 * point['bytes'] / seconds / 1e9:.1f} GB/s")
