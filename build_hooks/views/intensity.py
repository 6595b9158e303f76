"""Arithmetic intensity worked out: a Linear layer and attention's score matrix against the
ridge points of the build host (measured) and of an H200 (datasheet, labelled)."""

from __future__ import annotations

from build_hooks import analysis, cost_model, datasheets, stats
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import Html, first_with, si, table
from build_hooks.views.regimes import REGIME_WORDS

SHEET = datasheets.by_name("NVIDIA H200 SXM")
LINEAR_CASES = [(1, 512), (32, 512), (512, 512), (1, 4096), (512, 4096)]  # (batch, d): a d×d Linear layer
ATTENTION_CASES = [(256, 64), (4096, 64)]  # (sequence length, head dimension): one head's QKᵀ


def linear_intensity(batch: int, d: int, element_bytes: int) -> float:
    """FLOPs per byte of y = x W for x: batch×d and W: d×d, each matrix read or written once."""
    return 2 * batch * d * d / (element_bytes * (batch * d + d * d + batch * d))


def attention_intensity(length: int, head: int, element_bytes: int) -> float:
    """FLOPs per byte of one head's scores S = Q Kᵀ when S is written to memory (no fusion):
    2·L²·d FLOPs over reading Q and K (2·L·d elements) and writing S (L² elements)."""
    return 2 * length * length * head / (element_bytes * (2 * length * head + length * length))


def crossing_batch(d: int, ridge: float, element_bytes: int) -> int | None:
    """The smallest power-of-two batch at which a d×d Linear layer reaches `ridge` FLOP/byte, or
    None: its intensity tends to d / element_bytes as the batch grows and may stay below the ridge."""
    batch = 1
    while batch <= 2**20:
        if linear_intensity(batch, d, element_bytes) >= ridge:
            return batch
        batch *= 2
    return None


def published_ridges() -> dict[str, tuple[float, int, str]]:
    """The H200's ridge points from its datasheet: (FLOP/byte, element size, "published") per format."""
    return {"H200 fp32": (SHEET.fp32_flops / SHEET.memory_bytes_s, 4, "published"),
            "H200 bf16 tensor cores": (SHEET.bf16_flops / SHEET.memory_bytes_s, 2, "published")}


def ridges(data: Dataset) -> dict[str, tuple[float, int, str]]:
    """Ridge point (FLOP/byte), element size and provenance for each roof in the table."""
    out = published_ridges()
    machine = first_with(data, "gemm_rate")
    params = cost_model.measured_params(machine, "cpu")
    if params is not None:
        out = {"the build host, fp32": (_cpu_ridge(machine, params), 4, "measured")} | out
    return out


def _cpu_ridge(machine: Machine, params: cost_model.DeviceParams) -> float:
    """The build host's ridge point: its fastest matrix product (analysis.best_matmul_rate, the one every page quotes)
    over its largest copy's bandwidth."""
    return (analysis.best_matmul_rate(machine) or max(params.gemm_rates.values())) / params.bandwidth


def _ridge(flop_per_byte: float) -> str:
    """A ridge point with the digits it needs: 0.9, 14, 206."""
    return f"{flop_per_byte:.1f}" if flop_per_byte < 10 else f"{flop_per_byte:.0f}"


def _regime(intensity: float, ridge: float) -> str:
    """Which side of a roof's ridge an intensity lies; within the meaningful ratio of it, neither (the ridge and the
    count are both rough)."""
    if ridge / stats.MEANINGFUL_RATIO < intensity < ridge * stats.MEANINGFUL_RATIO:
        return AT_RIDGE
    return REGIME_WORDS["compute"] if intensity >= ridge else REGIME_WORDS["memory"]


AT_RIDGE = "at the ridge"


@section
def intensity_table(data: Dataset) -> Html:
    """A Linear layer and attention's scores: FLOPs per byte and the regime each roof puts them in."""
    roofs = ridges(data)
    head = ["operation", *[f"{name} (ridge {_ridge(ridge)} FLOP/B, {how})" for name, (ridge, _, how) in roofs.items()]]
    rows = []
    for batch, d in LINEAR_CASES:
        rows.append([f"Linear {d}×{d}, batch {batch}",
                     *[f"{linear_intensity(batch, d, size):.1f} FLOP/B: "
                       f"{_regime(linear_intensity(batch, d, size), ridge)}"
                       for ridge, size, _ in roofs.values()]])
    for length, dim in ATTENTION_CASES:
        rows.append([f"attention scores QKᵀ, sequence {length}, head {dim}, unfused",
                     *[f"{attention_intensity(length, dim, size):.1f} FLOP/B: "
                       f"{_regime(attention_intensity(length, dim, size), ridge)}"
                       for ridge, size, _ in roofs.values()]])
    return table(head, rows, caption="Intensity counts each matrix read or written once (fp32: 4 bytes per "
                                     "element; bf16: 2). Below its roof's ridge an operation is memory-bound at "
                                     "best; above, compute-bound at best; overhead can still hold either back. "
                                     f"Within {stats.MEANINGFUL_RATIO:g}× of the ridge: {AT_RIDGE}.")


@fact
def ridge_points(data: Dataset) -> str:
    """A sentence: each roof's ridge point, from its rate and bandwidth, measured or published."""
    parts = []
    machine = first_with(data, "gemm_rate")
    params = cost_model.measured_params(machine, "cpu")
    if params is not None:
        best = analysis.best_matmul_rate(machine) or max(params.gemm_rates.values())
        footprint = max(params.bandwidths)  # source and destination together
        parts.append(f"the build host's fastest matrix product, {si(best, 'FLOP/s')}, over the bandwidth of its "
                     f"largest measured copy, {si(params.bandwidth, 'B/s')}, puts its ridge "
                     f"at {_ridge(_cpu_ridge(machine, params))} FLOP per byte (measured)")
        parts.append(f"that copy is a {si(footprint / 2, 'B')} buffer into another, {si(footprint, 'B')} in all")
    parts.append(f"the {SHEET.name}'s {si(SHEET.fp32_flops, 'FLOP/s')} fp32 over {si(SHEET.memory_bytes_s, 'B/s')} "
                 f"puts its ridge at {_ridge(SHEET.fp32_flops / SHEET.memory_bytes_s)}")
    parts.append(f"its {si(SHEET.bf16_flops, 'FLOP/s')} of dense bf16 puts it at "
                 f"{_ridge(SHEET.bf16_flops / SHEET.memory_bytes_s)}")
    parts.append(f"both H200 figures are published: {SHEET.source}")
    # One roof per sentence; the first follows the page's "The ridge points:".
    return ". ".join([parts[0]] + [part[:1].upper() + part[1:] for part in parts[1:]])


@section
def linear_crossing(data: Dataset) -> Html:
    """The batch from which a 512- and a 4096-wide Linear layer is compute-bound under each roof: a table."""
    rows = []
    for name, (ridge, size, how) in ridges(data).items():
        row = [f"{name} ({how})"]
        for d in (512, 4096):
            # Clearly past the ridge, as the intensity table calls a regime: within the ratio it is "at the ridge".
            batch = crossing_batch(d, ridge * stats.MEANINGFUL_RATIO, size)
            row.append(f"from batch {batch}" if batch else "at no batch")
        rows.append(row)
    return table(["roof", "width 512", "width 4096"], rows,
                 caption=f"Where a square Linear layer turns compute-bound (past {stats.MEANINGFUL_RATIO:g}× the "
                         "ridge), by roof")
