"""When the CPU is right: a batch-size rule from this build's data (measured GPU, else the estimate)."""

from __future__ import annotations

from build_hooks import race, stats, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import fact
from build_hooks.render import MissingData


@fact
def cpu_choice_rule(data: Dataset) -> str:
    """Per width, the batch from which the GPU's epoch stays ahead: the race's own lanes, measured or estimated.

    The race's lanes, so the rule and the race agree; ahead means faster beyond both
    spreads (an estimate's spread is the model's error).
    """
    lanes = race.race_data(data)["lanes"]
    gpu = next((lane for lane in lanes if lane["kind"] == "GPU"), None)
    cpu = next((lane for lane in lanes if lane["kind"] == "CPU" and gpu and lane["machine_id"] == gpu["machine_id"]),
               None)
    if gpu is None or cpu is None:
        raise MissingData("no GPU epochs, measured or estimated, beside a CPU's")
    against = (f"the {untrusted.text(gpu['label'])} estimate (cost model on datasheet figures and this "
               "host's own per-operation and loop costs, not a measurement)" if gpu["estimate"] else
               f"the measured {untrusted.text(gpu['label'])}")
    parts = []
    for width in sorted(int(w) for w in cpu["epochs"]):
        ours, theirs = cpu["epochs"][str(width)], gpu["epochs"].get(str(width), {})
        batches = sorted(int(b) for b in set(ours) & set(theirs))
        if not batches:
            continue
        # "Ahead" only beyond both spreads (and an estimate's error), so a near-tie is no crossover.
        ahead = {b: stats.compare_points(race.point_stats(ours[str(b)]), race.point_stats(theirs[str(b)])) > 0
                 for b in batches}
        batch = next((b for b in batches if all(ahead[later] for later in batches if later >= b)), None)
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
