"""How wide is a CPU? The same training step on one thread and on all of them.

torch.utils.benchmark.Timer defaults to one thread; PyTorch itself uses every core.
This is the difference, and why every other experiment passes the thread count
explicitly.

Run it alone:  python snippets/threads.py
"""

from __future__ import annotations

try:
    from snippets.benchmarking import all_threads, budget, time_it
    from snippets.training_step import make_step
except ImportError:
    from benchmarking import all_threads, budget, time_it
    from training_step import make_step

NAME = "threads"
BENCH_VERSION = 2
GPU_SLOT = False  # no GPU points: the build host measures it, not a GPU machine's slot
PARAMS = {"threads": "positive", "batch": "positive", "width": "positive"}
DEPENDS = ["training_step"]
ROUNDS = 5  # cheap, and its effects sit near a drifting VM's noise: one odd round must not decide
BATCHES, WIDTH = [1, 16, 256], 512


def plan(device_list: list[str], quick: bool) -> list[dict]:
    counts = sorted({1, all_threads()})
    return [{"device": "cpu", "threads": t, "batch": b, "width": WIDTH}
            for b in ([16] if quick else BATCHES) for t in counts]


def measure(point: dict, threads: int, quick: bool) -> dict:
    step = make_step(point["batch"], point["width"], "cpu")
    samples = time_it(step, threads=point["threads"], device="cpu", min_run_time=budget(quick))
    return {"unit": "s", "samples": samples}


if __name__ == "__main__":
    for point in plan(["cpu"], quick=False):
        seconds = min(measure(point, point["threads"], quick=False)["samples"])
        print(f"batch {point['batch']:>4} threads {point['threads']:>3}: {seconds * 1e3:.3f} ms")
