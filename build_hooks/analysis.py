"""Facts derived from measurements: curves, crossovers, achieved rates.

Pure functions of the dataset; the sentences on the pages are built from these, so a
claim and its data cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from build_hooks import experiments, stats
from build_hooks.dataset import Machine

STEP = "training_step"


@dataclass(frozen=True)
class Point:
    batch: int
    seconds: float
    iqr: float
    noisy: bool
    flops: int | None
    stats: dict | None = None  # the full summary, for marks and significant figures
    under_load: bool = False
    unsettled: bool = False

    @property
    def flags(self) -> dict:
        """The caveat flags of the point, as its extra_info holds them."""
        return {"noisy": self.noisy, "under_load": self.under_load, "unsettled": self.unsettled}

    @property
    def shaky(self) -> bool:
        """Noisy, too few samples or taken under load: not a point to lean on."""
        return bool(stats.caveats(self.stats, self.flags)) if self.stats else any(self.flags.values())

    @property
    def samples_per_s(self) -> float:
        return self.batch / self.seconds

    @property
    def flops_per_s(self) -> float | None:
        return self.flops / self.seconds if self.flops else None


def step_curve(machine: Machine, device: str, width: int) -> list[Point]:
    """Training-step time versus batch for one device and width, sorted by batch."""
    points = [
        Point(b["params"]["batch"], b["stats"]["median"], b["stats"]["iqr"],
              bool(b["extra_info"].get("noisy")), b["extra_info"].get("flops"),
              b["stats"], bool(b["extra_info"].get("under_load")), bool(b["extra_info"].get("unsettled")))
        for b in machine.measured(STEP, device=device, width=width)
    ]
    return sorted(points, key=lambda p: p.batch)


def widths(machine: Machine) -> list[int]:
    return sorted({b["params"]["width"] for b in machine.benchmarks(STEP)})


def crossover_batch(machine: Machine, width: int, group: str = STEP) -> int | None:
    """The crossover of one machine at one width, from `group`'s CPU and GPU points (see crossover).

    None when the machine has no GPU curve or the GPU never stays ahead.
    """
    return crossover(step_verdicts(machine, width, group)) if machine.gpu_device(group) else None


def step_verdicts(machine: Machine, width: int, group: str = STEP) -> dict[int, int]:
    """One machine's GPU against its CPU at each batch of one width, by the site's rule (verdicts: +1, the GPU's time
    is lower); empty without a GPU curve."""
    gpu = machine.gpu_device(group)
    if gpu is None:
        return {}

    def points(device: str) -> dict[int, dict]:
        return {b["params"]["batch"]: b["stats"] for b in machine.measured(group, device=device, width=width)}

    return verdicts(points("cpu"), points(gpu))


def stray_leads(machine: Machine, width: int, group: str = STEP) -> list[int]:
    """The batches where the GPU led beyond the spread but that its crossover (if any) does not cover: leads a
    larger batch took back. A sentence says "only at batch 16" rather than "never" beside them. A lead over a CPU
    step out of line with the next batch (out_of_line_steps) is not one: doubted_leads has those."""
    return _leads_below_crossover(machine, width, group)[0]


def doubted_leads(machine: Machine, width: int, group: str = STEP) -> list[int]:
    """The GPU's stray leads over a CPU step that is out of line (out_of_line_steps): said as left out."""
    return _leads_below_crossover(machine, width, group)[1]


def _leads_below_crossover(machine: Machine, width: int, group: str) -> tuple[list[int], list[int]]:
    """The GPU's leads below its crossover (or anywhere, without one), split into (over a steady CPU step, over an
    out-of-line one)."""
    found = step_verdicts(machine, width, group)
    first, odd = crossover(found), out_of_line_steps(machine, "cpu", width, group)
    leads = [b for b, v in found.items() if v > 0 and (first is None or b < first)]
    return [b for b in leads if b not in odd], [b for b in leads if b in odd]


def out_of_line_steps(machine: Machine, device: str, width: int, group: str = STEP) -> set[int]:
    """The batches whose step took meaningfully longer (stats.compare) than the next larger batch measured: that
    step does no less work, so a slower smaller one is out of line (a slow code path or a slowed machine)."""
    curve = step_curve(machine, device, width) if group == STEP else []
    return {a.batch for a, b in zip(curve, curve[1:]) if stats.compare(a.seconds, b.seconds) > 0}


def verdicts(cpu: dict[int, dict], gpu: dict[int, dict]) -> dict[int, int]:
    """Per common batch, +1 where the GPU's time is lower beyond both spreads, -1 where the CPU's
    is, 0 where they are level (stats.compare_points on each pair of point summaries)."""
    return {batch: stats.compare_points(cpu[batch], gpu[batch]) for batch in sorted(set(cpu) & set(gpu))}


def crossover(verdicts: dict[int, int]) -> int | None:
    """The crossover: the smallest batch from which the GPU is ahead beyond the spread at that
    batch and at every larger one compared. The site's one rule (race, cpu-choice, facts, tables).

    A level batch between GPU leads breaks the run: "from batch B the GPU is faster" must hold
    at every batch from B on, so a tie is no lead.
    """
    crossover = None
    for batch in sorted(verdicts, reverse=True):
        if verdicts[batch] <= 0:
            break
        crossover = batch
    return crossover


def best_rate(machine: Machine, device: str) -> tuple[Point, int] | None:
    """The training-step point with the highest achieved FLOP/s, and its width."""
    best = None
    for width in widths(machine):
        for point in step_curve(machine, device, width):
            if point.flops_per_s and (best is None or point.flops_per_s > best[0].flops_per_s):
                best = (point, width)
    return best


def medians(machine: Machine, group: str, key: str, **params) -> dict:
    """{params[key]: median} for the matching successful points of one experiment."""
    return {b["params"][key]: b["stats"]["median"] for b in machine.measured(group, **params)}


def point_stats(machine: Machine, group: str, key: str, **params) -> dict:
    """{params[key]: stats} for the matching successful points of one experiment."""
    return {b["params"][key]: b["stats"] for b in machine.measured(group, **params)}


def tiny_op_seconds(machine: Machine, device: str) -> float | None:
    """Seconds per call of the call_overhead experiment's one tiny operation."""
    op = experiments.declared("call_overhead")["OP"]
    return medians(machine, "call_overhead", "op", device=device).get(op)


def gemm_rates(machine: Machine, device: str) -> dict[int, float]:
    """Achieved FLOP/s of a square fp32 matmul, by side n: the square sweep's (gemm_rate) own medians. Pages label
    these as gemm_rate's, so the faster timings of matmul_shapes are named as that experiment's where they are
    quoted (wording.versus_peak), never folded in here."""
    return {b["params"]["n"]: b["extra_info"]["flops"] / b["stats"]["median"]
            for b in machine.measured("gemm_rate", device=device)}


def rate_above_peak(machine: Machine, split_too: bool = False) -> float | None:
    """The best median CPU matrix-product rate when it beats the peak computed from the reported clock (the cores
    ran faster than that clock), else None: of the square sweep, or with split_too of the same FLOPs split into
    smaller products as well."""
    best = (best_matmul_rate(machine) if split_too else max(gemm_rates(machine, "cpu").values(), default=None)) or 0.0
    peak = machine.cpu["fp32_peak_flops"]
    return best if peak and best > peak else None


def clearly_above_peak(machine: Machine) -> float | None:
    """The fastest matrix product (best_matmul_rate) where it beats the computed peak by the site's smallest
    difference (stats.MEANINGFUL_RATIO), else None: a rate 2% over a peak is level with it, not above it."""
    best, peak = best_matmul_rate(machine), machine.cpu["fp32_peak_flops"]
    return best if best and peak and best >= peak * stats.MEANINGFUL_RATIO else None


def best_matmul_rate(machine: Machine, device: str = "cpu") -> float | None:
    """The fastest median fp32 matrix-product rate measured on a machine: of the square sweep (gemm_rate) and of the
    shapes experiment (matmul_shapes). The one "fastest matrix product" every page quotes; where the sweep's own
    best is quoted (its figure on why-gpu), it is named as the sweep's."""
    rates = list(gemm_rates(machine, device).values()) + [
        b["extra_info"]["flops"] / b["stats"]["median"]
        for b in machine.measured("matmul_shapes", device=device) if b["stats"]["median"] > 0]
    return max(rates, default=None)


def best_matmul_is_the_sweeps(machine: Machine, device: str = "cpu") -> bool:
    """Whether the fastest matrix product (best_matmul_rate) is the square sweep's own, not the shapes experiment's."""
    return max(gemm_rates(machine, device).values(), default=0.0) == best_matmul_rate(machine, device)


def gemm_rate_fast_end(machine: Machine, device: str = "cpu") -> float | None:
    """The highest matrix-product rate at the fast end of any point's spread (FLOPs / lower quartile): of the
    square sweep and of the same FLOPs split into smaller products, so no page calls a share "at most" that
    another product beat."""
    points = machine.measured("gemm_rate", device=device) + machine.measured("matmul_shapes", device=device)
    rates = [b["extra_info"]["flops"] / b["stats"]["q1"] for b in points if b["stats"]["q1"] > 0]
    return max(rates) if rates else None


def copy_bandwidths(machine: Machine, device: str) -> dict[int, float]:
    """Achieved bytes/s of a tensor copy, by the memory it occupies (source + destination)."""
    return {2 * b["params"]["bytes"]: b["extra_info"]["bytes"] / b["stats"]["median"]
            for b in machine.measured("memory_bandwidth", device=device)}


def largest_copy(machine: Machine, device: str) -> dict | None:
    """The memory_bandwidth point whose rate is the streaming bandwidth (the largest copy), for its caveats."""
    return max(machine.measured("memory_bandwidth", device=device), key=lambda b: b["params"]["bytes"], default=None)


def transfer_bandwidth(machine: Machine, direction: str, memory: str) -> dict[int, float]:
    """Bytes per second by copy size."""
    return {b["params"]["bytes"]: b["params"]["bytes"] / b["stats"]["median"]
            for b in machine.measured("transfer", direction=direction, memory=memory)}
