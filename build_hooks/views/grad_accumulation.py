"""Gradient accumulation: the same effective batch in micro-batches, activation memory against time."""

from __future__ import annotations

from build_hooks import stats, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    Html,
    MissingData,
    first_with,
    gpu_with,
    marks_note_for,
    measured_value,
    note,
    per_machine,
    si,
    table,
)
from build_hooks.wording import bracketed, marked_timings, ratio_sentence, same_configuration

ACCUMULATION = "grad_accumulation"


@section
def grad_accumulation(data: Dataset) -> Html:
    """Per machine: optimiser-step time and activations kept by micro-batch split, with a note
    checking the one-batch row against the training-step experiment."""
    def one(m: Machine) -> Html:
        points = m.measured(ACCUMULATION)
        rows = [[DEVICE_NAME[b["params"]["device"]], b["params"]["width"], b["params"]["effective_batch"],
                 f"{b['extra_info']['micro_batches']} × {b['params']['micro_batch']}",
                 measured_value(b["stats"], b["extra_info"], "s"), si(b["extra_info"]["activation_bytes"], "B")]
                for b in points]
        return (table(["device", "hidden width", "effective batch", "micro-batches × size", "time per optimiser step",
                       "activations kept (one micro-batch)"], rows) + marks_note_for(points) + _twin_note(m))
    return per_machine(data, ACCUMULATION, one)


@fact
def accumulation_summary(data: Dataset) -> str:
    """A sentence: on the CPU, the finest micro-batch split against the whole batch, in
    activations kept and time per optimiser step."""
    points = {b["params"]["micro_batch"]: b
              for b in first_with(data, ACCUMULATION).measured(ACCUMULATION, device="cpu")}
    whole, finest = points[max(points)], points[min(points)]
    if whole is finest:
        raise MissingData("gradient accumulation was measured at one micro-batch size only")
    memory = whole["extra_info"]["activation_bytes"] / finest["extra_info"]["activation_bytes"]
    ratio = stats.paired_ratio(finest["stats"], whole["stats"])
    time = ratio_sentence(ratio, "made an optimiser step {} slower", "made an optimiser step {} faster",
                          f"left the time per optimiser step the same ({stats.LEVEL_WORDS})")
    return (f"splitting an effective batch of {whole['params']['effective_batch']} into "
            f"{finest['extra_info']['micro_batches']} micro-batches of {finest['params']['micro_batch']} cut the "
            f"activations kept at once from {si(whole['extra_info']['activation_bytes'], 'B')} to "
            f"{si(finest['extra_info']['activation_bytes'], 'B')} ({memory:.0f}× less). "
            + bracketed(f"It {time}", marked_timings([whole, finest]) if ratio.verdict else ""))


@fact
def accumulation_gpu(data: Dataset) -> str:
    """A sentence: on the first GPU that measured accumulation, the finest split against the whole batch in time per
    optimiser step (each micro-batch pays the GPU's fixed costs again); or that no GPU measured it."""
    machine = gpu_with(data, ACCUMULATION)
    if machine is None:
        return "No GPU measured it here. On a GPU, each micro-batch pays its larger fixed costs again"
    device = machine.gpu_device(ACCUMULATION)
    points = {b["params"]["micro_batch"]: b for b in machine.measured(ACCUMULATION, device=device)}
    whole, finest = points[max(points)], points[min(points)]
    if whole is finest:
        raise MissingData("gradient accumulation was measured on the GPU at one micro-batch size only")
    ratio = stats.paired_ratio(finest["stats"], whole["stats"])
    time = ratio_sentence(ratio, "made its optimiser step {} slower", "made its optimiser step {} faster",
                          f"left its optimiser step's time the same ({stats.LEVEL_WORDS})")
    return (f"On the {untrusted.placeholder(machine.gpu['name'])}, the same split {time}. Each micro-batch pays the "
            "GPU's fixed costs again")


def _twin_note(machine: Machine) -> Html:
    """One configuration, one number: the single-batch point is also a training-step point."""
    pairs = []
    for b in machine.measured(ACCUMULATION, device="cpu"):
        if b["params"]["micro_batch"] == b["params"]["effective_batch"]:
            twin = machine.measured("training_step", device="cpu", batch=b["params"]["effective_batch"],
                                    width=b["params"]["width"])
            pairs += [(b["stats"], twin[0]["stats"])] if twin else []
    if not pairs:
        return Html("")
    return note("The one-batch row is the same step as the training-step experiment's point at that batch "
                f"and width. {same_configuration(pairs, machine, [ACCUMULATION, 'training_step'])}.")
