"""What does reading the loss every step cost? `.item()` inside the training loop.

`loss.item()` copies one number to the host, so the host must wait until the device
has finished everything queued before it. On a GPU that stall removes the overlap
between Python queuing the next step and the device running this one. The
alternative keeps a running total on the device and reads it rarely.

Run it alone:  python snippets/sync_cost.py
"""

from __future__ import annotations

import torch

try:
    from snippets.benchmarking import all_threads, budget, devices, time_it
    from snippets.training_step import CLASSES, INPUTS, make_model, train_step
except ImportError:
    from benchmarking import all_threads, budget, devices, time_it
    from training_step import CLASSES, INPUTS, make_model, train_step

NAME = "sync_cost"
BENCH_VERSION = 1
PARAMS = {"read_loss": ["every_step", "on_device"]}
DEPENDS = ["training_step"]
EXTRA_INFO_OPTIONAL = {"steps": "count"}
STEPS, BATCH, WIDTH = 50, 64, 512


def plan(device_list: list[str], quick: bool) -> list[dict]:
    return [{"device": d, "read_loss": mode} for d in device_list for mode in ("every_step", "on_device")]


def make_loop(device: str, read_every_step: bool, steps: int):
    model, optimiser, loss_fn = make_model(WIDTH, device)
    x = torch.randn(BATCH, INPUTS, device=device)
    y = torch.randint(0, CLASSES, (BATCH,), device=device)

    def loop():
        total = torch.zeros((), device=device)
        for _ in range(steps):
            loss = train_step(model, optimiser, loss_fn, x, y)
            if read_every_step:
                total += loss.item()       # forces a device -> host copy and a wait
            else:
                total += loss.detach()     # stays on the device; read once at the end
        return float(total)

    return loop


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Seconds per training step within a loop of STEPS steps."""
    steps = 5 if quick else STEPS
    loop = make_loop(point["device"], point["read_loss"] == "every_step", steps)
    samples = time_it(loop, threads=threads, device=point["device"], min_run_time=budget(quick), warmup=1)
    return {"unit": "s", "samples": [s / steps for s in samples], "extra": {"steps": steps}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        seconds = min(measure(point, all_threads(), quick=False)["samples"])
        print(f"{point['device']:>5} {point['read_loss']:>10}: {seconds * 1e6:8.1f} µs per step")
