"""How fast do bytes cross the bus between host memory and GPU memory?

Copies of 4 KiB to 1 GiB in both directions, from ordinary (pageable) host memory
and from pinned (page-locked) memory, which the GPU can read directly without an
extra staging copy. A CPU-only machine has no bus to cross: this experiment is
not applicable there and records no points.

Run it alone:  python snippets/transfer.py
"""

from __future__ import annotations

import torch

try:
    from snippets.benchmarking import all_threads, budget, devices, time_it
except ImportError:
    from benchmarking import all_threads, budget, devices, time_it

NAME = "transfer"
BENCH_VERSION = 2  # buffers are written before copying
PARAMS = {"bytes": "positive", "direction": ["host_to_device", "device_to_host"], "memory": ["pageable", "pinned"]}
EXTRA_INFO = {"bytes": "B"}
SIZES = [4**k * 4096 for k in range(10)]  # 4 KiB ... 1 GiB
QUICK_SIZES = [4096, 2**20]


def plan(device_list: list[str], quick: bool) -> list[dict]:
    if "cuda" not in device_list:
        return []
    sizes = QUICK_SIZES if quick else SIZES
    return [{"device": "cuda", "bytes": n, "direction": direction, "memory": memory}
            for direction in ("host_to_device", "device_to_host")
            for memory in ("pageable", "pinned") for n in sizes]


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Seconds per copy; bandwidth is bytes / seconds."""
    n, pinned = point["bytes"], point["memory"] == "pinned"
    # Filled, not just allocated: an untouched pageable buffer is the kernel's shared zero
    # page until written, and copying from it is faster than copying real data.
    host = torch.ones(n, dtype=torch.uint8).pin_memory() if pinned else torch.ones(n, dtype=torch.uint8)
    device = torch.ones(n, dtype=torch.uint8, device="cuda")
    src, dst = (host, device) if point["direction"] == "host_to_device" else (device, host)
    samples = time_it(lambda: dst.copy_(src), threads=threads, device="cuda",
                      min_run_time=budget(quick), warmup=2)
    return {"unit": "s", "samples": samples, "extra": {"bytes": n}}


if __name__ == "__main__":
    points = plan(devices(), quick=False)
    if not points:
        print("No CUDA device: host<->device transfer does not apply on this machine.")
    for point in points:
        seconds = min(measure(point, all_threads(), quick=False)["samples"])
        print(f"{point['direction']:>15} {point['memory']:>8} {point['bytes']:>11} B: "
              f"{point['bytes'] / seconds / 1e9:6.2f} GB/s")
