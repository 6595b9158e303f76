"""Lesson-page renderings: a figure and a table per experiment, for every machine measured.

Each function takes the dataset and returns HTML. Numbers come from analysis; strings
from results files go through `esc`. A machine that did not measure something says so.
"""

from __future__ import annotations

from typing import Callable

from build_hooks import analysis, plots, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.render import esc, provenance, si, table

DEVICE_NAME = {"cpu": "CPU", "cuda": "GPU"}
SHOWN_BATCHES = {1, 8, 64, 512}  # enough rows to see the trend in a summary table


def figure(svg: str, caption: str) -> str:
    return f'<figure class="crossover-figure">{svg}<figcaption>{caption}</figcaption></figure>'


def per_machine(data: Dataset, group: str, render: Callable[[Machine], str]) -> str:
    machines = data.with_experiment(group)
    if not machines:
        return '<p class="crossover-missing">Not measured on any machine in this build.</p>'
    parts = []
    for machine in machines:
        heading = f"<p><strong>{esc(machine.label)}</strong></p>" if len(machines) > 1 else ""
        parts.append(heading + render(machine) + provenance(machine, data.host))
    return "\n".join(parts)


def _line(label, xs, ys, device="cpu", key=None):
    return plots.Series(label, list(xs), list(ys), "--" if device == "cuda" else "-", key or label)


def gemm(data: Dataset) -> str:
    def one(m: Machine) -> str:
        series, rows = [], []
        for device in m.devices("gemm_rate"):
            rates = analysis.gemm_rates(m, device)
            series.append(_line(DEVICE_NAME[device], rates, [r / 1e9 for r in rates.values()], device))
            rows += [[DEVICE_NAME[device], str(n), si(r, "FLOP/s")] for n, r in rates.items()]
        peak = m.cpu["fp32_peak_flops"]
        if peak:
            xs = sorted(analysis.gemm_rates(m, "cpu"))
            series.append(plots.Series("CPU theoretical peak (reported clock)", xs, [peak / 1e9] * len(xs), ":", "peak"))
        svg = plots.line_panels([{"series": series, "xlabel": "matrix side n (n×n @ n×n)",
                                  "ylabel": "achieved rate (GFLOP/s)", "subtitle": "Higher is better",
                                  "yscale": "linear"}],
                                title="Square fp32 matrix product: achieved FLOP/s",
                                alt="Achieved FLOP/s of square fp32 matrix products versus matrix side; the table below has the numbers.")
        return figure(svg, f"Formula: peak = {esc(m.cpu['peak_formula'])}.") + table(["device", "n", "achieved"], rows)
    return per_machine(data, "gemm_rate", one)


def shapes(data: Dataset) -> str:
    def one(m: Machine) -> str:
        series, rows = [], []
        for device in m.devices("matmul_shapes"):
            benches = sorted(m.benchmarks("matmul_shapes", device=device), key=lambda b: b["params"]["side"])
            series.append(_line(DEVICE_NAME[device], [b["params"]["side"] for b in benches],
                                [b["stats"]["median"] * 1e3 for b in benches], device))
            rows += [[DEVICE_NAME[device], f"{b['params']['calls']:,} × {b['params']['side']}²",
                      si(b["stats"]["median"], "s"), si(b["extra_info"]["flops"] / b["stats"]["median"], "FLOP/s")]
                     for b in benches]
        svg = plots.line_panels([{"series": series, "xlabel": "matrix side s (each product s×s @ s×s)",
                                  "ylabel": "time for the whole budget (ms)", "subtitle": "Lower is better"}],
                                title="The same FLOPs as many small or few large products",
                                alt="Time to spend a fixed FLOP budget versus matrix side; the table below has the numbers.")
        return figure(svg, "Every point performs the same number of FLOPs.") + table(
            ["device", "products", "time", "achieved"], rows)
    return per_machine(data, "matmul_shapes", one)


def memory(data: Dataset) -> str:
    def one(m: Machine) -> str:
        series, rows = [], []
        for device in m.devices("activation_memory"):
            benches = sorted(m.benchmarks("activation_memory", device=device), key=lambda b: b["params"]["batch"])
            ok = sorted(m.measured("activation_memory", device=device), key=lambda b: b["params"]["batch"])
            series.append(_line(f"{DEVICE_NAME[device]}: saved activations", [b["params"]["batch"] for b in ok],
                                [b["stats"]["median"] / 2**20 for b in ok], device))
            weights = ok[0]["extra_info"]["weight_bytes"] if ok else None
            if weights and device == "cpu":
                series.append(plots.Series("weights", [b["params"]["batch"] for b in ok],
                                           [weights / 2**20] * len(ok), ":", "weights"))
            for b in benches:
                if b.get("status", "ok") == "oom":
                    rows.append([DEVICE_NAME[device], str(b["params"]["batch"]), "<strong>out of memory</strong>", ""])
                else:
                    peak = b["extra_info"].get("peak_allocated_bytes")
                    rows.append([DEVICE_NAME[device], str(b["params"]["batch"]), si(b["stats"]["median"], "B"),
                                 si(peak, "B") if peak else "not measured (CPU)"])
        svg = plots.line_panels([{"series": series, "xlabel": "batch size (samples)",
                                  "ylabel": "memory (MiB)", "subtitle": "Counted from the autograd graph"}],
                                title="Activations saved for backward versus weights",
                                alt="Bytes of activations saved for backward versus batch size, with the weights for scale; the table below has the numbers.")
        return figure(svg, "Activations are counted with saved-tensor hooks; on CUDA the allocator's peak is shown too.") + table(
            ["device", "batch", "saved activations", "CUDA peak allocated"], rows)
    return per_machine(data, "activation_memory", one)


def loader(data: Dataset) -> str:
    def one(m: Machine) -> str:
        series, rows = [], []
        for pin in sorted({b["params"]["pin_memory"] for b in m.benchmarks("data_loader")}):
            rates = analysis.loader_rates(m, pin)
            label = "pinned memory" if pin else "pageable memory"
            series.append(plots.Series(label, list(rates), list(rates.values()), "-", label))
            rows += [[str(w), label, si(r, "samples/s")] for w, r in rates.items()]
        svg = plots.line_panels([{"series": series, "xlabel": "DataLoader num_workers",
                                  "ylabel": "throughput (samples/s)", "subtitle": "Higher is better", "eng": True,
                                  "xscale": "linear", "yscale": "linear",
                                  "xticks": sorted({w for s in series for w in s.x})}],
                                title="Data loading with a CPU-heavy augmentation",
                                alt="Samples per second versus number of DataLoader workers; the table below has the numbers.")
        return figure(svg, "Worker start-up excluded.") + table(["num_workers", "host memory", "throughput"], rows)
    return per_machine(data, "data_loader", one)


def precision(data: Dataset) -> str:
    def one(m: Machine) -> str:
        parts = []
        for device in m.devices("precision"):
            ops = ["matmul", "train_step"] + (["numpy_matmul"] if device == "cpu" else [])
            dtypes = ["fp64", "fp32", "bf16", "fp16"]
            times = {op: analysis.precision_times(m, device, op) for op in ops}
            series = {dt: [times[op].get(dt) for op in ops] for dt in dtypes
                      if any(dt in times[op] for op in ops)}
            svg = plots.bars([op.replace("_", " ") for op in ops], series,
                             title=f"{DEVICE_NAME[device]}: time per operation by precision",
                             ylabel="time per operation (log scale)", log=True, unit="s",
                             alt=f"Time of a matrix product, a training step and numpy's product in each precision on the {DEVICE_NAME[device]}; the table below has the numbers.")
            rows = [[op.replace("_", " "), dt, si(t, "s")] for op in ops for dt, t in times[op].items()]
            parts.append(figure(svg, "Lower is better. Torch matmul and training step use "
                                     "torch.autocast for 16-bit; numpy's product is plain numpy.")
                         + table(["operation", "precision", "median time"], rows))
        return "\n".join(parts)
    return per_machine(data, "precision", one)


def transfer(data: Dataset) -> str:
    def one(m: Machine) -> str:
        if not m.benchmarks("transfer"):
            return ('<p class="crossover-missing">Not applicable on this machine: it has no GPU, '
                    "so there is no host↔device bus to measure.</p>")
        series, rows = [], []
        for direction in ("host_to_device", "device_to_host"):
            for memory in ("pageable", "pinned"):
                bw = analysis.transfer_bandwidth(m, direction, memory)
                label = f"{direction.replace('_', ' ')}, {memory}"
                series.append(plots.Series(label, list(bw), [v / 1e9 for v in bw.values()],
                                           "-" if memory == "pinned" else "--", label))
                rows += [[direction.replace("_", " "), memory, si(n, "B"), si(v, "B/s")] for n, v in bw.items()]
        svg = plots.line_panels([{"series": series, "xlabel": "copy size (bytes)",
                                  "ylabel": "bandwidth (GB/s)", "subtitle": "Higher is better"}],
                                title="Host↔device copy bandwidth",
                                alt="Copy bandwidth versus size, pinned and pageable, both directions; the table below has the numbers.")
        return figure(svg, "Pinned host memory lets the GPU copy directly.") + table(
            ["direction", "host memory", "size", "bandwidth"], rows)
    return per_machine(data, "transfer", one)


def transfer_arithmetic(data: Dataset) -> str:
    """Markdown table: copy times at published link rates and at every measured pinned rate."""
    from snippets import transfer_arithmetic as arithmetic

    measured = {}
    for machine in data.with_experiment("transfer"):
        bandwidth = analysis.transfer_bandwidth(machine, "host_to_device", "pinned")
        if bandwidth:
            # Markdown, so the machine's name goes in as a placeholder, never as syntax.
            measured[f"measured: {untrusted.text(machine.label)}, pinned"] = bandwidth[max(bandwidth)]
    return arithmetic.table(measured)


def small_tables(data: Dataset, group: str, columns: list[tuple[str, str]]) -> str:
    """A plain table of an experiment's medians with the given (param, heading) columns."""
    def one(m: Machine) -> str:
        rows = [[esc(str(b["params"].get(p, ""))) for p, _ in columns] + [si(b["stats"]["median"], "s")]
                for b in m.measured(group)]
        return table([h for _, h in columns] + ["median time"], rows)
    return per_machine(data, group, one)


def crossover_table(data: Dataset) -> str:
    """The crossover batch per width for every machine that measured a GPU."""
    rows = []
    for m in data.with_experiment("training_step"):
        if "cuda" not in m.devices("training_step"):
            continue
        for width in analysis.widths(m):
            batch = analysis.crossover_batch(m, width)
            rows.append([esc(m.label), str(width), f"from batch {batch}" if batch else "never in the measured range"])
    if not rows:
        return ('<p class="crossover-missing">No GPU was measured for this build, so there is no '
                "measured crossover batch. Add a GPU machine's results to <code>results/</code> to fill this in.</p>")
    return table(["machine", "hidden width", "GPU training step faster"], rows)


def gallery(data: Dataset) -> str:
    """Every machine side by side: peak, achieved rates, bandwidths, crossover, provenance."""
    from build_hooks import cost_model

    if not data.machines:
        return '<p class="crossover-missing">No results files were found.</p>'
    rows = []
    for m in data.machines:
        cpu_rates = analysis.gemm_rates(m, "cpu")
        gpu_rates = analysis.gemm_rates(m, "cuda")
        peak = m.cpu["fp32_peak_flops"]
        cpu_params = cost_model.measured_params(m, "cpu")
        gpu_params = cost_model.measured_params(m, "cuda")
        transfer = analysis.transfer_bandwidth(m, "host_to_device", "pinned")
        crossings = [f"width {w}: {analysis.crossover_batch(m, w) or 'none'}" for w in analysis.widths(m)]
        rows.append([
            f"{esc(m.label)}<br><small>{esc(m.origin)}, {esc(m.doc['datetime'][:10])}</small>",
            (si(peak, "FLOP/s") if peak else "unknown") + " <small>(CPU, computed)</small>",
            (si(max(cpu_rates.values()), "FLOP/s") if cpu_rates else "not measured")
            + (f"<br>GPU {si(max(gpu_rates.values()), 'FLOP/s')}" if gpu_rates else "<br>GPU not measured"),
            (si(cpu_params.bandwidth, "B/s") if cpu_params else "not measured")
            + (f"<br>GPU {si(gpu_params.bandwidth, 'B/s')}" if gpu_params else ""),
            si(transfer[max(transfer)], "B/s") if transfer else "not applicable (no GPU)",
            "<br>".join(crossings) if "cuda" in m.devices("training_step") else "no GPU measured",
        ])
    return table(["machine", "fp32 peak", "best fp32 matmul", "memory bandwidth", "host→device (pinned)",
                  "crossover batch"], rows) + "\n".join(provenance(m, data.host) for m in data.machines)


def cost_model_validation(data: Dataset) -> str:
    """Predicted against measured step times, per machine and device, with the errors."""
    from build_hooks import cost_model

    def one(m: Machine) -> str:
        parts = []
        for device in m.devices("training_step"):
            check = cost_model.validate(m, device, calibrated=True) or cost_model.validate(m, device)
            params = check.params if check else None
            if params is None or check is None:
                parts.append(f'<p class="crossover-missing">{DEVICE_NAME[device]}: not enough measurements for the model.</p>')
                continue
            series = []
            for width in sorted({w for _, w, _, _ in check.points}):
                pts = [(b, meas, pred) for b, w, meas, pred in check.points if w == width]
                series.append(plots.Series(f"width {width}, measured", [p[0] for p in pts],
                                           [p[1] * 1e3 for p in pts], "-", str(width)))
                series.append(plots.Series(f"width {width}, model", [p[0] for p in pts],
                                           [p[2] * 1e3 for p in pts], ":", str(width)))
            svg = plots.line_panels([{"series": series, "xlabel": "batch size (samples)",
                                      "ylabel": "time per training step (ms)",
                                      "subtitle": f"{DEVICE_NAME[device]}: measured (solid) and model (dotted)"}],
                                    title="Cost model against measurement",
                                    alt=f"Measured and predicted training-step times on the {DEVICE_NAME[device]}.")
            b, w, worst = check.worst
            params_table = table(["parameter", "value", "from"], [
                ["t_op, one operation", si(params.op_seconds, "s"),
                 "fitted to the smallest step" if "fitted" in params.source else "call_overhead"],
                ["R(n), matmul rate", f"{si(min(params.gemm_rates.values()), 'FLOP/s')} to "
                                      f"{si(max(params.gemm_rates.values()), 'FLOP/s')}", "gemm_rate"],
                ["BW, streaming bandwidth", si(params.bandwidth, "B/s"), "memory_bandwidth"],
            ])
            parts.append(figure(svg, f"Median error {100 * check.median_error:.0f}%, worst "
                                     f"{100 * worst:.0f}% (batch {b}, width {w}), over {len(check.points)} points.")
                         + params_table)
        return "\n".join(parts)
    return per_machine(data, "training_step", one)


def gpu_estimate(data: Dataset) -> str:
    """Estimated step times on a GPU nobody measured here, from published figures, next to the CPU."""
    from build_hooks import cost_model

    host = data.host or (data.machines[0] if data.machines else None)
    if host is None or not cost_model.step_work(host):
        return '<p class="crossover-missing">No training-step counts to estimate from.</p>'
    gpu = cost_model.PUBLISHED_H200
    work = cost_model.step_work(host)
    rows = []
    for width in analysis.widths(host):
        cpu = {p.batch: p.seconds for p in analysis.step_curve(host, "cpu", width)}
        for batch in sorted(b for b, w in work if w == width and b in SHOWN_BATCHES):
            estimate = cost_model.predict(gpu, work[(batch, width)], batch, width)["seconds"]
            rows.append([str(width), str(batch), si(cpu[batch], "s") if batch in cpu else "not measured",
                         f"{si(estimate, 's')} <small>(estimate)</small>"])
    return (f'<p class="crossover-note">Estimate source: {esc(gpu.source)}. Not a measurement.</p>'
            + table(["width", "batch", f"measured: {esc(host.device_label('cpu'))}", f"{esc(gpu.name)} (estimate)"], rows))
