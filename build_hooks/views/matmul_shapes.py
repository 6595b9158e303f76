"""The same FLOPs spent as many small or few large matrix products."""

from __future__ import annotations

from build_hooks import analysis, plots
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import DEVICE_NAME, figure, first_with, per_machine, si, table, times

GROUP = "matmul_shapes"


@section
def matmul_shapes(data: Dataset) -> str:
    def one(m: Machine) -> str:
        series, rows = [], []
        for device in m.devices(GROUP):
            benches = sorted(m.measured(GROUP, device=device), key=lambda b: b["params"]["side"])
            series.append(plots.Series(DEVICE_NAME[device], [b["params"]["side"] for b in benches],
                                       [b["stats"]["median"] * 1e3 for b in benches],
                                       "--" if device == "cuda" else "-", DEVICE_NAME[device]))
            rows += [[DEVICE_NAME[device], f"{b['params']['calls']:,} × {b['params']['side']}²",
                      si(b["stats"]["median"], "s"), si(b["extra_info"]["flops"] / b["stats"]["median"], "FLOP/s")]
                     for b in benches]
        svg = plots.line_panels([{"series": series, "xlabel": "matrix side s (each product s×s @ s×s)",
                                  "ylabel": "time for the whole budget (ms)", "subtitle": "Lower is better"}],
                                title="The same FLOPs as many small or few large products",
                                alt="Time to spend a fixed FLOP budget versus matrix side; the table below has the numbers.")
        return figure(svg, "Every point performs the same number of FLOPs.") + table(
            ["device", "products", "time", "achieved"], rows)
    return per_machine(data, GROUP, one)


@fact
def shapes_summary(data: Dataset) -> str:
    machine = first_with(data, GROUP)
    parts = []
    for device in machine.devices(GROUP):
        took = analysis.medians(machine, GROUP, "side", device=device)
        small, large = min(took), max(took)
        parts.append(f"on the {DEVICE_NAME[device]}, spending it as {small}×{small} products took "
                     f"{si(took[small], 's')} and as {large}×{large} products {si(took[large], 's')}: "
                     f"{times(took[small] / took[large])} longer for the same arithmetic")
    return "; ".join(parts)
