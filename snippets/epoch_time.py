"""Who finishes an epoch first? Time one pass over a fixed dataset of ROWS rows.

The same MLP as the training-step experiment. Small batches mean many steps, each
paying the fixed costs; large batches mean few, fuller steps. The dataset already
sits on the device, as it would after a one-off copy.

Run it alone:  python snippets/epoch_time.py
"""

from __future__ import annotations

import torch

try:
    from snippets.benchmarking import all_threads, devices, time_repeats
    from snippets.training_step import CLASSES, INPUTS, WIDTHS, make_model, train_step
except ImportError:
    from benchmarking import all_threads, devices, time_repeats
    from training_step import CLASSES, INPUTS, WIDTHS, make_model, train_step

NAME = "epoch_time"
DEVICES = ["cpu", "cuda", "mps"]  # the race: CPU against whichever GPU torch offers
BENCH_VERSION = 1
PARAMS = {"batch": "positive", "width": "positive", "rows": "positive"}
DEPENDS = ["training_step"]
EXTRA_INFO_OPTIONAL = {"steps": "count"}
ROWS = 2048  # small enough that every point gets several timed epochs
BATCHES = [2**k for k in range(10)]  # 1 ... 512, the race's range
QUICK = {"rows": 512, "batches": [1, 16], "widths": [32]}


def make_epoch(batch: int, width: int, device: str, rows: int):
    """A no-argument function that trains one epoch of `rows` rows in batches of `batch`."""
    model, optimiser, loss_fn = make_model(width, device)
    x = torch.randn(rows, INPUTS, device=device)
    y = torch.randint(0, CLASSES, (rows,), device=device)

    def epoch(limit: int = rows):
        for start in range(0, limit, batch):
            train_step(model, optimiser, loss_fn, x[start:start + batch], y[start:start + batch])

    return epoch


def plan(device_list: list[str], quick: bool) -> list[dict]:
    batches = QUICK["batches"] if quick else BATCHES
    widths = QUICK["widths"] if quick else WIDTHS
    rows = QUICK["rows"] if quick else ROWS
    return [{"device": d, "batch": b, "width": w, "rows": rows}
            for d in device_list for w in widths for b in batches]


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Seconds per epoch, timed whole after a short warm-up (the runner repeats it in rounds)."""
    epoch = make_epoch(point["batch"], point["width"], point["device"], point["rows"])
    epoch(limit=3 * point["batch"])  # warm-up: allocator, kernels, caches
    samples = time_repeats(epoch, device=point["device"], threads=threads,
                           repeats=1 if quick else 2)  # per round; the runner pools rounds
    return {"unit": "s", "samples": samples, "extra": {"steps": -(-point["rows"] // point["batch"])}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        seconds = min(measure(point, all_threads(), quick=False)["samples"])
        print(f"{point['device']:>5} width {point['width']:>5} batch {point['batch']:>4}: {seconds:.3f} s")
