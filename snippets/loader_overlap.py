"""Does a data loader overlap with training? Epoch time with real steps, by worker count.

The same CPU-heavy augmentation as the data-loader experiment, now feeding a real
training step for every batch. With num_workers=0 the process alternates: prepare a
batch, train on it, prepare the next. With workers, the next batches are prepared in
other processes while the main process trains, so the epoch can take as little as the
slower of the two instead of their sum, if there are cores to spare for both.

Run it alone:  python snippets/loader_overlap.py
"""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader

try:
    from snippets.benchmarking import all_threads, time_repeats
    from snippets.data_loader import AugmentedImages, _single_thread_worker, worker_counts
except ImportError:
    from benchmarking import all_threads, time_repeats
    from data_loader import AugmentedImages, _single_thread_worker, worker_counts

NAME = "loader_overlap"
BENCH_VERSION = 1
DEPENDS = ["data_loader"]
EXTRA_INFO = {"samples": "count", "batch": "count"}
SAMPLES, QUICK_SAMPLES, BATCH, REPEATS = 1024, 256, 64, 3


def make_epoch(workers: int, samples: int, threads: int):
    """One epoch: every batch the loader yields goes through a full training step (CPU)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 10))
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
    return [{"device": "cpu", "workers": w} for w in ([0, 1] if quick else worker_counts())]


def measure(point: dict, threads: int, quick: bool) -> dict:
    samples = QUICK_SAMPLES if quick else SAMPLES
    epoch = make_epoch(point["workers"], samples, threads)
    torch.set_num_threads(threads)
    epoch()  # warm-up: starts the (persistent) workers, so start-up is not timed
    seconds = time_repeats(epoch, device="cpu", threads=threads, repeats=1 if quick else REPEATS)
    return {"unit": "s", "samples": seconds, "extra": {"samples": samples, "batch": BATCH}}


if __name__ == "__main__":
    for point in plan(["cpu"], quick=False):
        seconds = sorted(measure(point, all_threads(), quick=False)["samples"])
        print(f"workers {point['workers']}: {seconds[len(seconds) // 2]:.3f} s per epoch of {SAMPLES} samples")
