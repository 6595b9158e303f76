"""Synchronisation: what reading the loss every step costs."""

from __future__ import annotations

from build_hooks import stats
from build_hooks.dataset import Dataset
from build_hooks.page import fact, section
from build_hooks.render import DEVICE_NAME, Html, first_with, medians_table, si, times_with_interval

GROUP = "sync_cost"


@section
def sync_cost(data: Dataset) -> Html:
    """Per machine: median step times per device, reading the loss each step or keeping it there."""
    return medians_table(data, GROUP, [("device", "device"), ("read_loss", "loss read")])


@fact
def sync_summary(data: Dataset) -> str:
    """A sentence per device: what reading the loss every step cost against keeping it on device."""
    machine = first_with(data, GROUP)
    parts = []
    for device in machine.devices(GROUP):
        points = {b["params"]["read_loss"]: b["stats"] for b in machine.measured(GROUP, device=device)}
        every, once = points["every_step"], points["on_device"]
        ratio = stats.paired_ratio(every, once)
        diff = every["median"] - once["median"]
        name = DEVICE_NAME[device]
        if ratio.verdict == 0:
            parts.append(f"on the {name} reading the loss every step took about the same time as keeping it "
                         f"on the device ({si(every['median'], 's')} against {si(once['median'], 's')} per step; "
                         f"{stats.SAME_MEANS})")
        else:
            parts.append(f"on the {name} reading the loss every step {'cost' if diff > 0 else 'saved'} "
                         f"{si(abs(diff), 's')} per step ({times_with_interval(ratio)} the time of keeping it "
                         "on the device)")
    return "; ".join(parts) + "."
