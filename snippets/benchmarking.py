"""Timing helpers shared by every experiment: torch.utils.benchmark, used fairly.

Two things make a CPU-vs-GPU comparison unfair if forgotten:
- torch.utils.benchmark.Timer runs on ONE thread unless told otherwise, so we always
  pass num_threads explicitly (all the cores torch would use for training);
- CUDA work is asynchronous; Timer synchronises around each timed block, so no
  per-iteration synchronize() sits inside the measured region.
"""

from __future__ import annotations

import time
from typing import Callable

import torch
import torch.utils.benchmark as benchmark


def all_threads() -> int:
    """The thread count torch uses for CPU work on this machine."""
    return torch.get_num_threads()


def devices() -> list[str]:
    """Every device this machine can measure: always the CPU, CUDA when present."""
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


def time_it(fn: Callable[[], object], *, threads: int, min_run_time: float,
            warmup: int = 3) -> list[float]:
    """Seconds per call of `fn`: one sample per timed block, raw samples returned."""
    for _ in range(warmup):  # first calls pay for allocator growth, cuBLAS handles, caches
        fn()
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads)
    measurement = timer.blocked_autorange(min_run_time=min_run_time)
    return list(measurement.times)


def time_repeats(fn: Callable[[], object], *, device: str, threads: int, repeats: int) -> list[float]:
    """Seconds of `repeats` single calls, for work that takes seconds per call (an epoch).

    Timer.timeit() would first run the call twice more as a warm-up, tripling the cost
    of a multi-second epoch; here the caller warms up with a short run instead, and the
    same rules apply by hand: explicit thread count, synchronise before and after.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        samples = []
        for _ in range(repeats):
            synchronize(device)
            start = time.perf_counter()
            fn()
            synchronize(device)
            samples.append(time.perf_counter() - start)
        return samples
    finally:
        torch.set_num_threads(previous)


def synchronize(device: str) -> None:
    """Wait for queued GPU work; a no-op on the CPU, where work is already done."""
    if device == "cuda":
        torch.cuda.synchronize()
