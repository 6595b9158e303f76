"""Data parallelism for real: DistributedDataParallel on two CPU processes (gloo).

Each process holds a full copy of the model, trains on its half of the batch, and
the gradients are averaged across processes (an all-reduce) during backward. We
compare one process doing the whole batch with all threads against two processes
doing half each on one thread, and time the all-reduce of one model's gradients alone.
The two processes are started with torchrun, exactly as you would start a real
multi-process training job; one launch times both the DDP steps and the all-reduce.

Run it alone:  python snippets/data_parallel.py
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

try:
    from snippets.benchmarking import all_threads, die_with_parent, run_process_group
    from snippets.training_step import CLASSES, INPUTS, make_model, train_step
except ImportError:
    from benchmarking import all_threads, die_with_parent, run_process_group
    from training_step import CLASSES, INPUTS, make_model, train_step

NAME = "data_parallel"
BENCH_VERSION = 2  # one launch for DDP and all-reduce; the single process runs in-process
GPU_SLOT = False  # no GPU points: the build host measures it, not a GPU machine's slot
PARAMS = {"setup": ["one_process", "ddp", "all_reduce"], "processes": "positive", "global_batch": "positive"}
ROUNDS = 1  # each launch already times 30 steps; starting torchrun costs seconds
DEPENDS = ["training_step"]
EXTRA_INFO_OPTIONAL = {"threads_per_process": "count"}
GLOBAL_BATCH, WIDTH, STEPS, PROCESSES = 256, 1024, 30, 2
RESULT = "crossover-result: "


def timed_steps(run, steps: int, barrier=None) -> list[float]:
    """Seconds of each of `steps` calls of `run`, after three warm-up calls."""
    for _ in range(3):
        run()
    times = []
    for _ in range(steps):
        if barrier:
            barrier()  # start every step together, as in lock-step training
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def worker(threads: int, steps: int) -> dict[str, list[float]] | None:
    """One process of the run (launched by torchrun, which sets RANK and WORLD_SIZE)."""
    die_with_parent()  # if torchrun is killed, so is this worker
    torch.set_num_threads(threads)
    dist.init_process_group("gloo", timeout=timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        model, optimiser, loss_fn = make_model(WIDTH, "cpu")
        flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
        reduce_times = timed_steps(lambda: dist.all_reduce(flat), steps, dist.barrier)  # what DDP does to gradients
        ddp = DistributedDataParallel(model)
        x = torch.randn(GLOBAL_BATCH // world, INPUTS)
        y = torch.randint(0, CLASSES, (GLOBAL_BATCH // world,))
        ddp_times = timed_steps(lambda: train_step(ddp, optimiser, loss_fn, x, y), steps, dist.barrier)
        dist.barrier()  # nobody tears down gloo while the other still talks to it
        return {"ddp": ddp_times, "all_reduce": reduce_times} if rank == 0 else None
    finally:
        dist.destroy_process_group()


@functools.cache
def launch(world: int, threads: int, steps: int) -> dict[str, list[float]]:
    """Run `world` processes with torchrun, as you would yourself; return rank 0's step times."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc-per-node={world}", __file__, "--worker", str(threads), str(steps)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONWARNINGS": "ignore"}
    done = run_process_group(command, env=env, timeout=300)
    for line in done.stdout.splitlines():
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT):])
    raise RuntimeError(f"torchrun exited {done.returncode}: {done.stderr.strip()[-500:]}")


def one_process(threads: int, steps: int) -> list[float]:
    """The whole batch in this process, on every thread: the baseline DDP must beat."""
    torch.set_num_threads(threads)
    model, optimiser, loss_fn = make_model(WIDTH, "cpu")
    x, y = torch.randn(GLOBAL_BATCH, INPUTS), torch.randint(0, CLASSES, (GLOBAL_BATCH,))
    return timed_steps(lambda: train_step(model, optimiser, loss_fn, x, y), steps)


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [
        {"device": "cpu", "setup": "one_process", "processes": 1, "global_batch": GLOBAL_BATCH},
        {"device": "cpu", "setup": "ddp", "processes": PROCESSES, "global_batch": GLOBAL_BATCH},
        {"device": "cpu", "setup": "all_reduce", "processes": PROCESSES, "global_batch": GLOBAL_BATCH},
    ]


def measure(point: dict, threads: int, quick: bool) -> dict:
    steps = 5 if quick else STEPS
    if point["setup"] == "one_process":
        return {"unit": "s", "samples": one_process(threads, steps), "extra": {"threads_per_process": threads}}
    per_process_threads = max(1, threads // point["processes"])
    samples = launch(point["processes"], per_process_threads, steps)[point["setup"]]
    return {"unit": "s", "samples": samples, "extra": {"threads_per_process": per_process_threads}}


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    times = worker(int(sys.argv[2]), int(sys.argv[3]))
    if times is not None:
        print(RESULT + json.dumps(times), flush=True)
elif __name__ == "__main__":
    for point in plan(["cpu"], quick=False):
        result = measure(point, all_threads(), quick=False)
        print(f"{point['setup']:>12}: {sorted(result['samples'])[len(result['samples']) // 2] * 1e3:.2f} ms")
