"""Synchronisation: what reading the loss every step costs."""

from __future__ import annotations

from build_hooks.dataset import Dataset
from build_hooks.page import fact, section
from build_hooks.render import DEVICE_NAME, first_with, medians_table, si

GROUP = "sync_cost"


@section
def sync_cost(data: Dataset) -> str:
    return medians_table(data, GROUP, [("device", "device"), ("read_loss", "loss read")])


@fact
def sync_summary(data: Dataset) -> str:
    machine = first_with(data, GROUP)
    parts = []
    for device in machine.devices(GROUP):
        points = {b["params"]["read_loss"]: b["stats"] for b in machine.measured(GROUP, device=device)}
        every, once = points["every_step"], points["on_device"]
        diff = every["median"] - once["median"]
        noise = max(every["iqr"], once["iqr"])
        name = DEVICE_NAME[device]
        if abs(diff) <= noise:
            parts.append(f"on the {name} the difference ({si(abs(diff), 's')} per step) is within "
                         f"the measurement noise: there is no queue to drain")
        else:
            parts.append(f"on the {name} reading the loss every step {'cost' if diff > 0 else 'saved'} "
                         f"{si(abs(diff), 's')} per step ({100 * diff / once['median']:+.0f}%)")
    return "; ".join(parts) + "."
