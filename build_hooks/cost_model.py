"""A transparent cost model of one training step, calibrated from a machine's own results.

    t_step = ops x t_op  +  FLOPs / R(n)  +  bytes / BW

- ops, FLOPs and bytes are exact, device-independent counts of the step (dispatch
  counting and FlopCounterMode, recorded by the training_step experiment);
- t_op is the measured cost of one tiny operation (call_overhead);
- R(n) is the measured matmul rate at the step's equivalent square size
  n = (B x 512 x H)^(1/3), interpolated on a log scale (gemm_rate);
- BW is the measured streaming bandwidth (memory_bandwidth).

Two variants are judged against the measured step times: "raw", where t_op is the
tiny-operation cost, and "calibrated", where t_op is fitted to the machine's smallest
measured step (the one point where overhead is nearly everything), which is then left
out of the error. For a device with no measurements, published datasheet figures
stand in and every use says "estimate".
"""

from __future__ import annotations

import bisect
import math
import statistics
from dataclasses import dataclass, replace

from build_hooks import analysis, experiments
from build_hooks.dataset import Machine

INPUTS = experiments.declared("training_step")["INPUTS"]  # the model's input width


@dataclass(frozen=True)
class DeviceParams:
    name: str
    op_seconds: float
    gemm_rates: dict[int, float]  # FLOP/s by square side
    bandwidth: float  # bytes/s
    source: str

    def rate(self, side: float) -> float:
        """Matmul FLOP/s at an equivalent square side, log-interpolated, clamped at the ends."""
        sides = sorted(self.gemm_rates)
        if side <= sides[0]:
            return self.gemm_rates[sides[0]]
        if side >= sides[-1]:
            return self.gemm_rates[sides[-1]]
        i = bisect.bisect_left(sides, side)
        lo, hi = sides[i - 1], sides[i]
        w = (math.log(side) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return math.exp((1 - w) * math.log(self.gemm_rates[lo]) + w * math.log(self.gemm_rates[hi]))


# Published figures for a device nobody has measured here (NVIDIA H200 SXM datasheet:
# 67 TFLOP/s FP32 without tensor cores, since fp32 matmul precision is "highest";
# 4.8 TB/s HBM3e). The per-operation cost is a typical PyTorch eager figure for a
# kernel launch plus dispatch (a few microseconds), not a datasheet value.
PUBLISHED_H200 = DeviceParams(
    name="NVIDIA H200 SXM",
    op_seconds=5e-6,
    gemm_rates={64: 67e12, 8192: 67e12},
    bandwidth=4.8e12,
    source="NVIDIA H200 SXM datasheet (FP32 67 TFLOP/s, HBM3e 4.8 TB/s); ~5 µs per op, typical PyTorch eager",
)


def measured_params(machine: Machine, device: str) -> DeviceParams | None:
    """The model's parameters from one machine's own measurements, if it has them all."""
    overhead = analysis.tiny_op_seconds(machine, device)
    rates = analysis.gemm_rates(machine, device)
    copies = machine.measured("memory_bandwidth", device=device)
    if overhead is None or not rates or not copies:
        return None
    bandwidth = copies[0]["extra_info"]["bytes"] / copies[0]["stats"]["median"]
    return DeviceParams(machine.device_label(device), overhead, rates, bandwidth,
                        f"measured on {machine.label}")


def equivalent_side(batch: int, width: int) -> float:
    return (batch * INPUTS * width) ** (1 / 3)


def predict(params: DeviceParams, work: dict, batch: int, width: int) -> dict:
    """Predicted step time and its three terms, in seconds."""
    terms = {
        "overhead": work["ops"] * params.op_seconds,
        "compute": work["flops"] / params.rate(equivalent_side(batch, width)),
        "memory": work["bytes"] / params.bandwidth,
    }
    return {"seconds": sum(terms.values()), **terms}


def step_work(machine: Machine, device: str = "cpu") -> dict[tuple[int, int], dict]:
    """{(batch, width): counts} of one device's training steps.

    Counts differ between devices (CUDA's optimiser runs fused "foreach" kernels), so a
    CPU model must use the CPU's counts even on a machine that also measured a GPU.
    """
    work = {}
    for b in machine.benchmarks("training_step", device=device):
        extra = b["extra_info"]
        if {"flops", "ops", "bytes"} <= extra.keys():
            work[(b["params"]["batch"], b["params"]["width"])] = extra
    return work


def calibrated_params(machine: Machine, device: str) -> tuple[DeviceParams, tuple[int, int]] | None:
    """Measured parameters with t_op fitted to the smallest measured step; also that step's (batch, width)."""
    params, work = measured_params(machine, device), step_work(machine, device)
    curves = {w: {p.batch: p.seconds for p in analysis.step_curve(machine, device, w)} for w in analysis.widths(machine)}
    candidates = [(b, w) for w, curve in curves.items() for b in curve if (b, w) in work]
    if params is None or not candidates:
        return None
    batch, width = min(candidates)
    counts = work[(batch, width)]
    rest = (curves[width][batch] - counts["flops"] / params.rate(equivalent_side(batch, width))
            - counts["bytes"] / params.bandwidth)
    if rest <= 0:
        return None
    fitted = replace(params, op_seconds=rest / counts["ops"],
                     source=f"{params.source}; t_op fitted to the batch-{batch}, width-{width} step")
    return fitted, (batch, width)


@dataclass(frozen=True)
class Validation:
    points: list[tuple[int, int, float, float]]  # batch, width, measured, predicted
    params: DeviceParams

    def errors(self) -> list[float]:
        return [abs(p - m) / m for _, _, m, p in self.points]

    @property
    def median_error(self) -> float:
        return statistics.median(self.errors())

    @property
    def worst(self) -> tuple[int, int, float]:
        error, (batch, width, _, _) = max(zip(self.errors(), self.points), key=lambda pair: pair[0])
        return batch, width, error


def validate(machine: Machine, device: str, calibrated: bool = False) -> Validation | None:
    """Predicted against measured step time for every training-step point of one device.

    With `calibrated`, t_op comes from the smallest step, which is excluded from the points.
    """
    excluded = None
    if calibrated:
        fit = calibrated_params(machine, device)
        if fit is None:
            return None
        params, excluded = fit
    else:
        params = measured_params(machine, device)
    work = step_work(machine, device)
    if params is None or not work:
        return None
    points = []
    for width in analysis.widths(machine):
        for point in analysis.step_curve(machine, device, width):
            if (point.batch, width) in work and (point.batch, width) != excluded:
                predicted = predict(params, work[(point.batch, width)], point.batch, width)["seconds"]
                points.append((point.batch, width, point.seconds, predicted))
    return Validation(points, params) if points else None
