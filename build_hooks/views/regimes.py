"""The three regimes of a step (overhead-, memory-, compute-bound), on this build's roofline."""

from __future__ import annotations

from collections import Counter

from build_hooks import analysis, cost_model, plots, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (
    Html,
    MissingData,
    figure,
    first_with,
    gpu_with,
    join,
    listing,
    missing,
    multiple,
    note,
    si,
    slow_words,
    table,
)
from build_hooks.views import step_profile

REGIME_WORDS = {"overhead": "overhead-bound", "compute": "compute-bound", "memory": "memory-bound"}


def _roof(best_rate: float, bandwidth: float, intensities: list[float]) -> list[float]:
    """Attainable FLOP/s at each arithmetic intensity: the lower of the compute and memory roofs."""
    return [min(best_rate, ai * bandwidth) for ai in intensities]


def classified(machine: Machine, device: str = "cpu") -> list[tuple[int, int, str]]:
    """(batch, width, regime) of every training step of one device, by the fitted model's largest term."""
    fitted, work = cost_model.model(machine, device), cost_model.step_work(machine, device)
    if fitted is None:
        raise MissingData("the cost model lacks call_overhead, gemm_rate or memory_bandwidth results")
    return [(p.batch, width, fitted.regime(work[(p.batch, width)], p.batch, width))
            for width in analysis.widths(machine) for p in analysis.step_curve(machine, device, width)
            if (p.batch, width) in work]


@section
def roofline(data: Dataset) -> Html:
    """The build host's roofline from its own measurements, with every training step placed on it."""
    machines = data.with_experiment(analysis.STEP)
    if not machines:
        return missing("No training steps measured yet.")
    machine = machines[0]
    params, work = cost_model.measured_params(machine, "cpu"), cost_model.step_work(machine, "cpu")
    if params is None or not work:
        return missing("The roofline needs the gemm_rate and memory_bandwidth results too.")
    # The one "fastest matrix product" every page quotes (the ridge's sentence below uses it too), not the sweep's own.
    best = analysis.best_matmul_rate(machine) or max(params.gemm_rates.values())
    series = []
    for width in analysis.widths(machine):
        points = [(work[(p.batch, width)]["flops"] / work[(p.batch, width)]["bytes"], p.flops_per_s / 1e9, p.shaky)
                  for p in analysis.step_curve(machine, "cpu", width) if (p.batch, width) in work and p.flops]
        if points:
            series.append(plots.Series(f"training steps, width {width}", [x for x, _, _ in points],
                                       [y for _, y, _ in points], "o", str(width), [s for _, _, s in points]))
    if not series:
        return missing("No training step recorded a FLOP count to place on the roofline.")
    lowest = min(x for s in series for x in s.x) / 2
    highest = max(max(x for s in series for x in s.x) * 2, best / params.bandwidth * 4)
    grid = [lowest * (highest / lowest) ** (i / 60) for i in range(61)]
    fastest = max(params.bandwidths.values())
    series.append(plots.Series(f"roof: main memory {si(params.bandwidth, 'B/s')}, best matmul {si(best, 'FLOP/s')}",
                               grid, [r / 1e9 for r in _roof(best, params.bandwidth, grid)], "-", "roof",
                               markers=False))
    series.append(plots.Series(f"roof: fastest cache copy {si(fastest, 'B/s')}", grid,
                               [r / 1e9 for r in _roof(best, fastest, grid)], ":", "cache roof", markers=False))
    svg = plots.line_panels([{"series": series, "xlabel": "arithmetic intensity (FLOP per byte touched)",
                              "ylabel": "achieved rate (GFLOP/s)", "subtitle": "Higher is better",
                              "xscale": "log10"}],
                            title="Roofline of the build host, with its training steps",
                            alt="Log-log roofline: attainable FLOP/s against arithmetic intensity, the "
                                "memory and compute roofs measured on the build host, and each training step as a "
                                "point.",
                            size=(4.6, 4.0))
    return figure(svg, "Roofs from this build's own measurements: the fastest matrix product "
                       "(gemm_rate, matmul_shapes) and copy bandwidths (memory_bandwidth). A point far below both "
                       "roofs is held back by neither arithmetic nor memory: by overhead. Ringed points are "
                       "noisy, too few or taken under load.")


@fact
def regimes_summary(data: Dataset) -> str:
    """A sentence: how many CPU training steps the cost model puts in each regime (its largest term), most first."""
    machine = first_with(data, analysis.STEP)
    steps = classified(machine)
    counts = Counter(regime for _, _, regime in steps)
    ranked = [f"{counts[r]} {REGIME_WORDS[r]}" for r, _ in counts.most_common()]
    ranked[0] = ranked[0].replace(" ", f" of its {len(steps)} steps are ", 1)
    model, work = cost_model.model(machine, "cpu"), cost_model.step_work(machine, "cpu")
    which = ("fitted to the build host's measured training steps" if model.trained_on
             else "unfitted (too few steps to fit it)")
    # How many labels are close calls, so the counts are not read as a profiler's verdict (#39 read).
    close = sum(model.close_call(work[(batch, width)], batch, width) for batch, width, _ in steps)
    doubt = (f". At {close} of them, a second term comes within {100 * (cost_model.NEAR_TIE - 1):.0f}%, so that "
             "label is a close call" if close else "")
    return f"By the cost model {which}, {listing(ranked)}{doubt}"


@fact
def regimes_gpu_summary(data: Dataset) -> str:
    """The measured GPU's steps by regime, as regimes_summary counts the CPU's; or that no GPU was measured."""
    machine = gpu_with(data, analysis.STEP)
    if machine is None:
        return "No GPU was measured for this build, so only the CPU's regimes are shown"
    device = machine.gpu_device(analysis.STEP)
    try:
        counts = Counter(regime for _, _, regime in classified(machine, device))
    except MissingData:  # as regimes_by_width: a GPU without the cost model's inputs shows no regimes
        return (f"{untrusted.placeholder(machine.device_label(device))} lacks the cost model's inputs, so only the "
                "CPU's regimes are shown")
    name = untrusted.placeholder(machine.device_label(device)) + slow_words(machine)
    if set(counts) == {"overhead"}:  # the lesson of the page in one measured line, the profile's timing first
        profiled = _profiled_overhead(machine)
        if profiled:
            # The measured evidence only: the fit is made from these same steps, so it confirms nothing.
            # Two sentences on the first screen; a slow machine is said in the provenance under its tables.
            return (f"On {untrusted.placeholder(machine.device_label(device))}, {profiled}. "
                    f"{_flat_steps(machine, device)}: the time is fixed cost, not arithmetic")
        return (f"On {name}, the cost model calls every one of its {counts.total()} steps overhead-bound. For a "
                "network this small, issuing each operation outlasts its arithmetic")
    if len(counts) == 1:
        return f"On {name}, every one of its {counts.total()} steps is {REGIME_WORDS[next(iter(counts))]}"
    ranked = [f"{counts[r]} {REGIME_WORDS[r]}" for r, _ in counts.most_common()]
    return f"On {name}, of its {counts.total()} steps, {listing(ranked)}"


def _flat_steps(machine: Machine, device: str) -> str:
    """How little a device's measured steps moved while their arithmetic grew: the range of their times and the
    growth of their FLOPs, smallest step to largest."""
    points = [p for w in analysis.widths(machine) for p in analysis.step_curve(machine, device, w)]
    flops = [b["extra_info"]["flops"] for b in machine.measured(analysis.STEP, device=device)
             if b["extra_info"].get("flops")]
    times = [p.seconds for p in points]
    return (f"Its steps stayed between {si(min(times), 's')} and {si(max(times), 's')} while their arithmetic grew "
            f"{multiple(max(flops) / min(flops))}")


def _profiled_overhead(machine: Machine) -> str:
    """The profiler's evidence for an all-overhead GPU, where it was taken and shows the GPU mostly idle: the fit
    alone cannot tell a cost per operation from one per step (cost_model.break_even_span), a profile times the two."""
    split = step_profile.gpu_host_and_kernels(machine)
    if split is None or split[1] >= split[0] / 2:
        return ""
    host, kernels = split
    batch, width = step_profile.profiled_setting(machine)
    # The profiler's name says where the two times come from, and that they include its own recording.
    return (f"torch.profiler found the host spent {si(host, 's')} issuing a step (batch {batch}, width {width}) whose "
            f"kernels ran for {si(kernels, 's')}: the GPU waited on overhead")


@section
def regimes_by_width(data: Dataset) -> Html:
    """Per width, the regimes a step passes through as the batch grows, each with its run of batches (where it
    switches moves with noise): a table, one width per row. The build host's CPU first, which the bold sentence above
    counts and the roofline below uses; then the first measured GPU's, by the same model fitted to that GPU's own
    steps, and the CPU in the same machine, so those two tables compare one machine. A device whose fit does no better
    than a constant gets no table."""
    machine = first_with(data, analysis.STEP)
    tables = []
    gpu_machine = gpu_with(data, analysis.STEP)
    if gpu_machine is not None:
        device = gpu_machine.gpu_device(analysis.STEP)
        for on, caption in ((device, f"Each GPU training step's regime on {gpu_machine.device_label(device)}, by "
                                     "the cost model's largest term"),
                            ("cpu", f"Each CPU training step's regime on the {gpu_machine.gpu['name']} "
                                    f"machine's own CPU, {gpu_machine.device_label('cpu').removeprefix('CPU: ')}, by "
                                    "the cost model's largest term")):
            # A fit no better than a constant names no regime worth trusting: its labels are left out, and the
            # measured times in the bold line above are the evidence (#39 read: a table of weak labels added nothing).
            if cost_model.no_better_than_constant(gpu_machine, on):
                continue
            try:
                tables.append(_regimes_table(gpu_machine, on, caption))
            except MissingData:  # a device without the cost model's inputs has no regimes to show
                pass
    if len(tables) < 2 or machine is not gpu_machine:  # the build host's too, first: the bold line counts its steps
        tables.insert(0, _regimes_table(machine, "cpu", (f"Each CPU training step's regime on the build host, "
                                                         f"{machine.label}" if machine is data.host else
                                                         f"Each CPU training step's regime on {machine.label}")
                                        + ", by the cost model's largest term"))
    return join(tables)


def _regimes_table(machine: Machine, device: str, caption: str) -> Html:
    steps = classified(machine, device)
    rows = []
    for width in analysis.widths(machine):
        ladder = sorted((b, r) for b, w, r in steps if w == width)
        if not ladder:
            continue
        runs: list[list] = []  # [regime, first batch, last batch], in the order the batch reaches them
        for batch, regime in ladder:
            if runs and runs[-1][0] == regime:
                runs[-1][2] = batch
            else:
                runs.append([regime, batch, batch])
        rows.append([width, " → ".join(f"{REGIME_WORDS[r]} ({_batches(lo, hi)})" for r, lo, hi in runs)])
    if not rows:
        raise MissingData("no classified training steps")
    kinds = {regime for _, _, regime in steps}
    if len(kinds) == 1:  # one label in every cell says nothing a sentence cannot (#39 read: a table of one value)
        return note(f"{caption}. Every one reads {REGIME_WORDS[kinds.pop()]}, at every width and batch "
                    f"({_batches(min(b for b, _, _ in steps), max(b for b, _, _ in steps))}).")
    return table(["hidden width", "regime as the batch grows (batches)"], rows,
                 caption=caption)


def _batches(first: int, last: int) -> str:
    return f"batch {first}" if first == last else f"{first}–{last}"
