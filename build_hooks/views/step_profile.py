"""Where a training step's time goes: torch.profiler's self time by kind of operation."""

from __future__ import annotations

from build_hooks import stats, untrusted
from build_hooks.dataset import Dataset, Machine, is_gpu
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    Html,
    first_with,
    gpu_with,
    html,
    join,
    marks_note_for,
    measured_value,
    on_machine,
    per_machine,
    si,
    table,
)

PROFILE = "step_profile"


@section
def step_profile(data: Dataset) -> Html:
    """The profiler's self time per step by kind of operation, largest first."""
    def one(m: Machine) -> Html:
        parts = []
        for device in m.devices(PROFILE):
            # A kind this device never ran (no calls) stores a placeholder time: it is no row of the table.
            points = sorted((b for b in m.measured(PROFILE, device=device) if b["extra_info"]["calls_per_step"]),
                            key=lambda b: -b["stats"]["median"])
            if not points:
                continue
            total = sum(b["stats"]["median"] for b in points)
            head = ["kind of operation", "host self time per step", "share of host time", "calls per step",
                    "ATen operations"]
            rows = [[b["params"]["kind"], measured_value(b["stats"], b["extra_info"], "s"),
                     f"{100 * b['stats']['median'] / total:.0f}%", b["extra_info"]["calls_per_step"],
                     _ops_cell(b["extra_info"]["ops"])] for b in points]
            if is_gpu(device):  # the GPU's own kernel time per kind, where the profiler could read it
                head.insert(2, "GPU kernel time per step")
                for row, b in zip(rows, points):
                    row.insert(2, _kernel_time(b["extra_info"]))
            parts.append(table(head, rows,
                               caption=f"{DEVICE_NAME[device]}: one training step "
                                       f"(batch {points[0]['params']['batch']}, "
                                       f"width {points[0]['params']['width']}), by torch.profiler; host time is "
                                       "what the CPU spends in each kind"
                                       + (", issuing it to the GPU" if is_gpu(device) else ""))
                         + marks_note_for(points))
        return join(parts, "\n")
    return per_machine(data, PROFILE, one)


def _ops_cell(ops: str) -> Html:
    """A kind's ATen operations, folded behind their count: a dozen names made each row three times taller (#39
    read). One name needs no fold."""
    names = [name.strip() for name in str(ops).split(",") if name.strip()]
    if len(names) <= 1:
        return html("<small>{}</small>", ops)
    return html("<details><summary>{} names</summary><small>{}</small></details>", len(names), ops)


def _kernel_time(extra: dict) -> str:
    if "device_s" in extra:
        return si(extra["device_s"], "s")
    return "not available" if "device_time" in extra else "not measured"


@fact
def profile_summary(data: Dataset) -> str:
    """A sentence: the profiled CPU step's time and operation count, its share of the measured step
    where clear, and the kinds taking the most time and calls."""
    machine = first_with(data, PROFILE)
    points = machine.measured(PROFILE, device="cpu")
    total = sum(b["stats"]["median"] for b in points)
    calls = sum(b["extra_info"]["calls_per_step"] for b in points)
    top = max(points, key=lambda b: b["stats"]["median"])
    busiest = max(points, key=lambda b: b["extra_info"]["calls_per_step"])
    # The profiler counts an operation's nested calls too: more than the cost model's operations per step.
    where = on_machine(data, machine)
    step = machine.measured("training_step", device="cpu", batch=points[0]["params"]["batch"],
                            width=points[0]["params"]["width"])
    ops = step[0]["extra_info"].get("ops") if step else None  # the cost model's count, met on Predicting a step
    nested = "" if ops and ops != calls else " (nested calls included)"  # else said against that count below
    text = f"{where}, the profiled step spent {si(total, 's')} in {calls} ATen operations{nested}"
    # The profile and the step were timed by two experiments at different moments: a gap is
    # claimed only as the race's rule allows (meaningful and beyond both spreads, unpaired).
    profiled = {key: sum(b["stats"][key] for b in points) for key in ("median", "q1", "q3")}
    if step and stats.unpaired_ratio(profiled, step[0]["stats"]).verdict < 0:
        text += (f", {100 * total / step[0]['stats']['median']:.0f}% of the "
                 f"{si(step[0]['stats']['median'], 's')} the training-step experiment measured for the same step. "
                 "The rest is Python and the bookkeeping between operations")
    if not nested:
        text += (f". The profiler's count includes the calls nested inside each operation. The cost model counts "
                 f"only the {ops} a step issues")
    text += (f". By kind, {untrusted.placeholder(top['params']['kind'])} took the largest share, "
             f"{100 * top['stats']['median'] / total:.0f}%")
    if busiest is not top:
        text += (f", while {untrusted.placeholder(busiest['params']['kind'])} made the most calls, "
                 f"{busiest['extra_info']['calls_per_step']} of {calls}, for "
                 f"{100 * busiest['stats']['median'] / total:.0f}% of the time")
    return text


@fact
def gpu_profile_summary(data: Dataset) -> str:
    """A measured GPU's profiled step: how long its kernels ran against the host's time issuing them (the
    profiler's self times, each kind summed), or that no GPU was profiled."""
    machine = gpu_with(data, PROFILE)
    if machine is None:
        return "No GPU was profiled in this build"
    device = machine.gpu_device(PROFILE)
    gpu = untrusted.placeholder(machine.device_label(device))
    split = gpu_host_and_kernels(machine)
    if split is None:
        return f"On the {gpu}, the profiler could not read the kernels' own time"
    host, kernels = split
    said = (f"On the {gpu}, the host spent {si(host, 's')} issuing one profiled step, while its kernels ran for "
            f"{si(kernels, 's')}")
    if kernels < host / 2:
        return said + ". So in this profile the GPU sat idle for most of the step, waiting for work"
    return said + (". So the kernels, not the host, set the step's pace" if kernels > host else "")


@fact
def gpu_busy_share(data: Dataset) -> str:
    """The FAQ's utilisation answer, measured: a profiled GPU step's kernel time against the host's time issuing it,
    as the share of the step the GPU was busy (one home: fixes has the full profile); or that none was profiled."""
    machine = gpu_with(data, PROFILE)
    split = gpu_host_and_kernels(machine) if machine else None
    if split is None:
        return "No GPU step was profiled for this build, so this site has no measured case"
    host, kernels = split
    batch, width = profiled_setting(machine)
    gpu = untrusted.placeholder(machine.device_label(machine.gpu_device(PROFILE)))
    said = (f"Measured here at batch {batch}, width {width}, the {gpu} ran kernels for {si(kernels, 's')} of the "
            f"{si(host, 's')} its host spent on one step under the profiler: busy about {100 * kernels / host:.0f}% "
            "of it")
    return said + (". That is a host-bound step" if kernels < host / 2 else "")


def gpu_host_and_kernels(machine: Machine) -> tuple[float, float] | None:
    """A machine's profiled GPU step: the host's time issuing it and its kernels' own time (each kind summed), or
    None where the GPU was not profiled or the profiler could not read the kernels."""
    device = machine.gpu_device(PROFILE)
    points = machine.measured(PROFILE, device=device) if device else []
    kernels = [b["extra_info"]["device_s"] for b in points if "device_s" in b["extra_info"]]
    if not kernels:
        return None
    return sum(b["stats"]["median"] for b in points), sum(kernels)


def profiled_setting(machine: Machine) -> tuple[int, int]:
    """The batch and width a machine's GPU profile timed."""
    params = machine.measured(PROFILE, device=machine.gpu_device(PROFILE))[0]["params"]
    return params["batch"], params["width"]
