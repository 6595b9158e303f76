"""The data loader beside real training steps: epoch time by worker count."""

from __future__ import annotations

from build_hooks import analysis, stats
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (
    Html,
    first_with,
    marks_note_for,
    measured_value,
    median_text,
    per_machine,
    table,
)
from build_hooks.views.data_loader import useful_workers
from build_hooks.wording import ratio_sentence

OVERLAP = "loader_overlap"


@section
def loader_overlap(data: Dataset) -> Html:
    """Per machine: epoch time with a training step on every batch, by DataLoader worker count."""
    def one(m: Machine) -> Html:
        points = sorted(m.measured(OVERLAP), key=lambda b: b["params"]["workers"])
        rows = [[b["params"]["workers"], measured_value(b["stats"], b["extra_info"], "s")] for b in points]
        size = points[0]["extra_info"]
        return table(["num_workers", "epoch time"], rows,
                     caption=f"One epoch of {size['samples']} augmented samples in batches of {size['batch']}, "
                             f"with a training step on every batch ({size['training_threads']} training "
                             f"thread{'s' if size['training_threads'] != 1 else ''})") + marks_note_for(points)
    return per_machine(data, OVERLAP, one)


@fact
def loader_overlap_summary(data: Dataset) -> str:
    """A sentence: the training epoch with no workers against the useful worker count, or
    that no count made it faster (despite any cores training left free)."""
    machine = first_with(data, OVERLAP)
    seconds = analysis.point_stats(machine, OVERLAP, "workers")
    best = useful_workers(seconds)
    # Each time with the digits its spread supports, as the table prints it.
    text = f"with a training step on every batch, an epoch took {median_text(seconds[0])} with num_workers=0"
    if best:
        ratio = stats.paired_ratio(seconds[0], seconds[best])
        return (text + f" and {median_text(seconds[best])} with {best} worker{'s' if best != 1 else ''}, "
                f"{ratio_sentence(ratio, '{} faster', '{} slower', 'level')}. The workers prepared the next batches "
                "while the main process trained")
    text += "; no number of workers made it faster beyond the measurements' spread"
    free = machine.cpu.get("cores_available", 0) - machine.measured(OVERLAP)[0]["extra_info"]["training_threads"]
    if free >= 1:
        text += (f". Yet training left {free} core{'s' if free != 1 else ''} free for the workers. "
                 "Here, preparing batches in another process cost about as much as the overlap saved")
    return text
