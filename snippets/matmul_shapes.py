"""Same FLOPs, different shapes: many small matrix products versus a few large ones.

A fixed arithmetic budget (2^28 FLOPs, about 2.7e8) is spent as n products of s x s
matrices, n = budget / (2 s^3). A FLOP count says these all cost the same; the
clock disagrees, because every call has a fixed overhead and small products reuse
too little data to keep the arithmetic units fed.

A timed call runs at most MAX_PRODUCTS products (side 8 would otherwise be 262,144
launches per call, 16 s a round on a GPU) and its time is scaled to the whole budget:
the products are identical and back to back, so each costs the same in steady state.

Run it alone:  python snippets/matmul_shapes.py
"""

from __future__ import annotations

import torch

try:
    from snippets.benchmarking import all_threads, budget, devices, time_it
except ImportError:
    from benchmarking import all_threads, budget, devices, time_it

NAME = "matmul_shapes"
BENCH_VERSION = 2
PARAMS = {"side": "positive", "calls": "positive"}
EXTRA_INFO = {"flops": "FLOP"}
EXTRA_INFO_OPTIONAL = {"products_timed": "count"}  # recorded from version 2 on
MAX_PRODUCTS = 4096  # products per timed call, on every device
BUDGET = 2**28
SIDES = [8, 16, 32, 64, 128, 256, 512]
QUICK = {"budget": 2**20, "sides": [8, 64]}


def plan(device_list: list[str], quick: bool) -> list[dict]:
    sides, flops = (QUICK["sides"], QUICK["budget"]) if quick else (SIDES, BUDGET)
    return [{"device": d, "side": s, "calls": max(1, flops // (2 * s**3))}
            for d in device_list for s in sides]


def measure(point: dict, threads: int, quick: bool) -> dict:
    side, calls, device = point["side"], point["calls"], point["device"]
    a, b = (torch.randn(side, side, device=device) for _ in range(2))
    out = torch.empty(side, side, device=device)
    timed = min(calls, MAX_PRODUCTS)

    def part_of_budget():
        for _ in range(timed):
            torch.mm(a, b, out=out)

    samples = time_it(part_of_budget, threads=threads, device=device, min_run_time=budget(quick), warmup=1)
    return {"unit": "s", "samples": [s * calls / timed for s in samples],  # the whole budget's time
            "extra": {"flops": calls * 2 * side**3, "products_timed": timed}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        seconds = min(measure(point, all_threads(), quick=False)["samples"])
        print(f"{point['device']:>5} {point['calls']:>7} x {point['side']:>3}^2: {seconds * 1e3:8.2f} ms")
