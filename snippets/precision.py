"""Does 16-bit arithmetic make training faster here? fp32 against bf16 (and fp16 on CUDA).

Three measurements per device and dtype:
- an n x n matrix product in that dtype;
- a mixed-precision training step: torch.autocast runs the matrix products in 16 bit
  while the weights stay fp32; fp16 adds torch.amp.GradScaler, bf16 needs none.
  GradScaler waits for the GPU once per step (it must know whether any gradient
  overflowed before it steps), so every dtype's step here waits once too, by reading
  its loss as a loop that logs it would: the dtypes differ in arithmetic, not in waits;
- the bytes autograd saves for the backward pass during that step.
Sizes adapt to the hardware: a short probe picks the largest n (and step width) whose
slowest dtype still fits a time budget per call. A CPU without native bf16 instructions
may run bf16 products through a generic kernel many times slower than fp32, so a
fixed 2048 x 2048 product could take a minute there and milliseconds on an H200. The
size chosen is recorded with every point; fp32 and 16 bit always share it.
On the CPU, numpy's float64/float32/float16 products are timed too: numpy has no
hardware float16 path and emulates it.

Run it alone:  python snippets/precision.py
"""

from __future__ import annotations

import functools
import time

import numpy as np
import torch
from torch import nn

try:
    from snippets.benchmarking import all_threads, budget, devices, synchronize, time_it
except ImportError:
    from benchmarking import all_threads, budget, devices, synchronize, time_it

NAME = "precision"
BENCH_VERSION = 2
PARAMS = {"op": ["matmul", "train_step", "numpy_matmul"], "dtype": ["fp64", "fp32", "bf16", "fp16"]}
# matmuls record flops and n; the training step its batch, width and saved bytes
EXTRA_INFO_OPTIONAL = {"flops": "FLOP", "n": "count", "saved_bytes": "B", "batch": "count", "width": "count"}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
NUMPY_N = 256
SIDES = [128, 256, 512, 1024, 2048, 4096, 8192]  # matrix sides the probe may choose
WIDTHS = [128, 256, 512, 1024, 2048, 4096]        # step widths the probe may choose
CALL_BUDGET_S = {"matmul": 0.05, "train_step": 0.1}  # the slowest dtype's one call must fit
STEP = {"batch": 256, "inputs": 512, "classes": 10}
QUICK = {"matmul_n": 128, "numpy_n": 64, "batch": 16, "width": 64}


def plan(device_list: list[str], quick: bool) -> list[dict]:
    points = []
    for device in device_list:
        dtypes = ["fp32", "bf16", "fp16"] if device == "cuda" else ["fp32", "bf16"]
        points += [{"device": device, "op": op, "dtype": dt}
                   for op in ("matmul", "train_step") for dt in dtypes]
    points += [{"device": "cpu", "op": "numpy_matmul", "dtype": dt} for dt in ("fp64", "fp32", "fp16")]
    return points


def mixed_precision_step(model, optimiser, scaler, x, y, device: str, dtype):
    """The standard mixed-precision loop body (scaler only matters for fp16)."""
    optimiser.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device, dtype=dtype, enabled=dtype != torch.float32):
        loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()  # scale up so small fp16 gradients do not underflow
    scaler.step(optimiser)         # unscales first; skips the step if any gradient is inf/nan
    scaler.update()
    return loss.item()             # one wait per step for every dtype (fp16's scaler waits anyway)


def saved_bytes(fn) -> int:
    """Bytes of the tensors autograd saves for backward while `fn` runs."""
    total = 0

    def pack(tensor):
        nonlocal total
        total += tensor.numel() * tensor.element_size()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return total


def make_step(device: str, dtype_name: str, batch: int, width: int):
    """A no-argument mixed-precision training step of a 512 -> width -> width -> 10 MLP."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(STEP["inputs"], width), nn.ReLU(), nn.Linear(width, width),
                          nn.ReLU(), nn.Linear(width, STEP["classes"])).to(device)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler(device, enabled=dtype_name == "fp16")
    x = torch.randn(batch, STEP["inputs"], device=device)
    y = torch.randint(0, STEP["classes"], (batch,), device=device)
    return lambda: mixed_precision_step(model, optimiser, scaler, x, y, device, DTYPES[dtype_name])


def make_matmul(device: str, dtype_name: str, n: int):
    a, b = (torch.randn(n, n, device=device, dtype=DTYPES[dtype_name]) for _ in range(2))
    return lambda: a @ b


def _seconds_per_call(fn, device: str, calls: int = 2) -> float:
    fn()  # warm-up
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    synchronize(device)
    return (time.perf_counter() - start) / calls


@functools.cache
def fitted_size(op: str, device: str, threads: int) -> int:
    """The largest candidate size whose slowest dtype takes at most CALL_BUDGET_S[op] per call.

    Sizes are tried from small to large and the probe stops before one that would
    overshoot (a matmul's cost grows 8x per doubling of n, a step's about 4x per width),
    so the probe itself stays within a few budgets. Cached: every round uses one size.
    """
    torch.set_num_threads(threads)
    dtypes = ["fp32", "bf16", "fp16"] if device == "cuda" else ["fp32", "bf16"]
    candidates, growth = (SIDES, 8) if op == "matmul" else (WIDTHS, 4)
    make = ((lambda dt, size: make_matmul(device, dt, size)) if op == "matmul"
            else (lambda dt, size: make_step(device, dt, STEP["batch"], size)))
    chosen = candidates[0]
    for size in candidates:
        slowest = max(_seconds_per_call(make(dt, size), device) for dt in dtypes)
        if slowest > CALL_BUDGET_S[op]:
            break
        chosen = size
        if slowest * growth > CALL_BUDGET_S[op]:
            break
    return chosen


def _train_step(point: dict, threads: int, quick: bool) -> dict:
    device = point["device"]
    batch, width = ((QUICK["batch"], QUICK["width"]) if quick
                    else (STEP["batch"], fitted_size("train_step", device, threads)))
    step = make_step(device, point["dtype"], batch, width)
    extra = {"saved_bytes": saved_bytes(step), "batch": batch, "width": width}
    samples = time_it(step, threads=threads, device=point["device"], min_run_time=budget(quick))
    return {"unit": "s", "samples": samples, "extra": extra}


def measure(point: dict, threads: int, quick: bool) -> dict:
    if point["op"] == "train_step":
        return _train_step(point, threads, quick)
    if point["op"] == "numpy_matmul":
        n = QUICK["numpy_n"] if quick else NUMPY_N
        a, b = (np.random.default_rng(0).standard_normal((n, n)).astype(point["dtype"].replace("fp", "float"))
                for _ in range(2))
        samples = time_it(lambda: a @ b, threads=threads, device=point["device"], min_run_time=budget(quick), warmup=1)
        return {"unit": "s", "samples": samples, "extra": {"flops": 2 * n**3, "n": n}}
    n = QUICK["matmul_n"] if quick else fitted_size("matmul", point["device"], threads)
    product = make_matmul(point["device"], point["dtype"], n)
    samples = time_it(product, threads=threads, device=point["device"], min_run_time=budget(quick), warmup=2)
    return {"unit": "s", "samples": samples, "extra": {"flops": 2 * n**3, "n": n}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        seconds = min(measure(point, all_threads(), quick=False)["samples"])
        print(f"{point['device']:>5} {point['op']:>13} {point['dtype']:>5}: {seconds * 1e3:9.3f} ms")
