"""The fixed cost of one tiny operation: Python, dispatch and (on a GPU) a kernel launch."""

from __future__ import annotations

from build_hooks import analysis, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import fact
from build_hooks.render import first_with, gpu_with, si

GROUP = "call_overhead"


@fact
def call_overhead(data: Dataset) -> str:
    """A sentence: the one-tiny-operation cost on the CPU and, where measured, on the GPU."""
    machine = first_with(data, GROUP)
    costs = {d: analysis.tiny_op_seconds(machine, d) for d in machine.devices(GROUP)}
    whose = "the build host's CPU" if machine is data.host else "the CPU"
    text = f"{si(costs['cpu'], 's')} per call on {whose}"
    gpu = machine.gpu_device(GROUP)
    if gpu and costs.get(gpu):
        text += f" and {si(costs[gpu], 's')} per call (host dispatch plus a kernel launch) on the GPU"
    text += " (adding the number 1 in place to a one-element tensor)"
    # Without a GPU of its own, a measured GPU machine's figure beside it: the point is a GPU's cost per call.
    other = gpu_with(data, GROUP) if not gpu else None
    other_gpu = other.gpu_device(GROUP) if other else None
    cost = analysis.tiny_op_seconds(other, other_gpu) if other_gpu else None
    if cost:
        # Beside its own CPU's, the fair comparison: the build host's CPU is another machine (#39 read).
        own = analysis.tiny_op_seconds(other, "cpu")
        against = f", against {si(own, 's')} on its own CPU" if own else ""
        text += (f". On {untrusted.placeholder(other.device_label(other_gpu))}, the same call took {si(cost, 's')}, "
                 f"host dispatch plus a kernel launch{against}")
    return text + _cheapest_product(machine)


def _cheapest_product(machine) -> str:
    """The per-call time of the smallest matrix product timed back to back (Matrix shapes), which
    shows that the fixed cost depends on the operation (a Python number is wrapped as a tensor)."""
    points = machine.measured("matmul_shapes", device="cpu")
    if not points:
        return ""
    small = min(points, key=lambda b: b["params"]["side"])
    side, per_call = small["params"]["side"], small["stats"]["median"] / small["params"]["calls"]
    return (f". The fixed cost depends on the operation: {side}×{side} matrix products, timed back to back "
            f"in the next section, took {si(per_call, 's')} each")
