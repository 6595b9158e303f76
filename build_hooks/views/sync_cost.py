"""Synchronisation: what reading the loss every step costs."""

from __future__ import annotations

from build_hooks import stats
from build_hooks.dataset import Dataset, Machine, is_gpu
from build_hooks.page import section
from build_hooks.render import Html, first_with, gpu_with, join, note, si, table
from build_hooks.wording import interval_words

GROUP = "sync_cost"


@section
def sync_answer(data: Dataset) -> Html:
    """What reading the loss every step cost, as a table: a row per device of the build host, then the first GPU
    machine's devices where the host has no GPU, then every other CPU control; each with both times, the ratio and
    what it means. The CPU is the
    control: nothing is queued, so there is no wait to measure. No GPU claim without a GPU point."""
    host = first_with(data, GROUP)
    rows = [_row(host, device, host is data.host) for device in host.devices(GROUP)]
    other = None if host.gpu_device(GROUP) else gpu_with(data, GROUP)
    if other is not None:
        rows += [_row(other, device) for device in (other.gpu_device(GROUP), "cpu") if device in other.devices(GROUP)]
    # Every other CPU control too, level or not: the more controls agree, the stronger the point (#39 review).
    rows += [_row(m, "cpu") for m in data.with_experiment(GROUP) if m is not host and m is not other
             and "cpu" in m.devices(GROUP)]
    table_html = table(["device", "loss read every step", "kept on the device", "every step against kept",
                        "reading"], rows, caption="Reading the loss every step against keeping it on the device")
    notes = [note(CONTROL)] + ([note(QUEUE)] if host.gpu_device(GROUP) or other is not None else
                               [note("No measurement here ran on a GPU, so the wait this pitfall is about was not "
                                     "measured.")])
    return table_html + join(notes)


CONTROL = ("A CPU is the control: each operation finishes before the next starts, so no queue is left for a read to "
           "drain. On a CPU, only the read's own small cost or a change in the machine can move the time.")
QUEUE = ("On a GPU, a read waits only for work already queued. When the host issues work no faster than the GPU "
         "runs it, little is queued, so a read costs little.")
MOVED = "different, but a CPU has no queue: the machine's state moved it"
UNSTEADY = "rounds disagree: the machine's state, not a wait"


def _row(machine: Machine, device: str, is_host: bool = False) -> list:
    """One device's row: both ways' medians, every-step over kept with its interval, and what that means."""
    points = {b["params"]["read_loss"]: b["stats"] for b in machine.measured(GROUP, device=device)}
    every, once = points["every_step"], points["on_device"]
    ratio = stats.paired_ratio(every, once)
    name = "the build host's CPU" if is_host and not is_gpu(device) else machine.device_label(device)
    # Two decimals: "1.1×" beside "under the 1.1× rule" would read as a contradiction.
    precise = f"{ratio.value:.2f}× ({interval_words(ratio, precise=True)})"
    return [name, si(every["median"], "s"), si(once["median"], "s"), precise,
            _reading(ratio, every["median"] - once["median"], is_gpu(device))]


def _reading(ratio: stats.Ratio, diff: float, gpu: bool) -> str:
    """What a device's ratio means, in a few words."""
    if ratio.verdict == 0 and ratio.paired and (ratio.low > 1 or ratio.high < 1):  # small, but every round agrees
        way = "slower" if ratio.low > 1 else "faster"
        rounds = f"all {ratio.rounds} rounds" if ratio.kept == ratio.rounds else "nearly every round"
        return f"{way} in {rounds}, but under {stats.MEANINGFUL_RATIO:g}×: too small to count"
    if ratio.verdict == 0:
        return UNSTEADY if not gpu and stats.compare(ratio.value, 1) != 0 else "about the same"
    if gpu:
        return f"{'costs' if diff > 0 else 'saves'} {si(abs(diff), 's')} per step"
    return MOVED
