"""One configuration, one number: where two experiments time the same work, they must agree.

Three experiments see a training step that another one also times:

- `epoch_time` runs the step of `training_step` over a whole epoch: its time per step
  (epoch / steps) also pays for slicing batches, Python's loop and fresh rows from memory
  (the step alone reuses one batch, hot in cache), so it may be slower than the step
  alone (up to EPOCH_EXTRA_LIMIT), but a step alone slower than its share of an epoch
  beyond TOLERANCE is a contradiction. On a GPU a step alone may be up to GPU_OVERLAP_LIMIT
  times its share: a judgement, not a mechanism. Both experiments run steps back to back
  (the step's timer repeats it in blocks), but a host-bound GPU step swings with the
  host's state, which the two met at different moments;
- `threads` times the step at every thread again, as `training_step` does;
- `gemm_rate` times square matrix products alone: a step's matrix products cannot run
  faster than the fastest of those, so a step whose FLOP rate beats it is a contradiction.

A configuration whose two views disagree beyond TOLERANCE was timed in two different
states of the machine (a cache- or DRAM-bound point moves 2-4x on a VM whose neighbours
come and go): it is flagged wherever the training-step table shows it and kept out of
the cost model's fit. Pure functions of the dataset; nothing here measures.
"""

from __future__ import annotations

from dataclasses import dataclass

from build_hooks import analysis
from build_hooks.dataset import Machine, is_gpu

TOLERANCE = 1.3  # two timings of one configuration agree when neither is more than this times the other
EPOCH_EXTRA_LIMIT = 2.0  # an epoch's share may cost this much more than the step alone (loop, slicing, fresh rows)
GPU_OVERLAP_LIMIT = 2.0  # a GPU step alone against its share of an epoch: a host-bound step swings with host state
KINDS = {
    "epoch": "the step alone against its share of an epoch (epoch_time)",
    "threads": "the step against the threads experiment's all-thread point",
    "gemm": "the step's FLOP rate against the fastest square matrix product (gemm_rate)",
}


@dataclass(frozen=True)
class Check:
    kind: str  # a key of KINDS
    device: str
    batch: int
    width: int
    ratio: float  # the training-step view over the other experiment's view (gemm: step rate / best rate)

    @property
    def agrees(self) -> bool:
        if self.kind == "gemm":  # one-sided: a step slower than the best product is expected
            return self.ratio <= TOLERANCE
        if self.kind == "epoch":  # the epoch does more than the step: it may be slower, within reason
            return 1 / EPOCH_EXTRA_LIMIT <= self.ratio <= (GPU_OVERLAP_LIMIT if is_gpu(self.device) else TOLERANCE)
        return within_tolerance(self.ratio)

    @property
    def within_tolerance(self) -> bool:
        """The plain two-sided test: neither view more than TOLERANCE times the other."""
        return within_tolerance(self.ratio)


def within_tolerance(ratio: float) -> bool:
    """Whether two timings of one configuration agree: neither is more than TOLERANCE times the other."""
    return 1 / TOLERANCE <= ratio <= TOLERANCE


def checks(machine: Machine, device: str = "cpu") -> list[Check]:
    """Every configuration of `device` that the training step shares with another experiment."""
    steps = {(p.batch, w): p for w in analysis.widths(machine) for p in analysis.step_curve(machine, device, w)}
    found = []
    for bench in machine.measured("epoch_time", device=device):
        params = bench["params"]
        step = steps.get((params["batch"], params["width"]))
        if step:
            per_step = bench["stats"]["median"] / -(-params["rows"] // params["batch"])
            found.append(Check("epoch", device, params["batch"], params["width"], step.seconds / per_step))
    most = max((b["params"]["threads"] for b in machine.measured("threads")), default=None)
    for bench in machine.measured("threads", threads=most) if device == "cpu" else []:
        params = bench["params"]
        step = steps.get((params["batch"], params["width"]))
        if step and most == machine.cpu["threads_used"]:
            found.append(Check("threads", device, params["batch"], params["width"],
                               step.seconds / bench["stats"]["median"]))
    best = max(analysis.gemm_rates(machine, device).values(), default=None)
    for (batch, width), step in steps.items() if best else []:
        if step.flops_per_s:
            found.append(Check("gemm", device, batch, width, step.flops_per_s / best))
    return sorted(found, key=lambda c: (c.kind, c.width, c.batch))


def disagreeing(machine: Machine, device: str = "cpu") -> set[tuple[int, int]]:
    """(batch, width) of every training step that another experiment's view contradicts."""
    return {(c.batch, c.width) for c in checks(machine, device) if not c.agrees}
