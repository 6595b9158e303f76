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
        series, rows = [], []
        columns = 4 if _on_gpu(m) else 3  # the CUDA allocator's peak exists only on a GPU
        for device in m.devices(GROUP):
            ok = sorted(m.measured(GROUP, device=device), key=lambda b: b["params"]["batch"])
            series.append(plots.Series(f"{DEVICE_NAME[device]}: saved activations", [b["params"]["batch"] for b in ok],
                                       [b["stats"]["median"] for b in ok],
                                       "--" if is_gpu(device) else "-", f"{device} activations"))
            if ok and device == "cpu":
                weights = ok[0]["extra_info"]["weight_bytes"]
                series.append(plots.Series("weights", [b["params"]["batch"] for b in ok],
                                           [weights] * len(ok), ":", "weights"))
            for b in sorted(m.benchmarks(GROUP, device=device), key=lambda b: b["params"]["batch"]):
                if b.get("status", "ok") == "oom":
                    rows.append([DEVICE_NAME[device], b["params"]["batch"], html("<strong>out of memory</strong>"),
                                 ""][:columns])
                else:
                    peak = b["extra_info"].get("peak_allocated_bytes")
                    rows.append([DEVICE_NAME[device], b["params"]["batch"], si(b["stats"]["median"], "B"),
                                 si(peak, "B") if peak else "not measured (CPU)"][:columns])
        svg = plots.line_panels([{"series": series, "xlabel": "batch size (samples)",
                                  "ylabel": "memory", "yunit": "B", "subtitle": "Counted from the autograd graph"}],
                                title="Activations saved for backward versus weights",
                                alt="Bytes of activations saved for backward versus batch size, with the weights for "
                                    "scale; the table below has the numbers.")
        # The allocator's peak is in the table, not the plot: said so where a GPU gave one.
        return figure(svg, "Activations are counted with saved-tensor hooks."
                      + (" The table gives the CUDA allocator's peak too." if columns == 4 else "")) + table(
            ["device", "batch", "saved activations", "CUDA peak allocated"][:columns], rows)
    shown = data.shown(GROUP)
    if len(shown) > 1 and len({_cpu_counts(m) for m in shown}) == 1:
        # Byte counts, not timings: identical on every CPU-only machine, so one table says it for all.
        return (one(shown[0]) + provenance(shown[0], data.host)
                + note(f"{'The other machine' if len(shown) == 2 else f'The other {len(shown) - 1} machines'} shown "
                       f"counted the same bytes: {listing([m.label for m in shown[1:]])}. They are counts, not "
                       "timings.")
                + more_machines(data, GROUP))
    return per_machine(data, GROUP, one)


def _on_gpu(machine: Machine) -> bool:
    return any(is_gpu(device) for device in machine.devices(GROUP))


def _cpu_counts(machine: Machine) -> tuple | None:
    """A CPU-only machine's saved-activation and weight bytes by batch (None with a GPU: its table differs)."""
    if _on_gpu(machine):
        return None
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
