"""Memory: activations saved for backward grow with the batch; weights do not."""

from __future__ import annotations

from build_hooks import analysis, plots, untrusted
from build_hooks.dataset import Dataset, Machine, is_gpu
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    Html,
    MissingData,
    figure,
    first_with,
    gpu_with,
    html,
    listing,
    more_machines,
    multiple,
    note,
    per_machine,
    provenance,
    rough_count,
    si,
    table,
)

GROUP = "activation_memory"
MEMORY_SIZES_GB = (8, 24, 80)  # common accelerator memory sizes for the extrapolation


def fit(machine: Machine, device: str) -> tuple[float, float] | None:
    """Least-squares line bytes = fixed + per_sample * batch through the measured points."""
    return _line(analysis.medians(machine, GROUP, "batch", device=device))


def _line(points: dict[int, float]) -> tuple[float, float] | None:
    """Least-squares (fixed, per_sample) through {batch: bytes}, or None with fewer than two points."""
    if len(points) < 2:
        return None
    xs, ys = zip(*sorted(points.items()))
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


@section
def activation_memory(data: Dataset) -> Html:
    """Per machine: saved activations by batch beside the weights, plotted, with a table
    of the CUDA allocator's peak and any out-of-memory points."""
    def one(m: Machine) -> Html:
        counts = {device: {b["params"]["batch"]: b for b in m.benchmarks(GROUP, device=device)}
                  for device in m.devices(GROUP)}
        saved = {device: {n: b["stats"]["median"] for n, b in by.items() if b.get("status", "ok") != "oom"}
                 for device, by in counts.items()}
        # Saved bytes are counts: where every device counted the same, one line and one column say it for all.
        alike = len({tuple(sorted(by.items())) for by in saved.values()}) == 1
        drawn = {"cpu" if "cpu" in saved else next(iter(saved)): saved[next(iter(saved))]} if alike else saved
        series = [plots.Series("saved activations" if alike and len(saved) > 1 else
                               f"{DEVICE_NAME[device]}: saved activations", sorted(by), [by[n] for n in sorted(by)],
                               "--" if is_gpu(device) else "-", f"{device} activations")
                  for device, by in drawn.items()]
        cpu_points = sorted(m.measured(GROUP, device="cpu"), key=lambda b: b["params"]["batch"])
        if cpu_points:
            weights = cpu_points[0]["extra_info"]["weight_bytes"]
            series.append(plots.Series("weights", [b["params"]["batch"] for b in cpu_points],
                                       [weights] * len(cpu_points), ":", "weights"))
        svg = plots.line_panels([{"series": series, "xlabel": "batch size (samples)",
                                  "ylabel": "memory", "yunit": "B", "subtitle": "Counted from the autograd graph"}],
                                title="Activations saved for backward versus weights",
                                alt="Bytes of activations saved for backward versus batch size, with the weights for "
                                    "scale; the table below has the numbers.")
        head, rows = _count_rows(counts, alike)
        # The allocator's peak is in the table, not the plot: said so where a GPU gave one.
        on_gpu = _on_gpu(m)
        caption = "Activations are counted with saved-tensor hooks." + (
            " Every device counted the same bytes." if alike and len(saved) > 1 else "") + (
            " The table gives the CUDA allocator's peak too." if on_gpu else "")
        return figure(svg, caption) + table(head, rows)
    shown = data.shown(GROUP)
    if len(shown) > 1 and len({_cpu_counts(m) for m in shown}) == 1:
        # Byte counts, not timings: identical on every machine's CPU, so one figure says it for all. A machine with a
        # GPU is the one drawn, since its figure adds the GPU's counts and the allocator's peak.
        drawn = next((m for m in shown if _on_gpu(m)), shown[0])
        others = [m.label for m in shown if m is not drawn]
        return (one(drawn) + provenance(drawn, data.host)
                + note(f"{'The other machine' if len(others) == 1 else f'The other {len(others)} machines'} shown "
                       f"counted the same bytes on {'its' if len(others) == 1 else 'their'} CPU: {listing(others)}. "
                       "They are counts, not timings.")
                + more_machines(data, GROUP))
    return per_machine(data, GROUP, one)


def _count_rows(counts: dict[str, dict[int, dict]], alike: bool) -> tuple[list[str], list[list]]:
    """(head, rows), one row per batch: the saved bytes (one column where every device counted alike, else one per
    device) and the CUDA allocator's peak where a GPU measured it; "out of memory" where a device ran out."""
    gpu = next((d for d in counts if is_gpu(d)), None)
    columns = [None] if alike else list(counts)

    def saved(device: str | None, batch: int) -> object:
        point = counts[device or next(iter(counts))].get(batch)
        if point is None:
            return "–"
        if point.get("status", "ok") == "oom":
            return html("<strong>out of memory</strong>")
        return si(point["stats"]["median"], "B")

    def peak(batch: int) -> str:
        point = counts[gpu].get(batch)
        found = point and point.get("status", "ok") != "oom" and point["extra_info"].get("peak_allocated_bytes")
        return si(found, "B") if found else "–"
    head = ["batch"] + ["saved activations" if d is None else f"saved activations ({DEVICE_NAME[d]})"
                        for d in columns] + (["CUDA peak allocated"] if gpu else [])
    rows = [[batch] + [saved(d, batch) for d in columns] + ([peak(batch)] if gpu else [])
            for batch in sorted({n for by in counts.values() for n in by})]
    return head, rows


def _on_gpu(machine: Machine) -> bool:
    return any(is_gpu(device) for device in machine.devices(GROUP))


def _cpu_counts(machine: Machine) -> tuple:
    """A machine's saved-activation and weight bytes by batch, on its CPU."""
    return tuple(sorted((b["params"]["batch"], b["stats"]["median"], b["extra_info"]["weight_bytes"])
                        for b in machine.measured(GROUP, device="cpu")))


def cpu_sizes(data: Dataset) -> tuple[dict[int, float], int, float]:
    """(saved activation bytes by batch, the largest batch, the weights' bytes) of the CPU points."""
    machine = first_with(data, GROUP)
    sizes = analysis.medians(machine, GROUP, "batch", device="cpu")
    if not sizes:
        raise MissingData("no CPU activation-memory point")
    batch = max(sizes)
    return sizes, batch, machine.measured(GROUP, device="cpu", batch=batch)[0]["extra_info"]["weight_bytes"]


@fact
def memory_summary(data: Dataset) -> str:
    """A sentence: the weights' size against the CPU's saved activations at the smallest and
    largest batch measured."""
    sizes, batch, weights = cpu_sizes(data)
    ratio = sizes[batch] / weights
    relation = f"{multiple(ratio)} the weights" if ratio >= 1 else f"{multiple(1 / ratio)} smaller than the weights"
    return (f"the network's weights take {si(weights, 'B')}. The activations saved for "
            f"backward take {si(sizes[min(sizes)], 'B')} at batch {min(sizes)} and "
            f"{si(sizes[batch], 'B')} at batch {batch}, {relation}")


@fact
def memory_limits(data: Dataset) -> str:
    """A sentence: the bytes each sample adds (a line through the CPU points); memory_limits_table extrapolates."""
    return f"each sample adds {si(_per_sample_line(data)[1], 'B')} of saved activations"


def _per_sample_line(data: Dataset) -> tuple[float, float]:
    line = fit(first_with(data, GROUP), "cpu")
    if line is None or line[1] <= 0:
        raise MissingData("not enough activation-memory points for a fit")
    return line


@section
def memory_limits_table(data: Dataset) -> Html:
    """The batch that would fill 8, 24 and 80 GB with saved activations, by a straight line through the measured
    points: an estimate, one row per memory size."""
    lines = [("saved activations only", _per_sample_line(data))]
    peak = _peak_line(data)
    if peak is not None:  # what the allocator really held: activations plus backward's gradients and temporaries
        lines.append((f"by the {peak[0]}'s allocator peak", peak[1]))
    # Two significant figures: an extrapolation is not known to the sample.
    rows = [[f"{gb} GB"] + [f"about {rough_count((gb * 1e9 - fixed) / per_sample)}" for _, (fixed, per_sample) in lines]
            for gb in MEMORY_SIZES_GB]
    return table(["memory"] + [f"batch that fills it, {how}" for how, _ in lines], rows,
                 caption="Straight lines through the measured points, extrapolated: estimates that leave out the "
                         "optimiser state and the framework's own memory")


def _peak_line(data: Dataset) -> tuple[str, tuple[float, float]] | None:
    """(the GPU's name, a line through its allocator's peak bytes by batch), where a GPU recorded its peaks."""
    machine = gpu_with(data, GROUP)
    if machine is None:
        return None
    device = machine.gpu_device(GROUP)
    peaks = {b["params"]["batch"]: b["extra_info"]["peak_allocated_bytes"]
             for b in machine.measured(GROUP, device=device) if b["extra_info"].get("peak_allocated_bytes")}
    line = _line(peaks)
    return (machine.device_label(device), line) if line is not None and line[1] > 0 else None


@fact
def training_memory(data: Dataset) -> str:
    """A sentence: the memory arithmetic of one fp32 training step with Adam for this build's
    network at its largest measured batch: weights, gradients, two moments, measured activations."""
    sizes, batch, weights = cpu_sizes(data)
    state = 4 * weights  # weights + gradients + Adam's two moments, each the weights' size in fp32
    total = state + sizes[batch]
    return (f"its weights take {si(weights, 'B')}, so gradients add {si(weights, 'B')} and Adam's two moments "
            f"{si(2 * weights, 'B')}: {si(state, 'B')} of training state, 16 bytes per parameter. At batch "
            f"{batch} the measured activations add {si(sizes[batch], 'B')}, {100 * sizes[batch] / total:.0f}% of "
            f"the {si(total, 'B')} these four parts add up to. The backward pass's own gradients of "
            "activations and its temporaries come on top, so a step's true peak is higher")


@fact
def gpu_peak_memory(data: Dataset) -> str:
    """What a measured GPU's allocator peaked at, at its largest batch, against the activations saved there; or where
    that none did (the page links to how it is read)."""
    machine = gpu_with(data, GROUP)
    points = [b for b in machine.measured(GROUP, device=machine.gpu_device(GROUP))
              if b["extra_info"].get("peak_allocated_bytes")] if machine else []
    if not points:
        return "This build has no GPU allocator peak"
    largest = max(points, key=lambda b: b["params"]["batch"])
    peak, saved = largest["extra_info"]["peak_allocated_bytes"], largest["stats"]["median"]
    gpu = untrusted.placeholder(machine.device_label(machine.gpu_device(GROUP)))
    return (f"On the {gpu} at batch {largest['params']['batch']}, the allocator peaked at {si(peak, 'B')}, "
            f"{multiple(peak / saved)} the {si(saved, 'B')} of saved activations")
