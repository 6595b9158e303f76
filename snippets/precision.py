"""Does 16-bit arithmetic make training faster here? fp32 against bf16 (and fp16 on CUDA).

Three measurements per device and dtype:
- a 2048 x 2048 matrix product in that dtype;
- a mixed-precision training step: torch.autocast runs the matrix products in 16 bit
  while the weights stay fp32; fp16 adds torch.amp.GradScaler, bf16 needs none;
- the bytes autograd saves for the backward pass during that step.
On the CPU, numpy's float64/float32/float16 products are timed too: numpy has no
hardware float16 path and emulates it.

Run it alone:  python snippets/precision.py
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

try:
    from snippets.benchmarking import all_threads, devices, time_it
except ImportError:
    from benchmarking import all_threads, devices, time_it

NAME = "precision"
BENCH_VERSION = 1
# matmuls record flops and n; the training step its batch, width and saved bytes
EXTRA_INFO_OPTIONAL = {"flops": "FLOP", "n": "count", "saved_bytes": "B", "batch": "count", "width": "count"}
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
MATMUL_N, NUMPY_N = 2048, 256
STEP = {"batch": 256, "width": 2048, "inputs": 512, "classes": 10}
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


def _train_step(point: dict, threads: int, quick: bool) -> dict:
    device, dtype = point["device"], DTYPES[point["dtype"]]
    batch, width = (QUICK["batch"], QUICK["width"]) if quick else (STEP["batch"], STEP["width"])
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(STEP["inputs"], width), nn.ReLU(), nn.Linear(width, width),
                          nn.ReLU(), nn.Linear(width, STEP["classes"])).to(device)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler(device, enabled=point["dtype"] == "fp16")
    x = torch.randn(batch, STEP["inputs"], device=device)
    y = torch.randint(0, STEP["classes"], (batch,), device=device)
    step = lambda: mixed_precision_step(model, optimiser, scaler, x, y, device, dtype)  # noqa: E731
    extra = {"saved_bytes": saved_bytes(step), "batch": batch, "width": width}
    samples = time_it(step, threads=threads, min_run_time=0.05 if quick else 0.3)
    return {"unit": "s", "samples": samples, "extra": extra}


def measure(point: dict, threads: int, quick: bool) -> dict:
    if point["op"] == "train_step":
        return _train_step(point, threads, quick)
    if point["op"] == "numpy_matmul":
        n = QUICK["numpy_n"] if quick else NUMPY_N
        a, b = (np.random.default_rng(0).standard_normal((n, n)).astype(point["dtype"].replace("fp", "float"))
                for _ in range(2))
        samples = time_it(lambda: a @ b, threads=threads, min_run_time=0.05 if quick else 0.3, warmup=1)
        return {"unit": "s", "samples": samples, "extra": {"flops": 2 * n**3, "n": n}}
    n = QUICK["matmul_n"] if quick else MATMUL_N
    a, b = (torch.randn(n, n, device=point["device"], dtype=DTYPES[point["dtype"]]) for _ in range(2))
    samples = time_it(lambda: a @ b, threads=threads, min_run_time=0.05 if quick else 0.3, warmup=2)
    return {"unit": "s", "samples": samples, "extra": {"flops": 2 * n**3, "n": n}}


if __name__ == "__main__":
    for point in plan(devices(), quick=False):
        seconds = min(measure(point, all_threads(), quick=False)["samples"])
        print(f"{point['device']:>5} {point['op']:>13} {point['dtype']:>5}: {seconds * 1e3:9.3f} ms")
