"""Synchronisation: what reading the loss every step costs."""

from __future__ import annotations

from build_hooks import stats, untrusted
from build_hooks.dataset import Dataset, is_gpu
from build_hooks.page import fact, section
from build_hooks.render import DEVICE_NAME, Html, first_with, gpu_with, listing, medians_table, si
from build_hooks.wording import interval_words, times_with_interval

GROUP = "sync_cost"


@section
def sync_cost(data: Dataset) -> Html:
    """Per machine: median step times per device, reading the loss each step or keeping it there."""
    return medians_table(data, GROUP, [("device", "device"), ("read_loss", "loss read")])


@fact
def sync_summary(data: Dataset) -> str:
    """A sentence per device: what reading the loss every step cost against keeping it on device,
    the CPU named as the control it is (it has no queue to drain), and no GPU claim without one. A host without a
    GPU borrows the GPU of the first machine that measured one, named."""
    machine = first_with(data, GROUP)
    parts = []
    for device in machine.devices(GROUP):
        where = f"on the {DEVICE_NAME[device]}," if is_gpu(device) else "on the CPU, the control,"
        parts += _device_parts(machine, device, where)
    if not machine.gpu_device(GROUP):
        other = gpu_with(data, GROUP)
        if other is None:
            parts.append("no measurement here ran on a GPU, so the wait this pitfall is about was not measured")
        else:
            gpu = other.gpu_device(GROUP)
            parts += _device_parts(other, gpu, f"on the {untrusted.placeholder(other.device_label(gpu))},")
    parts = list(dict.fromkeys(parts))  # the rule for "the same" is said once
    # One idea per sentence: the first follows the page's "Measured here:", the others start capitalised.
    return ". ".join([parts[0]] + [part[:1].upper() + part[1:] for part in parts[1:]]) + "." + _controls_elsewhere(
        data, machine)


def _device_parts(machine, device: str, where: str) -> list[str]:
    """One device's sentences: the two ways' times and their verdict, and for a CPU why it is the control."""
    points = {b["params"]["read_loss"]: b["stats"] for b in machine.measured(GROUP, device=device)}
    every, once = points["every_step"], points["on_device"]
    ratio = stats.paired_ratio(every, once)
    diff = every["median"] - once["median"]
    control = ([] if is_gpu(device) else
               ["the CPU's operations finish before the next one starts, so there is no queue for a read to drain"])
    both = f"{si(every['median'], 's')} against {si(once['median'], 's')} per step"
    queue = ([] if not is_gpu(device) else
             ["a read waits only for work already queued, and a host too slow to run ahead queues little"])
    if ratio.verdict == 0 and ratio.paired and (ratio.low > 1 or ratio.high < 1):  # small, but every round agrees
        way = "slower" if ratio.low > 1 else "faster"
        rounds = f"all {ratio.rounds} rounds" if ratio.kept == ratio.rounds else "nearly every round"
        return ([f"{where} reading the loss every step was {way} in {rounds}: {ratio.value:.2f}× "
                 f"overall ({both}). That is under this site's {stats.MEANINGFUL_RATIO:g}× rule for a difference, "
                 "but consistent"] + control + queue)
    if ratio.verdict == 0:
        return ([f"{where} reading the loss every step took about the same time as keeping it on the device ({both})"]
                + control + [stats.SAME_MEANS] + queue)
    parts = [f"{where} reading the loss every step {'cost' if diff > 0 else 'saved'} {si(abs(diff), 's')} per step "
             f"({both}, {times_with_interval(ratio)} the time of keeping it on the device)"] + control
    if not is_gpu(device):
        parts.append("with nothing queued, that is the read's own work (a Python number made from a "
                     "tensor) or the machine changing state between the two, not a wait")
    return parts


def _controls_elsewhere(data: Dataset, host) -> str:
    """Other machines whose CPU control differed beyond the spread: on a CPU nothing is queued, so
    such a difference is the machine changing state between the two, and the sentence says so."""
    off, unsteady = [], []
    for m in data.with_experiment(GROUP):
        points = {b["params"]["read_loss"]: b["stats"] for b in m.measured(GROUP, device="cpu")}
        if m is host or not {"every_step", "on_device"} <= set(points):
            continue
        ratio = stats.paired_ratio(points["every_step"], points["on_device"])
        both = f"{si(points['every_step']['median'], 's')} against {si(points['on_device']['median'], 's')}"
        if ratio.verdict != 0:
            off.append(f"{untrusted.placeholder(m.label)} ({both}, {times_with_interval(ratio)})")
        elif stats.compare(ratio.value, 1) != 0:  # medians apart, rounds not agreeing: the table shows the gap
            unsteady.append(f" On {untrusted.placeholder(m.label)}, the CPU's two medians differ: {both}. But its "
                            f"rounds disagree ({interval_words(ratio)}): the machine's state moved, not a wait.")
    said = ""
    if off:
        said += (" On " + listing(off) + " the CPU's two ways differed beyond the spread. With no queue to drain, "
                 "that can only be the machine changing state between them. So it says nothing about synchronisation.")
    return said + "".join(unsteady)
