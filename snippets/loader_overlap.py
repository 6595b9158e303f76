"""Does a data loader overlap with training? Epoch time with real steps, by worker count.

The same CPU-heavy augmentation as the data-loader experiment, now feeding a real
training step for every batch. With num_workers=0 the process alternates: prepare a
batch, train on it, prepare the next. With workers, the next batches are prepared in
other processes while the main process trains, so the epoch can take as little as the
slower of the two instead of their sum, if there are cores for both. So training keeps
one core free here (all cores but one, at least one), at every worker count, which is
what a GPU machine does naturally: there the GPU trains and the cores prepare data.

Run it alone:  python snippets/loader_overlap.py
"""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader

try:
    from snippets.benchmarking import all_threads, time_repeats
    from snippets.data_loader import AugmentedImages, _single_thread_worker
except ImportError:
    from benchmarking import all_threads, time_repeats
    from data_loader import AugmentedImages, _single_thread_worker

NAME = "loader_overlap"
BENCH_VERSION = 2
GPU_SLOT = False  # no GPU points: the build host measures it, not a GPU machine's slot
PARAMS = {"workers": "count"}
DEPENDS = ["data_loader"]
ROUNDS = 5  # an effect near the noise of a drifting VM: more rounds, so one odd round cannot decide
EXTRA_INFO = {"samples": "count", "batch": "count", "training_threads": "count"}
SAMPLES, QUICK_SAMPLES, BATCH, REPEATS, HIDDEN = 1024, 256, 64, 2, 2048


def training_threads(threads: int) -> int:
    """Every thread but one for the training step, so a worker has a core of its own."""
    return max(1, threads - 1)


def make_epoch(workers: int, samples: int, threads: int):
    """One epoch: every batch the loader yields goes through a full training step (CPU)."""
    torch.manual_seed(0)
    # Sized so a training step takes about as long as preparing its batch: overlap can then
    # hide nearly half of an epoch, and a machine that cannot overlap shows it plainly.
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN),
                          nn.ReLU(), nn.Linear(HIDDEN, 10))
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(AugmentedImages(samples), batch_size=BATCH, num_workers=workers,
                        worker_init_fn=_single_thread_worker, persistent_workers=workers > 0)

    def epoch():
        for images, labels in loader:
            optimiser.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(model(images), labels).backward()
            optimiser.step()

    return epoch


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [{"device": "cpu", "workers": w} for w in [0, 1]]


def measure(point: dict, threads: int, quick: bool) -> dict:
    samples, train_threads = QUICK_SAMPLES if quick else SAMPLES, training_threads(threads)
    epoch = make_epoch(point["workers"], samples, train_threads)
    torch.set_num_threads(train_threads)
    epoch()  # warm-up: starts the (persistent) workers, so start-up is not timed
    seconds = time_repeats(epoch, device="cpu", threads=train_threads, repeats=1 if quick else REPEATS)
    return {"unit": "s", "samples": seconds,
            "extra": {"samples": samples, "batch": BATCH, "training_threads": train_threads}}


if __name__ == "__main__":
    for point in plan(["cpu"], quick=False):
        seconds = sorted(measure(point, all_threads(), quick=False)["samples"])
        print(f"workers {point['workers']}: {seconds[len(seconds) // 2]:.3f} s per epoch of {SAMPLES} samples")
