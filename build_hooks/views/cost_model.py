"""The step-time model: calibrated from each machine's own results, checked against them."""

from __future__ import annotations

from dataclasses import dataclass

from build_hooks import analysis, cost_model, plots, stats, untrusted
from build_hooks import gpu_estimate as gpu_model  # the section below is named gpu_estimate
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    SITE_ROOT,
    Html,
    MissingData,
    figure,
    first_with,
    fold_constant_columns,
    gpu_with,
    html,
    join,
    listing,
    marks_note,
    measured_value,
    missing,
    mostly_slow,
    multiple,
    note,
    per_machine,
    si,
    slow_mark,
    slow_words,
    table,
)

SHOWN_BATCHES = {1, 8, 64, 512}  # enough rows to see the trend in a summary table


@section
def cost_model_validation(data: Dataset) -> Html:
    """Predicted against measured step times, per machine and device, with the errors."""
    def one(m: Machine) -> Html:
        parts = []
        for device in m.devices(analysis.STEP):
            check = cost_model.validate(m, device, calibrated=True) or cost_model.validate(m, device)
            if check is None:
                parts.append(missing(f"{DEVICE_NAME[device]}: not enough measurements for the model."))
                continue
            # A fit no better than a constant draws a zig-zag round a flat line: its range says it (#39 read).
            shown = (_flat_steps_note(check, cost_model.every_step(m, device) or check, device)
                     if cost_model.no_better_than_constant(m, device) else _validation_figure(check, device))
            parts.append(shown + _parameters_table(check.params, check.fitted))
        return join(parts, "\n")
    return per_machine(data, analysis.STEP, one)


def _flat_steps_note(check: cost_model.Validation, every: cost_model.Validation, device: str) -> Html:
    """In place of the plot, where one constant predicts as well as the fit: every measured step's range (as regimes
    gives it), the fit's held-out error, and why no plot is drawn."""
    times = [measured for _, _, measured, _ in every.points]
    return note(f"{DEVICE_NAME[device]}: its {len(times)} measured steps took {si(min(times), 's')} to "
                f"{si(max(times), 's')}. The model's median error is {100 * check.median_error:.0f}%, but one constant "
                "does as well. So no plot is drawn: it would show noise round a flat line.")


def _validation_figure(check: cost_model.Validation, device: str) -> Html:
    series = []
    for width in sorted({w for _, w, _, _ in check.points}):
        points = [(b, measured, predicted) for b, w, measured, predicted in check.points if w == width]
        series.append(plots.Series(f"width {width}, measured", [p[0] for p in points],
                                   [p[1] * 1e3 for p in points], "-", str(width)))
        series.append(plots.Series(f"width {width}, model", [p[0] for p in points],
                                   [p[2] * 1e3 for p in points], ":", str(width)))
    svg = plots.line_panels([{"series": series, "xlabel": "batch size (samples)",
                              "ylabel": "time per training step (ms)",
                              "subtitle": f"{DEVICE_NAME[device]}: measured (solid) and model (dotted)"}],
                            title="Cost model against measurement",
                            alt=f"Measured and predicted training-step times on the {DEVICE_NAME[device]}.")
    batch, width, worst = check.worst
    return figure(svg, f"Median error {100 * check.median_error:.0f}%, worst {100 * worst:.0f}% "
                       f"(batch {batch}, width {width}), over {len(check.points)} points.")


def _parameters_table(params: cost_model.DeviceParams, fitted: cost_model.Fitted | None) -> Html:
    rows = [["R(n), matmul rate", f"{si(min(params.gemm_rates.values()), 'FLOP/s')} to "
                                  f"{si(max(params.gemm_rates.values()), 'FLOP/s')}", "gemm_rate (measured)"],
            ["BW(footprint), copy bandwidth", _bandwidth_range(params), "memory_bandwidth (measured)"]]
    if fitted is not None:
        rows = [["t_op, one operation", si(params.op_seconds, "s"), "fitted"],
                ["c, compute factor", f"{fitted.compute_factor:.2f}", "fitted"],
                ["m, memory factor", f"{fitted.memory_factor:.2f}", "fitted"]] + rows
    else:
        rows.insert(0, ["t_op, one operation", si(params.op_seconds, "s"), "call_overhead (measured)"])
    return table(["parameter", "value", "from"], rows)


def _bandwidth_range(params: cost_model.DeviceParams) -> str:
    """The copy bandwidths measured, from the slowest to the fastest, each with its footprint (a cache-sized copy
    is often the fastest, so the smallest and the largest copy need not be the range's ends)."""
    slow, fast = (min(params.bandwidths, key=params.bandwidths.get), max(params.bandwidths, key=params.bandwidths.get))
    if slow == fast:
        return si(params.bandwidths[fast], "B/s")
    return (f"{si(params.bandwidths[slow], 'B/s')} ({si(slow, 'B')} copy) to "
            f"{si(params.bandwidths[fast], 'B/s')} ({si(fast, 'B')} copy), by footprint")


@section
def gpu_estimate(data: Dataset) -> Html:
    """Estimated step times on a GPU driven by the build host, from published figures, next to that CPU (shown with a
    measured GPU too: the other pages still quote the model, and the page says how it fared)."""
    host = data.host or (data.machines[0] if data.machines else None)
    if host is None or not cost_model.step_work(host):
        return missing("No training-step counts to estimate from.")
    gpu = gpu_model.for_host(host, data.machines)
    rows = [[width, batch, si(cpu["median"], "s") if cpu is not None else "not measured",
             html("{} <small>(estimate, {} to {})</small>", si(step["seconds"], "s"),
                  *(si(bound, "s") for bound in gpu.step_band(batch, width))),
             gpu_model.faster_beyond_band(cpu, step["seconds"], gpu.step_band(batch, width)),
             gpu.bounded_by(batch, width)]
            for width, batch, cpu, step in _estimate_rows(host, gpu)]
    head = ["width", "batch", f"measured: {host.device_label('cpu')}", f"{gpu.name} (estimate)",
            "ahead beyond the band", "bounded by"]
    # A flat estimate is the lesson (its host sets its pace), said once beside "bounded by: the host" rather than in
    # every row (#39 read: sixteen identical cells).
    head, rows, same = fold_constant_columns(head, rows, [3, 5])
    # A column with one value in every row is said once, in the note (#39: a table of identical cells).
    every = html(" In every row, {}.", join(same, "; ")) if same else ""
    source = gpu.source_checked(bool(gpu_model.checks(data.machines)))
    shown = note(html("Estimate source: {}. Not a measurement.{}", source, every)) + table(head, rows)
    if gpu_with(data, analysis.STEP) is None:
        return shown
    # With a measured GPU the estimate's rows are for builds without one: folded, as the break-even's are.
    return html('<details class="crossover-estimate"><summary>{}</summary>{}</details>',
                "The estimate's steps, size by size (a model, for builds with no GPU)", shown)


def _estimate_rows(host: Machine, gpu: gpu_model.Estimate) -> list[tuple[int, int, dict | None, dict]]:
    """(width, batch, measured CPU step's stats or None, estimated GPU step and parts) for the batches shown."""
    rows = []
    for width in analysis.widths(host):
        cpu = {p.batch: p.stats for p in analysis.step_curve(host, "cpu", width)}
        rows += [(width, batch, cpu.get(batch), gpu.step(batch, width))
                 for batch in sorted(b for b, w in gpu.work if w == width and b in SHOWN_BATCHES)]
    return rows


@fact
def cost_model_takeaway(data: Dataset) -> str:
    """The cost model page's answer in numbers: how closely the model fitted to the build host's CPU steps predicts
    the steps it never saw, and the raw model's miss (median errors; the table under it gives the worst)."""
    machine = data.host or first_with(data, analysis.STEP)
    check = cost_model.validate(machine, "cpu", calibrated=True)
    if check is None:
        return "This build has too few CPU steps to fit the model and check it"
    # The raw model's miss beside it: the fit's gain is the point, and the table under it has both.
    raw = cost_model.validate(machine, "cpu")
    than = f". Unfitted, it missed by {100 * raw.median_error:.0f}%" if raw is not None else ""
    return (f"A model fitted to the build host's steps predicted {len(check.points)} steps it never saw with a "
            f"median error of {100 * check.median_error:.0f}%{than}")


@fact
def gpu_copy_fixed_cost(data: Dataset) -> str:
    """Up to which size a measured GPU's tensor copies took about one call's fixed cost (within 1.5× of its smallest
    copy's time), so their "bandwidth" measures that cost; or that no GPU copy was measured."""
    machine = gpu_with(data, "memory_bandwidth")
    device = machine.gpu_device("memory_bandwidth") if machine else None
    copies = sorted(((b["params"]["bytes"], b["stats"]["median"]) for b in machine.measured("memory_bandwidth",
                                                                                          device=device)),
                    key=lambda c: c[0]) if device else []
    if not copies:
        return "No GPU copy was measured for this build, so where a GPU copy stops being a fixed cost is not known"
    floor = copies[0][1]
    flat = [(size, seconds) for size, seconds in copies if seconds <= FLAT_COPY * floor]
    largest, times = flat[-1][0], [seconds for _, seconds in flat]
    # Sized as the table beside it sizes a copy: the memory it occupies, source and destination.
    return (f"On {untrusted.placeholder(machine.device_label(device))}, every copy occupying up to "
            f"{si(2 * largest, 'B')} took {si(min(times), 's')} to {si(max(times), 's')}")


FLAT_COPY = 1.5  # copies within this multiple of the smallest one's time cost what a call costs, not bytes


@section
def cost_model_accuracy(data: Dataset) -> Html:
    """The cost model page's key table: one row per machine and device shown, with the raw model's error over every
    measured step, and the fitted model's and a constant's over the steps the fit never saw (median, then worst)."""
    rows, left_out, flat = [], {}, []
    for machine in data.shown(analysis.STEP):
        for device in machine.devices(analysis.STEP):
            raw = cost_model.validate(machine, device)
            fitted = cost_model.validate(machine, device, calibrated=True)
            if raw is None or fitted is None:
                continue
            constant = cost_model.constant_baseline(machine, device)
            if cost_model.no_better_than_constant(machine, device):
                flat.append(machine.device_label(device))
            rows.append([machine.label, DEVICE_NAME[device], f"{len(raw.points)} ({len(fitted.points)})",
                         *(_error_cell(check) for check in (raw, fitted, constant))])
            dropped = len(raw.points) - len(fitted.fitted.trained_on) - len(fitted.points)
            if dropped > 0:  # steps another experiment contradicts (consistency)
                left_out[machine.device_label(device)] = dropped
    if not rows:
        return missing("The cost model lacks call_overhead, gemm_rate or memory_bandwidth results.")
    head, rows, said = fold_constant_columns(["machine", "device", "steps (unseen)", "raw model", "fitted model",
                                              "the median, as a guess"], rows, [0, 1], min_rows=1)
    if head[0] == "machine":  # each machine named on its first row only
        rows = [["" if i and row[0] == rows[i - 1][0] else row[0], *row[1:]] for i, row in enumerate(rows)]
    caption = html("How far the model misses measured steps ({})", join(said, "; ")) if said else \
        "How far the model misses measured steps"
    link = html('<a href="{}data/#do-the-experiments-agree-with-each-other">About the data</a>', Html(SITE_ROOT))
    # One sentence for every device: a sentence per device repeated the rule word for word.
    why = (html(" Steps that disagree with another experiment were left out of the fit and its check. {} lists "
                "them: {}.", link, join((html("{} on {}", n, name) for name, n in left_out.items()), "; "))
           if left_out else Html(""))
    # A fit no better than a constant has learned the typical step, not the three prices: said, per device.
    flat_words = "".join(f" On {name}, the median guess does as well as the fit, so its low error proves none of its "
                         "three prices." for name in flat)
    return table(head, rows, caption=caption) + note(html(
        "Each cell: the median error, then the worst. The raw model is judged on every step. The fitted model is "
        "judged on the steps it never saw, and so is a guess of the median time of the steps the fit saw.{}{}",
        why, flat_words))


def _error_cell(check: cost_model.Validation | None) -> str:
    """A model's median and worst error over the steps it was judged on ("12% (worst 40%)"); a dash without it."""
    if check is None:
        return "–"
    return f"{100 * check.median_error:.0f}% (worst {100 * check.worst[2]:.0f}%)"


@fact
def cost_model_small_batch_bias(data: Dataset) -> str:
    """A sentence: the raw model's batch-1 predictions as a share of the measured time,
    lowest to highest across widths."""
    machine = first_with(data, analysis.STEP)
    check = cost_model.validate(machine, "cpu")
    if check is None:
        raise MissingData("no cost-model validation")
    ratios = [predicted / measured for batch, _, measured, predicted in check.points if batch == 1]
    low, high = f"{100 * min(ratios):.0f}%", f"{100 * max(ratios):.0f}%"
    at = f"On {'the build host' if machine is data.host else untrusted.placeholder(machine.label)}'s CPU at batch 1"
    if low == high:  # one width, or widths that round alike: one share, not a range
        return f"{at}, the raw model predicts {low} of the measured time"
    return f"{at}, the raw model predicts from {low} to {high} of the measured time, depending on the width"


@fact
def cost_model_parameters_reading(data: Dataset) -> str:
    """What the fitted numbers say about this machine, in words."""
    machine = first_with(data, analysis.STEP)
    fitted, tiny = cost_model.fit(machine, "cpu"), analysis.tiny_op_seconds(machine, "cpu")
    if tiny is None:
        raise MissingData("the cost model lacks the call_overhead result")
    if fitted is None:
        return (f"with too few steps to fit, the model runs raw: {si(tiny, 's')} per operation (one bare "
                "tiny addition), and c = m = 1")
    text = (f"the fit charges {si(fitted.params.op_seconds, 's')} per operation of a real step, against "
            f"{si(tiny, 's')} for one bare tiny addition")
    if fitted.compute_factor > 0:
        text += (f". It runs the step's matrix products at {1 / fitted.compute_factor:.2g}× the rate of "
                 "square products of the same size")
    if fitted.memory_factor > 0:
        text += (f". It moves its bytes at {1 / fitted.memory_factor:.2g}× the bandwidth of a copy "
                 "of the same footprint")
        if 1 / fitted.memory_factor > stats.MEANINGFUL_RATIO:  # faster than any copy: a share-out, not a price
            text += ". No copy moves bytes that fast, so these prices describe the fit, not the CPU"
    return text


@fact
def cost_model_gpu_parameters(data: Dataset) -> str:
    """The first measured GPU's fitted parameters in words, and, where they are physically impossible (bytes moved
    for free, or faster than a plain copy moves them), that they describe the fit rather than the GPU."""
    for machine in data.shown(analysis.STEP):
        device = machine.gpu_device(analysis.STEP)
        fitted = cost_model.fit(machine, device) if device else None
        if fitted is None or fitted.compute_factor <= 0:
            continue
        gpu = untrusted.placeholder(machine.device_label(device))
        text = (f"On {gpu}{slow_words(machine)}, the fit charges {si(fitted.params.op_seconds, 's')} per operation. "
                f"It runs products at "
                f"{1 / fitted.compute_factor:.2g}× the square rate")
        if fitted.memory_factor <= 0:
            text += ", and charges nothing for moving bytes"
        else:
            text += f", and moves bytes at {1 / fitted.memory_factor:.2g}× a copy's bandwidth"
        if fitted.memory_factor <= 0 or 1 / fitted.memory_factor > stats.MEANINGFUL_RATIO:
            text += (". Moving bytes is never free. So these numbers describe the fit, not "
                     "the GPU: its terms share out a cost that every step pays")
        return text
    return "No GPU step was fitted in this build"


@fact
def gpu_estimate_model(data: Dataset) -> str:
    """The estimate's assumptions and stated uncertainty, from the code that uses them."""
    sheet = gpu_model.SHEET
    host = data.host or (data.machines[0] if data.machines else None)
    gpu = gpu_model.for_host(host, data.machines) if host else None
    band = gpu.band_words if gpu else gpu_model.BAND_RULE
    return (f"It runs on the {sheet.name}'s published figures: {si(sheet.fp32_flops, 'FLOP/s')} FP32 and "
            f"{si(sheet.memory_bytes_s, 'B/s')} memory. It adds two assumptions of its own: "
            f"{si(gpu_model.LAUNCH_S, 's')} per kernel on the device and "
            f"{gpu_model.TILE} × {gpu_model.TILE} output tiles. Its band is stated: a real step may take {band}, "
            "and a lead counts only beyond it" + _lower_edge_reason(gpu, host, data))


@fact
def estimate_check(data: Dataset) -> str:
    """How the estimate fared against a measured GPU of its datasheet, fed the build host's costs as every page feeds
    it (gpu_estimate.check): measured ÷ estimated, and at how many sizes that left the band as first assumed; or that
    nothing has checked it yet."""
    host = data.host or (data.machines[0] if data.machines else None)
    found = gpu_model.checks(data.machines, feeder=host) if host else []
    if not found:
        return f"Nothing has checked it against a measured {gpu_model.SHEET.name} yet"
    check = found[0]
    gpu = untrusted.placeholder(check.machine.gpu["name"])
    said = (f"A real {gpu} step, timed on its own machine, took {check.median:.2g}× the estimate the build host "
            f"feeds (median of {check.sizes} sizes; {check.lowest:.2g}× to {check.highest:.2g}×)")
    # Every real step slower than estimated: the estimate's own value is a floor, said so (#39 read: a band widened
    # to the worst miss read as evidence of accuracy).
    floor = (". Every real step took longer than estimated, so read the estimate as a floor, not a forecast"
             if check.lowest > stats.MEANINGFUL_RATIO else "")
    if not check.outside:
        return said + ". Every size fell inside the band first assumed" + floor
    return (said + f". At {check.outside} of {check.sizes} sizes that is outside the band first assumed, "
            f"{gpu_model.band_words(gpu_model.FASTER)}" + _upper_edge_reason(gpu_model.for_host(host, data.machines))
            + floor)


def _lower_edge_reason(gpu: gpu_model.Estimate | None, host: Machine | None, data: Dataset) -> str:
    """Why the band's lower edge is below its usual value, when a measured host lowered it (gpu_model.lower_edge):
    the machine that did, and both costs per operation, so a reader can check the ratio."""
    # Compared as printed: a lowering the reader cannot see ("0.75×, not 0.75×") is not said.
    if gpu is None or gpu.faster >= gpu_model.FASTER or gpu_model.edge(gpu.faster) == gpu_model.edge(gpu_model.FASTER):
        return ""
    own = gpu_model.host_op_seconds(host)
    fastest = min((m for m in data.machines if gpu_model.host_op_seconds(m)), key=gpu_model.host_op_seconds)
    return (f". Its lower edge is {gpu_model.edge(gpu.faster)}×, not the model's default {gpu_model.FASTER:g}×, "
            f"because a faster host was measured: {untrusted.placeholder(fastest.label)} issues an operation in "
            f"{si(gpu_model.host_op_seconds(fastest), 's')}, against the build host's {si(own, 's')}. A GPU fed by "
            "that CPU could run a host-bound step that much faster")


def _upper_edge_reason(gpu: gpu_model.Estimate | None) -> str:
    """Why the band's top is above its assumed value, when a measured GPU took longer than estimated."""
    if gpu is None or gpu_model.edge(gpu.slower) == gpu_model.edge(gpu_model.SLOWER):
        return ""
    # The datasheet's variant (SXM or NVL) is not in a results file, and the miss includes the other host's issuing.
    return (f". So the band's top was raised to {gpu_model.edge(gpu.slower)}×, the worst miss. That miss mixes its "
            "machine's host speed with the model's error. Only a GPU not yet measured can test the raised band")


@fact
def cost_model_ops_constant(data: Dataset) -> str:
    """Whether every counted CPU step issues the same number of operations (then the fit cannot
    separate a cost per operation from one per step), or the range of counts."""
    counts = sorted({w["ops"] for w in cost_model.step_work(first_with(data, analysis.STEP)).values()})
    if not counts:
        raise MissingData("no counted CPU steps")
    if len(counts) == 1:
        return (f"Every step measured here issues the same {counts[0]} operations. So the fit cannot tell a cost "
                f"per operation from a cost per step. Its cost per operation (t_op) is one step's fixed cost, "
                f"Python included, divided by {counts[0]}")
    return (f"The steps measured here issue from {counts[0]} to {counts[-1]} operations, which is what lets the fit "
            "tell a cost per operation from the other terms")


@fact
def gpu_estimate_op_check(data: Dataset) -> str:
    """The estimate's per-operation cost against the fastest measured CPU step's time per
    operation (arithmetic included): how a GPU host's issuing can outlast a CPU's whole small step."""
    host = data.host or first_with(data, analysis.STEP)
    op = gpu_model.host_op_seconds(host)
    work = cost_model.step_work(host)
    steps = [(p.seconds / work[(p.batch, w)]["ops"], p.batch, w) for w in analysis.widths(host)
             for p in analysis.step_curve(host, "cpu", w) if (p.batch, w) in work and work[(p.batch, w)]["ops"]]
    if op is None or not steps:
        raise MissingData("no per-operation cost or no counted CPU steps")
    fastest, batch, width = min(steps)
    relation = "only " if op > fastest else ""
    # Short sentences, each one number: what the estimate charges, what a whole CPU step costs, what a launch adds.
    return (f"The estimate charges {si(op, 's')} per operation. The build host's fastest whole CPU step takes "
            f"{relation}{si(fastest, 's')} per operation, arithmetic included (batch {batch}, width {width}). A GPU "
            f"host also pays a launch per kernel, {si(gpu_model.LAUNCH_HOST_S, 's')} (published). So issuing a small "
            "step for a GPU can take longer than the CPU's whole step")


@section
def gpu_extra_cost(data: Dataset) -> Html:
    """One GPU cost three ways: the published launch the estimate adds per operation, a bare tiny operation's measured
    extra over its own CPU, and the extra fitted to whole measured steps; each row only where it exists."""
    rows = [["published: one kernel launch (PETSc, on a V100)", si(gpu_model.LAUNCH_HOST_S, "s"),
             "what the estimate adds"]]
    bare = _bare_extra(data)
    if bare is not None:
        rows.append(["measured: one bare tiny operation", si(bare[1], "s"), html("GPU minus CPU, on {}", bare[0])])
    fitted, weak = _measured_extra(data), ""
    if fitted is not None:
        machine = first_measured_break_even(data)[0]
        # A GPU fit no better than a constant has not split its step into prices: the row says so.
        weak = ("; a weak fit: a constant fits these steps as well"
                if cost_model.no_better_than_constant(machine, machine.gpu_device(analysis.STEP)) else "")
        rows.append(["fitted: a whole step, GPU minus CPU, per operation",
                     si(fitted[1], "s"), html("Python, autograd and launches included, on {}{}", fitted[0], weak)])
    head = ["how it was found", "GPU's extra cost per operation", "what it counts"]
    if fitted is None:
        return table(head, rows) + note("No GPU step was fitted here, so the published launch is not checked against "
                                        "real steps.")
    ratio = fitted[1] / gpu_model.LAUNCH_HOST_S
    said = "On real steps the extra was about the published launch."
    if stats.compare(ratio, 1) > 0:
        checked = gpu_model.checks(data.machines)  # "ran fast" only where a measured GPU took longer than estimated
        reason = (". That is one reason real steps took longer than the estimate"
                  if checked and stats.compare(checked[0].median, 1) > 0 else "")
        said = f"On real steps the extra was {ratio:.2g}× the published launch{reason}."
    elif stats.compare(ratio, 1) < 0:
        said = f"On real steps the extra was less than the published launch ({ratio:.2g}× it)."
    if weak:  # the fit's split into prices is not to be leaned on: the sentence says whose number it is
        said = said.replace("On real steps the extra was", "By that weak fit, the extra on real steps was")
    return table(head, rows) + note(said)


def _bare_extra(data: Dataset) -> tuple[str, float] | None:
    """(machine, a tiny GPU operation's time minus the same on its CPU) for the first machine that timed both."""
    for machine in data.machines:
        extra = bare_extra(machine)
        if extra is not None:
            return untrusted.placeholder(machine.label), extra
    return None


def bare_extra(machine: Machine) -> float | None:
    """A tiny GPU operation's time minus the same operation's on the machine's own CPU; None without both."""
    gpu = machine.gpu_device("call_overhead")
    gpu_s = analysis.tiny_op_seconds(machine, gpu) if gpu else None
    cpu_s = analysis.tiny_op_seconds(machine, "cpu")
    return gpu_s - cpu_s if gpu_s and cpu_s else None


def _estimate_steps(data: Dataset) -> tuple[gpu_model.Estimate, dict, list]:
    """The GPU estimate for this build's host, its step at every size it covers, and the sizes its host bounds."""
    host = data.host or first_with(data, analysis.STEP)
    gpu = gpu_model.for_host(host, data.machines)
    if gpu is None:
        raise MissingData("no step counts to estimate a GPU from")
    steps = {size: gpu.step(*size) for size in gpu.work}
    return gpu, steps, gpu.host_bound(steps)


@fact
def gpu_estimate_lead(data: Dataset) -> str:
    """The cost model page's first-screen answer about the GPU estimate: at how many of its sizes the build host's
    issuing, not the GPU, sets its step (gpu_estimate_host_bound gives the detail)."""
    _, steps, bound_sizes = _estimate_steps(data)
    bound = len(bound_sizes)
    if bound == len(steps):
        return "For this small network, that estimate is set at every size by how fast the build host issues the work"
    if not bound:
        return "At every size, that estimate is set by the GPU's own work, not by the build host"
    return f"At {bound} of its {len(steps)} sizes, that estimate is set by how fast the build host issues the work"


@fact
def gpu_estimate_host_bound(data: Dataset) -> str:
    """Over every size the estimate covers: at how many issuing the operations on the build host
    outlasts the modelled GPU (there the datasheet changes nothing), and the device side's
    largest share of the host's time."""
    gpu, steps, bound = _estimate_steps(data)
    busiest = max(steps, key=lambda size: steps[size]["device"] / steps[size]["host"])
    share = steps[busiest]["device"] / steps[busiest]["host"]
    # The table below shows a few of the sizes: said, so its row count does not read as a contradiction.
    shown = len(_estimate_rows(data.host or first_with(data, analysis.STEP), gpu))
    table_words = f" (the table below shows {shown})" if shown < len(steps) else ""
    if len(bound) == len(steps):
        return (f"at every one of the {len(steps)} sizes it covers{table_words}, the estimate is bounded by the "
                "host. Its step is "
                "the host's issuing time: the step's operations at the build host's cost each, plus a launch per "
                f"kernel. The {gpu.name}'s datasheet figures change none of its numbers: the modelled GPU work is at "
                f"most {100 * share:.0f}% of the host's time, at batch {busiest[0]} and width {busiest[1]}")
    return (f"at {len(bound)} of the {len(steps)} sizes it covers{table_words}, the estimate is bounded by the host "
            "(its "
            "operations at the build host's cost each, plus a launch per kernel: no datasheet figure changes that). "
            "At the others, "
            f"the modelled GPU work, from the {gpu.name}'s datasheet, is longer")


@fact
def gpu_estimate_needed(data: Dataset) -> str:
    """The GPU-estimate section's first sentence: whether this build needs the estimate at all (a learner should know
    before reading how it works)."""
    measured = gpu_with(data, analysis.STEP)
    # A model no GPU ran (the transformer block) still leans on the estimate, even where the MLP was measured.
    transformer = "transformer_block"
    unrun = bool(data.with_experiment(transformer)) and gpu_with(data, transformer) is None
    if measured is not None:
        gpu = untrusted.placeholder(measured.device_label(measured.gpu_device(analysis.STEP)))
        also = (". The transformer block is the exception: no GPU ran it, so the estimate stands in there"
                if unrun else "")
        return (f"This build's data holds a measured GPU, the {gpu}, on the race's network. For that network, "
                f"the estimate is only a fallback for builds without one{also}")
    return "This build measured no GPU, so the pages use this estimate in its place"


@fact
def gpu_estimate_reading(data: Dataset) -> str:
    """The estimate table's first and last rows at the widest width, read out, as sentences; nothing where a GPU was
    measured (then the table is folded, for builds with no GPU)."""
    measured = gpu_with(data, analysis.STEP)
    if measured is not None:
        return ""
    host = data.host or first_with(data, analysis.STEP)
    gpu = gpu_model.for_host(host, data.machines)
    rows = _estimate_rows(host, gpu)
    widest = max((width for width, *_ in rows), default=None)
    shown = [(batch, cpu, step) for width, batch, cpu, step in rows if width == widest and cpu is not None]
    if not shown:
        raise MissingData("no estimated rows")
    def within(step: dict) -> str:
        low, high = gpu_model.band(step["seconds"], step["floor"], gpu.faster, gpu.slower)
        return f"{si(low, 's')} to {si(high, 's')}"

    ends = shown[:1] + shown[-1:] if len(shown) > 1 else shown
    said = [f"at batch {batch}, {si(step['seconds'], 's')}" + (" estimated against " if i == 0 else " against ")
            + si(cpu["median"], "s") + (" measured on the build host" if i == 0 else "")
            for i, (batch, cpu, step) in enumerate(ends)]
    # Band and bound once when both rows share them (a host-bound estimate is one value at every size).
    notes = list(dict.fromkeys(f"its stated band is {within(step)}, and it is bounded by "
                               f"{gpu.bounded_by(batch, widest)}" for batch, _, step in ends))
    tail = (f". At both, {notes[0]}" if len(notes) == 1 and len(ends) > 1 else
            "".join(f". At batch {batch}, {note}" for (batch, _, _), note in zip(ends, notes)))
    return f"Reading the table at width {widest}: " + "; ".join(said) + tail + "."


@dataclass
class BreakEven:
    """The one number behind the crossover, for the build host and the estimated GPU."""
    host: Machine        # the machine whose CPU it is: this build's, else the first with training steps
    op_s: float          # the build host's fitted cost per operation
    rate: float          # its best matrix-product rate
    issue_s: float       # what the estimated GPU pays per operation: that cost plus a launch
    gpu: gpu_model.Estimate

    @property
    def cpu_flop(self) -> float:
        return self.op_s * self.rate

    @property
    def gpu_flop(self) -> float:
        return self.issue_s * self.gpu.sheet.fp32_flops

    @property
    def crossover_flop(self) -> float:
        """The work per operation whose CPU arithmetic outlasts the GPU's extra fixed cost, its launch."""
        return gpu_model.LAUNCH_HOST_S * self.rate


def break_even(data: Dataset) -> BreakEven:
    """The work one operation needs before its arithmetic outlasts its fixed cost: a fixed cost per operation
    times a peak rate. For the build host: its per-operation cost (fitted, as the estimate charges it) times its
    best matrix-product rate; for the estimated GPU: that issuing plus a launch, times the datasheet's FP32 peak."""
    host = data.host or first_with(data, analysis.STEP)
    op = gpu_model.host_op_seconds(host)
    rate = analysis.best_matmul_rate(host)
    gpu = gpu_model.for_host(host, data.machines)
    if op is None or not rate or gpu is None or not gpu.sheet.fp32_flops:
        raise MissingData("no per-operation cost, matrix-product rate or GPU estimate")
    return BreakEven(host, op, rate, op + gpu_model.LAUNCH_HOST_S, gpu)


@fact
def estimate_tile(data: Dataset) -> str:
    """The GPU estimate's assumed output tile of a matrix product, as a shape (gpu_estimate.TILE): a model constant,
    not a measurement."""
    return f"{gpu_model.TILE} × {gpu_model.TILE}"


@fact
def estimate_launch(data: Dataset) -> str:
    """The published host cost of one kernel launch that the GPU estimate charges (gpu_estimate.LAUNCH_HOST_S)."""
    return si(gpu_model.LAUNCH_HOST_S, "s")


@fact
def break_even_answer(data: Dataset) -> str:
    """The FAQ's short why: with a measured GPU, the batch from which its step got shorter than its own CPU's at each
    width, and the measured break-even as work per step; without one, the estimate's (its launch × the build host's
    rate)."""
    measured = _measured_extra(data)
    if measured is not None:
        gpu, extra = measured
        # "Fitted": each cost per operation is fitted to that device's measured steps, not timed directly.
        if extra <= 0:
            return (f"Fitted to measured steps, {gpu} pays no more per operation than its own CPU, so its step is "
                    "never longer")
        machine = first_measured_break_even(data)[0]
        slow = ". That machine often began its rounds slow, so its times may run high" if mostly_slow(machine) else ""
        # The FAQ's short answer: where the GPU stayed ahead, the break-even, and a link (in the page) for the rest:
        # batch-size gives every width, the leads left out and the span's two ends.
        crossed = crossing_bracket(machine)
        cpu = untrusted.placeholder(machine.cpu_short_name)
        # The answer first, as work per step (as home gives it); then where that fell, batch by batch (#39 read).
        if crossed:
            return (f"Here, the {gpu} took a shorter step than its own machine's CPU (a {cpu}) once a step did "
                    f"{flop_span(*crossed[:2])} (a FLOP is one addition or "
                    f"multiplication). It did so {step_crossings(machine, brief=True)}{slow}")
        return (f"Against the {cpu} in its own machine, the {gpu}'s step got shorter "
                f"{step_crossings(machine, brief=True)}{slow}. The cost model puts the break-even at a step of "
                f"{break_even_step_span(data)}")
    return (f"On the build host, an operation's arithmetic alone outlasts that launch from about "
            f"{si(break_even(data).crossover_flop, 'FLOP')}")


def crossing_brackets(machine: Machine) -> dict[int, tuple[float, float]]:
    """Where the GPU's measured steps crossed, per width, as work per step: {width: (the last step size before the
    crossing, the first at it)}. A crossing lies between the two."""
    device = machine.gpu_device(analysis.STEP)
    brackets = {}
    for width in analysis.widths(machine):
        batch = analysis.crossover_batch(machine, width)
        flops = {b["params"]["batch"]: b["extra_info"].get("flops")
                 for b in machine.measured(analysis.STEP, device=device, width=width)}
        below = max((b for b in flops if batch and b < batch), default=None)
        if batch and flops.get(batch) and below and flops.get(below):
            brackets[width] = (flops[below], flops[batch])
    return brackets


def shared_crossing(machine: Machine) -> tuple[list[int], tuple[float, float]] | None:
    """(the widths, their one bracket) where two or more widths crossed between the same two step sizes: the work
    per step decides, not the width or the batch alone. None otherwise."""
    brackets = crossing_brackets(machine)
    if len(brackets) < 2 or len(set(brackets.values())) > 1:
        return None
    return sorted(brackets), next(iter(brackets.values()))


def crossing_bracket(machine: Machine) -> tuple[float, float, int] | None:
    """The span crossing_brackets cover: (low, high, crossings), the measured twin of the fitted break-even. None where
    the GPU never crossed."""
    brackets = list(crossing_brackets(machine).values())
    if not brackets:
        return None
    return min(b for b, _ in brackets), max(t for _, t in brackets), len(brackets)


def step_crossings(machine: Machine, brief: bool = False) -> str:
    """Where a machine's GPU step overtook its CPU's, per width, widest first, in words a learner reads: "from batch
    128 at width 2048 and from batch 512 at width 512. At widths 8 and 32, never, up to batch 1024". `brief`: the
    crossings, then only that it stayed ahead nowhere else (for a short answer that links to the detail)."""
    crossings = {w: analysis.crossover_batch(machine, w) for w in analysis.widths(machine)}
    wins = [f"from batch {b} at width {w}" for w, b in sorted(crossings.items(), reverse=True) if b]
    largest = max((b["params"]["batch"] for b in machine.measured(analysis.STEP)), default=None)
    up_to = f", up to batch {largest}" if largest else ""
    if not wins:
        return f"at no width measured{up_to}"
    if brief:
        others = len(crossings) - len(wins)
        rest = (f". At the other width{'s' if others > 1 else ''}, it never stayed ahead{up_to}" if others else "")
        return f"{listing(wins)}{rest}"
    # A width where the GPU led at some batch but fell back is said apart from one where it never led at all.
    never = [w for w, b in sorted(crossings.items()) if b is None]
    behind = [str(w) for w in never if not analysis.stray_leads(machine, w)]
    rest = f". At width{'s' if len(behind) > 1 else ''} {listing(behind)}, it was never ahead{up_to}" if behind else ""
    for width in (w for w in never if str(w) not in behind):
        batches = listing([str(b) for b in analysis.stray_leads(machine, width)])
        rest += f". At width {width}, it was ahead only at batch {batches}"
    # A lead over a CPU step slower than the next larger batch's is not counted, and is said to be left out.
    doubted = [f"width {w}, batch {b}" for w in sorted(crossings) for b in analysis.doubted_leads(machine, w)]
    if doubted:
        rest += (f". A lead over an out-of-line CPU step ({'; '.join(doubted)}) is left out: that step took longer "
                 "than the next larger batch's")
    return f"{listing(wins)}{rest}"


@fact
def break_even_worked(data: Dataset) -> str:
    """The break-even table's top row worked through in words, before the table: the GPU's extra fixed cost per
    operation, the work its CPU does in that time, and so the work an operation must carry. From the first measured
    GPU, else from the estimate's launch (#39 read: the table's headers needed its footnotes)."""
    first = first_measured_break_even(data)
    if first is None:
        found = break_even(data)
        return (f"Worked through, for the estimate: a GPU adds a {si(gpu_model.LAUNCH_HOST_S, 's')} launch to every "
                f"operation. In that time the build host's CPU does {si(found.crossover_flop, 'FLOP')} at its best "
                "rate. So an operation must carry more than that before the estimated GPU's step is shorter")
    machine, ((cpu_op, cpu_rate, _), (gpu_op, _, _)) = first
    gpu = untrusted.placeholder(machine.device_label(machine.gpu_device(analysis.STEP)))
    extra = gpu_op - cpu_op
    if extra <= 0:
        return f"Worked through: the {gpu} pays no more per operation than its own CPU, so no work is needed"
    # Both ends, as the table gives them: a bare operation's extra cost and a whole step's share per operation. One
    # end alone was read as the threshold, which the measured crossing sits under (#39 read).
    bare = bare_extra(machine)
    if bare is None or not 0 < bare < extra:
        return (f"Worked through: the {gpu} pays {si(extra, 's')} more per operation than its own CPU. In that time "
                f"the CPU does {si(extra * cpu_rate, 'FLOP')} at its best rate. That is about the work an operation "
                "must carry before the GPU's step is shorter")
    return (f"Worked through: the {gpu} pays {si(bare, 's')} to {si(extra, 's')} more per operation than its own "
            f"CPU: a bare operation's extra cost, then a real step's. In that time the CPU does "
            f"{flop_span(bare * cpu_rate, extra * cpu_rate)} at its best rate. The work an operation must carry "
            "before the GPU's step is shorter lies in that span")


@fact
def home_one_number(data: Dataset) -> str:
    """Home's why under the grid, from the measured break-even (the first machine drawn with a measured GPU): the GPU
    pays more fixed cost per step, and only enough arithmetic hides it. Where no GPU was measured, the estimate's
    lines stand there instead (home_estimate_lines)."""
    measured = _measured_extra(data)
    if measured is None:
        return home_estimate_lines(data)
    gpu, extra = measured
    if extra <= 0:
        return f"The rule behind it: {gpu} pays no more per operation than its CPU, so batch size is not what decides"
    # One figure on home, the measured crossings in its short answer: the fit's numbers live on batch-size.
    return (f"The rule behind it: {gpu} pays a larger fixed cost per step than its CPU, and only enough arithmetic "
            "hides it")


@fact
def home_answer_work(data: Dataset) -> str:
    """The short answer's "a lot of work" in numbers, where a measured GPU gives it: the work per step its measured
    steps crossed at (crossing_bracket), else the fit's span, said as a fit (home_one_number explains it under the
    grid); nothing where no GPU was measured."""
    first = first_measured_break_even(data) if _measured_extra(data) else None
    if first is None:
        return ""
    crossed = crossing_bracket(first[0])
    if crossed:
        # Said as the step experiment's, beside the grid's epochs: the two can differ (#39 read: one answer).
        said = (f"Timed one step at a time, the GPU pulled ahead once a step did {flop_span(*crossed[:2], 'to')} "
                f"{MFLOP_WORDS}.")
        shared = shared_crossing(first[0])
        if shared:
            said += (f" Widths {listing([str(w) for w in shared[0]])} crossed between those same two step sizes, at "
                     "different batches.")
        # Per step only: an average per operation describes no real operation (#39 reads); batch-size's break-even
        # table gives the per-operation figure with its workings.
        return said
    span = break_even_step_span(data)
    return f"By a fit to the GPU measured here, that is about {span} per step {MFLOP_WORDS}." if span else ""


MFLOP_WORDS = "(million multiplications or additions in its matrix products)"  # what a step's MFLOP count is


def _measured_extra(data: Dataset) -> tuple[str, float] | None:
    """From the first measured break-even: (the GPU's name, its extra cost per operation over its own CPU); None
    without a measured GPU (break_even_span gives the work that pays it off)."""
    first = first_measured_break_even(data)
    if first is None:
        return None
    machine, ((cpu_op, _, _), (gpu_op, _, _)) = first
    return untrusted.placeholder(machine.device_label(machine.gpu_device(analysis.STEP))), gpu_op - cpu_op


def break_even_work(data: Dataset) -> tuple[float, float] | None:
    """The measured break-even as the work per operation, from the first machine with a measured GPU: (low, high),
    the bare operation's extra and the fitted extra × the CPU's rate, where the two differ beyond the spread rule
    (the fit cannot split a cost per operation from one per step, so the truth lies between); else (fitted,
    fitted). None without one."""
    first = first_measured_break_even(data)
    if first is None:
        return None
    machine, ((cpu_op, cpu_rate, _), (gpu_op, _, _)) = first
    fitted = (gpu_op - cpu_op) * cpu_rate
    bare = bare_extra(machine)
    if bare is None or bare <= 0 or stats.compare(bare * cpu_rate, fitted) == 0:
        return fitted, fitted
    low, high = sorted((bare * cpu_rate, fitted))
    return low, high


def break_even_span(data: Dataset) -> str | None:
    """break_even_work in words: "5.43 MFLOP to 18.6 MFLOP" (one unit said once), or "about 18.6 MFLOP"."""
    work = break_even_work(data)
    if work is None:
        return None
    return flop_span(*work)


def flop_span(low: float, high: float, joiner: str = "to") -> str:
    """Two amounts of work as a span, the unit said once where both share it ("5.43 to 18.6 MFLOP"; `joiner` "and"
    after "between"); "about" one."""
    if low == high:
        return f"about {si(low, 'FLOP')}"
    low_said, high_said = si(low, "FLOP"), si(high, "FLOP")
    number, unit = low_said.split(" ")
    return f"{number} {joiner} {high_said}" if high_said.endswith(" " + unit) else f"{low_said} {joiner} {high_said}"


def break_even_step_work(data: Dataset) -> tuple[float, float] | None:
    """break_even_work per step rather than per operation: times the operations the measured GPU's steps issue (the
    same at every size, so the fit cannot split the two).
    The fewest operations times the low end, the most times the high end. None without a measured GPU."""
    first, work = first_measured_break_even(data), break_even_work(data)
    if first is None or work is None:
        return None
    machine = first[0]
    ops = _step_ops(machine, machine.gpu_device(analysis.STEP))
    if not ops:
        return None
    return work[0] * min(ops), work[1] * max(ops)


def break_even_step_span(data: Dataset) -> str | None:
    """break_even_step_work in words, like break_even_span ("206 to 707 MFLOP")."""
    work = break_even_step_work(data)
    if work is None:
        return None
    return flop_span(*work)


def home_estimate_lines(data: Dataset) -> str:
    """Without a measured GPU, home's lines under the grid: where the labelled estimate leads, and what sets its
    pace."""
    from build_hooks.views import race as race_views  # the race's facts; imported late, as views import each other
    return f"{race_views.estimated_crossovers(data)}. {race_views.home_estimate_pace(data)}"


WORKED_STEP = (64, 512)  # (batch, width): the step the cost model's page works through, when measured


@section
def cost_model_worked_step(data: Dataset) -> Html:
    """One measured CPU step priced by the fitted model, term by term, against its measured time, as a table: the
    page's intuition before its notation. Batch 64 at width 512 where measured, else the middle step."""
    machine = first_with(data, analysis.STEP)
    fitted, work = cost_model.model(machine, "cpu"), cost_model.step_work(machine, "cpu")
    if fitted is None or not work:
        raise MissingData("no fitted model or no step counts")
    batch, width = WORKED_STEP if WORKED_STEP in work else sorted(work)[len(work) // 2]
    counts, terms = work[(batch, width)], fitted.terms(work[(batch, width)], batch, width)
    rows = [["operations it issues", f"{counts['ops']}", f"{si(fitted.params.op_seconds, 's')} each",
             si(terms["overhead"], "s")],
            ["arithmetic", si(counts["flops"], "FLOP"), _rate(counts["flops"], terms["compute"], "FLOP/s"),
             si(terms["compute"], "s")],
            ["bytes it moves", si(counts["bytes"], "B"), _rate(counts["bytes"], terms["memory"], "B/s"),
             si(terms["memory"], "s")],
            ["the sum, by the model", "", "", si(sum(terms.values()), "s")]]
    measured = next((p for p in analysis.step_curve(machine, "cpu", width) if p.batch == batch), None)
    key = Html("")
    if measured is not None:
        rows.append(["the step, measured", "", "", measured_value(measured.stats, measured.flags, "s")])
        key = marks_note(set(stats.caveats(measured.stats, measured.flags)))
    # How far this one step's sum is from its time, said: a 21% miss left unsaid read as hidden (#39 read).
    miss = ""
    if measured is not None and measured.seconds > 0:
        off = sum(terms.values()) / measured.seconds - 1
        miss = (f" The sum is {100 * abs(off):.0f}% {'under' if off < 0 else 'over'} this step's measured time; "
                "the table below gives the model's miss over every step.")
    # "Effective" is defined where it is first met (#39 read: it came before the model that explains it).
    effective = note("Effective: the measured rate of a matching product or copy, times the fit's correction."
                     + miss)
    return table(["price", "how much", "at", "time"], rows,
                 caption=f"One step at batch {batch} and width {width} on {machine.label}, priced by the model "
                         "fitted to its steps") + key + effective


def _rate(amount: float, seconds: float, unit: str) -> str:
    """The rate a term charges (its amount over its time), or "free in the fit" where the fit charges nothing for it."""
    return f"{si(amount / seconds, unit)} effective" if seconds > 0 else "free in the fit"


@section
def break_even_table(data: Dataset) -> Html:
    """The one number behind the crossover (break_even) as a two-row table: each device's fixed cost per operation,
    its arithmetic rate, and their product, the work an operation needs before its arithmetic outlasts that cost."""
    try:
        even = break_even(data)
    except MissingData as why:
        return missing(f"Not computed for this build: {why}.")
    gpu = even.gpu
    rows = [[f"CPU: {even.host.label}", f"{si(even.op_s, 's')} (fitted: its steps' fixed time ÷ their operations)",
             f"{si(even.rate, 'FLOP/s')} (its best matrix product)", si(even.cpu_flop, "FLOP")],
            [f"{gpu.name} (estimated)",
             f"{si(even.issue_s, 's')} with a kernel launch ({si(even.op_s, 's')} to issue it here, plus a "
             f"{si(gpu_model.LAUNCH_HOST_S, 's')} launch, published by PETSc)",
             f"{si(gpu.sheet.fp32_flops, 'FLOP/s')} (datasheet FP32 peak)", si(even.gpu_flop, "FLOP")],
            # The crossover itself: the GPU's extra fixed cost is the launch, paid off by the CPU's arithmetic.
            ["break-even: the estimated GPU's step gets shorter",
             f"{si(gpu_model.LAUNCH_HOST_S, 's')} (the GPU's extra cost: its launch)",
             f"{si(even.rate, 'FLOP/s')} (the CPU's rate)", si(even.crossover_flop, "FLOP")]]
    head = ["device, or break-even", "fixed cost per operation", "arithmetic rate",
            "fixed cost × rate (work per operation, average)"]
    measured = _measured_break_even_rows(data)
    # A measured GPU comes first: the estimate is the model a build without one falls back on.
    estimated = table(head, rows, caption=(
        "Fixed cost × rate: how much work one operation needs before a device's speed shows" if not measured else
        html("Estimated: an {} driven by the build host (a model)", gpu.name)))
    if measured:  # the model a build without a GPU falls back on, folded: the measured table is the answer
        estimated = html('<details class="crossover-estimate"><summary>{}</summary>{}{}</details>',
                         "The estimate's break-even (a model, for builds with no GPU)", estimated,
                         note(_estimate_against_measured(data, even)))
    # One column, two readings: said once, so a learner does not take a break-even for a device's half speed.
    workings = [note("Two break-evens. The low one uses one bare, tiny operation's extra cost. The high one uses a "
                     "real step's: it also spreads the step's own fixed cost over its operations.")
                if any(row[0] == "break-even, bare operation" for _, rows in measured for row in rows) else Html(""),
                note(_per_step_words(data)) if measured else Html("")]
    spans = [note("The last column, for a device: the work at which an operation runs at half its top speed. For a "
                  "break-even: the work above which the GPU's step is shorter."),
             marks_note({"slow"} if any(mostly_slow(m) for m in data.shown(analysis.STEP) if measured_break_even(m))
                        else set())]
    if measured:  # how the figures are worked out, folded (#39 read: a dozen quantities for one idea)
        spans.append(html('<details class="crossover-workings"><summary>How these break-evens are worked out'
                          '</summary>{}</details>', join(workings)))
    return join([table(head, measured_rows, caption=html("Fixed cost × rate, measured: {} against the CPU in its own "
                                                         "machine", gpu_name)) for gpu_name, measured_rows in measured]
                + spans + [estimated])


def _per_step_words(data: Dataset) -> str:
    """Why "per operation" is a share of a step's cost, and the break-even per step: every step of a device issues
    the same operations, so the fit cannot split the two."""
    machine = first_measured_break_even(data)[0]
    counts = {device: _step_ops(machine, device) for device in ("cpu", machine.gpu_device(analysis.STEP))}
    if not all(len(ops) == 1 for ops in counts.values()):
        return f"Per step, the break-even is {break_even_step_span(data)}."
    cpu_ops, gpu_ops = (next(iter(ops)) for ops in counts.values())
    ops = f"{cpu_ops}" if cpu_ops == gpu_ops else f"{cpu_ops} on the CPU, {gpu_ops} on the GPU"
    # The fit sees one fixed cost per step; "per operation" is that cost shared out, said so in plain words.
    best = analysis.best_rate(machine, "cpu")
    in_step = (f" Inside a step this CPU reached at most {si(best[0].flops_per_s, 'FLOP/s')}, which would lower "
               "both." if best and best[0].flops_per_s else "")
    # "average": a step's few matrix products carry nearly all its work, so no one operation holds this much.
    return (f"The fit sees one fixed cost per step, shared here over the step's operations ({ops}). So the last "
            f"column is an average per operation. Per step, the break-even is {break_even_step_span(data)}."
            f"{_crossings_against_fit(data, machine)} Both rows use the CPU's best matrix product.{in_step}")


def _crossings_against_fit(data: Dataset, machine: Machine) -> str:
    """The measured step crossings' work per step set against the fit's break-even span: inside it, or not, so the
    two ranges a reader meets read as one answer (#39 review)."""
    crossed, span = crossing_bracket(machine), break_even_step_work(data)
    if crossed is None or span is None:
        return ""
    inside = span[0] <= crossed[0] and crossed[1] <= span[1]
    return (f" The measured crossings, {flop_span(*crossed[:2])}, fall {'inside' if inside else 'outside'} "
            "that span.")


def _step_ops(machine: Machine, device: str) -> set[int]:
    """The operation counts of a device's measured training steps (one, where every size issues the same)."""
    return {b["extra_info"]["ops"] for b in machine.measured(analysis.STEP, device=device)
            if b["extra_info"].get("ops")}


def _estimate_against_measured(data: Dataset, even: BreakEven) -> str:
    """Under the folded estimate: how its break-even compares with the measured one, and the two factors that make
    the difference (the CPU's rate and the GPU's extra cost), so no reader takes the model's number for the GPU's."""
    first, work = first_measured_break_even(data), break_even_work(data)
    if first is None or work is None or even.crossover_flop <= 0:
        return "No measured break-even to set it against."
    machine, ((cpu_op, cpu_rate, _), (gpu_op, _, _)) = first
    low, high = (w / even.crossover_flop for w in work)
    ratio = multiple(low) if stats.compare(low, high) == 0 else f"{multiple(low)} to {multiple(high)}"
    extras = sorted(e for e in (gpu_op - cpu_op, bare_extra(machine)) if e is not None and e > 0)
    extra = si(extras[0], "s") if len(extras) == 1 or stats.compare(*extras) == 0 else (
        f"{si(extras[0], 's')} to {si(extras[-1], 's')}")
    return (f"The measured break-even above is {ratio} this estimate's. Two inputs differ. That machine's CPU rate "
            f"is {multiple(cpu_rate / even.rate)} the build host's. Its GPU's measured extra cost per operation is "
            f"{extra}, where the estimate charges a {si(gpu_model.LAUNCH_HOST_S, 's')} launch.")


FITTED = "fitted: its steps' fixed time ÷ their operations"
TINY = "one tiny operation, measured: too few steps to fit"


def measured_break_even(machine: Machine) -> tuple[tuple[float, float, str], tuple[float, float, str]] | None:
    """A machine with a measured GPU: ((its CPU's cost per operation, rate, how the cost was found), (its GPU's)).
    Each cost is fitted to that device's own steps (else one tiny operation's, as the estimate falls back) and each
    rate is its best matrix product; None where either is missing."""
    gpu = machine.gpu_device(analysis.STEP)
    if gpu is None:
        return None
    found = []
    for device in ("cpu", gpu):
        fitted, rate = cost_model.fit(machine, device), analysis.best_matmul_rate(machine, device)
        op, how = (fitted.params.op_seconds, FITTED) if fitted else (analysis.tiny_op_seconds(machine, device), TINY)
        if not op or not rate:
            return None
        found.append((op, rate, how))
    return found[0], found[1]


def first_measured_break_even(data: Dataset) -> tuple[Machine, tuple] | None:
    """The first machine a lesson page draws that has a measured GPU's break-even, with it (measured_break_even)."""
    return next(((m, found) for m in data.shown(analysis.STEP) if (found := measured_break_even(m)) is not None), None)


def _measured_break_even_rows(data: Dataset) -> list[tuple[str, list[list[str]]]]:
    """Per machine with a measured GPU: its CPU, its GPU, and the work per operation from which the GPU's step gets
    shorter (the GPU's extra cost per operation × its CPU's rate; none where the GPU pays no more)."""
    tables = []
    for machine in data.shown(analysis.STEP):  # the machines a lesson page draws: the host and a few GPU machines
        found = measured_break_even(machine)
        if found is None:
            continue
        (cpu_op, cpu_rate, cpu_how), (gpu_op, gpu_rate, gpu_how) = found
        gpu_name = machine.device_label(machine.gpu_device(analysis.STEP))
        extra = gpu_op - cpu_op
        rows = [[html("{}{}", machine.device_label("cpu"), slow_mark(machine)), f"{si(cpu_op, 's')} ({cpu_how})",
                 f"{si(cpu_rate, 'FLOP/s')} (its best matrix product)", si(cpu_op * cpu_rate, "FLOP")],
                [html("{}{}", gpu_name, slow_mark(machine)), f"{si(gpu_op, 's')} ({gpu_how})",
                 f"{si(gpu_rate, 'FLOP/s')} (its best matrix product)", si(gpu_op * gpu_rate, "FLOP")],
                ["break-even: the GPU's step gets shorter",
                 f"{si(extra, 's')} (the GPU's extra cost)" if extra > 0 else "none: the GPU pays no more",
                 f"{si(cpu_rate, 'FLOP/s')} (the CPU's rate)", si(extra * cpu_rate, "FLOP") if extra > 0 else "any"]]
        bare = bare_extra(machine)
        if bare is not None and bare > 0:  # the low end: the fit cannot split a cost per operation from one per step
            rows.append(["break-even, bare operation", f"{si(bare, 's')} (a tiny operation, GPU minus CPU)",
                         f"{si(cpu_rate, 'FLOP/s')} (the CPU's rate)", si(bare * cpu_rate, "FLOP")])
        tables.append((gpu_name, rows))
    return tables


