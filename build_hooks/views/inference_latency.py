"""Batch-1 inference latency, against a batch-1 training step of the same model."""

from __future__ import annotations

from build_hooks import analysis, consistency, stats, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    TABLE_MACHINES,
    Html,
    capitalised,
    first_with,
    gpu_with,
    html,
    listing,
    machines_table,
    marks_note_for,
    measured_value,
    missing,
    mostly_slow,
    multiple,
    per_machine,
    si,
    slow_mark,
    table,
)
from build_hooks.wording import bracketed, interval_words, marked_timings, times_with_interval

GROUP = "inference_latency"


def _cpu_words(timed: dict, device: str, batch: int, widths: list[int]) -> str:
    """Where the GPU led at no width: the CPU as fast or faster, or, where it led at every width beyond both
    spreads, faster and by how much (#39 review: "as fast or faster" undersold a clear lead)."""
    leads = sorted(timed[(device, w, batch)]["median"] / timed[("cpu", w, batch)]["median"] for w in widths
                   if stats.compare_points(timed[(device, w, batch)], timed[("cpu", w, batch)]) > 0)
    if not widths or len(leads) < len(widths):
        return f"at batch {batch} the CPU served as fast or faster at every width"
    span = multiple(leads[0]) if multiple(leads[0]) == multiple(leads[-1]) else \
        f"{multiple(leads[0])} to {multiple(leads[-1])}"
    return f"at batch {batch} the CPU served faster at every width, by {span}"


@section
def inference_latency(data: Dataset) -> Html:
    """Per machine: the time to serve one request in inference mode, by device, width and batch."""
    def one(m: Machine) -> Html:
        points = sorted(m.measured(GROUP), key=lambda b: (b["params"]["device"], b["params"]["width"],
                                                          b["params"]["batch"]))
        rows = [[DEVICE_NAME[b["params"]["device"]], b["params"]["width"], b["params"]["batch"],
                 measured_value(b["stats"], b["extra_info"], "s")] for b in points]
        return (table(["device", "width", "batch", "one request served (inference mode)"], rows,
                      caption="Each request: copied to the device, one forward pass, the answer copied back "
                              "(on the CPU both copies are free)")
                + marks_note_for(points))
    return per_machine(data, GROUP, one)


@fact
def inference_summary(data: Dataset) -> str:
    """Batch-1 inference against a batch-1 training step of the same model (another experiment), on the build host;
    inference_versus_step tables every machine that measured both."""
    machine = first_with(data, GROUP)
    widest = max(b["params"]["width"] for b in machine.measured(GROUP, device="cpu", batch=1))
    ratio, step, forward = _step_over_forward(machine, widest)
    text = f"one batch-1 forward pass at width {widest} took {si(forward['stats']['median'], 's')} on the build host"
    quoted = [forward]
    if ratio is not None and ratio.verdict > 0:
        text += (f". A batch-1 training step of the same model took {si(step['stats']['median'], 's')}, "
                 f"{multiple(ratio.value)} longer ({interval_words(ratio)})"
                 + _epoch_disagrees(machine, widest, step["stats"]["median"]))
        quoted.append(step)
    return bracketed(text, marked_timings(quoted))  # caveats in the sentence's last bracket, not a sentence


@fact
def inference_gpu_lead(data: Dataset) -> str:
    """Where a GPU served a request faster than its own machine's CPU, per batch measured, beyond both spreads (the
    site's rule): the widths where it led, or that it led at none; or that no GPU served requests."""
    machine = gpu_with(data, GROUP)
    if machine is None:
        return "No GPU served requests for this build, so only CPUs are compared"
    device = machine.gpu_device(GROUP)
    timed = {(b["params"]["device"], b["params"]["width"], b["params"]["batch"]): b["stats"]
             for b in machine.measured(GROUP)}
    said = []
    for batch in sorted({batch for _, _, batch in timed}):
        widths = sorted(w for d, w, b in timed if d == "cpu" and b == batch and (device, w, batch) in timed)
        led = [str(w) for w in widths if stats.compare_points(timed[("cpu", w, batch)], timed[(device, w, batch)]) > 0]
        said.append(_cpu_words(timed, device, batch, widths) if not led else
                    f"at batch {batch} the GPU served faster "
                    + ("at every width" if len(led) == len(widths) else
                       f"only at width{'s' if len(led) > 1 else ''} {listing(led)}"))
    # One short sentence per batch; the machine by its GPU's name (its full label is in the tables).
    first, *rest = said
    return ". ".join([f"On the {untrusted.placeholder(machine.gpu['name'])} machine, {first}"]
                     + [capitalised(clause) for clause in rest])


@section
def inference_versus_step(data: Dataset) -> Html:
    """Per machine that measured both at the widest width: the batch-1 forward pass, the batch-1 training step of
    the same model, and how many times longer the step took (the saving depends on the CPU)."""
    machine = first_with(data, GROUP)
    widest = max(b["params"]["width"] for b in machine.measured(GROUP, device="cpu", batch=1))
    found = [(m, step, forward, r) for m in data.with_experiment(GROUP)
             for r, step, forward in [_step_over_forward(m, widest)] if r is not None]
    if not found:
        return missing("No CPU measured both a forward pass and a training step at this width.")
    shown = found[:TABLE_MACHINES]
    # Each timing with its marks, and a machine that began most rounds slow marked by its name: keyed under it.
    rows = [[html("{}{}", m.label, slow_mark(m)), measured_value(forward["stats"], forward["extra_info"], "s"),
             measured_value(step["stats"], step["extra_info"], "s"), times_with_interval(r)]
            for m, step, forward, r in found]
    slow = {"slow"} if any(mostly_slow(m) for m, *_ in shown) else set()
    return (machines_table(["CPU", "batch-1 forward pass", "batch-1 training step", "step ÷ forward"], rows,
                           f"One request against one training step, width {widest}")
            + marks_note_for([p for _, step, forward, _ in shown for p in (forward, step)], also=slow))


def _step_over_forward(machine, width: int) -> tuple:
    """(the batch-1 step's time over the batch-1 forward pass's at `width`, the step's point, the
    forward pass's point); the ratio and the step are None unless both were measured."""
    forward = machine.measured(GROUP, device="cpu", batch=1, width=width)
    step = machine.measured(analysis.STEP, device="cpu", batch=1, width=width)
    if not (forward and step):
        return None, None, forward[0] if forward else None
    return stats.unpaired_ratio(step[0]["stats"], forward[0]["stats"]), step[0], forward[0]


def _epoch_disagrees(machine, width: int, step_s: float) -> str:
    """What the consistency check says when the batch-1 step (`step_s`, its median) it was compared
    with disagrees with its share of a measured epoch (the ratio then rests on a doubtful point)."""
    for check in consistency.checks(machine):
        if check.kind == "epoch" and (check.batch, check.width) == (1, width) and not check.agrees:
            # check.ratio is the step's median over its epoch share, so the share is this:
            return (f". That step time disagrees with its share of a measured epoch, {si(step_s / check.ratio, 's')} "
                    "(About the data), so the ratio is rough")
    return ""
