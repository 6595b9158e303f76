"""When the CPU is right: batch-1 inference latency, and a batch-size rule from this build's data."""

from __future__ import annotations

from build_hooks import analysis, cost_model, stats, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (DEVICE_NAME, MissingData, first_with, gpu_with, marks_note_for, measured_value,
                                per_machine, si, table, times_with_interval)

GROUP = "inference_latency"


@section
def inference_latency(data: Dataset) -> str:
    def one(m: Machine) -> str:
        points = sorted(m.measured(GROUP), key=lambda b: (b["params"]["device"], b["params"]["width"],
                                                          b["params"]["batch"]))
        rows = [[DEVICE_NAME[b["params"]["device"]], str(b["params"]["width"]), str(b["params"]["batch"]),
                 measured_value(b["stats"], b["extra_info"], "s")] for b in points]
        return table(["device", "width", "batch", "one forward pass (inference mode)"], rows) + marks_note_for(points)
    return per_machine(data, GROUP, one)


@fact
def inference_summary(data: Dataset) -> str:
    """Batch-1 inference against a batch-1 training step of the same model (another experiment)."""
    machine = first_with(data, GROUP)
    widest = max(b["params"]["width"] for b in machine.measured(GROUP, device="cpu", batch=1))
    forward = machine.measured(GROUP, device="cpu", batch=1, width=widest)[0]["stats"]
    steps = machine.measured(analysis.STEP, device="cpu", batch=1, width=widest)
    text = f"one batch-1 forward pass at width {widest} took {si(forward['median'], 's')} on this CPU"
    if steps:
        ratio = stats.unpaired_ratio(steps[0]["stats"], forward)
        if ratio.verdict > 0:
            text += (f", {times_with_interval(ratio)} less than a batch-1 training step of the same model "
                     "(no backward pass, no optimiser, no autograd bookkeeping)")
    return text


def _estimated_crossover(host: Machine, width: int) -> int | None:
    """The batch from which the published-figure GPU estimate beats this CPU's measured steps."""
    gpu, work = cost_model.gpu_estimate_params(host), cost_model.step_work(host)
    cpu = {p.batch: p.seconds for p in analysis.step_curve(host, "cpu", width)}
    estimate = {b: cost_model.predict(gpu, work[(b, width)], b, width)["seconds"] for b in cpu if (b, width) in work}
    return analysis.crossover(cpu, estimate)


@fact
def cpu_choice_rule(data: Dataset) -> str:
    """Per width, the batch below which this CPU is not beaten, from a measured GPU or else the estimate."""
    measured = gpu_with(data, analysis.STEP)
    host = measured or first_with(data, analysis.STEP)
    widths = analysis.widths(host)
    if not widths:
        raise MissingData("no training steps")
    against = (f"the measured {untrusted.text(measured.device_label('cuda'))}" if measured else
               f"the {cost_model.PUBLISHED_H200.name} estimate (cost model on datasheet figures, not a measurement)")
    parts = []
    for width in widths:
        batch = analysis.crossover_batch(host, width) if measured else _estimated_crossover(host, width)
        batches = [p.batch for p in analysis.step_curve(host, "cpu", width)]
        if batch is None:
            parts.append(f"at width {width} it never stays ahead of the CPU, up to batch {max(batches)}")
        elif batch == min(batches):
            parts.append(f"at width {width} it is ahead from batch {batch}, the smallest measured")
        else:
            parts.append(f"at width {width} it stays ahead only from batch {batch} on")
    return f"against {against}: " + "; ".join(parts)
