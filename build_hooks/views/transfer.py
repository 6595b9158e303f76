"""Host↔device copies: bandwidth by size, pinned against pageable memory."""

from __future__ import annotations

import math

from build_hooks import analysis, plots, stats, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (
    Html,
    MissingData,
    caveat,
    esc,
    figure,
    gpu_with,
    marks_note_for,
    missing,
    more_machines,
    multiple,
    per_machine,
    point_mark,
    si,
    table,
)
from build_hooks.wording import why_no_transfer
from snippets import transfer_arithmetic as arithmetic  # plain arithmetic, no torch

GROUP = "transfer"


@section
def transfer(data: Dataset) -> Html:
    """Per machine: host↔device copy bandwidth by size, pinned and pageable, both ways; a note
    where there is no GPU."""
    def one(m: Machine) -> Html:
        if not m.benchmarks(GROUP):
            return missing(f"Not applicable on this machine: {why_no_transfer(m)}.")
        series, columns, points = [], {}, {}
        for direction in ("host_to_device", "device_to_host"):
            for memory in ("pageable", "pinned"):
                bw = analysis.transfer_bandwidth(m, direction, memory)
                label = f"{direction.replace('_', ' ')}, {memory}"
                series.append(plots.Series(label, list(bw), [v / 1e9 for v in bw.values()],
                                           "-" if memory == "pinned" else "--", label))
                columns[label] = bw
                points[label] = {b["params"]["bytes"]: b for b in m.measured(GROUP, direction=direction,
                                                                              memory=memory)}
        # A row per size and a column per way: four ways of ten sizes read as one short table, not forty rows.
        sizes = sorted({n for bw in columns.values() for n in bw})
        rows = [[si(n, "B")] + [_rate_cell(bw[n], points[label][n]) if n in bw else "not measured"
                                for label, bw in columns.items()] for n in sizes]
        svg = plots.line_panels([{"series": series, "xlabel": "copy size", "xunit": "B",
                                  "ylabel": "bandwidth (GB/s)", "subtitle": "Higher is better"}],
                                title="Host↔device copy bandwidth",
                                alt="Copy bandwidth versus size, pinned and pageable, both directions; "
                                    "the table below has the numbers.")
        return figure(svg, "Pinned host memory lets the GPU copy directly.") + table(
            ["size", *columns], rows, caption="Copy bandwidth by size, each way and each kind of host memory"
        ) + marks_note_for([b for by_size in points.values() for b in by_size.values()])
    shown = data.shown(GROUP)
    if shown and all(m.gpu is None for m in shown):  # one line, not one "not applicable" box per machine
        # The pages show machines with a GPU first, so the ones left out have none either.
        # The sentence above the tabs says why (transfer_summary): here, only that nothing is shown.
        return missing("Not applicable on any machine in this build's data.")
    return per_machine(data, GROUP, one)


def _rate_cell(rate: float, bench: dict) -> Html:
    """A copy's bandwidth with its timing's caveat marks (a noisy copy time is a noisy rate)."""
    return esc(si(rate, "B/s")) + point_mark(bench)


@section
def transfer_arithmetic(data: Dataset) -> Html:
    """Copy times at the published link rates and at every measured pinned rate (its largest copy's: small copies
    reach less, so a column computed from it is a floor, as the published ones are)."""
    rates = {f"{name} (published)": rate for name, rate in arithmetic.PUBLISHED.items()}
    for machine in data.shown(GROUP):
        measured = analysis.transfer_bandwidth(machine, "host_to_device", "pinned")
        if measured:
            # A time computed from the largest copy's measured rate, not a timed copy of that size: said so.
            best = measured[max(measured)]
            # Headed by the GPU's name: the machine's full label made a 110-character heading (#39 read).
            name = machine.gpu["name"] if machine.gpu else machine.label
            rates[f"{name}'s bus, measured pinned ({si(best, 'B/s')})"] = best
    rows = [[f"{mb} MB"] + [si(ms / 1e3, "s") for ms in times]  # µs where a copy is small, not "0.000208 ms"
            for mb, times in arithmetic.times_ms(list(rates.values()))]
    # Machines left out are worth pointing to only if one of them measured a bus: else every column is published.
    measured_elsewhere = any(analysis.transfer_bandwidth(m, "host_to_device", "pinned") for m in data.machines)
    caption = ("Bytes ÷ bandwidth, computed at each rate rather than timed: a real small copy also pays a fixed "
               "cost, so it takes longer")
    return table(["size", *rates], rows, caption=caption) + (more_machines(data, GROUP) if measured_elsewhere
                                                              else Html(""))


@fact
def transfer_summary(data: Dataset) -> str:
    """A sentence: pinned against pageable host-to-GPU bandwidth at the largest size and the
    smallest copy's rate, or that this build has no GPU."""
    gpu = gpu_with(data, GROUP)
    if gpu is None:
        machine = data.host or (data.machines[0] if data.machines else None)
        reason = why_no_transfer(machine) if machine else "no machine was measured"
        # The section under it says "not applicable" for every machine: here, only why, once.
        return f"This build measured no copy to a GPU: {reason}."
    pinned = analysis.transfer_bandwidth(gpu, "host_to_device", "pinned")
    pageable = analysis.transfer_bandwidth(gpu, "host_to_device", "pageable")
    if not pinned or max(pinned) not in pageable:
        raise MissingData(f"{gpu.source} has no pinned and pageable host-to-device copies of one size")
    size, small = max(pinned), min(pinned)

    def said(memory: str, n: int) -> str:  # a rate with its point's caveats in words, as the table marks it
        return caveat(gpu.measured(GROUP, direction="host_to_device", memory=memory, bytes=n)[0])
    return (f"On {untrusted.placeholder(gpu.label)}, copying {si(size, 'B')} to the GPU reached "
            f"{si(pinned[size], 'B/s')}{said('pinned', size)} from pinned memory and {si(pageable[size], 'B/s')}"
            f"{said('pageable', size)} from pageable memory. A {si(small, 'B')} copy reached only "
            f"{si(pinned[small], 'B/s')}{said('pinned', small)}, because every copy has a fixed cost.")


@fact
def transfer_measured_line(data: Dataset) -> str:
    """The cheat sheet's measured twin of its published arithmetic: how long the host-to-GPU copy nearest the
    example's size took from pinned and from pageable memory, on the first machine that measured both; or that none
    did."""
    gpu = gpu_with(data, GROUP)
    pinned = analysis.transfer_bandwidth(gpu, "host_to_device", "pinned") if gpu else {}
    pageable = analysis.transfer_bandwidth(gpu, "host_to_device", "pageable") if gpu else {}
    both = [n for n in pinned if n in pageable]
    if not both:
        return "No copy to a GPU was measured for this build"
    # The measured size nearest the worked example's, so the two lines compare like for like.
    size = min(both, key=lambda n: abs(math.log(n / (arithmetic.EXAMPLE_MB * 1e6))))

    def took(memory: str, rate: float) -> str:  # a time with its point's caveats in words, as the table marks it
        return si(size / rate, "s") + caveat(gpu.measured(GROUP, direction="host_to_device", memory=memory,
                                                          bytes=size)[0])
    # A power-of-two buffer is named in MiB too: "268 MB" beside the example's "256 MB" reads as another size.
    mib = f" ({size / 2**20:g} MiB)" if size >= 2**20 and size & (size - 1) == 0 else ""
    return (f"Measured on {untrusted.placeholder(gpu.label)}: {si(size, 'B')}{mib} took {took('pinned', pinned[size])} "
            f"from pinned memory and {took('pageable', pageable[size])} from pageable memory")


@fact
def bus_against_memory(data: Dataset) -> str:
    """The measured twin of the page's published ratio: on the first machine that copied to its GPU, the pinned bus
    rate at its largest copy against its GPU's and its CPU's largest copy, each counted as the datasheets and the cost
    model count memory (bytes read plus written); or that no bus was measured."""
    from build_hooks import cost_model
    gpu = gpu_with(data, GROUP)
    pinned = analysis.transfer_bandwidth(gpu, "host_to_device", "pinned") if gpu else {}
    device = gpu.gpu_device("memory_bandwidth") if gpu else None
    gpu_params = cost_model.measured_params(gpu, device) if device else None
    if not pinned or gpu_params is None:
        return "No machine here measured both its bus and its GPU's memory"
    bus = pinned[max(pinned)]
    # One convention for memory, the datasheets' (read plus written), so the measured ratio sits beside the published
    # one. It is also the fair test of a round trip: sending bytes there and back crosses the bus twice, as an
    # operation on the CPU reads and writes each byte (#39 review: two conventions on one page read as two answers).
    said = (f"Measured on {untrusted.placeholder(gpu.label)}, the bus delivered {si(bus, 'B/s')}. A copy inside the "
            f"GPU's memory moved {si(gpu_params.bandwidth, 'B/s')}{caveat(analysis.largest_copy(gpu, device))}, "
            f"{multiple(gpu_params.bandwidth / bus)} the bus")
    cpu_params = cost_model.measured_params(gpu, "cpu")
    if cpu_params is not None:
        copy = analysis.largest_copy(gpu, "cpu")  # each rate carries its copy's caveats, as the tables mark them
        versus = {1: "more than", -1: "less than", 0: "about as much as"}[stats.compare(cpu_params.bandwidth, bus)]
        said += (f". One inside the CPU's memory moved {si(cpu_params.bandwidth, 'B/s')}"
                 f"{caveat(copy) if copy else ''}, {versus} the bus")
    return said + ". Memory rates count bytes read plus written, as datasheets do"
