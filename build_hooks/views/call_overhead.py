"""The fixed cost of one tiny operation: Python, dispatch and (on a GPU) a kernel launch."""

from __future__ import annotations

from build_hooks import analysis
from build_hooks.dataset import Dataset
from build_hooks.page import fact
from build_hooks.render import first_with, si

GROUP = "call_overhead"


@fact
def call_overhead(data: Dataset) -> str:
    """A sentence: the one-tiny-operation cost on the CPU and, where measured, on the GPU."""
    machine = first_with(data, GROUP)
    costs = {d: analysis.tiny_op_seconds(machine, d) for d in machine.devices(GROUP)}
    text = f"{si(costs['cpu'], 's')} per call on the CPU"
    gpu = machine.gpu_device(GROUP)
    if gpu and costs.get(gpu):
        text += f" and {si(costs[gpu], 's')} per call (mostly kernel launch) on the GPU"
    return text
