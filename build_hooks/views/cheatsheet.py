"""The cheat sheet's key numbers: one row each, computed as its lesson computes it, with a link to that lesson."""

from __future__ import annotations

from build_hooks import analysis, cost_model
from build_hooks.dataset import Dataset
from build_hooks.page import section
from build_hooks.render import SITE_ROOT, Html, MissingData, html, si, table
from build_hooks.views.cost_model import break_even, break_even_span, first_measured_break_even
from build_hooks.views.intensity import SHEET, _cpu_ridge, _ridge, published_ridges
from build_hooks.views.precision import bf16_against_fp32


def _lesson(path: str, words: str) -> Html:
    return html('<a href="{}{}">{}</a>', Html(SITE_ROOT), path, words)


@section
def key_numbers(data: Dataset) -> Html:
    """The build host in a few numbers (measured, or fitted to what was measured), and a GPU's break-even work:
    a measured GPU's where there is one, else the estimate's (a model: datasheet figures and the build host's issuing),
    each linked to the lesson that explains it."""
    even = break_even(data)
    host = even.host
    params = cost_model.measured_params(host, "cpu")
    if params is None:
        raise MissingData("no copy bandwidth or matrix-product rate to sum up")
    why_batch = _lesson("batch-size/#why-the-batch-decides", "Why batch size matters")
    why_regimes = _lesson("regimes/#arithmetic-intensity-worked-out", "Three regimes")
    rows = [
        ["fixed cost per operation (a step's fixed time ÷ its operations)", si(even.op_s, "s"),
         _lesson("cost-model/", "Predicting a step")],
        ["fastest fp32 matrix product measured (median)", si(even.rate, "FLOP/s"),
         _lesson("why-gpu/", "Why a GPU is faster")],
        ["work per operation before the CPU's speed shows (fixed cost × rate)", si(even.cpu_flop, "FLOP"), why_batch],
        [f"the same on the estimated {even.gpu.name} (a model)", si(even.gpu_flop, "FLOP"), why_batch],
        ["break-even: work per operation from which the estimated GPU's step is shorter",
         si(even.crossover_flop, "FLOP"),
         why_batch],
        ["copy bandwidth, largest copy (bytes read plus written)", si(params.bandwidth, "B/s"),
         _lesson("regimes/", "Three regimes")],
        ["ridge point: FLOPs per byte to be compute-bound", f"{_ridge(_cpu_ridge(host, params))} FLOP/B", why_regimes],
    ] + [[f"the same on the {SHEET.name}, {name.removeprefix('H200 ')} ({how})", f"{_ridge(ridge)} FLOP/B", why_regimes]
         for name, (ridge, _, how) in published_ridges().items()]
    measured = _measured_gpu_rows(data, why_batch)
    if measured:  # a measured GPU replaces the estimate's rows (cost-model shows how far off the estimate ran)
        rows[3:5] = measured
    bf16 = bf16_against_fp32(host)
    if bf16:
        rows.append(["bf16 against fp32, one matrix product", bf16, _lesson("mixed-precision/", "Mixed precision")])
    return table(["quantity", "value", "explained in"], rows,
                 caption=f"Measured on {host.label}, or fitted to its measurements, except the rows that name a GPU.")


def _measured_gpu_rows(data: Dataset, why_batch: Html) -> list[list]:
    """The first shown machine with a measured GPU: its GPU's work per operation before its speed shows, and the
    break-even against its own CPU (measured_break_even), each row naming the GPU."""
    first = first_measured_break_even(data)
    if first is None:
        return []
    machine, ((cpu_op, cpu_rate, _), (gpu_op, gpu_rate, _)) = first
    gpu = machine.device_label(machine.gpu_device(analysis.STEP))
    rows = [[f"the same on the measured {gpu}", si(gpu_op * gpu_rate, "FLOP"), why_batch]]
    if gpu_op > cpu_op:
        rows.append([f"break-even: work per operation from which the measured {gpu}'s step beats its own CPU's",
                     break_even_span(data), why_batch])
    return rows
