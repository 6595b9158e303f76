"""HTML renderings of measured data for the pages: numbers, tables, provenance, sections.

Every string that comes from a results file goes through `esc`, so a machine called
`<script>` is shown as text. Renderers only format; they never measure.
"""

from __future__ import annotations

import math

from build_hooks import analysis, plots, untrusted
from build_hooks.dataset import Dataset, Machine

esc = untrusted.escape


def si(value: float, unit: str, digits: int = 3) -> str:
    """`value` with an SI prefix and `digits` significant figures: 1.23e-4 s -> 123 µs."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    prefixes = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""),
                (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
    scale, prefix = next(((s, p) for s, p in prefixes if abs(value) >= s), prefixes[-1])
    scaled = value / scale
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(scaled)))))
    return f"{scaled:.{decimals}f} {prefix}{unit}"


VERSIONED = ("torch", "numpy", "python")


def version_note(machine: Machine, host: Machine | None) -> str:
    """A visible note when a committed file was measured with other library versions."""
    if host is None or machine is host:
        return ""
    ours, theirs = host.doc["software"], machine.doc["software"]
    differences = [f"{name} {esc(str(theirs[name]))} (this build: {esc(str(ours[name]))})"
                   for name in VERSIONED if theirs.get(name) != ours.get(name)]
    if not differences:
        return ""
    return (' <strong class="crossover-version-note">Measured with different library versions: '
            + ", ".join(differences) + "; compare with care.</strong>")


def table(head: list[str], rows: list[list[str]], caption: str = "", table_id: str = "") -> str:
    """An HTML table in the site's scrolling wrapper; cells are HTML, already escaped."""
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    ident = f' id="{table_id}"' if table_id else ""
    cap = f"<caption>{caption}</caption>" if caption else ""
    return (f'<div class="crossover-table"><table{ident}>{cap}<thead><tr>{th}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def provenance(machine: Machine, host: Machine | None = None) -> str:
    """One line saying where, when and with what a machine's numbers were measured."""
    cpu, sw, commit = machine.cpu, machine.doc["software"], machine.doc["commit_info"]
    peak = si(cpu["fp32_peak_flops"], "FLOP/s") if cpu["fp32_peak_flops"] else "unknown"
    clock = si(cpu["clock_hz"], "Hz") if cpu["clock_hz"] else "clock unknown"
    gpu = machine.gpu
    gpu_text = (f"GPU {esc(gpu['name'])} ({si(gpu['memory_bytes'], 'B')}, CUDA "
                f"{esc(str(gpu['cuda_version']))}, driver {esc(str(gpu.get('driver')))})"
                if gpu else "no GPU")
    commit_text = esc(commit["id"][:10]) if commit["id"] else "uncommitted"
    if commit["dirty"]:
        commit_text += " (modified)"
    return (
        '<p class="crossover-provenance">'
        f"Measured on <strong>{esc(cpu['brand'])}</strong>, {cpu['threads_used']} threads at "
        f"{clock} (fp32 peak {peak} = {esc(cpu['peak_formula'])}); {gpu_text}. "
        f"Python {esc(sw['python'])}, torch {esc(sw['torch'])} (BLAS {esc(sw['blas'])}), "
        f"numpy {esc(str(sw['numpy']))}, fp32 matmul precision "
        f"“{esc(sw['float32_matmul_precision'])}”. {esc(machine.doc['datetime'][:10])}, "
        f"commit {commit_text}, {esc(machine.origin)} ({esc(machine.source)})."
        f"{version_note(machine, host)}</p>"
    )


def _cell(point: analysis.Point | None) -> str:
    if point is None:
        return "not measured"
    mark = ""
    if point.noisy:
        mark = f'<sup title="IQR is {100 * point.iqr / point.seconds:.0f}% of the median">†</sup>'
    return f"{si(point.seconds, 's')}{mark}<br><small>{si(point.samples_per_s, 'samples/s')}</small>"


def step_table(machine: Machine) -> str:
    """Step time and throughput per batch (rows) for each device and width (columns)."""
    devices = machine.devices(analysis.STEP)
    widths = analysis.widths(machine)
    columns = [(d, w) for d in devices for w in widths]
    curves = {(d, w): {p.batch: p for p in analysis.step_curve(machine, d, w)} for d, w in columns}
    batches = sorted({b for curve in curves.values() for b in curve})
    head = ["batch"] + [f"{'GPU' if d == 'cuda' else 'CPU'}, width {w}" for d, w in columns]
    rows = [[str(b)] + [_cell(curves[c].get(b)) for c in columns] for b in batches]
    noisy = any(p.noisy for curve in curves.values() for p in curve.values())
    note = ('<p class="crossover-note">† noisy: the interquartile range of the samples is '
            "more than 10% of the median.</p>") if noisy else ""
    return table(head, rows) + note


def step_plot(machine: Machine) -> str:
    """Step time and samples/s versus batch, one line per device and width."""
    series_time, series_rate = [], []
    for device in machine.devices(analysis.STEP):
        for width in analysis.widths(machine):
            curve = analysis.step_curve(machine, device, width)
            label = f"{'GPU' if device == 'cuda' else 'CPU'}, width {width}"
            style = "--" if device == "cuda" else "-"
            x = [p.batch for p in curve]
            flagged = [p.noisy for p in curve]
            series_time.append(plots.Series(label, x, [p.seconds * 1e3 for p in curve],
                                            style, str(width), flagged))
            series_rate.append(plots.Series(label, x, [p.samples_per_s for p in curve],
                                            style, str(width), flagged))
    alt = (f"Training-step time and throughput versus batch size on {machine.label}; "
           "the same numbers are in the table below.")
    return plots.line_panels(
        [
            {"series": series_time, "xlabel": "batch size (samples)",
             "ylabel": "time per training step (ms)", "subtitle": "Step time (lower is better)"},
            {"series": series_rate, "xlabel": "batch size (samples)",
             "ylabel": "throughput (samples/s)", "eng": True, "subtitle": "Throughput (higher is better)"},
        ],
        title=f"One training step of a 512→H→10 MLP on {machine.label}",
        alt=alt,
    )


def training_step_section(data: Dataset) -> str:
    """The measured result of the training-step experiment for every machine that has it."""
    machines = data.with_experiment(analysis.STEP)
    if not machines:
        return '<p class="crossover-missing">No machine has measured this experiment yet.</p>'
    parts = []
    for machine in machines:
        parts.append(f"<h3>{esc(machine.label)}</h3>")
        if "cuda" not in machine.devices(analysis.STEP):
            parts.append('<p class="crossover-missing">GPU: not measured on this machine '
                         "(it has no CUDA device). Only the CPU is shown.</p>")
        caption = ("<figcaption>Solid lines: CPU; dashed: GPU. A ring marks a noisy point "
                   "(interquartile range above 10% of the median).</figcaption>")
        parts += [f'<figure class="crossover-figure">{step_plot(machine)}{caption}</figure>',
                  step_table(machine), provenance(machine, data.host)]
    return "\n".join(parts)


def machines_table(data: Dataset) -> str:
    """Every machine in the build, with what it measured and its provenance."""
    if not data.machines:
        return '<p class="crossover-missing">No results files were found.</p>'
    rows = []
    for m in data.machines:
        experiments = ", ".join(
            f"{esc(name)} (v{meta['bench_version']}, {'+'.join(map(esc, meta['devices']))})"
            for name, meta in sorted(m.doc["experiments"].items())
        )
        rows.append([esc(m.label), esc(m.origin), esc(m.doc["mode"]), experiments or "none"])
    return (table(["machine", "origin", "mode", "experiments (bench_version, devices)"], rows)
            + "\n".join(provenance(m, data.host) for m in data.machines))


def _derived(bench: dict) -> str:
    """The rate a point implies, where its extra info says what was done per second."""
    seconds, extra = bench["stats"]["median"], bench["extra_info"]
    if bench["unit"] != "s" or seconds <= 0:
        return ""
    if "flops" in extra:
        return si(extra["flops"] / seconds, "FLOP/s")
    if "bytes" in extra:
        return si(extra["bytes"] / seconds, "B/s")
    if extra.get("per") == "sample":
        return si(1 / seconds, "samples/s")
    return ""


def _value(bench: dict) -> str:
    if bench.get("status", "ok") == "oom":
        return "<strong>out of memory</strong>"
    stats = bench["stats"]
    unit = "B" if bench["unit"] == "bytes" else bench["unit"]
    text = si(stats["median"], unit)
    if bench["extra_info"].get("noisy"):
        text += f'<sup title="IQR is {100 * stats["iqr"] / stats["median"]:.0f}% of the median">†</sup>'
    return text


def experiment_table(machine: Machine, group: str) -> str:
    """Every point of one experiment on one machine: parameters, median, IQR, implied rate."""
    benches = machine.benchmarks(group)
    if not benches:
        return ('<p class="crossover-missing">Not applicable on this machine '
                "(it measured no points; a CPU-only machine has no host↔device bus).</p>")
    keys = sorted({k for b in benches for k in b["params"]}, key=lambda k: (k != "device", k))
    rows = []
    for b in benches:
        stats = b.get("stats")
        iqr = f"{100 * stats['iqr'] / stats['median']:.0f}%" if stats and stats["median"] else ""
        rate = _derived(b) if stats else ""
        rows.append([esc(str(b["params"].get(k, ""))) for k in keys] + [_value(b), iqr, rate])
    return table([esc(k) for k in keys] + ["median", "IQR", "rate"], rows)


def all_measurements(data: Dataset, groups: list[str]) -> str:
    """Every experiment's raw table for every machine, in registry order."""
    parts = []
    for group in groups:
        parts.append(f'<h2 id="{esc(group)}">{esc(group.replace("_", " ").capitalize())}</h2>')
        machines = data.with_experiment(group)
        if not machines:
            parts.append('<p class="crossover-missing">Not measured on any machine in this build.</p>')
        for machine in machines:
            meta = machine.experiment(group)
            parts.append(f"<h3>{esc(machine.label)}</h3>")
            parts.append(f'<p class="crossover-note">bench_version {meta["bench_version"]}, '
                         f"measured {esc(meta['measured_at'][:16])} in {meta['duration_s']:.1f} s; "
                         "† marks a noisy point (IQR above 10% of the median).</p>")
            parts.append(experiment_table(machine, group))
    return "\n".join(parts)
