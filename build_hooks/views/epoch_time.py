"""One epoch of the small network, timed whole: what the race replays."""

from __future__ import annotations

from build_hooks import analysis, experiments, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import fact
from build_hooks.render import MissingData, caveat, first_with, gpu_with, si

GROUP = "epoch_time"
SMALL_WIDTH = 32    # "the small network" of the lessons: 512→32→10
TYPICAL_BATCH = 64  # the batch the lessons quote when one is needed


@fact
def small_network_epoch(data: Dataset) -> str:
    """A sentence: one small-network epoch on the CPU at batch 64 (else the largest) and,
    where measured at that batch, on a GPU."""
    machine = first_with(data, GROUP)
    cpu = analysis.medians(machine, GROUP, "batch", device="cpu", width=SMALL_WIDTH)
    if not cpu:
        raise MissingData(f"no epoch time at width {SMALL_WIDTH}")
    batch = TYPICAL_BATCH if TYPICAL_BATCH in cpu else max(cpu)
    point = machine.measured(GROUP, device="cpu", width=SMALL_WIDTH, batch=batch)[0]
    rows = point["params"]["rows"]
    model = experiments.declared("training_step")
    text = (f"one epoch of the {model['INPUTS']}→{SMALL_WIDTH}→{model['CLASSES']} network over {rows:,} rows took "
            f"{si(cpu[batch], 's')}{caveat(point)} on the CPU at batch {batch}")
    gpu = gpu_with(data, GROUP)
    if gpu is not None:
        took = analysis.medians(gpu, GROUP, "batch", device=gpu.gpu_device(GROUP), width=SMALL_WIDTH)
        if batch in took:
            text += f" and {si(took[batch], 's')} on {untrusted.placeholder(gpu.label)}"
    return text
