"""The fixes, measured: where a step's time goes, gradient accumulation, activation checkpointing."""

from __future__ import annotations

from build_hooks import stats, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (DEVICE_NAME, MissingData, esc, first_with, marks_note_for, measured_value,
                                per_machine, si, table, times_with_interval)

PROFILE, ACCUMULATION, CHECKPOINT = "step_profile", "grad_accumulation", "checkpointing"


@section
def step_profile(data: Dataset) -> str:
    """The profiler's self time per step by kind of operation, largest first."""
    def one(m: Machine) -> str:
        parts = []
        for device in m.devices(PROFILE):
            points = sorted(m.measured(PROFILE, device=device), key=lambda b: -b["stats"]["median"])
            total = sum(b["stats"]["median"] for b in points)
            rows = [[esc(b["params"]["kind"]), measured_value(b["stats"], b["extra_info"], "s"),
                     f"{100 * b['stats']['median'] / total:.0f}%", str(b["extra_info"]["calls_per_step"]),
                     f"<small>{esc(b['extra_info']['ops'])}</small>"] for b in points]
            parts.append(table(["kind of operation", "self time per step", "share", "calls per step",
                                "ATen operations"], rows,
                               caption=f"{DEVICE_NAME[device]}: one training step (batch {points[0]['params']['batch']}, "
                                       f"width {points[0]['params']['width']}), by torch.profiler")
                         + marks_note_for(points))
        return "\n".join(parts)
    return per_machine(data, PROFILE, one)


@fact
def profile_summary(data: Dataset) -> str:
    points = first_with(data, PROFILE).measured(PROFILE, device="cpu")
    total = sum(b["stats"]["median"] for b in points)
    calls = sum(b["extra_info"]["calls_per_step"] for b in points)
    top = max(points, key=lambda b: b["stats"]["median"])
    busiest = max(points, key=lambda b: b["extra_info"]["calls_per_step"])
    text = (f"the profiled step spent {si(total, 's')} in {calls} ATen operations; "
            f"{untrusted.text(top['params']['kind'])} took the largest share, {100 * top['stats']['median'] / total:.0f}%")
    if busiest is not top:
        text += (f", while {untrusted.text(busiest['params']['kind'])} made the most calls, "
                 f"{busiest['extra_info']['calls_per_step']} of {calls}, for "
                 f"{100 * busiest['stats']['median'] / total:.0f}% of the time")
    return text


def _by(machine: Machine, group: str, key: str, device: str = "cpu") -> dict:
    return {b["params"][key]: b for b in machine.measured(group, device=device)}


@section
def grad_accumulation(data: Dataset) -> str:
    def one(m: Machine) -> str:
        points = m.measured(ACCUMULATION)
        rows = [[DEVICE_NAME[b["params"]["device"]], str(b["params"]["effective_batch"]),
                 f"{b['extra_info']['micro_batches']} × {b['params']['micro_batch']}",
                 measured_value(b["stats"], b["extra_info"], "s"), si(b["extra_info"]["activation_bytes"], "B")]
                for b in points]
        return table(["device", "effective batch", "micro-batches × size", "time per optimiser step",
                      "activations kept (one micro-batch)"], rows) + marks_note_for(points)
    return per_machine(data, ACCUMULATION, one)


@fact
def accumulation_summary(data: Dataset) -> str:
    points = _by(first_with(data, ACCUMULATION), ACCUMULATION, "micro_batch")
    whole, finest = points[max(points)], points[min(points)]
    if whole is finest:
        raise MissingData("gradient accumulation was measured at one micro-batch size only")
    memory = whole["extra_info"]["activation_bytes"] / finest["extra_info"]["activation_bytes"]
    ratio = stats.paired_ratio(finest["stats"], whole["stats"])
    time = {1: f"made an optimiser step {times_with_interval(ratio)} slower",
            -1: f"made an optimiser step {times_with_interval(ratio.inverted())} faster",
            0: "left the time per optimiser step the same within the measurements' spread"}[ratio.verdict]
    return (f"splitting an effective batch of {whole['params']['effective_batch']} into "
            f"{finest['extra_info']['micro_batches']} micro-batches of {finest['params']['micro_batch']} cut the "
            f"activations kept at once from {si(whole['extra_info']['activation_bytes'], 'B')} to "
            f"{si(finest['extra_info']['activation_bytes'], 'B')} ({memory:.0f}× less) and {time}")


@section
def checkpointing(data: Dataset) -> str:
    def one(m: Machine) -> str:
        points = m.measured(CHECKPOINT)
        rows = [[DEVICE_NAME[b["params"]["device"]], esc(b["params"]["checkpoint"]),
                 measured_value(b["stats"], b["extra_info"], "s"), si(b["extra_info"]["activation_bytes"], "B")]
                for b in points]
        shape = points[0]["params"]
        return table(["device", "checkpointing", "time per step", "activations kept"], rows,
                     caption=f"{shape['depth']} layers of width {shape['width']}, batch {shape['batch']}, "
                             f"{shape['segments']} segments") + marks_note_for(points)
    return per_machine(data, CHECKPOINT, one)


@fact
def checkpointing_summary(data: Dataset) -> str:
    points = _by(first_with(data, CHECKPOINT), CHECKPOINT, "checkpoint")
    off, on = points["off"], points["on"]
    saved = 1 - on["extra_info"]["activation_bytes"] / off["extra_info"]["activation_bytes"]
    ratio = stats.paired_ratio(on["stats"], off["stats"])
    time = {1: f"a step took {times_with_interval(ratio)} as long",
            -1: f"a step took {times_with_interval(ratio)} as long, faster rather than slower",
            0: "the step time did not change beyond the measurements' spread"}[ratio.verdict]
    return (f"checkpointing kept {si(on['extra_info']['activation_bytes'], 'B')} of activations instead of "
            f"{si(off['extra_info']['activation_bytes'], 'B')} ({100 * saved:.0f}% less), and {time}")
