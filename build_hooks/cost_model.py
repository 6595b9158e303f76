"""A transparent cost model of one training step, calibrated from a machine's own results.

    t_step = ops x t_op  +  c x FLOPs / R(n)  +  m x bytes / BW(footprint)

- ops, FLOPs, bytes and footprint are exact counts of the step on that device (dispatch
  counting and FlopCounterMode, recorded by the training_step experiment); the
  footprint is the distinct memory the step's tensors occupy;
- R(n) is the measured matmul rate at the step's equivalent square size
  n = (B x 512 x H)^(1/3), interpolated on a log scale (gemm_rate);
- BW(footprint) is the measured copy bandwidth for that much memory (memory_bandwidth
  sweeps copy sizes): cache speed while a step's memory fits in a cache, main-memory
  speed beyond;
- raw: t_op is the measured cost of one tiny operation (call_overhead), c = m = 1:
  nothing fitted;
- fitted: t_op, c and m are fitted (non-negative least squares on relative error)
  to the steps at batches 1, 4, 16, ... and judged only on 2, 8, 32, ..., which the fit
  never saw.

A GPU nobody measured is estimated by build_hooks/gpu_estimate.py instead: a GPU overlaps
the host's issuing with its own work, which this additive CPU model does not describe.
"""

from __future__ import annotations

import bisect
import math
import statistics
from dataclasses import dataclass, replace

from build_hooks import analysis, consistency, experiments, stats
from build_hooks.dataset import Machine

INPUTS = experiments.declared("training_step")["INPUTS"]  # the model's input width


@dataclass(frozen=True)
class DeviceParams:
    name: str
    op_seconds: float
    gemm_rates: dict[int, float]  # FLOP/s by square side
    bandwidths: dict[int, float]  # bytes/s by footprint (bytes a copy occupies: source + destination)
    source: str

    def rate(self, side: float) -> float:
        """Matmul FLOP/s at an equivalent square side."""
        return log_interpolate(self.gemm_rates, side)

    def bandwidth_at(self, footprint: float) -> float:
        """Bytes/s for work whose memory occupies `footprint` bytes."""
        return log_interpolate(self.bandwidths, footprint)

    @property
    def bandwidth(self) -> float:
        """The streaming bandwidth: the largest copy's, from main memory."""
        return self.bandwidths[max(self.bandwidths)]


def log_interpolate(curve: dict[int, float], x: float) -> float:
    """curve(x) interpolated on log-log axes, clamped at both ends."""
    xs = sorted(curve)
    if x <= xs[0]:
        return curve[xs[0]]
    if x >= xs[-1]:
        return curve[xs[-1]]
    i = bisect.bisect_left(xs, x)
    lo, hi = xs[i - 1], xs[i]
    w = (math.log(x) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return math.exp((1 - w) * math.log(curve[lo]) + w * math.log(curve[hi]))


def measured_params(machine: Machine, device: str) -> DeviceParams | None:
    """The model's parameters from one machine's own measurements, if it has them all."""
    overhead = analysis.tiny_op_seconds(machine, device)
    rates = analysis.gemm_rates(machine, device)
    bandwidths = analysis.copy_bandwidths(machine, device)
    if overhead is None or not rates or not bandwidths:
        return None
    return DeviceParams(machine.device_label(device), overhead, rates, bandwidths,
                        f"measured on {machine.label}")


def equivalent_side(batch: int, width: int) -> float:
    return (batch * INPUTS * width) ** (1 / 3)


def predict(params: DeviceParams, work: dict, batch: int, width: int) -> dict:
    """Predicted step time and its three terms, in seconds."""
    terms = {
        "overhead": work["ops"] * params.op_seconds,
        "compute": work["flops"] / params.rate(equivalent_side(batch, width)),
        "memory": work["bytes"] / params.bandwidth_at(footprint(work)),
    }
    return {"seconds": sum(terms.values()), **terms}


def footprint(work: dict) -> float:
    """The memory a step occupies; results without the count are charged main-memory speed."""
    return work.get("footprint", math.inf)


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


@dataclass(frozen=True)
class Fitted:
    """The model with three numbers fitted to one machine's own steps.

    t_op (seconds per operation: dispatch plus autograd and optimiser bookkeeping), a
    factor on the compute term (a step's products are not the square products gemm_rate
    times) and a factor on the memory term (a step's elementwise kernels are not a
    copy). Fitted by non-negative least squares on relative error.
    """

    params: DeviceParams   # measured R(n) and BW(footprint); op_seconds is the fitted t_op
    compute_factor: float
    memory_factor: float
    trained_on: tuple[tuple[int, int], ...]

    def terms(self, work: dict, batch: int, width: int) -> dict[str, float]:
        """The three fitted terms of a step, in seconds."""
        raw = predict(self.params, work, batch, width)
        return {"overhead": raw["overhead"], "compute": self.compute_factor * raw["compute"],
                "memory": self.memory_factor * raw["memory"]}

    def predict(self, work: dict, batch: int, width: int) -> float:
        return sum(self.terms(work, batch, width).values())

    def regime(self, work: dict, batch: int, width: int) -> str:
        """What bounds the step: the largest term ("overhead", "compute" or "memory")."""
        terms = self.terms(work, batch, width)
        return max(terms, key=terms.get)

    def close_call(self, work: dict, batch: int, width: int) -> bool:
        """Whether a second term comes within NEAR_TIE of the largest: the model is not exact enough to name one."""
        largest, second = sorted(self.terms(work, batch, width).values(), reverse=True)[:2]
        return second * NEAR_TIE >= largest


NEAR_TIE = 1.25  # terms within this ratio of the largest are a tie: the one place the rule lives


def held_out(batch: int) -> bool:
    """Batches 2, 8, 32, ... judge the fit; 1, 4, 16, ... train it."""
    return batch.bit_length() % 2 == 0


def fit(machine: Machine, device: str) -> Fitted | None:
    """Fit t_op, the compute factor and the memory factor on the training batches only."""
    params, work = measured_params(machine, device), step_work(machine, device)
    if params is None:
        return None
    rows, train = [], []
    contradicted = consistency.disagreeing(machine, device)  # timed in another state of the machine
    for width in analysis.widths(machine):
        for point in analysis.step_curve(machine, device, width):
            counts = work.get((point.batch, width))
            if counts is None or held_out(point.batch) or (point.batch, width) in contradicted:
                continue
            terms = predict(params, counts, point.batch, width)
            rows.append([counts["ops"] / point.seconds, terms["compute"] / point.seconds,
                         terms["memory"] / point.seconds])
            train.append((point.batch, width))
    if len(rows) < 3:
        return None
    coefficients = _non_negative_least_squares(rows, [1.0] * len(rows))
    if coefficients[0] <= 0:
        return None
    return Fitted(replace(params, op_seconds=coefficients[0],
                          source=f"{params.source}; fitted on {len(train)} steps"),
                  coefficients[1], coefficients[2], tuple(train))


def model(machine: Machine, device: str) -> Fitted | None:
    """The fitted model where there are enough steps to fit it, else the raw one (factors 1)."""
    fitted = fit(machine, device)
    if fitted is not None:
        return fitted
    params = measured_params(machine, device)
    return Fitted(params, 1.0, 1.0, ()) if params is not None else None


def _non_negative_least_squares(rows: list[list[float]], target: list[float]) -> list[float]:
    """min |A x - b| with x >= 0, by trying every subset of free coefficients (three at most)."""
    import itertools

    import numpy as np

    a, b = np.array(rows), np.array(target)
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    a = a / scale  # columns differ by orders of magnitude (ops, seconds, bytes)
    best, best_residual = [0.0] * a.shape[1], float(np.sum(b**2))
    for size in range(1, a.shape[1] + 1):
        for subset in itertools.combinations(range(a.shape[1]), size):
            x, *_ = np.linalg.lstsq(a[:, subset], b, rcond=None)
            if (x < 0).any():
                continue
            residual = float(np.sum((a[:, subset] @ x - b) ** 2))
            if residual < best_residual - 1e-15:
                best_residual, best = residual, [0.0] * a.shape[1]
                for index, value in zip(subset, x):
                    best[index] = float(value / scale[index])
    return best


@dataclass(frozen=True)
class Validation:
    points: list[tuple[int, int, float, float]]  # batch, width, measured, predicted
    params: DeviceParams
    fitted: Fitted | None = None

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
    """Predicted against measured step times of one device.

    Raw (nothing fitted): every point. Calibrated: the model fitted on the training batches, judged only on the
    held-out ones it never saw, and never on a step another experiment contradicts (timed in another state of
    the machine): that would grade the model against a machine other than the one it was fitted to.
    """
    work = step_work(machine, device)
    fitted = fit(machine, device) if calibrated else None
    params = fitted.params if fitted else measured_params(machine, device)
    if params is None or not work or (calibrated and fitted is None):
        return None
    contradicted = consistency.disagreeing(machine, device) if calibrated else set()
    points = []
    for width in analysis.widths(machine):
        for point in analysis.step_curve(machine, device, width):
            counts = work.get((point.batch, width))
            if counts is None or (calibrated and not held_out(point.batch)) or (point.batch, width) in contradicted:
                continue
            predicted = (fitted.predict(counts, point.batch, width) if fitted
                         else predict(params, counts, point.batch, width)["seconds"])
            points.append((point.batch, width, point.seconds, predicted))
    return Validation(points, params, fitted) if points else None


def every_step(machine: Machine, device: str) -> Validation | None:
    """The fitted model judged on every measured step: those it trained on and those another experiment contradicts
    included. A reader sees all of them on the page, so the error over all of them is said beside the held-out one
    (#39 review: the headline error left a quarter of the steps out). None where there is no fit."""
    work, fitted = step_work(machine, device), fit(machine, device)
    if fitted is None or not work:
        return None
    points = [(point.batch, width, point.seconds, fitted.predict(counts, point.batch, width))
              for width in analysis.widths(machine) for point in analysis.step_curve(machine, device, width)
              if (counts := work.get((point.batch, width))) is not None]
    return Validation(points, fitted.params, fitted) if points else None


def no_better_than_constant(machine: Machine, device: str) -> bool:
    """Whether the fit misses held-out steps about as much as one constant does (within the meaningful ratio): then
    it has learned the steps' typical time, and its three terms, and the regime they name, prove nothing."""
    fitted, constant = validate(machine, device, calibrated=True), constant_baseline(machine, device)
    return (fitted is not None and constant is not None
            and constant.median_error <= fitted.median_error * stats.MEANINGFUL_RATIO)


def constant_baseline(machine: Machine, device: str) -> Validation | None:
    """The fit's yardstick: one constant, the median measured time of the steps the fit trained on, judged on the
    same held-out steps as the fit (validate, calibrated). A fit that does no better than this has learned the
    steps' typical time, not its three terms. None where there is no fit."""
    fitted = validate(machine, device, calibrated=True)
    if fitted is None or not fitted.fitted.trained_on:
        return None
    trained = set(fitted.fitted.trained_on)
    times = [point.seconds for width in analysis.widths(machine)
             for point in analysis.step_curve(machine, device, width) if (point.batch, width) in trained]
    constant = statistics.median(times)
    return Validation([(batch, width, measured, constant) for batch, width, measured, _ in fitted.points],
                      fitted.params)
