"""A training step on a GPU nobody measured here, estimated from first principles.

A GPU's host issues the step's operations one after another while the GPU runs the
kernels already queued, so a step costs about the larger of the two, not their sum:

    t_step  = max(host issue, device time)
    host    = operations x the host's own per-operation cost (this machine's fitted t_op,
              else one tiny operation's cost)  +  kernels x LAUNCH_HOST_S (published)
    device  = kernels x LAUNCH_S  +  FLOPs / achievable rate  +  bytes / memory bandwidth
    achievable rate = the datasheet's FP32 rate x the share of the GPU's multiprocessors
              a product of that size can occupy (output tiles of TILE x TILE, one per
              multiprocessor per wave): small products leave most of the GPU idle
    t_epoch = steps x (t_step + LOOP_OPS x the host's per-operation cost)

The counts are the host's own exact counts of the same step as CUDA runs it (training_step
records them): its operations with the optimiser's foreach update, CUDA's default, and
the kernels among them (views such as t, view and detach launch none). A file from before
kernels were counted charges every operation as a kernel, an upper bound. LAUNCH_S and
TILE are this model's assumptions; the result is unvalidated until a measured GPU checks
it, and its band (lower_edge to upper_edge times the estimate, never below the launches' floor)
is what every comparison with it uses. Once a measured GPU of the datasheet has checked the
estimate, the band's top is raised to the worst miss that check found (upper_edge).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from build_hooks import analysis, cost_model, datasheets, stats
from build_hooks.dataset import Machine

LAUNCH_S = 3e-6      # assumed: a kernel's minimum time on the device (launch and drain), per kernel
# Published: PETSc's launch benchmark (src/sys/tests/ex1cu.cu), run on Summit (OLCF, V100 GPUs): an empty
# kernel launched asynchronously, back to back, cost 4.86 µs per launch. The host pays it on top of its own work.
LAUNCH_HOST_S = 4.86e-6
LAUNCH_SOURCE = ("PETSc, src/sys/tests/ex1cu.cu, its recorded run on Summit (OLCF: V100 GPUs, POWER9 hosts): "
                 "4.86 µs per empty kernel launched asynchronously; another GPU and host, the nearest published figure")
TILE = 128           # assumed: a GEMM kernel's output tile side (cuBLAS uses 64 to 256)
# Published: NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), "H100 SXM5": 132 SMs; the
# H200 SXM is the same GH100 configuration with more and faster memory.
MULTIPROCESSORS = {"NVIDIA H200 SXM": 132}
LOOP_OPS = 2         # the epoch loop slices the next batch: x[i:i+B] and y[i:i+B], two operations
# The band, lopsided because the risk is: a real eager step can hardly beat its own launches, yet
# pays costs this model leaves out.
FASTER = 0.75  # at most: a GPU host with a faster core issues faster, but no eager step skips its launches;
               # lowered to the fastest measured host's pace where one issues faster (lower_edge)
SLOWER = 2.5   # the allocator, autograd and Python cost an eager CUDA step 1.3-2x its launches, and the
               # GPU's host may be slower than this one; raised to the worst measured miss (upper_edge)
BAND_RULE = (f"from {FASTER:g}× (lower when a measured host issues operations faster than this one) "
             f"to {SLOWER:g}× its value")
SHEET = datasheets.by_name("NVIDIA H200 SXM")


@dataclass(frozen=True)
class Estimate:
    """The model for one host driving one datasheet GPU."""
    sheet: datasheets.Datasheet
    host_op_s: float
    work: dict[tuple[int, int], dict]  # (batch, width) -> the host's exact counts of that step
    host_measured: bool = True  # False: no call_overhead or fit, so each operation is charged one launch
    faster: float = FASTER  # the band's lower edge, as a multiple of the estimate (lower_edge)
    slower: float = SLOWER  # its top (upper_edge)

    @property
    def name(self) -> str:
        return self.sheet.name

    @property
    def source(self) -> str:
        """Its inputs and band, as a lane's note says them (a lane is estimated only where no GPU was measured)."""
        return self.source_checked(False)

    def source_checked(self, checked: bool) -> str:
        """Its inputs and band; `checked`: a measured GPU has been set against it (the page says how it fared)."""
        # Short sentences, one input each: a caption readers scan, not a clause list.
        host = (f"Per operation: the build host's own {self.host_op_s * 1e6:.3g} µs" if self.host_measured
                else "The build host's per-operation cost was not measured, so only the launches are charged")
        return (f"{self.sheet.source}. {host}. Per kernel launch on the host: {LAUNCH_HOST_S * 1e6:g} µs "
                f"({LAUNCH_SOURCE}). Assumed: {LAUNCH_S * 1e6:g} µs per kernel on the device, {TILE}×{TILE} "
                f"output tiles. {'Checked against a measured GPU above' if checked else 'Unvalidated'}; band "
                f"{self.band_words}")

    @property
    def band_words(self) -> str:
        return band_words(self.faster, self.slower)

    @property
    def brief_source(self) -> str:
        """The datasheet and a pointer to the rest: the race's lane names its model once, and the cost model page
        states every input with its source (a long source list on two pages is one too many)."""
        return f"{self.sheet.source}. An unvalidated model: every input and its source is on Predicting a step"

    def achievable_rate(self, batch: int, width: int) -> float:
        """The datasheet rate times the share of SMs the step's widest product can occupy; a step
        whose work names its own equivalent square side ("side": a transformer's) uses that."""
        side = self.work[(batch, width)].get("side") or cost_model.equivalent_side(batch, width)
        sms = MULTIPROCESSORS.get(self.sheet.name, 132)
        occupied = min(1.0, math.ceil(side / TILE) ** 2 / sms)
        return self.sheet.fp32_flops * occupied

    def step(self, batch: int, width: int) -> dict[str, float]:
        """Estimated seconds of one step and its parts (host, device and the device's three terms)."""
        counts = self.work[(batch, width)]
        ops, kernels = cuda_counts(counts)
        launches = kernels * LAUNCH_S
        compute = counts["flops"] / self.achievable_rate(batch, width)
        memory = counts["bytes"] / self.sheet.memory_bytes_s
        host = ops * self.host_op_s + kernels * LAUNCH_HOST_S
        device = launches + compute + memory
        return {"seconds": max(host, device), "host": host, "device": device, "floor": kernels * LAUNCH_HOST_S,
                "launches": launches, "compute": compute, "memory": memory}

    def epoch(self, batch: int, width: int, rows: int) -> float:
        return self.steps(batch, rows) * (self.step(batch, width)["seconds"] + LOOP_OPS * self.host_op_s)

    def epoch_band(self, batch: int, width: int, rows: int) -> tuple[float, float]:
        """The band of an epoch: `faster` to SLOWER times the estimate, never below its launches."""
        return band(self.epoch(batch, width, rows), self.steps(batch, rows) * self.step(batch, width)["floor"],
                    self.faster, self.slower)

    def step_band(self, batch: int, width: int) -> tuple[float, float]:
        step = self.step(batch, width)
        return band(step["seconds"], step["floor"], self.faster, self.slower)

    @staticmethod
    def steps(batch: int, rows: int) -> int:
        return -(-rows // batch)

    def bounded_by(self, batch: int, width: int) -> str:
        """"the host" when issuing the operations takes longer than the GPU runs them, else "the GPU"."""
        step = self.step(batch, width)
        return "the host" if step["host"] >= step["device"] else "the GPU"

    def host_bound(self, sizes) -> list[tuple[int, int]]:
        """The (batch, width) sizes among `sizes` where the host, not the GPU, bounds the step."""
        return [size for size in sizes if self.bounded_by(*size) == "the host"]


def host_op_seconds(host: Machine) -> float | None:
    """The host's cost per operation as the estimate charges it: fitted to its CPU steps, else one
    tiny operation's measured cost (None when neither was measured)."""
    fitted = cost_model.fit(host, "cpu")
    return fitted.params.op_seconds if fitted else analysis.tiny_op_seconds(host, "cpu")


def lower_edge(own_op_s: float | None, peers: Iterable[Machine] = ()) -> float:
    """The band's lower edge as a multiple of the estimate: FASTER, or the fastest measured host's
    per-operation cost over the build host's where that is lower. The host's share of a step is at most
    all of it, so re-pricing the estimate at that host's pace never falls below this ratio."""
    peer_ops = [op for op in map(host_op_seconds, peers) if op]
    if not own_op_s or not peer_ops:
        return FASTER
    return min(FASTER, min(peer_ops) / own_op_s)


def upper_edge(host: Machine, peers: Iterable[Machine] = ()) -> float:
    """The band's top as a multiple of the estimate: SLOWER, or the worst miss where a measured GPU of the datasheet
    took longer than the estimate fed by this host (check), so that no comparison leans on a band the data broke."""
    return max([SLOWER, *(found.highest for found in checks([host, *peers], feeder=host))])


def for_host(host: Machine, peers: Iterable[Machine] = (), work: dict | None = None,
             sheet: datasheets.Datasheet = SHEET) -> Estimate | None:
    """The estimate driven by the build host's per-operation cost and its steps' counts (`work`, else the
    training steps'; None without counts). `peers`: the other measured machines; the fastest host among them
    lowers the band's lower edge, and a measured GPU that took longer than estimated raises its top."""
    estimate = _unchecked(host, work, sheet)
    if estimate is None or not estimate.host_measured:
        return estimate
    peers = [m for m in peers if m is not host]
    return replace(estimate, faster=lower_edge(estimate.host_op_s, peers), slower=upper_edge(host, peers))


def _unchecked(host: Machine, work: dict | None = None, sheet: datasheets.Datasheet = SHEET) -> Estimate | None:
    """for_host with the band as assumed, before any measured machine moved its edges (what a check tests)."""
    work = cost_model.step_work(host) if work is None else work
    op = host_op_seconds(host)
    if not work:
        return None
    if op is None:
        return Estimate(sheet, 0.0, work, host_measured=False)
    return Estimate(sheet, op, work)


def cuda_counts(counts: dict) -> tuple[int, int]:
    """(operations, kernels) of a step as CUDA issues it; a file from before kernels were counted gives
    its own operations for both, an upper bound."""
    return counts.get("cuda_ops", counts["ops"]), counts.get("kernels", counts.get("cuda_ops", counts["ops"]))


def edge(value: float) -> str:
    """A band edge as pages print it: three figures, so that the band's times multiply back from it (3.65×, not
    3.6×, for a top raised to a measured miss)."""
    return f"{value:.3g}"


def band_words(faster: float, slower: float = SLOWER) -> str:
    return f"from {edge(faster)}× to {edge(slower)}× its value"


def faster_beyond_band(cpu: dict | None, estimate: float, band: tuple[float, float]) -> str:
    """Which side is faster once a measured CPU point's spread and the estimate's whole band are counted: "CPU",
    "GPU" or "neither" (they overlap, or differ by less than the meaningful ratio), as the race judges an estimated
    lane; a lead says how far past the band's edge the CPU's median lies ("GPU (CPU 1.13× the band's top)"), in
    words that name the CPU: a bare "1.13×" beside "GPU" reads as a measured speed-up."""
    if cpu is None:
        return "not measured"
    verdict = stats.compare_points(cpu, {"median": estimate, "q1": band[0], "q3": band[1]})
    if verdict == 0:
        return "neither"
    # How far past the band's edge the CPU's median lies: a lead just past it rests on where the edge was set.
    past = cpu["median"] / band[1] if verdict > 0 else band[0] / cpu["median"]
    return (f"GPU (CPU {past:.3g}× the band's top)" if verdict > 0
            else f"CPU ({past:.3g}× under the band's bottom)")


def band(seconds: float, floor: float = 0.0, faster: float = FASTER, slower: float = SLOWER) -> tuple[float, float]:
    """The band as the (q1, q3) a comparison reads: never below `floor`, the launches alone."""
    return max(seconds * faster, floor), seconds * slower


def _measured_pairs(machine: Machine, feeder: Machine | None = None) -> list[tuple[float, float]] | None:
    """(estimated, measured) seconds of every CUDA step this machine measured that the estimate covers, the estimate
    fed by `feeder`'s host costs (by default this machine's own); None unless its GPU is the one the estimate
    describes (its datasheet)."""
    gpu = machine.gpu
    if not gpu or datasheets.for_gpu(gpu["name"]) is not SHEET or "cuda" not in machine.devices(analysis.STEP):
        return None
    estimate = _unchecked(machine) if feeder is None else _unchecked(feeder, cost_model.step_work(machine))
    if estimate is None:
        return None
    return [(estimate.step(p.batch, w)["seconds"], p.seconds)
            for w in analysis.widths(machine) for p in analysis.step_curve(machine, "cuda", w)
            if (p.batch, w) in estimate.work]


@dataclass(frozen=True)
class Check:
    """The estimate set against one machine's measured GPU steps: measured ÷ estimated, and how often that falls
    outside the band as assumed (from FASTER to SLOWER times the estimate)."""
    machine: Machine
    median: float    # the median of measured ÷ estimated over the sizes both cover
    lowest: float
    highest: float
    outside: int     # sizes whose measured step lies outside the band as assumed
    sizes: int


def check(machine: Machine, feeder: Machine | None = None) -> Check | None:
    """The estimate against this machine's measured GPU steps, or None where it cannot be checked (no GPU, another
    datasheet's GPU, or no host costs to feed it). `feeder`: the machine whose host costs drive the estimate checked
    (by default this machine's own), so a page that feeds it from the build host checks that estimate, not another."""
    pairs = _measured_pairs(machine, feeder)
    if not pairs:
        return None
    ratios = sorted(seen / est for est, seen in pairs)
    outside = sum(not FASTER <= r <= SLOWER for r in ratios)
    return Check(machine, ratios[len(ratios) // 2], ratios[0], ratios[-1], outside, len(ratios))


def checks(machines: Iterable[Machine], feeder: Machine | None = None) -> list[Check]:
    """Every machine's check, where one can be made (check: `feeder` drives every estimate, else each its own)."""
    return [found for found in (check(m, feeder) for m in machines) if found is not None]
