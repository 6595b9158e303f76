"""Timing helpers shared by every experiment: torch.utils.benchmark, used fairly.

Two things make a CPU-vs-GPU comparison unfair if forgotten:
- torch.utils.benchmark.Timer runs on ONE thread unless told otherwise, so we always
  pass num_threads explicitly (all the cores torch would use for training);
- CUDA work is asynchronous; Timer synchronises around each timed block, so no
  per-iteration synchronize() sits inside the measured region.
"""

from __future__ import annotations

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
