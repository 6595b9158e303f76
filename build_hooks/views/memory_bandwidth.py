"""Copy bandwidth by size: cache speed while a copy fits in a cache, main-memory speed beyond."""

from __future__ import annotations

from build_hooks import analysis, plots, stats, untrusted
from build_hooks.dataset import Dataset, Machine, is_gpu
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    Html,
    MissingData,
    caveat,
    figure,
    first_with,
    gpu_with,
    mark,
    marks_note_for,
    on_machine,
    per_machine,
    si,
    table,
)
from build_hooks.wording import multiple

GROUP = "memory_bandwidth"


@section
def memory_bandwidth(data: Dataset) -> Html:
    """Per machine: copy bandwidth by memory occupied per device, plotted and tabled."""
    def one(m: Machine) -> Html:
        series, rows = [], []
        for device in m.devices(GROUP):
            curve = analysis.copy_bandwidths(m, device)
            series.append(plots.Series(DEVICE_NAME[device], list(curve),
                                       [bw / 1e9 for bw in curve.values()],
                                       "--" if is_gpu(device) else "-", DEVICE_NAME[device]))
            rows += [[DEVICE_NAME[device], si(2 * b["params"]["bytes"], "B"),
                      si(b["extra_info"]["bytes"] / b["stats"]["median"], "B/s")
                      + mark(b["stats"], b["extra_info"])]
                     for b in sorted(m.measured(GROUP, device=device), key=lambda b: b["params"]["bytes"])]
        scale = plots.y_scale(series)  # a GPU beside a CPU: log (#39 read)
        svg = plots.line_panels([{"series": series, "xlabel": "memory a copy occupies, source + destination",
                                  "xunit": "B",
                                  "ylabel": "copy bandwidth (GB/s)", "subtitle": "Higher is better",
                                  "yscale": scale}],
                                title="Tensor copy bandwidth by size",
                                alt="Copy bandwidth versus the memory the copy occupies; "
                                    "the table below has the numbers.")
        return (figure(svg, "Each point is one tensor copied into another of the same size. Its rate counts "
                            "bytes read plus bytes written, per second.")
                + table(["device", "memory occupied", "bandwidth"], rows)
                + marks_note_for(m.measured(GROUP)))
    return per_machine(data, GROUP, one)


@fact
def cache_versus_memory(data: Dataset) -> str:
    """The fastest copy against the largest one, as measured (no cache sizes assumed)."""
    machine = first_with(data, GROUP)
    curve = analysis.copy_bandwidths(machine, "cpu")
    point = {2 * b["params"]["bytes"]: b for b in machine.measured(GROUP, device="cpu")}
    if len(curve) < 2:
        raise MissingData("the copy bandwidth was measured at one size only")
    largest = max(curve)
    fastest = max(curve, key=curve.get)
    if fastest == largest or stats.compare(curve[fastest], curve[largest]) <= 0:
        return (f"{on_machine(data, machine)}, the largest copy ({si(largest, 'B')}) moved "
                f"{si(curve[largest], 'B/s')}, about as fast as the fastest smaller one: no cache made a difference "
                "here")
    return (f"{on_machine(data, machine)}, copies occupying {si(fastest, 'B')} moved {si(curve[fastest], 'B/s')}"
            f"{caveat(point[fastest])}. "
            f"The largest, {si(largest, 'B')}, moved {si(curve[largest], 'B/s')}: "
            f"{curve[fastest] / curve[largest]:.1f}× slower once the data no longer fits in a cache")


@fact
def gpu_memory_gap(data: Dataset) -> str:
    """A measured GPU's memory against its own CPU's, at the largest copy both measured (#39 review: why-gpu spoke of
    arithmetic only); where no GPU's copies were measured, that it was not."""
    machine = gpu_with(data, GROUP)
    if machine is None:
        return "No GPU's memory was measured in this build: a datasheet gives its bandwidth"
    gpu, cpu = (analysis.copy_bandwidths(machine, d) for d in (machine.gpu_device(GROUP), "cpu"))
    common = sorted(set(gpu) & set(cpu))
    if not common:
        raise MissingData(f"{machine.label}: no copy size measured on both devices")
    size = common[-1]
    gap = gpu[size] / cpu[size]
    name = untrusted.placeholder(machine.gpu["name"])
    # The size is the buffer copied (half the memory the copy occupies); the rate counts bytes read plus written.
    noisy = " (noisy)" if stats.is_noisy(analysis.largest_copy(machine, "cpu")["stats"]) else ""
    return (f"A GPU's memory is faster too. Copying a {si(size / 2, 'B')} buffer, the {name} moved "
            f"{si(gpu[size], 'B/s')} (bytes read plus written) and its own "
            f"{untrusted.placeholder(machine.cpu_short_name)} CPU {si(cpu[size], 'B/s')}{noisy}: "
            f"{multiple(gap)} as much. A CPU's copy rate grows with the cores copying, up to its memory's limit")
