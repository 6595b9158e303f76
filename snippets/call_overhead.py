"""What does one tiny operation cost? The fixed price of every call.

Adding 1 to a one-element tensor does no real work, so its time is pure overhead:
Python, PyTorch's dispatcher and, on a GPU, launching a kernel. A training step
makes dozens of such calls whatever its batch size.

Run it alone:  python snippets/call_overhead.py
"""

from __future__ import annotations

import torch

try:
    from snippets.benchmarking import all_threads, budget, devices, time_it
except ImportError:
    from benchmarking import all_threads, budget, devices, time_it

NAME = "call_overhead"
BENCH_VERSION = 1
PARAMS = {"op": ["add_"]}
EXTRA_INFO_OPTIONAL = {"calls_per_sample": "count"}
CALLS = 1000
OP = "add_"  # one tiny in-place addition: almost no arithmetic, all overhead


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [{"device": d, "op": OP} for d in device_list]


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Seconds per call, from timing a loop of CALLS calls."""
    x = torch.zeros(1, device=point["device"])

    def many_calls():
        for _ in range(CALLS):
            x.add_(1)

    samples = time_it(many_calls, threads=threads, device=point["device"], min_run_time=budget(quick))
    return {"unit": "s", "samples": [s / CALLS for s in samples], "extra": {"calls_per_sample": CALLS}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        seconds = min(measure(point, all_threads(), quick=False)["samples"])
        print(f"{point['device']:>5}: {seconds * 1e6:.2f} µs per call")
