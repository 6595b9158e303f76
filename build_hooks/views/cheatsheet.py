"""The cheat sheet's key numbers: one row each, computed as its lesson computes it, with a link to that lesson."""

from __future__ import annotations

from build_hooks import analysis, cost_model, stats
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import section
from build_hooks.render import (
    MARKS,
    SITE_ROOT,
    Html,
    MissingData,
    html,
    marks,
    marks_note_for,
    mostly_slow,
    note,
    point_mark,
    si,
    slow_mark,
    table,
)
from build_hooks.views.cost_model import (
    break_even,
    break_even_span,
    break_even_step_span,
    first_measured_break_even,
)
from build_hooks.views.intensity import _ridge, published_ridges
from build_hooks.views.precision import bf16_against_fp32, precision_side


def _lesson(path: str, words: str) -> Html:
    return html('<a href="{}{}">{}</a>', Html(SITE_ROOT), path, words)


# The rows of the key numbers, in order: what each device column gives (render: "—" where a device has none).
ROWS = {
    "op": "fixed cost per operation",
    "rate": "fastest fp32 matrix product (median)",
    "work": "work per operation for half its top speed (fixed cost × rate)",
    "break_even": "break-even, fitted and bare-operation: work per operation where the GPU's step gets shorter",
    "bandwidth": "copy bandwidth, largest copy (bytes read plus written)",
    "ridge": "ridge point: FLOP per byte to be compute-bound",
    "bf16": "bf16 against fp32, same-size matrix product",
}
# Short row labels (a phone reads them as card titles); what each means, in short sentences under the table.
ROW_NOTES = ("Fixed cost: a step's fixed time divided by its operations. Break-even: the work per operation above "
             "which the GPU's step is shorter. Ridge point: the rate divided by the copy bandwidth (bytes read plus "
             "written). Its bf16 figure uses the bf16 product.")
LESSONS = {"op": ("cost-model/", "Predicting a step"), "rate": ("why-gpu/", "Why a GPU is faster"),
           "work": ("batch-size/#why-the-batch-decides", "Why batch size matters"),
           "break_even": ("batch-size/#why-the-batch-decides", "Why batch size matters"),
           "bandwidth": ("regimes/", "Three regimes"), "ridge": ("regimes/#arithmetic-intensity-worked-out",
                                                                 "Three regimes"),
           "bf16": ("mixed-precision/", "Mixed precision")}


@section
def key_numbers(data: Dataset) -> Html:
    """The crossover's numbers side by side, a column per device: the build host's CPU, then a measured GPU's machine
    (its CPU and its GPU) where there is one, else the estimated GPU (a model: datasheet figures and the build host's
    issuing). Each row is computed as its lesson computes it and links to that lesson."""
    even = break_even(data)
    host = even.host
    if cost_model.measured_params(host, "cpu") is None:
        raise MissingData("no copy bandwidth or matrix-product rate to sum up")
    columns = [("the build host's CPU" if host is data.host else host.device_label("cpu"),
                _device_numbers(host, "cpu", even.op_s, even.rate))]
    first = first_measured_break_even(data)
    if first is not None:
        machine, ((cpu_op, cpu_rate, _), (gpu_op, gpu_rate, _)) = first
        gpu = machine.gpu_device(analysis.STEP)
        # A machine that began most rounds slow is marked in both its columns' heads, keyed under the table.
        columns += [(html("{}{}", machine.device_label("cpu"), slow_mark(machine)),
                     _device_numbers(machine, "cpu", cpu_op, cpu_rate)),
                    (html("{}{}", machine.device_label(gpu), slow_mark(machine)),
                     _device_numbers(machine, gpu, gpu_op, gpu_rate)
                     | {"break_even": (f"{break_even_span(data)} (per step: {break_even_step_span(data)})"
                                       if gpu_op > cpu_op else "any")})]
    else:
        columns.append(_estimate_numbers(even))
    rows = [[words] + [numbers.get(key, "—") for _, numbers in columns] + [_lesson(*LESSONS[key])]
            for key, words in ROWS.items() if any(key in numbers for _, numbers in columns)]
    slow = first is not None and mostly_slow(first[0])
    shown = [(host, "cpu")] + ([(first[0], "cpu"), (first[0], first[0].gpu_device(analysis.STEP))]
                               if first is not None else [])
    copies = [c for m, d in shown if (c := analysis.largest_copy(m, d))] + [
        p for m, d in shown for p in _bf16_points(m, d)]
    return table(["quantity"] + [name for name, _ in columns] + ["explained in"], rows,
                 caption="The crossover in a few numbers, measured on each device or fitted to its measurements"
                 ) + note(ROW_NOTES) + marks_note_for(copies, also={"slow"} if slow else set())


def _device_numbers(machine: Machine, device: str, op_s: float, rate: float) -> dict[str, str | Html]:
    """One device's column: its cost per operation and best rate (as the break-even is computed), its largest copy's
    bandwidth and the ridge point those give, and its bf16 product against fp32, where measured."""
    numbers = {"op": si(op_s, "s"), "rate": si(rate, "FLOP/s"), "work": si(op_s * rate, "FLOP")}
    params = cost_model.measured_params(machine, device)
    if params is not None:
        # The ridge rests on the copy's bandwidth, so it carries that copy's marks too.
        marked = point_mark(analysis.largest_copy(machine, device))
        ridge = html("{} FLOP/B{}", _ridge(rate / params.bandwidth), marked)
        if device != "cpu":  # three regimes gives the datasheet's ridge: both are said, each named
            ridge += html(" ({} from published figures)", _ridge(published_ridges()["H200 fp32"][0]))
        # bf16 moves the ridge far up on a GPU's tensor cores: a bf16 model needs that much more reuse per byte.
        bf16_point = next((p for p in _bf16_points(machine, device) if p["params"].get("dtype") == "bf16"), None)
        if bf16_point and bf16_point["extra_info"].get("flops"):
            bf16_rate = bf16_point["extra_info"]["flops"] / bf16_point["stats"]["median"]
            ridge += html("; bf16 {} FLOP/B{}", _ridge(bf16_rate / params.bandwidth),
                          marks([k for k in MARKS if k in stats.caveats(bf16_point["stats"],
                                                                        bf16_point["extra_info"])]))
        numbers |= {"bandwidth": html("{}{}", si(params.bandwidth, "B/s"), marked), "ridge": ridge}
    bf16 = bf16_against_fp32(machine, device)
    if bf16:
        side = precision_side(machine, device)
        # The ratio carries both timings' marks, as mixed precision's table marks them.
        kinds = {k for p in _bf16_points(machine, device) for k in stats.caveats(p["stats"], p["extra_info"])}
        marked = marks([k for k in MARKS if k in kinds])
        numbers["bf16"] = html("{}{}{}", bf16, marked, f" ({side}×{side})" if side else "")
    return numbers


def _bf16_points(machine: Machine, device: str) -> list[dict]:
    """The fp32 and bf16 matrix products a device's bf16 ratio compares (those measured)."""
    return [p for dtype in ("fp32", "bf16")
            for p in machine.measured("precision", device=device, op="matmul", dtype=dtype)[:1]]


def _estimate_numbers(even) -> tuple[str, dict[str, str]]:
    """The estimated GPU's column: what the model charges per operation, the datasheet's peak and ridge points, and
    the break-even against the build host (a model, labelled so)."""
    ridges = published_ridges()
    fp32, bf16 = (_ridge(ridges[name][0]) for name in ("H200 fp32", "H200 bf16 tensor cores"))
    return (f"{even.gpu.name} (estimated: a model)", {
        "op": f"{si(even.issue_s, 's')} (the build host's, plus a launch)",
        "rate": f"{si(even.gpu.sheet.fp32_flops, 'FLOP/s')} (published peak)",
        "work": si(even.gpu_flop, "FLOP"),
        "break_even": si(even.crossover_flop, "FLOP"),
        "ridge": f"{fp32} FLOP/B; bf16 {bf16} (published)",
    })
