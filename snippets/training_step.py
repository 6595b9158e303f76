"""How long does one training step of a small MLP take, as the batch grows?

The model: 512 inputs -> hidden layer of width H (ReLU) -> 10 classes, trained with
plain SGD. One step is everything a training loop does per batch: zero the
gradients, forward, loss, backward, optimiser step. The batch already sits on the
device the step runs on; moving it there is a separate cost, timed separately.

Run it alone:  python snippets/training_step.py
"""

from __future__ import annotations

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import FlopCounterMode

try:  # imported as part of the project
    from snippets.benchmarking import all_threads, budget, devices, time_it
except ImportError:  # run as a script: python snippets/training_step.py
    from benchmarking import all_threads, budget, devices, time_it

NAME = "training_step"
DEVICES = ["cpu", "cuda", "mps"]  # what the race and the crossover need, on every device torch offers
BENCH_VERSION = 5  # bump whenever what or how this measures changes (5: kernels counted)
PARAMS = {"batch": "positive", "width": "positive"}
EXTRA_INFO = {"flops": "FLOP"}  # per step, counted exactly
# For the cost model and the GPU estimate: "cuda_ops" and "kernels" are what the same step issues on
# CUDA (its optimiser's default "foreach" update) and how many of those launch a kernel (no views).
EXTRA_INFO_OPTIONAL = {"ops": "count", "bytes": "B", "footprint": "B", "cuda_ops": "count", "kernels": "count"}
INPUTS, CLASSES = 512, 10
BATCHES = [2**k for k in range(11)]  # 1, 2, 4, ... 1024
WIDTHS = [8, 32, 512, 2048]
QUICK = {"batches": [1, 16], "widths": [32]}


def make_model(width: int, device: str, foreach: bool | None = None):
    """The MLP, its optimiser and loss, on `device` (foreach: the optimiser's update as one call over
    every parameter, CUDA's default, rather than one call per parameter, the CPU's)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(INPUTS, width), nn.ReLU(), nn.Linear(width, CLASSES))
    model.to(device)
    return model, torch.optim.SGD(model.parameters(), lr=0.01, foreach=foreach), nn.CrossEntropyLoss()


def train_step(model, optimiser, loss_fn, x, y):
    """One complete training step: what a training loop does for every batch."""
    optimiser.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    optimiser.step()
    return loss


def make_step(batch: int, width: int, device: str, foreach: bool | None = None):
    """A no-argument training step with its batch already on `device`."""
    model, optimiser, loss_fn = make_model(width, device, foreach)
    x = torch.randn(batch, INPUTS, device=device)
    y = torch.randint(0, CLASSES, (batch,), device=device)
    return lambda: train_step(model, optimiser, loss_fn, x, y)


def plan(device_list: list[str], quick: bool) -> list[dict]:
    """Every point this experiment measures, as parameter dicts."""
    batches = QUICK["batches"] if quick else BATCHES
    widths = QUICK["widths"] if quick else WIDTHS
    return [{"device": d, "batch": b, "width": w}
            for d in device_list for w in widths for b in batches]


def measure(point: dict, threads: int, quick: bool) -> dict:
    """Time one point: seconds per training step, plus what the step does (exact counts)."""
    step = make_step(point["batch"], point["width"], point["device"])
    counts = {**count_work(step), **cuda_work(lambda: make_step(point["batch"], point["width"], "cpu", foreach=True))}
    samples = time_it(step, threads=threads, min_run_time=budget(quick), device=point["device"])
    return {"unit": "s", "samples": samples, "extra": counts}


NO_KERNEL = {"aten::empty", "aten::empty_strided", "aten::empty_like"}  # allocation only: nothing runs


class OpCounter(TorchDispatchMode):
    """Counts the operations a step dispatches, those that launch a kernel on a GPU (not views such
    as t, view and detach, not allocation, not the profiler's markers), the tensor bytes they
    touch, and its footprint: the distinct memory those tensors occupy (what has to fit in a cache)."""

    def __init__(self):
        super().__init__()
        self.ops, self.kernels, self.bytes = 0, 0, 0
        self.storages: dict[int, int] = {}  # storage address -> its size in bytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.ops += 1
        self.kernels += not (func.is_view or func.namespace == "profiler" or func.name() in NO_KERNEL)
        tensors = [t for t in tree_flatten((args, kwargs, out))[0] if isinstance(t, torch.Tensor)]
        self.bytes += sum(t.numel() * t.element_size() for t in tensors)
        for t in tensors:  # memory reused by the allocator counts once, as a cache sees it
            storage = t.untyped_storage()
            self.storages[storage.data_ptr()] = max(storage.nbytes(), self.storages.get(storage.data_ptr(), 0))
        return out

    @property
    def footprint(self) -> int:
        return sum(self.storages.values())


def count_work(step) -> dict:
    """FLOPs (PyTorch's own count, forward and backward), operations, bytes and footprint of one step.

    Not simply 3x the forward FLOPs: the input batch needs no gradient, so the first
    layer's backward computes only its weight gradient.
    """
    with FlopCounterMode(display=False) as flops, OpCounter() as ops:
        step()
    return {"flops": flops.get_total_flops(), "ops": ops.ops, "bytes": ops.bytes, "footprint": ops.footprint,
            "kernels": ops.kernels}


def cuda_work(make) -> dict:
    """What a step issues on CUDA, counted on the CPU: its operations and kernels with the optimiser's
    foreach update (one call for every parameter), which CUDA uses by default and a CPU does not.
    `make` builds that step; its first call is counted after one warm-up (an optimiser's state)."""
    step = make()
    step()
    counts = count_work(step)
    return {"cuda_ops": counts["ops"], "kernels": counts["kernels"]}


if __name__ == "__main__":
    threads = all_threads()
    print(f"{'device':>6} {'width':>6} {'batch':>6} {'step (ms)':>10} {'samples/s':>11}")
    for point in plan(devices(), quick=False):
        samples = measure(point, threads, quick=False)["samples"]
        median = sorted(samples)[len(samples) // 2]
        print(f"{point['device']:>6} {point['width']:>6} {point['batch']:>6} "
              f"{median * 1e3:>10.3f} {point['batch'] / median:>11.0f}")
