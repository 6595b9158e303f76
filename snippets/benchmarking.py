"""Timing helpers shared by every experiment: torch.utils.benchmark, used fairly.

Two things make a CPU-vs-GPU comparison unfair if forgotten:
- torch.utils.benchmark.Timer runs on ONE thread unless told otherwise, so we always
  pass num_threads explicitly (all the cores torch would use for training);
- GPU work is asynchronous: every timer here waits for the GPU at the edges of a timed
  block and never inside it, on CUDA and Apple's MPS alike, so calls pipeline as they
  do in training and the wait is paid once per block. A snippet that must wait inside
  a call (a latency, a GradScaler's check) says so where it does.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import torch
import torch.utils.benchmark as benchmark


def all_threads() -> int:
    """The thread count torch uses for CPU work on this machine."""
    return torch.get_num_threads()


def devices() -> list[str]:
    """Every device this machine can measure: always the CPU, then CUDA and Apple's MPS when present."""
    mps = getattr(torch.backends, "mps", None)
    return (["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
            + (["mps"] if mps is not None and mps.is_available() else []))


def usable_cores() -> int:
    """The cores this process may use: its CPU affinity, capped by a cgroup v2 CPU quota (containers)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = open("/sys/fs/cgroup/cpu.max").read().split()
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass  # no cgroup v2 quota here
    return cores


MIN_SAMPLES_PER_ROUND = 3  # the runner pools rounds: 2-3 rounds give 6-9 samples per point


def budget(quick: bool) -> float:
    """Seconds of timing per point and round (the runner measures each point in rounds)."""
    return 0.02 if quick else 0.1


# How the timers of the point being measured averaged: calls per sample, one entry per timer
# run. The runner empties it before a point and records it with the point's options.
CALLS_PER_SAMPLE: list[int] = []


def time_it(fn: Callable[[], object], *, threads: int, min_run_time: float,
            warmup: int = 3, min_samples: int = MIN_SAMPLES_PER_ROUND, device: str = "cpu") -> list[float]:
    """Seconds per call of `fn`: one sample per timed block, at least `min_samples` blocks.

    The same discipline on every device: calls within a block run back to back (a GPU's
    queue stays full, as in training), and the only waits are at the block's two edges.
    On the CPU, torch.utils.benchmark's Timer sizes the blocks (there is nothing to wait
    for). On a GPU the block is sized once per point, from one call timed after the
    warm-up (gpu_blocks): Timer would wait for the GPU at every block edge while growing
    each block until that wait is under 1e-4 of it, which costs a GPU run minutes.
    """
    for _ in range(warmup):  # first calls pay for allocator growth, cuBLAS handles, caches
        fn()
    if device != "cpu":
        return gpu_blocks(fn, device=device, threads=threads, min_run_time=min_run_time, min_samples=min_samples)
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads)
    measurement = timer.blocked_autorange(min_run_time=min_run_time)
    samples = list(measurement.times)
    while len(samples) < min_samples:  # a slow call fills the budget in one block
        samples += timer.timeit(measurement.number_per_run).times
    CALLS_PER_SAMPLE.append(measurement.number_per_run)
    return samples


BLOCKS_PER_ROUND = 10    # a GPU point's budget is split into about this many timed blocks
MAX_BLOCKS = 4 * BLOCKS_PER_ROUND  # the sizing call may have been slow: never hundreds of blocks
MAX_CALLS_PER_BLOCK = 10_000  # a call of a few microseconds still gets a bounded block


def calls_per_block(call_s: float, min_run_time: float) -> int:
    """How many calls one GPU block holds: a tenth of the budget, at least one call."""
    return max(1, min(MAX_CALLS_PER_BLOCK, round(min_run_time / BLOCKS_PER_ROUND / max(call_s, 1e-9))))


def gpu_blocks(fn: Callable[[], object], *, device: str, threads: int, min_run_time: float,
               min_samples: int = MIN_SAMPLES_PER_ROUND) -> list[float]:
    """Seconds per call on a GPU: blocks sized once, one wait at each edge, at least `min_samples`."""
    one = time_repeats(fn, device=device, threads=threads, repeats=1, record=False)[0]
    number = calls_per_block(one, min_run_time)
    blocks = max(min_samples, math.ceil(min_run_time / (number * max(one, 1e-9))))
    blocks = min(blocks, MAX_BLOCKS)
    CALLS_PER_SAMPLE.append(number)
    return [seconds / number for seconds in
            time_repeats(lambda: [fn() for _ in range(number)], device=device, threads=threads,
                         repeats=blocks, record=False)]


class Canaries:
    """Small fixed workloads that feel what the experiments feel, each read in about 10 ms.

    - all_threads: one training step of a 512-wide MLP at batch 1 on every thread the
      experiments use. On a 2-vCPU VM this is what moves (2-3x, for a tenth of a second to
      several seconds at a time) while a one-core product in cache stays put: a second
      vCPU that is not delivering, or a neighbour's traffic, shows here first.
    - memory: a 64 MiB copy, far beyond one core's share of the last-level cache: the
      DRAM bandwidth another tenant's memory traffic takes away.
    - one_thread: a 128 x 128 product on one core, in cache: the core's own speed (the
      canary of earlier runs).

    Timed between rounds of every experiment; if they vary over a run, so did the machine.
    """

    MEMORY_BYTES = 64 * 2**20

    def __init__(self, threads: int):
        from snippets.training_step import make_step  # the race's model: no second copy of it

        self.threads = threads
        self._step = make_step(1, 512, "cpu")
        self._source = torch.ones(self.MEMORY_BYTES // 4)
        self._target = torch.empty_like(self._source)
        self._small = torch.ones(128, 128)

    def all_threads(self) -> float:
        return _median_of(self._step, 20, self.threads)

    def read(self) -> dict[str, float]:
        """Every canary now, in seconds per call."""
        return {"one_thread": _median_of(lambda: self._small @ self._small, 50, 1),
                "all_threads": self.all_threads(),
                "memory": _median_of(lambda: self._target.copy_(self._source), 5, self.threads)}


def _median_of(fn: Callable[[], object], calls: int, threads: int) -> float:
    """Median seconds of `calls` single calls on `threads` threads (two warm-up calls first).

    Calls are timed one by one, not in Timer blocks: a canary must see a state that lasts
    a tenth of a second, and the median of single calls is what it was in that moment.
    """
    time_repeats(fn, device="cpu", threads=threads, repeats=2)  # warm-up, on the same threads
    samples = sorted(time_repeats(fn, device="cpu", threads=threads, repeats=calls))
    return samples[len(samples) // 2]


def time_repeats(fn: Callable[[], object], *, device: str, threads: int, repeats: int,
                 record: bool = True) -> list[float]:
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
        if record:
            CALLS_PER_SAMPLE.append(1)
        return samples
    finally:
        torch.set_num_threads(previous)


def synchronize(device: str) -> None:
    """Wait for queued GPU work; a no-op on the CPU, where work is already done."""
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


def run_process_group(command: list[str], *, env: dict, timeout: float) -> subprocess.CompletedProcess:
    """Run `command` and everything it starts as one process group; nothing outlives it.

    torchrun starts worker processes of its own, in sessions of their own. If the run
    times out, is interrupted or fails, killing only torchrun would leave its workers
    running (adopted by init), busy on the same cores as the next measurement. So on the
    way out torchrun is asked to stop (SIGTERM: it ends its workers), then everything it
    started is killed. On Linux torchrun also gets SIGTERM the moment its parent dies,
    which covers a measurer or build that is itself killed, even by SIGKILL.
    """
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               start_new_session=True, preexec_fn=lambda: die_with_parent(signal.SIGTERM))
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:  # timeout, Ctrl-C, the runner's own deadline
        kill_group(process)
        raise
    kill_group(process)  # workers a finished torchrun left behind
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


GRACE_S = 10.0  # how long torchrun may take to end its workers before everything is killed


def kill_group(process: subprocess.Popen) -> None:
    """End `process`, its group and every process it started, wherever they went."""
    started = descendants(process.pid)  # before anyone dies: orphans lose their parent link
    _signal_group(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(process.pid, signal.SIGKILL)
    kill_all(started + descendants(process.pid))
    process.wait()


def kill_all(pids) -> None:
    """SIGKILL every process in `pids` that is still there."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # gone already


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (Linux /proc; elsewhere none are known)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in filter(str.isdigit, entries):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask Linux to send this process `sig` when its parent dies (a no-op elsewhere)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, sig)
