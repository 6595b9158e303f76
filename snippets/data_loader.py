"""Can the data loader keep up? Samples per second versus DataLoader worker processes.

Each sample goes through a deliberately CPU-heavy augmentation (random crop, flip,
blur, normalise) written in numpy, as image pipelines are. With num_workers=0 the
training process does it all itself; each worker process adds a core's worth of
preparation. Worker start-up is excluded: an untimed pass starts the (persistent)
workers, then a whole second pass is timed, its first batch included. Timing from the
first batch instead would let many workers prepare batches before the clock starts,
and flatter them.

Run it alone:  python snippets/data_loader.py
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

try:
    from snippets.benchmarking import devices, usable_cores
except ImportError:
    from benchmarking import devices, usable_cores

NAME = "data_loader"
BENCH_VERSION = 3  # 2: batches copied to the GPU on CUDA machines; 3: a whole warm pass timed
PARAMS = {"workers": "count", "pin_memory": "flag"}
EXTRA_INFO_OPTIONAL = {"per": "text", "batch": "count"}
SAMPLES, BATCH = 1536, 64
ROUNDS = 9  # one pass per round, rounds paired: a 2-core VM drifts more than the effects here
QUICK_SAMPLES = 256
HOST_BOUND = True  # on a CUDA machine the pass is the host's augmenting: forecast as its CPU points


class AugmentedImages(Dataset):
    """Synthetic 3 x 40 x 40 images, cropped to 32 x 32 and blurred on every access."""

    def __init__(self, count: int):
        self.images = np.random.default_rng(0).integers(0, 256, (count, 40, 40, 3), dtype=np.uint8)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int):
        rng = np.random.default_rng(index)
        top, left = rng.integers(0, 9, size=2)
        image = self.images[index, top:top + 32, left:left + 32].astype(np.float32) / 255
        if rng.random() < 0.5:
            image = image[:, ::-1]
        for _ in range(4):  # a 3x3 box blur, four times: the "expensive" part
            padded = np.pad(image, ((1, 1), (1, 1), (0, 0)), mode="edge")
            image = sum(padded[i:i + 32, j:j + 32] for i in range(3) for j in range(3)) / 9
        image = (image - 0.5) / 0.25
        return torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1))), index % 10


def _single_thread_worker(_):
    torch.set_num_threads(1)  # workers share the cores; one thread each


def worker_counts() -> list[int]:
    """0, 1, 2 and every usable core (affinity, capped by a container's CPU quota)."""
    return sorted({0, 1, 2, usable_cores()})


def plan(device_list: list[str], quick: bool) -> list[dict]:
    """On a CUDA machine every batch travels on to the GPU, from pageable or pinned memory."""
    workers = [0, 1] if quick else worker_counts()
    if "cuda" in device_list:
        return [{"device": "cuda", "workers": w, "pin_memory": p} for p in (False, True) for w in workers]
    return [{"device": "cpu", "workers": w, "pin_memory": False} for w in workers]


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Seconds per sample for one whole pass, after an untimed pass has started the workers."""
    dataset = AugmentedImages(QUICK_SAMPLES if quick else SAMPLES)
    loader = DataLoader(dataset, batch_size=BATCH, num_workers=point["workers"],
                        pin_memory=point["pin_memory"], worker_init_fn=_single_thread_worker,
                        persistent_workers=point["workers"] > 0)  # no worker shutdown inside the timed pass
    # One timed pass per round: more, shorter rounds pair better than fewer, longer ones.
    for _ in loader:  # untimed: starts the persistent workers (and warms the main process alike)
        pass
    start, count = time.perf_counter(), 0
    for images, _labels in loader:  # the workers prefetch only once this pass begins, inside the clock
        if point["device"] == "cuda":  # where pinned memory pays: an asynchronous copy
            images.to("cuda", non_blocking=point["pin_memory"])
        count += len(images)
    if point["device"] == "cuda":
        torch.cuda.synchronize()
    return {"unit": "s", "samples": [(time.perf_counter() - start) / count],
            "extra": {"per": "sample", "batch": BATCH}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        seconds = min(measure(point, 1, quick=False)["samples"])
        print(f"workers={point['workers']} pin_memory={point['pin_memory']}: {1 / seconds:8.0f} samples/s")
