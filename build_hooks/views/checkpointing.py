"""Activation checkpointing: activations kept against time per step."""

from __future__ import annotations

from build_hooks import stats
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    Html,
    first_with,
    marks_note_for,
    measured_value,
    multiple,
    on_machine,
    per_machine,
    si,
    table,
)
from build_hooks.wording import bracketed, interval_words, marked_timings

CHECKPOINT = "checkpointing"


@section
def checkpointing(data: Dataset) -> Html:
    """Per machine: time per step and activations kept, checkpointing off and on, per device."""
    def one(m: Machine) -> Html:
        points = m.measured(CHECKPOINT)
        rows = [[DEVICE_NAME[b["params"]["device"]], b["params"]["checkpoint"],
                 measured_value(b["stats"], b["extra_info"], "s"), si(b["extra_info"]["activation_bytes"], "B")]
                for b in points]
        shape = points[0]["params"]
        return table(["device", "checkpointing", "time per step", "activations kept"], rows,
                     caption=f"{shape['depth']} layers of width {shape['width']}, batch {shape['batch']}, "
                             f"{shape['segments']} segments") + marks_note_for(points)
    return per_machine(data, CHECKPOINT, one)


@fact
def checkpointing_summary(data: Dataset) -> str:
    """A sentence: the CPU activations kept with checkpointing against without, and how
    the step time changed."""
    machine = first_with(data, CHECKPOINT)
    points = {b["params"]["checkpoint"]: b for b in machine.measured(CHECKPOINT, device="cpu")}
    off, on = points["off"], points["on"]
    saved = 1 - on["extra_info"]["activation_bytes"] / off["extra_info"]["activation_bytes"]
    ratio = stats.paired_ratio(on["stats"], off["stats"])
    time = {1: f"a step took {multiple(ratio.value)} as long ({interval_words(ratio)})",
            -1: f"a step took {multiple(ratio.value)} as long, faster rather than slower ({interval_words(ratio)})",
            0: "the step time did not change beyond the measurements' spread"}[ratio.verdict]
    where = on_machine(data, machine)
    kept, before = (si(point["extra_info"]["activation_bytes"], "B") for point in (on, off))
    return bracketed(f"{where}, checkpointing kept {kept} of activations instead of {before} "
                     f"({100 * saved:.0f}% less), and {time}",
                     marked_timings([off, on]) if ratio.verdict else "")
