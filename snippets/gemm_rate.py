"""How close does a square fp32 matrix multiply get to the hardware's peak?

C = A @ B with n x n matrices costs 2n^3 FLOPs. Small products cannot keep every
core (or every GPU multiprocessor) busy; large ones can. The largest size is the
fairness check: a CPU reaching a good fraction of its peak is not being handicapped.

Run it alone:  python snippets/gemm_rate.py
"""

from __future__ import annotations

import torch

try:
    from snippets.benchmarking import all_threads, budget, devices, time_it
except ImportError:
    from benchmarking import all_threads, budget, devices, time_it

NAME = "gemm_rate"
BENCH_VERSION = 1
PARAMS = {"n": "positive"}
EXTRA_INFO = {"flops": "FLOP"}
SIZES = [64, 128, 256, 512, 1024, 2048, 4096]
QUICK_SIZES = [64, 256]


def plan(device_list: list[str], quick: bool) -> list[dict]:
    sizes = QUICK_SIZES if quick else SIZES
    return [{"device": d, "n": n} for d in device_list for n in sizes]


def measure(point: dict, threads: int, quick: bool) -> dict:
    n, device = point["n"], point["device"]
    a, b = (torch.randn(n, n, device=device) for _ in range(2))
    out = torch.empty(n, n, device=device)
    samples = time_it(lambda: torch.mm(a, b, out=out), threads=threads, device=device,
                      min_run_time=budget(quick), warmup=2)
    return {"unit": "s", "samples": samples, "extra": {"flops": 2 * n**3}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        result = measure(point, all_threads(), quick=False)
        median = sorted(result["samples"])[len(result["samples"]) // 2]
        print(f"{point['device']:>5} n={point['n']:>5}: {result['extra']['flops'] / median / 1e9:8.1f} GFLOP/s")
