"""One epoch of the small network, timed whole: what the race replays."""

from __future__ import annotations

from build_hooks import analysis, experiments, race, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import fact
from build_hooks.render import MissingData, caveat, first_with, gpu_with, multiple, si

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
            f"{si(cpu[batch], 's')}{caveat(point)} on the build host at batch {batch}")
    gpu = gpu_with(data, GROUP)
    if gpu is not None:
        took = analysis.medians(gpu, GROUP, "batch", device=gpu.gpu_device(GROUP), width=SMALL_WIDTH)
        own = analysis.medians(gpu, GROUP, "batch", device="cpu", width=SMALL_WIDTH)
        if batch in took:  # set against its own machine's CPU too: the pairing the race's grid uses
            name = untrusted.placeholder(gpu.device_label(gpu.gpu_device(GROUP)))
            on_gpu = gpu.measured(GROUP, device=gpu.gpu_device(GROUP), width=SMALL_WIDTH, batch=batch)[0]
            text += f". On the {name}, it took {si(took[batch], 's')}{caveat(on_gpu)}"
            if batch in own:
                on_cpu = gpu.measured(GROUP, device="cpu", width=SMALL_WIDTH, batch=batch)[0]
                text += f", against {si(own[batch], 's')}{caveat(on_cpu)} on the CPU in its own machine"
        return text
    return text + _against_the_estimate(data, machine.id, batch)


def _against_the_estimate(data: Dataset, machine_id: str, batch: int) -> str:
    """Where no GPU was measured: the race's estimated GPU at the same epoch, with its verdict
    against the build host's (within the estimate's stated uncertainty, or beyond it)."""
    lanes = race.race_data(data)["lanes"]
    estimate = next((lane for lane in lanes if lane["estimate"] and lane["machine_id"] == machine_id), None)
    cpu = next((lane for lane in lanes if lane["kind"] == "CPU" and lane["machine_id"] == machine_id), None)
    ours = cpu and cpu["epochs"].get(str(SMALL_WIDTH), {}).get(str(batch))
    theirs = estimate and estimate["epochs"].get(str(SMALL_WIDTH), {}).get(str(batch))
    if not ours or not theirs:
        return ""
    verdict, ratio = race.versus(ours, theirs)
    apart = multiple(ratio)
    how = ("level with it within the estimate's stated band"
           if verdict == 0 else f"{apart} {'faster' if verdict > 0 else 'slower'}, beyond the estimate's stated band")
    return (f". The race's estimated {untrusted.placeholder(estimate['label'])}, issuing its operations from this "
            f"host, comes to {si(theirs['seconds'], 's')}: {how}")
