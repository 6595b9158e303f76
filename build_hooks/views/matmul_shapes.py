"""The same FLOPs spent as many small or few large matrix products."""

from __future__ import annotations

from build_hooks import analysis, plots, stats
from build_hooks.dataset import Dataset, Machine, is_gpu
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    Html,
    figure,
    first_with,
    gpu_with,
    marks_note_for,
    measured_value,
    on_machine,
    per_machine,
    si,
    table,
)
from build_hooks.wording import ratio_sentence

GROUP = "matmul_shapes"


@section
def matmul_shapes(data: Dataset) -> Html:
    """Per machine: the time one FLOP budget takes by matrix side per device, plotted and tabled."""
    def one(m: Machine) -> Html:
        series, rows, shown = [], [], []
        for device in m.devices(GROUP):
            benches = sorted(m.measured(GROUP, device=device), key=lambda b: b["params"]["side"])
            series.append(plots.Series(DEVICE_NAME[device], [b["params"]["side"] for b in benches],
                                       [b["stats"]["median"] * 1e3 for b in benches],
                                       "--" if is_gpu(device) else "-", DEVICE_NAME[device]))
            rows += [[DEVICE_NAME[device], f"{b['params']['calls']:,} × {b['params']['side']}²",
                      measured_value(b["stats"], b["extra_info"], "s"),
                      si(b["extra_info"]["flops"] / b["stats"]["median"], "FLOP/s")]
                     for b in benches]
            shown += benches
        svg = plots.line_panels([{"series": series, "xlabel": "matrix side s (each product s×s @ s×s)",
                                  "ylabel": "time for the whole budget (ms)", "subtitle": "Lower is better"}],
                                title="The same FLOPs as many small or few large products",
                                alt="Time to spend a fixed FLOP budget versus matrix side; "
                                    "the table below has the numbers.")
        scaled = [b for b in shown
                  if b["extra_info"].get("products_timed", b["params"]["calls"]) < b["params"]["calls"]]
        note = (f" Where a budget is more than {min(b['extra_info']['products_timed'] for b in scaled):,} products "
                f"(side {', '.join(sorted({str(b['params']['side']) for b in scaled}, key=int))}), that many were "
                "timed back to back and the time scaled to the whole budget." if scaled else "")
        return (figure(svg, "Every point performs the same number of FLOPs." + note)
                + table(["device", "products", "time", "achieved"], rows) + marks_note_for(shown))
    return per_machine(data, GROUP, one)


@fact
def shapes_summary(data: Dataset) -> str:
    """A sentence per device of one machine (a GPU machine's first, as the lessons draw it): the same FLOP budget as
    the smallest against the largest products."""
    machine = gpu_with(data, GROUP) or first_with(data, GROUP)
    sentences = []
    for device in machine.devices(GROUP):
        points = analysis.point_stats(machine, GROUP, "side", device=device)
        small, large = min(points), max(points)
        ratio = stats.paired_ratio(points[small], points[large])
        verdict = ratio_sentence(ratio, "{} longer for the same arithmetic", "{} shorter for the same arithmetic",
                                 "about the same time for the same arithmetic")
        sentences.append(f"the {DEVICE_NAME[device]} took {si(points[small]['median'], 's')} as {small}×{small} "
                         f"products and {si(points[large]['median'], 's')} as {large}×{large} products. "
                         f"That is {verdict}")
    # The machine is named once, opening the first sentence; each later one starts with its device.
    said = [f"{on_machine(data, machine)}, {sentences[0]}"] + [s[:1].upper() + s[1:] for s in sentences[1:]]
    return ". ".join(said + _devices_apart(machine))


def _devices_apart(machine) -> list[str]:
    """Where a GPU swept the shapes beside its CPU: the GPU against the CPU at the smallest and at the largest
    products, each beyond the spread or said to be level (#39 read: the plot's lesson, a GPU slower than its own CPU
    on tiny products, was never said)."""
    gpu = next((d for d in machine.devices(GROUP) if is_gpu(d)), None)
    if gpu is None or "cpu" not in machine.devices(GROUP):
        return []
    cpu_points = analysis.point_stats(machine, GROUP, "side", device="cpu")
    gpu_points = analysis.point_stats(machine, GROUP, "side", device=gpu)
    sides = sorted(set(cpu_points) & set(gpu_points))
    if len(sides) < 2:
        return []
    said = []
    for side in (sides[0], sides[-1]):
        verdict = ratio_sentence(stats.paired_ratio(gpu_points[side], cpu_points[side]),
                                 "took {} longer than its CPU", "was {} faster than its CPU", "was level with its CPU")
        said.append(f"As {side}×{side} products, the GPU {verdict}")
    return said
