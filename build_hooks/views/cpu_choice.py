"""When the CPU is right: a batch-size rule from this build's data (measured GPU, else the estimate)."""

from __future__ import annotations

from build_hooks import race, stats, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact
from build_hooks.render import MissingData, first_with


EPOCH = "epoch_time"


def _epochs(machine: Machine, device: str, width: int) -> dict[int, dict]:
    return {b["params"]["batch"]: b["stats"] for b in machine.measured(EPOCH, device=device, width=width)}


@fact
def cpu_choice_rule(data: Dataset) -> str:
    """Per width, the batch from which the GPU's epoch stays ahead: measured, else the race's estimate.

    Epochs, as the race compares them, so the rule and the race agree; ahead means faster
    beyond both spreads (an estimate's spread is the model's error).
    """
    measured = next((m for m in data.with_experiment(EPOCH) if "cuda" in m.devices(EPOCH)), None)
    host = measured or first_with(data, EPOCH)
    estimate = None if measured else race.estimate_lane(0, host)
    if estimate is None and measured is None:
        raise MissingData("no GPU epochs, measured or estimated")
    against = (f"the measured {untrusted.text(measured.device_label('cuda'))}" if measured else
               f"the {untrusted.text(estimate['label'])} estimate (cost model on datasheet figures and this "
               "host's own per-operation and loop costs, not a measurement)")
    parts = []
    for width in sorted({b["params"]["width"] for b in host.measured(EPOCH, device="cpu")}):
        cpu = _epochs(host, "cpu", width)
        gpu = (_epochs(host, "cuda", width) if measured else
               {int(b): {"median": p["seconds"], "q1": p["q1"], "q3": p["q3"]}
                for b, p in estimate["epochs"].get(str(width), {}).items()})
        batches = sorted(set(cpu) & set(gpu))
        # "Ahead" only beyond both spreads (and an estimate's error), so a near-tie is no crossover.
        ahead = {b: stats.compare_points(cpu[b], gpu[b]) > 0 for b in batches}
        batch = next((b for b in batches if all(ahead[later] for later in batches if later >= b)), None)
        if not batches:
            continue
        if batch is None:
            parts.append(f"at width {width} it never stays ahead of the CPU, up to batch {max(batches)}")
        elif batch == min(batches):
            parts.append(f"at width {width} it is ahead from batch {batch}, the smallest measured")
        else:
            parts.append(f"at width {width} it stays ahead only from batch {batch} on")
    if not parts:
        raise MissingData("no width with both CPU and GPU epochs")
    return (f"against {against}, comparing epochs as the race does and counting a lead only beyond the "
            "spread: " + "; ".join(parts))
