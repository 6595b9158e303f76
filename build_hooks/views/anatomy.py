"""Inside a GPU, measured: a measured GPU's datasheet figures beside what this project's experiments reached."""

from __future__ import annotations

from build_hooks import analysis, cost_model, datasheets
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import section
from build_hooks.render import Html, html, join, missing, note, provenance, si, table


@section
def anatomy_measured(data: Dataset) -> Html:
    """Per measured GPU with a datasheet: its published fp32 rate, memory bandwidth and host link, each beside the
    best this project measured (fastest matrix product, largest copy, largest pinned copy to the device), and the
    share; or that no GPU was measured."""
    parts = [part + provenance(m, data.host) for m in data.machines
             if m.gpu is not None and (part := _one(m)) is not None]
    if not parts:
        return missing("No GPU with a datasheet was measured in this build, so only the published figures stand.")
    return join(parts) + note(
        "A real kernel or copy rarely reaches its datasheet's peak, so a share under 100% is normal. The memory "
        "row counts bytes read plus written, the traffic a datasheet's bandwidth covers; the host link counts one "
        "direction.")


def _one(machine: Machine) -> Html | None:
    """One GPU's rows, or None where no datasheet names it or none of its three figures was measured."""
    sheet = datasheets.for_gpu(machine.gpu["name"])
    device = machine.gpu_device("gemm_rate") or machine.gpu_device("memory_bandwidth")
    if sheet is None or device is None:
        return None
    copy = cost_model.measured_params(machine, device) if machine.gpu_device("memory_bandwidth") else None
    pinned = analysis.transfer_bandwidth(machine, "host_to_device", "pinned")
    measured = [("fp32 arithmetic (fastest matrix product)", sheet.fp32_flops,
                 analysis.best_matmul_rate(machine, device), "FLOP/s"),
                ("memory (largest copy)", sheet.memory_bytes_s, copy.bandwidth if copy else None, "B/s"),
                ("host link, to the GPU (largest pinned copy)", sheet.host_link_bytes_s,
                 pinned[max(pinned)] if pinned else None, "B/s")]
    rows = [[part, si(published, unit), si(found, unit), f"{100 * found / published:.0f}%"]
            for part, published, found, unit in measured if published and found]
    if not rows:
        return None
    return table(["part", f"published ({sheet.name})", "measured by this project", "share of published"], rows,
                 caption=html("Published against measured: {}", machine.label))
