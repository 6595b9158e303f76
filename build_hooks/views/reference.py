"""Reference pages: every machine side by side, every raw table, every provenance line."""

from __future__ import annotations

from build_hooks import (
    analysis,
    conditions,
    consistency,
    cost_model,
    experiments,
    gate,
    gpu_estimate,
    plots,
    stats,
    untrusted,
)
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import MissingData, fact, section
from build_hooks.render import (
    Html,
    figure,
    html,
    iqr_share,
    join,
    listing,
    marks_note_for,
    measured_value,
    missing,
    more_machines,
    mostly_slow,
    multiple,
    note,
    point_mark,
    provenance,
    si,
    table,
)
from build_hooks.views.training_step import CONTRADICTED, CONTRADICTED_TITLE, contradicted_note
from build_hooks.wording import why_no_transfer


@fact
def gallery_takeaway(data: Dataset) -> str:
    """The gallery's answer first: the fastest CPU matrix product in the data (its CPU by name), and the fastest GPU
    one against it (analysis.best_matmul_rate, as the table's column); where that GPU timed training steps, the
    widths and batches where its step beat its own CPU's (step_crossings); then any machine that began most of its
    rounds slow, since that lowers every number it gave."""
    rated = [(analysis.best_matmul_rate(m), m) for m in data.machines]
    cpus = [(rate, m) for rate, m in rated if rate]
    if not cpus:
        raise MissingData("no machine measured a matrix product")
    cpu_rate, cpu = max(cpus, key=lambda pair: pair[0])
    # The CPU by its own name: a GPU machine's label leads with its GPU.
    cpu_name = cpu.device_label("cpu").removeprefix("CPU: ") if cpu.gpu else cpu.label
    said = [f"The fastest CPU matrix product here ran at {si(cpu_rate, 'FLOP/s')}, on "
            f"{untrusted.placeholder(cpu_name)}" + (" (the GPU machine's own CPU)" if cpu.gpu else "")]
    gpus = [(analysis.best_matmul_rate(m, m.gpu_device("gemm_rate")), m) for m in data.machines
            if m.gpu_device("gemm_rate")]
    gpus = [(rate, m) for rate, m in gpus if rate]
    if gpus:
        gpu_rate, gpu = max(gpus, key=lambda pair: pair[0])
        said.append(f"The {untrusted.placeholder(gpu.device_label(gpu.gpu_device('gemm_rate')))} reached "
                    f"{si(gpu_rate, 'FLOP/s')}, {multiple(gpu_rate / cpu_rate)} that")
        if gpu.gpu_device(analysis.STEP):  # a faster product is not a faster training step: the table's column says
            from build_hooks.views.cost_model import step_crossings  # imported late, as views import each other
            # One step, not an epoch: cpu-choice and the race give epochs, whose crossings can fall elsewhere.
            # "Clearly": beyond both spreads and the meaningful ratio, the site's one rule; a near-win under it is
            # not a win (#39 read: 1.04× and 1.08× read as left out).
            said.append(f"Yet on the race's small network, one training step (not a whole epoch) beat its own CPU's "
                        f"clearly (by {stats.MEANINGFUL_RATIO:g}× and beyond the spread) only "
                        f"{step_crossings(gpu, brief=True)}")
    slow = [m for m in data.machines if mostly_slow(m)]
    if slow:
        who = ("that machine" if slow == [cpu] else listing([untrusted.placeholder(m.label) for m in slow]))
        said.append(f"Most rounds began slow on {who}, so {'its' if len(slow) == 1 else 'their'} numbers may sit "
                    "below what the hardware can do")
    return ". ".join(said)


@section
def gallery(data: Dataset) -> Html:
    """Every machine side by side, in two tables a laptop shows whole: every machine's measured rates and bandwidth,
    then the GPU machines' bus, crossover and estimate check; provenance under both."""
    if not data.machines:
        return missing("No results files were found.")
    feeder = data.host or data.machines[0]  # the estimate every page draws is fed by the build host
    rows = [_gallery_row(m) for m in data.machines]
    # Measured columns only. A CPU peak computed from the reported clock was beaten by a measured product on most
    # machines (a boost clock), so a column of it mostly showed a wrong number; why-gpu discusses the peak instead.
    head = ["machine", "fastest fp32 matrix product", "copy bandwidth, largest copy (all threads; read plus write)",
            "rounds begun slow"]
    # Which experiments "fastest" reads: a reader checking the sweep's own table finds a lower figure.
    keys = note("Fastest fp32 matrix product: the best median of the square sweep and the shapes experiment.")
    copies = [c for m in data.machines for d in ("cpu", m.gpu_device("call_overhead")) if d
              and (c := analysis.largest_copy(m, d))]
    return (_gallery_chart(data) + table(head, rows, caption="Every machine: its fastest matrix product and its memory")
            + marks_note_for(copies) + keys + _state_note(data) + _gallery_gpus(data, feeder)
            + join((provenance(m, data.host) for m in data.machines), "\n"))


def _gallery_chart(data: Dataset) -> Html:
    """Every machine's fastest fp32 matrix product, its CPU's and its GPU's, on one log axis (#39 read: a gallery
    with no picture). Each machine by its CPU in a few words, on two lines; a GPU is named in its own series."""
    rated = [(m, analysis.best_matmul_rate(m), m.gpu_device("gemm_rate")) for m in data.machines]
    rated = [(m, cpu, analysis.best_matmul_rate(m, gpu) if gpu else None) for m, cpu, gpu in rated if cpu]
    if len(rated) < 2:
        return Html("")
    # Three short lines a tick label can hold side by side: "2-thread", "Intel Xeon", "at 2.60 GHz".
    groups = [m.cpu_short_name.replace("-thread ", "-thread\n", 1).replace(" at ", "\nat ", 1) for m, _, _ in rated]
    series = {"CPU": [cpu for _, cpu, _ in rated]}
    if any(gpu for _, _, gpu in rated):
        series["GPU in the same machine"] = [gpu for _, _, gpu in rated]
    svg = plots.bars(groups, series, title="Fastest fp32 matrix product, by machine", ylabel="fastest product (FLOP/s)",
                     alt="Each machine's fastest fp32 matrix product on its CPU, and on its GPU where it has one, "
                         "on a log axis; the table below has the numbers.", log=True, unit="FLOP/s")
    return figure(svg, "Higher is better. A log axis: each grid line is ten times the one below.")


def _gallery_gpus(data: Dataset, feeder: Machine) -> Html:
    """The gallery's second table: per machine with a GPU, its bus, where its step got shorter, and how its real
    step compared with the estimate; a note where no machine has one."""
    gpus = [m for m in data.machines if m.gpu is not None]
    if not gpus:
        return note("No machine here has a GPU.")
    from build_hooks.views.training_step import step_lead_words  # imported late, as views import each other

    def crossings(m: Machine) -> Html | str:
        if not m.gpu_device(analysis.STEP):
            return "no GPU step measured"
        return join([html("width {}: {}", w, step_lead_words(m, w, "never")) for w in analysis.widths(m)], "<br>")

    def bus(m: Machine) -> str:
        transfer = analysis.transfer_bandwidth(m, "host_to_device", "pinned")
        return si(transfer[max(transfer)], "B/s") if transfer else f"none: {why_no_transfer(m)}"
    rows = [[m.label, bus(m), crossings(m), _estimate_error(m, feeder)] for m in gpus]
    head = ["machine", "host→device (pinned)", "GPU step shorter (one step, not an epoch)",
            "real GPU step ÷ the GPU estimate"]
    # The home grid races whole epochs: its crossover can fall at another batch than this column's steps.
    from build_hooks.views.training_step import left_out_key  # the key batch-size and the cheat sheet use
    return (table(head, rows, caption="Machines with a GPU: its bus, its crossover and the estimate's check")
            + left_out_key((cell for row in rows for cell in row), data)
            + note("GPU step shorter: the training step alone. The home grid races whole epochs, so its crossover "
                   "can differ. Real GPU step ÷ the GPU estimate: how much longer a measured step took than the "
                   "estimate predicted (Predicting a step)."))


def _state_note(data: Dataset) -> Html:
    """What the "rounds begun slow" column counts: part of a gap between machines can be the state a virtual
    machine was in, not its hardware."""
    if all(gate.slow_start_share(m.doc) is None for m in data.machines):
        return html("")
    said = note(html("Rounds begun slow: a short test job timed as each round began ran over {}× slower than its "
                     "fastest (the canary: About the data). A machine often slow measured below its best. So part of "
                     "a gap between rows can be its state, not its hardware.", f"{gate.SLOW_STATE_RATIO:g}"))
    return said  # a machine slow on most rounds is named above the table, in gallery_takeaway



def _slow_starts(m: Machine) -> str:
    share = gate.slow_start_share(m.doc)
    if share is None:
        return "not recorded"
    return f"{100 * share:.0f}%" + (": most rounds" if share > gate.MOSTLY_SLOW else "")


def _gallery_row(m: Machine) -> list[Html]:
    gpu = m.gpu_device("gemm_rate")
    cpu_rates, gpu_rates = analysis.gemm_rates(m, "cpu"), analysis.gemm_rates(m, gpu) if gpu else {}
    cpu_params = cost_model.measured_params(m, "cpu")
    gpu_params = cost_model.measured_params(m, m.gpu_device("call_overhead")) if m.gpu_device("call_overhead") else None
    return [
        # Two files of one CPU read alike but for what one recorded: an absent instruction set is said, not implied.
        html("{}<br><small>{}, {}{}</small>", m.label, m.origin, m.doc["datetime"][:10],
             "" if m.cpu.get("isa") else "; instruction set not recorded"),
        html("CPU {}{}", si(analysis.best_matmul_rate(m), "FLOP/s") if cpu_rates else "not measured",
             html("<br>GPU {}", si(max(gpu_rates.values()), "FLOP/s")) if gpu_rates
             else "" if m.gpu is None else html("<br>GPU not measured")),
        (html("CPU {}{}", si(cpu_params.bandwidth, "B/s"), point_mark(analysis.largest_copy(m, "cpu")))
         if cpu_params else html("CPU not measured"))
        + (html("<br>GPU {}{}", si(gpu_params.bandwidth, "B/s"),
                point_mark(analysis.largest_copy(m, m.gpu_device("call_overhead"))))
           if gpu_params else ""),
        _slow_starts(m),
    ]


def _estimate_error(m: Machine, feeder: Machine) -> str:
    """How the first-principles GPU estimate, fed by the build host as the pages feed it, compared with this GPU
    machine's measured steps (gpu_estimate.check), as the cost model page says it."""
    found = gpu_estimate.check(m, feeder)
    if found is None:
        return f"not compared: not the {gpu_estimate.SHEET.name}"
    return f"{found.median:.2g}× (median; {found.lowest:.2g}× to {found.highest:.2g}×)"


@section
def machines(data: Dataset) -> Html:
    """Every machine in the build, with what it measured and its provenance."""
    if not data.machines:
        return missing("No results files were found.")
    rows = []
    unfinished = any(m.unfinished for m in data.machines)  # a GPU run that published what finished
    for m in data.machines:
        measured = ", ".join(
            f"{name} (v{meta['bench_version']}, {'+'.join(meta['devices']) or 'not applicable here'})"
            for name, meta in sorted(m.doc["experiments"].items())
        )
        short = "; ".join(f"{name}: {why}" for name, why in sorted(m.unfinished.items()))
        # The list folded behind its count: five machines' lists made the table a wall (#39 read).
        count = len(m.doc["experiments"])
        folded = (html("<details><summary>{} experiment{}</summary>{}</details>", count, "s" if count != 1 else "",
                       measured) if measured else "none")
        rows.append([m.label, m.origin, m.doc["mode"], folded] + ([short or "none"] if unfinished else []))
    return (table(["machine", "origin", "mode", "experiments (bench_version, devices)"]
                  + (["not measured (why)"] if unfinished else []), rows)
            + join((provenance(m, data.host, full=True) for m in data.machines), "\n"))


@section
def all_provenance(data: Dataset) -> Html:
    """The full provenance record of every machine in the build."""
    return join((provenance(m, data.host, full=True) for m in data.machines), "\n")


def _measurements_of(group: str):
    """A section with one experiment's raw table for every machine that measured it."""
    def render(data: Dataset) -> Html:
        machines_with = data.shown(group)
        if not machines_with:
            return missing("Not measured on any machine in this build.")
        parts = []
        for machine in machines_with:
            meta = machine.experiment(group)
            parts.append(html("<h3>{}</h3>", machine.label))
            parts.append(note(f"Measured {meta['measured_at'][:16]} in {meta['duration_s']:.1f} s, "
                              f"bench_version {meta['bench_version']}."))
            parts.append(experiment_table(machine, group))
            parts.append(marks_note_for(machine.measured(group)))
        short = [m for m in data.machines if group in m.unfinished]
        if short:  # a GPU machine's run that published what finished: say it was not measured, and why
            parts.append(note("Not measured on " + "; ".join(f"{m.label} ({m.unfinished[group]})" for m in short)
                              + "."))
        return join(parts, "\n") + more_machines(data, group)
    render.__name__ = f"measurements_{group}"
    render.__doc__ = f"Every point of the {group} experiment, per machine."
    return render


# One section per experiment, so "All measurements" has a Markdown heading (and a table of
# contents entry) for each; the page test fails if an experiment is missing from the page.
for _group in experiments.REGISTRY:
    section(_measurements_of(_group))


# Sizes an experiment chose while it ran (precision fits its size to the machine) are stored
# with each point, not in its params: the table shows them, or machines' rows would read alike.
CHOSEN_SIZES = ("n", "batch", "width", "samples")


def experiment_table(machine: Machine, group: str) -> Html:
    """Every point of one experiment on one machine: parameters, chosen sizes, median, IQR, implied rate."""
    benches = machine.benchmarks(group)
    if not benches:
        return missing("Not applicable on this machine (it measured no points; a CPU-only "
                       "machine has no host↔device bus).")
    keys = sorted({k for b in benches for k in b["params"]}, key=lambda k: (k != "device", k))
    sizes = [_chosen_size(b) for b in benches]
    rows = []
    # A training step another experiment timed differently carries ≠ here too, as on the lesson pages.
    contradicted = ({device: consistency.disagreeing(machine, device) for device in machine.devices(group)}
                    if group == analysis.STEP else {})
    for b, size in zip(benches, sizes):
        point_stats = b.get("stats") if b["extra_info"].get("calls_per_step") != 0 else None
        samples = len(point_stats.get("data") or []) if point_stats else 0
        # A spread from a handful of samples is not a spread worth a percentage: a dash, and the count beside it.
        iqr = (iqr_share(point_stats) if point_stats and point_stats["median"] and samples >= stats.MIN_SAMPLES
               else "—" if point_stats else "")
        rate = _derived(b) if point_stats else ""
        value = _value(b)
        if (b["params"].get("batch"), b["params"].get("width")) in contradicted.get(b["params"].get("device"), ()):
            value += html('<sup title="{}">{}</sup>', CONTRADICTED_TITLE, CONTRADICTED)
        rows.append([b["params"].get(k, "") for k in keys] + ([size] if any(sizes) else [])
                    + [value, _samples(point_stats), iqr, rate])
    marked = any(CONTRADICTED in str(row[len(keys) + bool(any(sizes))]) for row in rows)
    head = keys + (["size"] if any(sizes) else []) + ["median (or the one value)", "samples (rounds)", "IQR", "rate"]
    return table(head, rows) + (contradicted_note() if marked else Html(""))


def _samples(point_stats: dict | None) -> str:
    """How many samples a point's median rests on, and in how many rounds where it records them: "6 (2)"."""
    if not point_stats:
        return ""
    rounds = point_stats.get("round_medians")
    return f"{len(point_stats.get('data') or [])}" + (f" ({len(rounds)})" if rounds else "")


def _chosen_size(bench: dict) -> str:
    """The sizes the experiment chose for this point ("n = 256", "batch = 64, width = 512"), or ""."""
    extra, params = bench["extra_info"], bench["params"]
    return ", ".join(f"{key} = {extra[key]}" for key in CHOSEN_SIZES if key in extra and key not in params)


def _derived(bench: dict) -> str:
    """The rate a point implies, where its extra info says what was done per second."""
    seconds, extra = bench["stats"]["median"], bench["extra_info"]
    if bench["unit"] != "s" or seconds <= 0:
        return ""
    if "flops" in extra:
        return si(extra["flops"] / seconds, "FLOP/s")
    if "bytes" in extra:
        # A copy's rate counts what it read and wrote, twice the buffer its params name: say so.
        both = extra["bytes"] == 2 * bench["params"].get("bytes", -1)
        return si(extra["bytes"] / seconds, "B/s") + (" (read + write: twice the buffer)" if both else "")
    if extra.get("per") == "sample":
        return si(1 / seconds, "samples/s")
    return ""


def _value(bench: dict) -> Html:
    status, error = bench.get("status", "ok"), bench["extra_info"].get("error", "")
    # Files measured before "failed" existed stored a failed compilation as "oom" with its error.
    if status == "failed" or (status == "oom" and error.startswith("torch.compile failed")):
        return html("<strong>failed</strong>: {}", error or "no reason recorded")
    if status == "oom":
        return html("<strong>out of memory</strong>")
    if bench["extra_info"].get("calls_per_step") == 0:  # a profiled kind this step never ran: no time to show
        return html("none in this step")
    # A loader's time is per sample though its point names a batch: say so, or it reads as per batch.
    per = " per sample" if bench["extra_info"].get("per") == "sample" else ""
    return measured_value(bench["stats"], bench["extra_info"], "B" if bench["unit"] == "bytes" else bench["unit"], per)


@section
def thresholds(data: Dataset) -> Html:
    """Every threshold the pages' verdicts and marks use, each from its constant, stated once here: the pages name
    the rule and link here instead of repeating it."""

    host = data.host or (data.machines[0] if data.machines else None)
    estimate = gpu_estimate.for_host(host, data.machines) if host else None
    band = estimate.band_words if estimate else gpu_estimate.band_words(gpu_estimate.FASTER)
    raised = (", its top set by its worst miss on a measured GPU" if estimate
              and gpu_estimate.edge(estimate.slower) != gpu_estimate.edge(gpu_estimate.SLOWER) else "")
    rows = [
        ["different", f"{stats.MEANINGFUL_RATIO:g}× and beyond the spread",
         "Two times are called different only when one is at least this much longer and its interval lies beyond "
         "1: from three or more paired rounds within one experiment, else from quartiles."],
        ["noisy (†)", f"{100 * stats.NOISY_IQR_RATIO:.0f}% of the median",
         "A point whose middle half of samples spans more than this is marked noisy."],
        ["too few samples (‡)", f"fewer than {stats.MIN_SAMPLES}", "Its spread is not reliable."],
        ["interval", f"at least {100 * stats.ROUND_INTERVAL_COVERAGE:.0f}%",
         "The printed range of a ratio, from three or more paired rounds, holds its typical value (the median of "
         "the round-by-round ratios) with this probability. A two-round range has no such guarantee."],
        ["slow state", f"{gate.SLOW_STATE_RATIO:g}× the run's fastest canary",
         "Above it the machine is in a slow state, and a point waits before it is measured."],
        ["outlying round", f"{gate.ROUND_SPREAD_LIMIT:g}× the point's fastest round", "That round is measured again."],
        ["changed state (§)", "an outlying round no re-measurement settled",
         "The machine changed state while the point was measured."],
        ["under load (*)", f"other processes over {100 * conditions.FOREIGN_CPU_LIMIT:.0f}% of the CPU",
         "The point was measured while something else ran."],
        ["mostly slow (°)", f"over {100 * gate.MOSTLY_SLOW:.0f}% of rounds begun slow",
         "Lesson tables mark the machine; its provenance line says so wherever it appears."],
        ["agreement (≠ where it fails)", f"within {consistency.TOLERANCE:g}× either way",
         "Two experiments that time the same configuration agree."],
        ["longer than at half the batch (↑)", f"{stats.MEANINGFUL_RATIO:g}× the same lane's epoch at half the batch",
         "Twice the batch is half the steps, so that epoch is out of line."],
        ["estimate's band", f"{band}{raised}", "A lead over the GPU estimate counts only beyond it."],
    ]
    return table(["rule", "threshold", "what it decides"], rows,
                 caption="The thresholds behind every verdict and mark, read from the code")
