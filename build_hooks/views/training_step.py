"""Training step versus batch size: the site's central curve and its crossover."""

from __future__ import annotations

from build_hooks import analysis, consistency, experiments, plots, stats, untrusted
from build_hooks.dataset import Dataset, Machine, is_gpu, not_recording
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    MARKS,
    SITE_ROOT,
    Html,
    MissingData,
    caveat_words,
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
    more_machines,
    note,
    provenance,
    si,
    table,
)
from build_hooks.wording import versus_peak

STEP = analysis.STEP


def _cell(point: analysis.Point | None, contradicted: bool = False) -> Html | str:
    if point is None:
        return "not measured"
    figures = stats.significant_figures(point.stats)
    flag = html('<sup title="{}">{}</sup>', CONTRADICTED_TITLE, CONTRADICTED) if contradicted else ""
    return html("{}{}<br><small>{}</small>", measured_value(point.stats, point.flags, "s"), flag,
                si(point.samples_per_s, "samples/s", figures))


CONTRADICTED = "≠"
CONTRADICTED_TITLE = "another experiment timed this configuration differently"


def contradicted_note() -> Html:
    # No cause is named: a state change, a different set-up or a slow spot at that one size all fit (About the data).
    return note(f"A {CONTRADICTED} marks a step that another experiment timed differently (About the data). Lean "
                "on it less: the cost model's fit leaves it out.")


def step_table(machine: Machine) -> Html:
    """Step time and throughput per batch (rows) for each width (columns), one table per device: a laptop shows each
    whole, where one table of every device and width ran off its column."""
    with not_recording():  # a cross-check (the ≠ mark, explained on About the data), not what this table shows
        contradicted = {(d, b, w) for d in machine.devices(STEP) for b, w in consistency.disagreeing(machine, d)}
    tables, kinds = [], set()
    for device in machine.devices(STEP):
        curves = {w: {p.batch: p for p in analysis.step_curve(machine, device, w)} for w in analysis.widths(machine)}
        batches = sorted({b for curve in curves.values() for b in curve})
        rows = [[b] + [_cell(curves[w].get(b), (device, b, w) in contradicted) for w in curves] for b in batches]
        kinds |= {k for curve in curves.values() for p in curve.values() for k in stats.caveats(p.stats, p.flags)}
        tables.append(table(["batch"] + [f"width {w}" for w in curves], rows,
                            caption=f"{DEVICE_NAME[device]}: time per step and samples per second"))
    return join(tables) + marks_note(kinds) + (contradicted_note() if contradicted else "")


def every_point_few(machine: Machine) -> bool:
    """Whether every training step of this machine rests on too few samples: a ring on every point marks nothing, so
    the caption says it once instead."""
    points = [p for device in machine.devices(STEP) for width in analysis.widths(machine)
              for p in analysis.step_curve(machine, device, width)]
    return bool(points) and all(p.stats and stats.too_few(p.stats) for p in points)


def step_plot(machine: Machine) -> Html:
    """Step time and samples/s versus batch, one line per device and width."""
    series_time, series_rate = [], []
    said_once = {"few"} if every_point_few(machine) else set()
    for device in machine.devices(STEP):
        for width in analysis.widths(machine):
            curve = analysis.step_curve(machine, device, width)
            label = f"{DEVICE_NAME[device]}, width {width}"
            style = "--" if is_gpu(device) else "-"
            x = [p.batch for p in curve]
            flagged = [bool(set(stats.caveats(p.stats, p.flags)) - said_once) if p.stats else p.shaky for p in curve]
            series_time.append(plots.Series(label, x, [p.seconds * 1e3 for p in curve],
                                            style, str(width), flagged))
            series_rate.append(plots.Series(label, x, [p.samples_per_s for p in curve],
                                            style, str(width), flagged))
    return plots.line_panels(
        [
            {"series": series_time, "xlabel": "batch size (samples)",
             "ylabel": "time per training step (ms)", "subtitle": "Step time (lower is better)"},
            {"series": series_rate, "xlabel": "batch size (samples)",
             "ylabel": "throughput (samples/s)", "eng": True, "subtitle": "Throughput (higher is better)"},
        ],
        title=f"One training step of a 512→H→10 MLP on {machine.label}",
        alt=(f"Training-step time and throughput versus batch size on {machine.label}; "
             "the same numbers are in the table below."),
    )


@section
def training_step(data: Dataset) -> Html:
    """The measured result of the training-step experiment for every machine that has it."""
    machines = data.shown(STEP)
    if not machines:
        return missing("No machine has measured this experiment yet.")
    parts = []
    for machine in sorted(machines, key=lambda m: m.gpu_device(STEP) is None):  # both curves first: the lesson's plot
        parts.append(html("<h3>{}</h3>", machine.label))
        has_gpu = machine.gpu_device(STEP) is not None
        if not has_gpu:
            parts.append(missing("GPU: not measured on this machine (it has no CUDA or MPS device). "
                                 "Only the CPU is shown."))
        lines = "Solid lines: CPU; dashed: GPU. " if has_gpu else ""
        if every_point_few(machine):  # a ring on every point marks nothing: said once, and rings keep their meaning
            caption = (f"{lines}Every point here rests on fewer than {stats.MIN_SAMPLES} samples, so read the curves "
                       f"as rough. A ring marks a point that is also noisy ({stats.noise_rule()}) or measured under "
                       "load.")
        else:
            caption = (f"{lines}A ring marks a point not to lean on: noisy ({stats.noise_rule()}), fewer than "
                       f"{stats.MIN_SAMPLES} samples, or measured under load.")
        # The plot is the lesson; the tables behind it (every batch at every width, per device) are folded (#39:
        # a page a learner scrolls through, not 8,000 px of numbers).
        tables = html('<details class="crossover-steps"><summary>Every step time, batch by batch, on {}</summary>{}'
                      '</details>', machine.label, step_table(machine))
        parts += [figure(step_plot(machine), caption), tables, provenance(machine, data.host)]
    return join(parts, "\n") + more_machines(data, STEP)


def _step_pair(curves: dict[str, dict[int, analysis.Point]], batch: int, kinds: set) -> list[Html | str]:
    """The CPU's and the GPU's step at one batch (from their curves at one width, by batch), each with its marks
    (their kinds added to `kinds`)."""
    cells = []
    for curve in curves.values():
        point = curve.get(batch)
        if point is None:
            cells.append("not measured")
            continue
        kinds |= set(stats.caveats(point.stats, point.flags))
        cells.append(measured_value(point.stats, point.flags, "s"))
    return cells


@section
def step_answer(data: Dataset) -> Html:
    """batch-size's answer: per measured GPU machine and width, both steps at the smallest and largest batch, and the
    batch from which the GPU's step is shorter; the estimate's crossovers where no GPU was measured."""
    parts, kinds, answers = [], set(), []
    for machine in data.shown(STEP):
        if machine.gpu_device(STEP) is None:
            continue
        batches = sorted({p.batch for w in analysis.widths(machine) for p in analysis.step_curve(machine, "cpu", w)})
        small, large = batches[0], batches[-1]
        rows, epochs = [], epoch_leads(data, machine)
        for width in analysis.widths(machine):
            curves = {d: {p.batch: p for p in analysis.step_curve(machine, d, width)}
                      for d in ("cpu", machine.gpu_device(STEP))}
            # The answer beside the width, the race's beside it: a phone shows the first columns, the times after.
            leads = [step_lead_words(machine, width, f"never, up to batch {large}"), epochs.get(width, "not raced")]
            answers += leads
            rows.append([width, *leads, *_step_pair(curves, small, kinds), *_step_pair(curves, large, kinds)])
        head = ["hidden width", "GPU step shorter", "GPU epoch first (race)", f"CPU, batch {small}",
                f"GPU, batch {small}", f"CPU, batch {large}", f"GPU, batch {large}"]
        parts.append(table(head, rows, caption=f"One training step, measured on {machine.label}"))
    if not parts:
        from build_hooks.views import race as race_views  # imported late, as views import each other
        return (missing("No GPU was measured here, so the answer below is the labelled estimate's.")
                + race_views.estimated_crossover_table(data))
    return (join(parts, "\n") + marks_note(kinds)
            + note("Shorter: beyond both points' spread, at that batch and at every larger one.")
            + note(html('The race times whole epochs, in another run, so its column can differ (<a href="#{}">why'
                        '</a>).', "why-the-steps-and-the-race-can-differ"))
            + left_out_key(answers, data))


@section
def crossing_plot(data: Dataset) -> Html:
    """batch-size's key figure: at the widest width where a measured GPU's step got shorter, the CPU's and the GPU's
    step against batch, two lines, so a learner sees one stay flat while the other grows past it."""
    machine = gpu_with(data, STEP)
    if machine is None:
        return missing("No GPU was measured, so there is no measured crossing to draw.")
    device = machine.gpu_device(STEP)
    crossed = [w for w in analysis.widths(machine) if analysis.crossover_batch(machine, w)]
    width = max(crossed) if crossed else max(analysis.widths(machine))
    series = []
    for kind, style in (("cpu", "-"), (device, "--")):
        curve = analysis.step_curve(machine, kind, width)
        series.append(plots.Series(f"{DEVICE_NAME[kind]}, width {width}", [p.batch for p in curve],
                                   [p.seconds * 1e3 for p in curve], style, kind,
                                   [bool(stats.caveats(p.stats, p.flags)) if p.stats else p.shaky for p in curve]))
    if not all(line.x for line in series):
        return missing(f"No steps at width {width} on both devices to draw.")
    batch = analysis.crossover_batch(machine, width)
    where = (f"The GPU's step is shorter from batch {batch}." if batch else
             "The GPU's step never got shorter at any width, so this is the widest.")
    svg = plots.line_panels(
        [{"series": series, "xlabel": "batch size (samples)", "ylabel": "time per training step (ms)",
          "subtitle": "Lower is better"}],
        title=f"Width {width}: one step on each device of {machine.label}",
        alt=f"Step time against batch size at width {width}, CPU and GPU; the table above has the ends.",
        size=(4.6, 3.0))
    return figure(svg, f"Solid: CPU; dashed: GPU. A ring marks a point not to lean on. {where}")


def flops_per_sample_and_unit() -> int:
    """FLOPs of one training step per sample and per hidden unit, for the race's INPUTS→H→CLASSES network: the first
    layer's forward and weight gradient (2 + 2 per weight; its input needs no gradient), the second layer's forward
    and both gradients (2 + 2 + 2). A step does this × batch × width, as the experiment's own counts record."""
    model = experiments.declared(STEP)
    return 4 * model["INPUTS"] + 6 * model["CLASSES"]


@fact
def step_work_rule(data: Dataset) -> str:
    """The cheat sheet's bridge from work per step to batch and width: the network's FLOPs as a product of the two,
    and the measured crossing's work as a span of batch × width (#39 read: the MFLOP rule could not be applied)."""
    per = flops_per_sample_and_unit()
    said = f"For the race's network, a step does {per:,}·B·H FLOPs at batch B and hidden width H"
    machine = gpu_with(data, STEP)
    from build_hooks.views.cost_model import crossing_bracket  # late: cyclic
    crossed = crossing_bracket(machine) if machine else None
    if crossed:
        low, high = crossed[0] / per, crossed[1] / per
        # The span read back as batches at the measured widths, where it falls among the batches measured (#39 read:
        # "B·H from 131,072" needed an example).
        largest = max(b["params"]["batch"] for b in machine.measured(STEP))
        examples = [f"batch {low / w:,.3g} to {high / w:,.3g} at width {w}" for w in sorted(analysis.widths(machine),
                                                                                       reverse=True)
                    if 1 <= low / w and high / w <= largest]
        said += (f". So its crossing span is B·H from {low:,.0f} to {high:,.0f}, on this pair"
                 + (f": {listing(examples)}" if examples else ""))
    return said


@fact
def crossover_takeaway(data: Dataset) -> str:
    """The cheat sheet's answer in one or two short sentences, from the first measured GPU machine's steps: the widths
    where its step wins and from which batch, then those where no batch keeps it ahead; the estimate's table
    answers where no GPU was measured."""
    machine = gpu_with(data, STEP)
    if machine is None:
        return "No GPU was measured for this build, so the table gives the labelled estimate's crossovers"
    crossings = {w: analysis.crossover_batch(machine, w) for w in analysis.widths(machine)}
    wins = [f"from batch {b} at width {w}" for w, b in sorted(crossings.items(), reverse=True) if b]
    never = [str(w) for w, b in sorted(crossings.items()) if b is None]
    gpu = untrusted.placeholder(machine.device_label(machine.gpu_device(STEP)))
    said = (f"Measured against the CPU in its own machine, the {gpu}'s step wins "
            + (listing(wins) if wins else "at no width"))
    if wins and never:
        largest = max(b["params"]["batch"] for b in machine.measured(STEP))
        said += (f". At width{'s' if len(never) > 1 else ''} {listing(never)}, it never stays ahead, up to batch "
                 f"{largest}")
    # The rule in work per step, the one figure a learner can carry to another model (home gives it too); per step
    # only: the key numbers below give the fitted break-even per operation, and two such ranges confused (#39 read).
    from build_hooks.views.cost_model import MFLOP_WORDS, crossing_bracket, flop_span  # late: cyclic
    crossed = crossing_bracket(machine)
    if crossed:
        # "On this pair": the figure is one GPU's against one CPU's (#39 read: it read as universal).
        said += (f". On this pair, it pulled ahead once a step did somewhere between "
                 f"{flop_span(*crossed[:2], 'and')} {MFLOP_WORDS}")
    return said


@section
def crossover_table(data: Dataset) -> Html:
    """The crossover batch per width for every machine that measured a GPU."""
    rows = []
    for m in data.shown(STEP):
        if m.gpu_device(STEP) is None:
            continue
        epochs = epoch_leads(data, m)
        rows.extend([m.label, width, step_lead_words(m, width), epochs.get(width, "never")]
                    for width in analysis.widths(m))
    if not rows:
        return missing("No GPU was measured, so these crossovers are estimates.")
    # One machine (the usual case) is named once, in the caption, not in every row.
    head, rows, said = fold_constant_columns(
        ["machine", "hidden width", "GPU step shorter", "GPU epoch first (home grid)"], rows, [0])
    caption = "Where a measured GPU overtook the CPU in its own machine, on the race's 512→H→10 network"
    # The grid races whole epochs, which also pay for the loop: its verdicts can differ from these steps'.
    changed = {"unsettled"} if any(MARKS["unsettled"][0] in str(cell) for row in rows for cell in row) else set()
    odd = left_out_key((cell for row in rows for cell in row[-2:]), data)
    return (table(head, rows, caption=html("{} ({})", caption, join(said)) if said else caption)
            + marks_note(changed) + odd
            + note(html('Two experiments, timed apart, so the two columns can differ (<a href="{}batch-size/">why'
                        '</a>). Where they do, expect the crossing between the two.', Html(SITE_ROOT)))
            + more_machines(data, STEP))


# Short sentences: this key is under the tables of batch-size and the cheat sheet. One key for both experiments'
# columns: a step's and an epoch's lead are left out by one rule (race.out_of_line, analysis.doubted_leads).
LEFT_OUT_WORDS = ("Left out: a GPU lead over an off-trend CPU time. A neighbouring batch that should take "
                  "longer ran faster. The lead is not counted.")


def left_out_key(cells, data: Dataset) -> Html:
    """LEFT_OUT_WORDS, where some cell leaves a lead out, with the settings both experiments found slow; else
    nothing."""
    if not any(" left out" in str(cell) for cell in cells):
        return Html("")
    from build_hooks.views.race import reproduced_slowdowns  # imported late, as views import each other
    return note(LEFT_OUT_WORDS + reproduced_slowdowns(data))


def step_lead_words(machine: Machine, width: int, never: str = "never") -> str:
    """Where a machine's GPU step is shorter at one width, as a cell: "from batch 128", "only at batch 16" (a lead a
    larger batch took back: "never" would contradict it), "from batch 512 (also at 16)", or `never`."""
    batch, stray = analysis.crossover_batch(machine, width), analysis.stray_leads(machine, width)
    doubted = analysis.doubted_leads(machine, width)
    batches = listing([str(b) for b in stray]) if stray else ""
    extras = ([f"also at {batches}"] if stray and batch is not None else []) + (
        [f"batch {listing([str(b) for b in doubted])} left out"] if doubted else [])
    main = (f"from batch {batch}" if batch is not None else f"only at batch {batches}" if stray else never)
    return main + (f" ({'; '.join(extras)})" if extras else "")


def epoch_leads(data: Dataset, machine: Machine) -> dict[int, str]:
    """Per raced width, where a machine's measured GPU first wins the home grid's epochs, as a cell (_epoch_lead)."""
    from build_hooks.views.race import grid_leads  # the home grid's rule; imported late, as views import each other
    epochs = grid_leads(data, lambda pairing: pairing["gpu"]["machine_id"] == machine.id and not pairing["estimate"])
    doubted = _out_of_line_leads(data, machine)
    return {width: _epoch_lead(first, lone, doubted.get(width, [])) for width, (first, lone) in epochs.items()}


def _epoch_lead(first: int | None, lone: list[str], doubted: list[int] = ()) -> str:
    """A width's epoch crossover from the home grid (grid_leads) as a cell: "from batch 512 (also at 64)". A GPU lead
    the grid marks out of line is named as left out, so the cell does not contradict the grid."""
    main = (f"from batch {first}" if first is not None else f"only at batch {listing(lone)}" if lone else "never")
    extras = ([f"also at {listing(lone)}"] if lone and first is not None else []) + (
        [f"batch {listing([str(b) for b in doubted])} left out"] if doubted else [])
    return main + (f" ({'; '.join(extras)})" if extras else "")


def _out_of_line_leads(data: Dataset, machine: Machine) -> dict[int, list[int]]:
    """Per width, the batches of a machine's GPU leads that the home grid marks out of line."""
    from build_hooks import race
    found = race.verdicts(race.race_data(data))
    batches: dict[int, list[int]] = {}
    for (width, batch), pairing in sorted(found.items()):
        if pairing["gpu"]["machine_id"] == machine.id and pairing["leader"] == "GPU" and pairing["out_of_line"]:
            batches.setdefault(width, []).append(batch)
    return batches


@fact
def host_cpu(data: Dataset) -> str:
    """The CPU's name as every page labels it (thread count and instruction set included, so two machines of one
    brand stay apart), from the first machine with training steps (the host's)."""
    return untrusted.placeholder(first_with(data, STEP).label)


@fact
def host_gpu_source(data: Dataset) -> str:
    """Whether the build host has a GPU, and else where the pages' GPU numbers come from: a measured GPU machine
    (the first that measured steps), or the labelled estimate."""
    host = data.host or first_with(data, STEP)
    if host.gpu_device(STEP):
        return f"It has its own GPU, {untrusted.placeholder(host.device_label(host.gpu_device(STEP)))}"
    other = gpu_with(data, STEP)
    if other:
        return f"It has no GPU, so the GPU numbers come from {untrusted.placeholder(other.label)}"
    return "It has no GPU, and none was measured, so every GPU figure is a labelled estimate"


@fact
def cpu_best_step_rate(data: Dataset) -> str:
    """The best CPU training-step FLOP/s, and the largest step that reaches it within the spread."""
    best = analysis.best_rate(first_with(data, STEP), "cpu")
    if best is None:
        raise MissingData("no CPU training-step point with a FLOP count")
    point, width = best
    machine = first_with(data, STEP)
    # Points whose rate is not below the best's beyond both spreads are tied with it; which
    # of them has the highest median moves with noise, so the whole tied set is named.
    rate = lambda p, key: p.flops / p.stats[key]  # noqa: E731 (FLOP/s at a time quartile)
    tied = sorted((p.batch, w) for w in analysis.widths(machine) for p in analysis.step_curve(machine, "cpu", w)
                  if p.flops and p.stats and rate(p, "q1") >= rate(point, "q3"))
    # Which tied point has the highest median moves with noise, so the whole tied set is named, by width.
    others: dict[int, list[int]] = {}
    for b, w in tied:
        if (b, w) != (point.batch, width):
            others.setdefault(w, []).append(b)
    kinds = stats.caveats(point.stats, point.flags)
    said = [f"batch {point.batch}, width {width}"] + caveat_words(kinds)
    if others:
        said.append("as fast within the spread: " + ", ".join(
            f"batch {listing([str(b) for b in batches])} at width {w}" for w, batches in sorted(others.items())))
    return f"{si(point.flops_per_s, 'FLOP/s')} ({'; '.join(said)})"


@fact
def cpu_best_step_fraction_of_peak(data: Dataset) -> str:
    """The best CPU training-step rate against the CPU's theoretical fp32 peak (or why
    no fraction is given)."""
    machine = first_with(data, STEP)
    best = analysis.best_rate(machine, "cpu")
    if best is None:
        raise MissingData("no CPU training-step rate")
    return versus_peak(best[0].flops_per_s, machine, analysis.gemm_rate_fast_end(machine), explain=False)


@fact
def crossover_summary(data: Dataset) -> str:
    """One sentence per GPU machine shown: at how many widths its step got shorter, and the smallest such batch (the
    table beside it lists every width); or that no GPU was measured."""
    sentences = []
    for machine in data.shown(STEP):  # the machines the page draws; the gallery lists every crossover
        if machine.gpu_device(STEP) is None:
            continue
        found = _crossings(machine)
        # Short names in a sentence (the table's caption has the full label): "Against the 16-thread Intel Xeon in
        # its own machine, the NVIDIA H200's step ..."
        against = (f"Against the {untrusted.placeholder(machine.cpu_short_name)} in its own machine, the "
                   f"{untrusted.placeholder(machine.device_label(machine.gpu_device(STEP)))}'s step")
        if not found:
            sentences.append(f"{against} never became the shorter one, at any width measured.")
            continue
        width, batch = _first_crossing(found)
        # The answer alone (#39 read: one claim on the first screen); where the race disagrees is said under the plot
        # (steps_race_differ), and the table's race column shows it.
        sentences.append(f"{against} became the shorter one at {len(found)} of {len(analysis.widths(machine))} "
                         f"widths, first from batch {batch} (width {width}).{_same_work(machine)}")
    if not sentences:
        return "No GPU has been measured for this build, so no crossover is measured here."
    return " ".join(sentences)


def _same_work(machine: Machine) -> str:
    """Where every width that crossed did so between the same two step sizes, a sentence saying so: the work per
    step decides, not the width or the batch alone (#39 read: the data's cleanest point); else nothing."""
    from build_hooks.views.cost_model import MFLOP_WORDS, flop_span, shared_crossing  # late: cyclic
    shared = shared_crossing(machine)
    if shared is None:
        return ""
    low, high = shared[1]
    return (f" Each crossing width flipped between steps of {flop_span(low, high, 'and')} {MFLOP_WORDS}, as it would "
            "if the work per step decides.")


@fact
def steps_race_differ(data: Dataset) -> str:
    """Where the race's epochs put a GPU machine's first crossing at another batch than its steps did, at that width:
    the sentences that say so and which way the known lean points, each closed; else nothing."""
    said = []
    for machine in data.shown(STEP):
        if machine.gpu_device(STEP) is None:
            continue
        found = _crossings(machine)
        if found:
            said.append(_race_differs(data, machine, *_first_crossing(found)).strip())
    return " ".join(s for s in said if s) + (" " if any(said) else "")


def _crossings(machine: Machine) -> dict[int, int]:
    """{width: the batch from which the GPU's step stayed shorter} for the widths where it did."""
    return {w: b for w in analysis.widths(machine) if (b := analysis.crossover_batch(machine, w))}


def _first_crossing(found: dict[int, int]) -> tuple[int, int]:
    """(width, batch) of the smallest crossing batch, the widest width on a tie: the one the page's answer names."""
    width = min(found, key=lambda w: (found[w], -w))
    return width, found[width]


def _race_differs(data: Dataset, machine: Machine, width: int, batch: int) -> str:
    """Where the race's whole epochs put the same width's crossing at another batch, a sentence saying so and which
    to lean on (the larger: both experiments agree from there); else nothing."""
    from build_hooks.views.race import grid_leads  # the home grid's rule; imported late, as views import each other
    first, _ = grid_leads(data, lambda pairing: pairing["gpu"]["machine_id"] == machine.id
                          and not pairing["estimate"]).get(width, (None, []))
    if first is None or first == batch:
        return ""
    said = f" At width {width}, the race's whole epochs put the first crossing at batch {first}, not {batch}"
    # Two experiments that disagree do not bound the truth; a known lean of one does say which to trust more.
    if first < batch and _steps_alone_run_long(machine, machine.gpu_device(STEP)):
        # How far they run long is said next, by gpu_step_floor (_epoch_share_words), on the same condition.
        return said + ". The two experiments disagree, and the steps are the side known to run long."
    return said + ". The two experiments disagree, and neither bounds the other."


FLAT = 2.0  # a GPU step whose slowest point is within this multiple of its fastest has stayed near its floor


@fact
def gpu_step_floor(data: Dataset) -> str:
    """The measured GPU's step over every batch and width: the range it stayed in, and when that range is narrow
    (FLAT), that its arithmetic never outgrew its fixed cost; or that no GPU was measured."""
    machine = gpu_with(data, STEP)
    if machine is None:
        return "No GPU was measured for this build, so its step's floor is not known"
    device = machine.gpu_device(STEP)
    points = _gpu_steps(machine)
    if not points:
        raise MissingData("no GPU training steps")
    fastest, slowest = min(p.seconds for p in points), max(p.seconds for p in points)
    batches = sorted({p.batch for p in points})
    gpu = untrusted.placeholder(machine.device_label(device))
    said = (f"From batch {batches[0]} to {batches[-1]}, at every width, the {gpu}'s step stayed between "
            f"{si(fastest, 's')} and {si(slowest, 's')}")
    said += (". Its arithmetic never outgrew its fixed cost per step" if slowest <= FLAT * fastest else
             f": {slowest / fastest:.0f}× apart, so at its largest sizes the arithmetic shows")
    return said + _epoch_share_words(machine, device)


@fact
def home_gpu_flat(data: Dataset) -> str:
    """Home's key fact beside the grid, where the measured GPU's step stayed within FLAT of its fastest at every size:
    its range, and that the GPU wins only where the CPU's step outgrows it (a review: "the GPU's wins are the CPU
    slowing down" was nowhere plain). Empty otherwise: then the arithmetic shows, and batch-size says how."""
    machine = gpu_with(data, STEP)
    if machine is None:
        return ""
    seconds = [p.seconds for p in _gpu_steps(machine)]
    if not seconds or max(seconds) > FLAT * min(seconds):
        return ""
    return (f" The GPU's training step, timed alone, stayed between {si(min(seconds), 's')} and "
            f"{si(max(seconds), 's')} at every size. It wins only where the CPU's step grows longer than that.")


def _gpu_steps(machine: Machine) -> list[analysis.Point]:
    """Every measured GPU training step of a machine, over every width (gpu_step_floor and home_gpu_flat read these)."""
    device = machine.gpu_device(STEP)
    return [p for w in analysis.widths(machine) for p in analysis.step_curve(machine, device, w)]


def _steps_alone_run_long(machine: Machine, device: str | None) -> tuple[int, list] | None:
    """(how many, of which epoch checks) where a step timed alone ran clearly longer than its share of an epoch, when
    that is most of them; else None."""
    epochs = [c for c in consistency.checks(machine, device) if c.kind == "epoch"] if device else []
    longer = sum(c.ratio >= stats.MEANINGFUL_RATIO for c in epochs)
    return (longer, epochs) if epochs and 2 * longer > len(epochs) else None


def _epoch_share_words(machine: Machine, device: str) -> str:
    """Where the GPU's step timed alone ran clearly longer than its share of an epoch (consistency's epoch check, by
    the meaningful ratio) at most settings, a sentence saying so: its fixed cost may be overstated. Else nothing."""
    found = _steps_alone_run_long(machine, device)
    if found is None:
        return ""
    longer, epochs = found
    # Said as the rule counts it (a ratio), so the count matches what a reader recomputes.
    said = (f". A step timed on its own took at least {stats.MEANINGFUL_RATIO:g}× as long as the same step inside an "
            f"epoch, at {longer} of {len(epochs)} settings. So these step times may overstate its fixed cost. That "
            "would put the steps' crossing at a larger batch than the truth")
    return said + _cpu_epoch_share_words(machine)


def _cpu_epoch_share_words(machine: Machine) -> str:
    """The CPU's own step-against-epoch lean, beside the GPU's, counted by the same ratio: the other way (then both
    biases push the steps' crossing to a larger batch than the race's), both ways, or (unsaid) neither."""
    cpu = [c for c in consistency.checks(machine, "cpu") if c.kind == "epoch"]
    shorter = sum(c.ratio * stats.MEANINGFUL_RATIO <= 1 for c in cpu)  # alone clearly shorter than in an epoch
    longer = sum(c.ratio >= stats.MEANINGFUL_RATIO for c in cpu)
    if shorter and longer:
        return (f". The CPU's went both ways: longer inside an epoch at {shorter} of {len(cpu)} settings, longer alone "
                f"at {longer}")
    if shorter:
        return (f". The CPU's leaned the other way: inside an epoch, its step took at least "
                f"{stats.MEANINGFUL_RATIO:g}× as long as alone, at {shorter} of {len(cpu)} settings. That pushes the "
                "same way")
    return ""
