"""When the CPU is right: a batch-size rule from this build's data (measured GPU, else the estimate)."""

from __future__ import annotations

from build_hooks import analysis, race, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import fact
from build_hooks.render import MissingData


# Where two close curves part moves by a doubling between runs of the same machine, so
# the rule names the scale of the batch, not the batch itself (batch 1 is exact).
SCALES = ((4, "a few samples"), (64, "tens of samples"), (float("inf"), "hundreds of samples"))


def scale_of(batch: int) -> str:
    return next(words for limit, words in SCALES if batch <= limit)


@fact
def cpu_choice_rule(data: Dataset) -> str:
    """Per width, the batch from which the GPU's epoch stays ahead: the race's own lanes, measured or estimated.

    The race's lanes, so the rule and the race agree; ahead means faster beyond both
    spreads (an estimate's spread is its stated uncertainty, and the sentence says it is an estimate).
    """
    lanes = race.race_data(data)["lanes"]
    gpu = next((lane for lane in lanes if lane["kind"] == "GPU"), None)
    cpu = next((lane for lane in lanes if lane["kind"] == "CPU" and gpu and lane["machine_id"] == gpu["machine_id"]),
               None)
    if gpu is None or cpu is None:
        raise MissingData("no GPU epochs, measured or estimated, beside a CPU's")
    against = (f"an estimate of the {untrusted.placeholder(gpu['label'])} (from its datasheet and this host's own "
               f"per-operation cost: not a measurement, unvalidated, and counted as uncertain by "
               f"{gpu['uncertainty']:g}× either way, so this rule is only as good as that estimate; and since it "
               "issues operations at this host's pace, a host that issues them faster would move these batches down)"
               if gpu["estimate"] else f"the measured {untrusted.placeholder(gpu['label'])}")
    parts = []
    for width in sorted(int(w) for w in cpu["epochs"]):
        ours, theirs = cpu["epochs"][str(width)], gpu["epochs"].get(str(width), {})
        batches = sorted(int(b) for b in set(ours) & set(theirs))
        if not batches:
            continue
        # "Ahead" only beyond both spreads (and an estimate's error), so a near-tie is no crossover.
        batch = analysis.crossover(analysis.verdicts({b: race.point_stats(ours[str(b)]) for b in batches},
                                                     {b: race.point_stats(theirs[str(b)]) for b in batches}))
        if batch is None:
            parts.append(f"at width {width} it is not ahead at batch {max(batches)}, the largest measured")
        elif batch == min(batches):
            parts.append(f"at width {width} it is ahead from batch {batch}, the smallest measured")
        else:
            parts.append(f"at width {width} it pulls ahead at batches of {scale_of(batch)}")
    if not parts:
        raise MissingData("no width with both CPU and GPU epochs")
    return (f"against {against}, for the CPU lane {untrusted.placeholder(cpu['label'])} (another CPU moves the line), "
            "comparing epochs as the race does and counting a lead only beyond the spread: " + "; ".join(parts))
