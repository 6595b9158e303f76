"""When the CPU is right: a batch-size rule from this build's data (measured GPU, else the estimate)."""

from __future__ import annotations

from build_hooks import analysis, cost_model, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact
from build_hooks.render import MissingData, first_with, gpu_with


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
