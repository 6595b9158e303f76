"""Data parallelism for real: DistributedDataParallel on two CPU processes (gloo).

Each process holds a full copy of the model, trains on its half of the batch, and
the gradients are averaged across processes (an all-reduce) during backward. We
compare one process doing the whole batch with all threads against two processes
doing half each on one thread, and time the all-reduce of one model's gradients alone. The processes are started
with torchrun, exactly as you would start a real multi-process training job.

Run it alone:  python snippets/data_parallel.py
"""

from __future__ import annotations

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
BENCH_VERSION = 1
ROUNDS = 1  # each launch already times 30 steps; starting torchrun costs seconds
DEPENDS = ["training_step"]
EXTRA_INFO_OPTIONAL = {"threads_per_process": "count"}
GLOBAL_BATCH, WIDTH, STEPS, PROCESSES = 256, 1024, 30, 2
RESULT = "crossover-result: "


def worker(task: str, threads: int, steps: int) -> list[float] | None:
    """One process of the run (launched by torchrun, which sets RANK and WORLD_SIZE)."""
    die_with_parent()  # if torchrun is killed, so is this worker
    torch.set_num_threads(threads)
    dist.init_process_group("gloo", timeout=timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        model, optimiser, loss_fn = make_model(WIDTH, "cpu")
        if task == "all_reduce":
            flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
            run = lambda: dist.all_reduce(flat)  # noqa: E731  (what DDP does to gradients)
        else:
            if world > 1:
                model = DistributedDataParallel(model)
            x = torch.randn(GLOBAL_BATCH // world, INPUTS)
            y = torch.randint(0, CLASSES, (GLOBAL_BATCH // world,))
            run = lambda: train_step(model, optimiser, loss_fn, x, y)  # noqa: E731
        for _ in range(3):
            run()
        times = []
        for _ in range(steps):
            dist.barrier()  # start every step together, as in lock-step training
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        dist.barrier()  # nobody tears down gloo while the other still talks to it
        return times if rank == 0 else None
    finally:
        dist.destroy_process_group()


def run(task: str, world: int, threads: int, steps: int) -> list[float]:
    """Launch `world` processes with torchrun, as you would yourself; return rank 0's step times."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc-per-node={world}", __file__,
               "--worker", task, str(threads), str(steps)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONWARNINGS": "ignore"}
    done = run_process_group(command, env=env, timeout=300)
    for line in done.stdout.splitlines():
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT):])
    raise RuntimeError(f"torchrun exited {done.returncode}: {done.stderr.strip()[-500:]}")


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [
        {"device": "cpu", "setup": "one_process", "processes": 1, "global_batch": GLOBAL_BATCH},
        {"device": "cpu", "setup": "ddp", "processes": PROCESSES, "global_batch": GLOBAL_BATCH},
        {"device": "cpu", "setup": "all_reduce", "processes": PROCESSES, "global_batch": GLOBAL_BATCH},
    ]


def measure(point: dict, threads: int, quick: bool) -> dict:
    world = point["processes"]
    task = "all_reduce" if point["setup"] == "all_reduce" else "train"
    per_process_threads = max(1, threads // world)
    samples = run(task, world, per_process_threads, 5 if quick else STEPS)
    return {"unit": "s", "samples": samples, "extra": {"threads_per_process": per_process_threads}}


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    task, threads, steps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    times = worker(task, threads, steps)
    if times is not None:
        print(RESULT + json.dumps(times), flush=True)
elif __name__ == "__main__":
    for point in plan(["cpu"], quick=False):
        result = measure(point, all_threads(), quick=False)
        print(f"{point['setup']:>12}: {sorted(result['samples'])[len(result['samples']) // 2] * 1e3:.2f} ms")
