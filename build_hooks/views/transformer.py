"""A small transformer measured: step times across batch, its regime, an H200 estimate, torch.compile
against eager, and the profiler's breakdown next to the MLP's."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from build_hooks import analysis, consistency, cost_model, experiments, gpu_estimate, plots, stats, untrusted
from build_hooks.dataset import Dataset, Machine, is_gpu
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    Html,
    MissingData,
    capitalised,
    figure,
    first_with,
    fold_constant_columns,
    gpu_with,
    html,
    join,
    listing,
    marks_note_for,
    measured_value,
    missing,
    multiple,
    note,
    per_machine,
    rough_count,
    si,
    table,
)
from build_hooks.views.regimes import REGIME_WORDS
from build_hooks.wording import marked_timings, ratio_sentence

STEP, COMPILE, PROFILE = "transformer_block", "compile_speed", "transformer_profile"
MODEL = experiments.declared(STEP)  # LAYERS, HEADS, VOCAB, MLP_RATIO: literals, read without importing torch
MODEL_NAMES = {"mlp": "the MLP", "transformer": "the transformer"}
_COMPILED = experiments.declared(COMPILE)  # the sizes compiled: literals in the snippet, not in its points
COMPILED_SIZES = (f"mlp: width {_COMPILED['MLP_WIDTH']}; transformer: d_model {_COMPILED['TRANSFORMER']['d_model']}, "
                  f"sequence {_COMPILED['TRANSFORMER']['seq']} tokens")

NOT_MEASURED = "not measured on any machine in this build yet"


def unmeasured(data: Dataset, group: str) -> bool:
    """True when no machine of this build measured `group` (committed files older than the experiment)."""
    return not data.with_experiment(group)


def matmul_params(d_model: int) -> int:
    """N, the weights in matrix products (blocks and LM head), as snippets/transformer_block.py counts them."""
    return MODEL["LAYERS"] * (4 + 2 * MODEL["MLP_RATIO"]) * d_model**2 + d_model * MODEL["VOCAB"]


def equivalent_side(tokens: int, d_model: int) -> float:
    """The square side with the FLOPs of the block's widest product (tokens × d_model → MLP width)."""
    return (tokens * d_model * MODEL["MLP_RATIO"] * d_model) ** (1 / 3)


def curves(machine: Machine, device: str) -> dict[tuple[int, int], list[dict]]:
    """{(d_model, seq): measured points sorted by batch} of one device."""
    found: dict[tuple[int, int], list[dict]] = {}
    for b in machine.measured(STEP, device=device):
        found.setdefault((b["params"]["d_model"], b["params"]["seq"]), []).append(b)
    return {key: sorted(points, key=lambda b: b["params"]["batch"]) for key, points in sorted(found.items())}


def estimate_for(host: Machine, seq: int, peers: Iterable[Machine] = ()) -> gpu_estimate.Estimate | None:
    """The H200 model driven by the build host's per-operation cost (gpu_estimate.for_host), for its CPU steps."""
    work = {(b["params"]["batch"], b["params"]["d_model"]):
            {**b["extra_info"], "side": equivalent_side(b["extra_info"]["tokens"], b["params"]["d_model"])}
            for b in host.measured(STEP, device="cpu", seq=seq)}
    return gpu_estimate.for_host(host, peers, work=work)


def _band(estimate: gpu_estimate.Estimate, batch: int, d_model: int) -> dict:
    """A model's "point": its band as quartiles, so a lead over it counts only beyond them."""
    low, high = estimate.step_band(batch, d_model)
    return {"median": estimate.step(batch, d_model)["seconds"], "q1": low, "q3": high}


def crossover(machine: Machine, d_model: int, seq: int,
              peers: Iterable[Machine] = ()) -> tuple[int | None, str, dict[int, int]]:
    """(crossover batch or None, "measured" or "estimate", per-batch verdicts) at one size.

    A measured GPU is used where the machine has one; otherwise the labelled H200 model, whose
    band is its spread (`peers` can lower its lower edge: gpu_estimate.lower_edge).
    The rule is the site's one (analysis.crossover).
    """
    cpu = {b["params"]["batch"]: b["stats"] for b in curves(machine, "cpu").get((d_model, seq), [])}
    gpu_device = machine.gpu_device(STEP)
    if gpu_device:
        gpu = {b["params"]["batch"]: b["stats"] for b in curves(machine, gpu_device).get((d_model, seq), [])}
        kind = "measured"
    else:
        estimate = estimate_for(machine, seq, peers)
        gpu = {batch: _band(estimate, batch, d_model) for batch in cpu} if estimate else {}
        kind = "estimate"
    verdicts = analysis.verdicts(cpu, gpu)
    return analysis.crossover(verdicts), kind, verdicts


def regime(fitted: cost_model.Fitted | None, bench: dict) -> tuple[str, float] | None:
    """(regime, achieved share of the measured matmul rate at the step's size) of one CPU step; the
    regime is a key such as "overhead", or "overhead+memory" when terms are within NEAR_TIE.

    The regime is the largest term of the site's cost model (fitted on the MLP's steps where
    it can be, else raw), as on the regimes page: per-operation overhead, FLOPs at the measured
    matmul rate of the equivalent size, bytes at the measured copy bandwidth. `fitted` is
    cost_model.model(machine, "cpu"), fitted once per machine by the caller.
    """
    if fitted is None:
        return None
    extra, params = bench["extra_info"], fitted.params
    rate = params.rate(equivalent_side(extra["tokens"], bench["params"]["d_model"]))
    terms = {"overhead": extra["ops"] * params.op_seconds,
             "compute": fitted.compute_factor * extra["flops"] / rate,
             "memory": fitted.memory_factor * extra["bytes"] / params.bandwidth_at(extra["footprint"])}
    ranked = sorted(terms, key=terms.get, reverse=True)
    # Terms within NEAR_TIE of each other are a tie: the model is not that exact.
    # In a fixed order, not by size: which of two tied terms was a hair larger is noise, and two runs of one
    # machine must name the same tie the same way.
    tied = [t for t in terms if terms[t] * NEAR_TIE >= terms[ranked[0]]]
    return "+".join(tied), extra["flops"] / bench["stats"]["median"] / rate


NEAR_TIE = cost_model.NEAR_TIE


def regime_words(key: str) -> str:
    """"overhead-bound", or for a near-tie "mixed (overhead and memory)": a three-way "overhead-, compute- and
    memory-bound" taught nothing (#39 read)."""
    parts = key.split("+")
    if len(parts) == 1:
        return REGIME_WORDS[key]
    return f"mixed ({listing([REGIME_WORDS[p].removesuffix('-bound') for p in parts])})"


def _one_line_for_equal_estimates(series: list[plots.Series]) -> list[plots.Series]:
    """The estimate's lines drawn once when they coincide (a host-bound model gives every size the same step): two
    legend entries for one visible line left a reader looking for the second."""
    estimates = [s for s in series if s.style == ":"]
    if len(estimates) < 2 or any((s.x, s.y) != (estimates[0].x, estimates[0].y) for s in estimates):
        return series
    sizes = listing([s.label.rsplit("d_model ", 1)[1] for s in estimates])
    merged = dataclasses.replace(estimates[0], label=estimates[0].label.rsplit(", d_model", 1)[0]
                                 + f", d_model {sizes} (one line)")
    return [s for s in series if s.style != ":"] + [merged]


@section
def transformer_steps(data: Dataset) -> Html:
    """Per machine: transformer step time and achieved FLOP/s across batch, with the H200 model where no GPU was
    measured, plotted and tabled with each step's regime."""
    def one(m: Machine) -> Html:
        gpu_device, fitted = m.gpu_device(STEP), cost_model.model(m, "cpu")  # fitted once, not per point
        times, rates, rows, work_rows, shown = [], [], [], [], []
        band = gpu_estimate.BAND_RULE  # the estimate's own band, once there is one
        for device in m.devices(STEP):
            for (d_model, seq), points in curves(m, device).items():
                key = f"d_model {d_model}"
                style = "--" if is_gpu(device) else "-"
                batches = [b["params"]["batch"] for b in points]
                flagged = [bool(stats.caveats(b["stats"], b["extra_info"])) for b in points]
                label = f"{DEVICE_NAME[device]}, d_model {d_model} (measured)"  # the sequence is in the caption
                times.append(plots.Series(label, batches, [b["stats"]["median"] * 1e3 for b in points], style, key,
                                          flagged))
                rates.append(plots.Series(label, batches, [b["extra_info"]["flops"] / b["stats"]["median"] / 1e9
                                                           for b in points], style, key, flagged))
                estimate = estimate_for(m, seq, data.machines) if device == "cpu" and gpu_device is None else None
                if estimate is not None:
                    band = estimate.band_words
                    seconds = [estimate.step(b, d_model)["seconds"] for b in batches]
                    edges = [estimate.step_band(b, d_model) for b in batches]
                    times.append(plots.Series(f"{estimate.name} estimate, d_model {d_model}",
                                              batches, [s * 1e3 for s in seconds], ":", key,
                                              band=([lo * 1e3 for lo, _ in edges], [hi * 1e3 for _, hi in edges])))
                for b in points:
                    found = regime(fitted, b) if device == "cpu" else None
                    # The answer first (time, and the estimate beside it), so a narrow screen shows it unscrolled.
                    row = [DEVICE_NAME[device], d_model, b["params"]["batch"],
                           measured_value(b["stats"], b["extra_info"], "s")]
                    if estimate is not None:
                        # The band, not the point: a measured GPU ran well slower than this model's point value.
                        low, high = estimate.step_band(b["params"]["batch"], d_model)
                        point = estimate.step(b["params"]["batch"], d_model)["seconds"]
                        row += [f"{si(low, 's')} to {si(high, 's')}",
                                gpu_estimate.faster_beyond_band(b["stats"], point, (low, high))]
                    elif gpu_device is None:
                        row += ["", ""]
                    rows.append(row)
                    # Where the time goes: a second table, so a phone shows the first one's answer in a few cards.
                    work_rows.append(row[:3] + [si(b["extra_info"]["flops"], "FLOP"),
                                                si(b["extra_info"]["flops"] / b["stats"]["median"], "FLOP/s"),
                                                f"{100 * found[1]:.0f}%" if found else "",
                                                regime_words(found[0]) if found else ""])
                shown += points
        if not rows:
            return missing("No transformer steps measured on this machine.")
        times = _one_line_for_equal_estimates(times)
        best = analysis.best_matmul_rate(m)
        if best:
            xs = sorted({b["params"]["batch"] for b in shown})
            rates.append(plots.Series(f"CPU's fastest matrix product, {si(best, 'FLOP/s')} (measured)", xs,
                                      [best / 1e9] * len(xs), ":", "matmul", markers=False))
        svg = plots.line_panels(
            [{"series": times, "xlabel": "batch (sequences per step)", "ylabel": "time per training step (ms)",
              "subtitle": "Lower is better"},
             {"series": rates, "xlabel": "batch (sequences per step)", "ylabel": "achieved rate (GFLOP/s)",
              "subtitle": "Higher is better"}],
            title="A small transformer's training step, across batch",
            alt="Two log-scale plots against batch size: the transformer's training-step time in milliseconds "
                "(with the labelled H200 estimate where no GPU was measured) and its achieved GFLOP/s against "
                "the build host's best matrix-product rate; the table below has the numbers.",
            size=(4.6, 3.8))
        head = ["device", "d_model", "batch", "time per step"]
        if gpu_device is None:
            head += [f"{gpu_estimate.SHEET.name} estimate (its band)",
                     "ahead beyond the band"]
        seq = {seq for (_, seq) in curves(m, "cpu")}
        caption = (f"{MODEL['LAYERS']} blocks, {MODEL['HEADS']} heads, vocabulary {MODEL['VOCAB']}, "
                   f"{listing([str(x) for x in sorted(seq)])} tokens per sequence")
        if gpu_device is None and str(rows[0][4]):  # a column with one value in every row is said once
            head, rows, same = fold_constant_columns(head, rows, [4, 5])
            caption = html("{}. In every row, {}", caption, join(same, "; ")) if same else caption
        # A short head; what "regime" and "mixed" mean goes under the table (#39 read: the head overflowed).
        work = table(["device", "d_model", "batch", "FLOPs per step", "achieved", "of the matmul rate at that size",
                      "regime"], work_rows,
                     caption="Where the time goes: FLOPs counted from the shapes (6 per weight per token, plus "
                             "attention); the matmul rate is the square matrix product's, at the size that matches "
                             "the block's widest product")
        work += note(f"Regime: the cost model's largest term. Mixed: another term within "
                     f"{100 * (NEAR_TIE - 1):.0f}% of it.")
        # A share past 100% is no error: it is said so, or a reader takes it for one (#39 read).
        if any(cell.endswith("%") and int(cell[:-1]) > 100 for cell in (str(r[5]) for r in work_rows)):
            work += note("Over 100%: the block's products ran faster than the square product they are held against. "
                         "They differ from it in shape.")
        roof = (f" Dotted in the rate panel: the build host's fastest matrix product, {si(best, 'FLOP/s')} "
                "(measured).") if best else ""
        lanes = ("Dashed: a GPU, measured." if gpu_device else
                 f"Dotted in the time panel: the H200 estimate (not measured), its band ({band}) shaded.")
        # "neither" can sit beside a median just past the band's edge: the CPU's spread reaches into it.
        # Which two: the CPU's median and the estimate's, not the CPU and the band's edge (#39 read: "1.06× the band's
        # top" beside "less than 1.1× apart" read as a broken rule).
        said_neither = any("neither" in map(str, row) for row in rows)
        neither = (note(f"Neither: the CPU's spread reaches into the band, or the CPU's median is less than "
                        f"{stats.MEANINGFUL_RATIO:g}× the estimate's.") if said_neither else Html(""))
        parts = (figure(svg, f"Solid: CPU, measured. {lanes}{roof} Ringed points are noisy, too few or taken "
                             "under load.") + table(head, rows, caption=caption) + neither + marks_note_for(shown)
                 + work)
        return parts
    return per_machine(data, STEP, one)


@fact
def transformer_size(data: Dataset) -> str:
    """The measured model's parameters, its matrix-product weights N, FLOPs per token against 6N, and the
    attention term's share of a step at the largest batch, per d_model."""
    if unmeasured(data, STEP):
        return NOT_MEASURED
    machine = first_with(data, STEP)
    parts = []
    for (d_model, seq), points in curves(machine, "cpu").items():
        b = points[-1]
        n, extra = matmul_params(d_model), b["extra_info"]
        attention = extra["flops"] / (6 * n * extra["tokens"]) - 1  # what the attention term adds to 6N
        parts.append(f"at d_model {d_model}, {extra['params']:,} parameters, N = {n:,} of them in matrix products, "
                     f"so 6N = {si(6 * n, 'FLOP')} per token. At sequence {seq} the attention term adds "
                     f"{100 * attention:.0f}% to that ({si(extra['flops'] / extra['tokens'], 'FLOP')} per token)")
    if not parts:
        raise MissingData("no CPU transformer steps")
    return _sentences(parts)


def _sentences(parts: list[str]) -> str:
    """Clauses as sentences: the first as it is (it continues the page's sentence), the others capitalised."""
    return ". ".join([parts[0]] + [part[:1].upper() + part[1:] for part in parts[1:]])


@fact
def transformer_step_summary(data: Dataset) -> str:
    """Per d_model on the CPU: how much the step time grew from the smallest to the largest batch, against the
    growth in tokens, and the throughput at both ends."""
    if unmeasured(data, STEP):
        return NOT_MEASURED
    machine = first_with(data, STEP)
    parts = []
    for (d_model, _), points in curves(machine, "cpu").items():
        small, large = points[0], points[-1]
        if small is large:
            continue
        grew = stats.paired_ratio(large["stats"], small["stats"])
        tokens = lambda b: b["extra_info"]["tokens"] / b["stats"]["median"]  # noqa: E731
        time = ratio_sentence(grew, "multiplied the step time by {}", "divided the step time by {}",
                              "left the step time the same within the spread")
        # Short: the lead above gave the throughput's gain; here, the step times and the rates behind it.
        parts.append(f"at d_model {d_model}, batch {small['params']['batch']} to {large['params']['batch']} "
                     f"({large['params']['batch'] // small['params']['batch']}× the tokens) {time}, from "
                     f"{si(small['stats']['median'], 's')} to {si(large['stats']['median'], 's')}. Throughput went "
                     f"from {si(tokens(small), 'tokens/s')} to {si(tokens(large), 'tokens/s')}")
    if not parts:
        raise MissingData("fewer than two CPU batches of the transformer")
    return _sentences(parts)


@fact
def transformer_lead(data: Dataset) -> str:
    """The page's answer first: per d_model on the CPU, how much throughput changed from the smallest to the largest
    batch, claimed only where the step time grew less than the tokens beyond the rounds' interval."""
    if unmeasured(data, STEP):
        return NOT_MEASURED
    machine, raised, level, batches = first_with(data, STEP), [], [], set()
    for (d_model, _), points in curves(machine, "cpu").items():
        small, large = points[0], points[-1]
        if small is large:
            continue
        batches.add((small["params"]["batch"], large["params"]["batch"]))
        tokens = large["extra_info"]["tokens"] / small["extra_info"]["tokens"]
        grew = stats.paired_ratio(large["stats"], small["stats"])
        if stats.compare(tokens, grew.high) > 0:  # the time grew less than the tokens, by the whole interval
            raised.append(f"{multiple(tokens / grew.value)} at d_model {d_model}")
        else:
            level.append(str(d_model))
    if not batches:
        raise MissingData("fewer than two CPU batches of the transformer")
    span = (f"from batch {next(iter(batches))[0]} to {next(iter(batches))[1]}" if len(batches) == 1
            else "from the smallest batch measured to the largest")
    text = f"On the build host, going {span} raised throughput {listing(raised)}" if raised else ""
    if level:
        text += (". At" if text else "On the build host, at") + (f" d_model {listing(level)} throughput did not change "
                                                           f"beyond the spread, {span}")
    return text


@fact
def transformer_regimes(data: Dataset) -> str:
    """Per d_model, the regimes the CPU step passes through as the batch grows, and the share of the measured
    matmul rate it reached."""
    if unmeasured(data, STEP):
        return NOT_MEASURED
    machine = first_with(data, STEP)
    fitted, parts = cost_model.model(machine, "cpu"), []
    for (d_model, _), points in curves(machine, "cpu").items():
        found = [(b["params"]["batch"], regime(fitted, b)) for b in points]
        if any(r is None for _, r in found):
            raise MissingData("the cost model lacks call_overhead, gemm_rate or memory_bandwidth results")
        path = list(dict.fromkeys(r[0] for _, r in found))
        shares = [r[1] for _, r in found]
        ladder = (f"every batch is {regime_words(path[0])}" if len(path) == 1 else
                  f"batch {found[0][0]} is {regime_words(path[0])}, then "
                  + ", then ".join(regime_words(r) for r in path[1:]) + " as the batch grows")
        parts.append(f"at d_model {d_model} {ladder}. It reaches {100 * min(shares):.0f}% to "
                     f"{100 * max(shares):.0f}% of the matrix-product rate the build host measured at the same size")
    if not parts:
        raise MissingData("no CPU transformer steps")
    return _sentences(parts)


@fact
def transformer_takeover(data: Dataset) -> str:
    """The regimes paragraph's short restatement of where a GPU leads (the opening's answer, without its sources)."""
    if unmeasured(data, STEP):
        return capitalised(NOT_MEASURED)
    machine, said = _gpu_verdicts(data)
    who = "The measured GPU" if machine.gpu_device(STEP) else "By the estimate, the GPU"
    return f"{who} leads {said}"


def transformer_crossover(data: Dataset) -> str:
    """Where a GPU would be faster than a CPU at this transformer, per d_model: a measured GPU against its own
    machine's CPU where one ran it (gpu_with), else the labelled H200 estimate against the build host, with its band
    as its spread."""
    if unmeasured(data, STEP):
        return NOT_MEASURED
    machine, said = _gpu_verdicts(data)
    if machine.gpu_device(STEP):
        gpu = untrusted.placeholder(machine.device_label(machine.gpu_device(STEP)))
        return f"the measured {gpu} is faster than its own CPU {said}"
    # The CPU it beats is named: a small build host is not the CPU a GPU machine would race.
    return (f"an estimate of the {gpu_estimate.SHEET.name} is faster than the build host "
            f"({untrusted.placeholder(machine.label)}) {said}")


def _gpu_machine(data: Dataset) -> Machine:
    """The machine whose GPU verdict this page gives: the first that ran the transformer on a GPU, else the build
    host (against the labelled estimate)."""
    return gpu_with(data, STEP) or first_with(data, STEP)


def _gpu_verdicts(data: Dataset) -> tuple[Machine, str]:
    """(the machine, where its GPU leads in words, d_models with one outcome sharing a clause)."""
    machine = _gpu_machine(data)
    parts = []
    for (d_model, seq), _points in curves(machine, "cpu").items():
        batch, _, verdicts = crossover(machine, d_model, seq, data.machines)
        if not verdicts:
            continue
        largest = max(verdicts)
        if batch is not None:
            parts.append((d_model, _lead_from(batch, verdicts), ""))
        elif verdicts[largest] < 0:
            parts.append((d_model, "at no batch measured", f" (at batch {largest} the CPU is faster)"))
        else:
            parts.append((d_model, "at no batch measured", f" (at batch {largest} the two are level "
                                                           "within the spread)"))
    if not parts:
        raise MissingData("no CPU transformer steps to compare")
    # Sizes with the same outcome share one clause: "at d_model 128 and 256 at every batch measured".
    same: dict[tuple[str, str], list[str]] = {}
    for d_model, where, why in parts:
        same.setdefault((where, why), []).append(str(d_model))
    return machine, listing([f"at d_model {listing(sizes)} {where}{why}" for (where, why), sizes in same.items()])


@fact
def transformer_gpu_answer(data: Dataset) -> str:
    """The page's first line: does a GPU help this transformer, and from which batch? Measured where a GPU ran it;
    else "not measured yet", then where the labelled estimate leads beyond its band (whose top a measured GPU's
    worst miss may have raised)."""
    if unmeasured(data, STEP):
        return NOT_MEASURED
    machine = _gpu_machine(data)
    if machine.gpu_device(STEP):
        return f"Measured: {transformer_crossover(data)}"
    found = [crossover(machine, d_model, seq, data.machines) for d_model, seq in curves(machine, "cpu")]
    if all(batch is None for batch, _, _ in found):
        return (f"{_no_gpu_words(data)}. An estimate of the {gpu_estimate.SHEET.name} is not ahead at any batch "
                "measured")
    # Short sentences: who beats whom, then where, then whom it beat.
    _, said = _gpu_verdicts(data)
    # Not measured comes first, then what the labelled estimate says; its band and limits follow (transformer_band).
    # No "probably": the estimate's cost per operation was fitted on another network (#39 read).
    return f"{_no_gpu_words(data)}. By the labelled estimate, a GPU would lead {said}"


def _band_span(machine: Machine, peers: Iterable[Machine]) -> tuple[float, float]:
    """The lowest and highest edge of the estimate's band over every size the CPU measured."""
    edges = [edge for (d_model, seq), points in curves(machine, "cpu").items()
             if (estimate := estimate_for(machine, seq, peers))
             for b in points for edge in estimate.step_band(b["params"]["batch"], d_model)]
    return min(edges), max(edges)


SMALL_HOST_THREADS = 4  # a host this small is far from the CPUs a GPU is usually weighed against


def _no_gpu_words(data: Dataset) -> str:
    """Why the page has no measured GPU: none ran this experiment, though a GPU machine's file may hold others (a
    reader has seen that GPU on every other page)."""
    other = next((m for m in data.machines if m.gpu is not None), None)
    if other is None:
        return "No GPU has timed this model yet, so the estimate is unchecked here"
    return (f"No GPU has timed this model yet (the {untrusted.placeholder(other.gpu['name'])} machine did not run it), "
            "so the estimate is unchecked here")


@fact
def transformer_band(data: Dataset) -> str:
    """The band a model's lead on this page must clear (gpu_estimate.for_host: its top raised where a measured GPU
    took longer than estimated on the MLP), or that a measured GPU needs no model."""
    if unmeasured(data, STEP):
        return NOT_MEASURED
    machine = _gpu_machine(data)
    if machine.gpu_device(STEP):
        return "A GPU ran this transformer, so no estimate stands in for it"
    estimates = [e for e in (estimate_for(machine, seq, data.machines) for _, seq in curves(machine, "cpu")) if e]
    if not estimates:
        raise MissingData("no counted CPU transformer steps to drive the model")
    estimate, (low, high) = estimates[0], _band_span(machine, data.machines)
    missed = gpu_estimate.checks(data.machines, feeder=machine)
    worst = max(missed, key=lambda found: found.highest) if missed else None
    # "On the MLP" first: a learner must not read "this model" as the transformer.
    rule = (f". On the MLP, a real {untrusted.placeholder(worst.machine.gpu['name'])} took up to "
            f"{gpu_estimate.edge(estimate.slower)}× what this estimate predicted. So the GPU counts as ahead only "
            f"where the CPU is slower than {gpu_estimate.edge(estimate.slower)}× the estimate"
            if worst is not None and estimate.slower > gpu_estimate.SLOWER
            else f". A lead counts only beyond its band, {estimate.band_words}{_measured_miss_words(missed, estimate)}")
    threads = machine.cpu.get("threads_used")
    small = (f". The build host has {threads} threads: a CPU with more cores would be harder to beat"
             if threads and threads <= SMALL_HOST_THREADS else "")
    return (f"An estimate for the {gpu_estimate.SHEET.name}, from its datasheet and the build host's cost per "
            f"operation, puts this step at {_centre_words(machine, data.machines)}, within {si(low, 's')} to "
            f"{si(high, 's')}{rule}{_stretched_words(machine, estimates)}"
            f"{_host_bound_words(machine, data.machines)}{small}")


def _measured_miss_words(missed: list, estimate) -> str:
    """How far a real GPU's MLP steps missed this estimate (its median), where one was checked: said beside the band,
    so a reader knows which way the estimate leans and that the band already allows for it (#39 review)."""
    if not missed:
        return ""
    check = missed[0]
    inside = estimate.faster <= check.median <= estimate.slower
    return (f". On the MLP, a real {untrusted.placeholder(check.machine.gpu['name'])} step took {check.median:.2g}× "
            "the estimate (median)" + (", inside that band" if inside else ""))


def _centre_words(machine: Machine, peers: Iterable[Machine]) -> str:
    """The estimate's own step over every size the CPU measured (its band's centre): "about 4.61 ms" where every
    size gives the same within the meaningful ratio, else "1.2 ms to 4.6 ms"."""
    centres = [estimate.step(b["params"]["batch"], d_model)["seconds"]
               for (d_model, seq), points in curves(machine, "cpu").items()
               if (estimate := estimate_for(machine, seq, peers)) for b in points]
    low, high = min(centres), max(centres)
    return f"about {si(low, 's')}" if stats.compare(high, low) == 0 else f"{si(low, 's')} to {si(high, 's')}"


def _stretched_words(machine: Machine, estimates: list) -> str:
    """Where the model's cost per operation was fitted on steps issuing fewer operations than this block's, a
    sentence saying so: the fit cannot tell a cost per operation from one per step (Predicting a step)."""
    fitted = sorted({w["ops"] for w in cost_model.step_work(machine).values() if w.get("ops")})
    # What the estimate charges that cost on: the operations CUDA would issue for this block (gpu_estimate.step).
    charged = sorted({gpu_estimate.cuda_counts(w)[0] for e in estimates for w in e.work.values() if w.get("ops")})
    if not fitted or not charged or max(fitted) >= min(charged):
        return ""
    each = f"{fitted[0]}" if len(fitted) == 1 else f"{fitted[0]} to {fitted[-1]}"
    many = f"{charged[0]}" if len(charged) == 1 else f"{charged[0]} to {charged[-1]}"
    return (f". Its cost per operation was fitted on the MLP's CPU steps, {each} operations each. Here it is "
            f"charged on {many}, so that cost is stretched past its fit")


def _lead_from(batch: int, verdicts: dict[int, int]) -> str:
    """Where a crossover batch puts the GPU ahead, in words: from that batch, or at every batch measured."""
    return "at every batch measured" if batch == min(verdicts) else f"from batch {batch}"


def _host_bound_words(machine: Machine, peers: Iterable[Machine]) -> str:
    """Where the estimate is bounded by its host at every size this page measured: said up front, since its
    verdicts then come from the build host's issuing, not from the GPU."""
    shapes = curves(machine, "cpu")
    estimates = {seq: estimate_for(machine, seq, peers) for _, seq in shapes}  # one model per sequence length
    bounded = [estimates[seq].bounded_by(b["params"]["batch"], d_model) == "the host"
               for (d_model, seq), points in shapes.items() if estimates[seq] for b in points]
    if bounded and all(bounded):
        return ". The estimate is flat: at every size here, it is the build host's time to issue the work"
    if bounded and 2 * sum(bounded) > len(bounded):  # most: the flat column beside the CPU times says why
        return (f". At {sum(bounded)} of {len(bounded)} sizes here, the estimate's step is the build host's time to "
                "issue the work, whatever the GPU's speed")
    return ""


def _compile_points(machine: Machine, model: str) -> tuple[dict | None, dict[int, dict[str, dict]]]:
    """(the compile point, {batch: {mode: point}}) of one model; the compile point may be a failure."""
    compiled = next(iter(machine.benchmarks(COMPILE, model=model, phase="compile")), None)
    steps: dict[int, dict[str, dict]] = {}
    for b in machine.measured(COMPILE, model=model, phase="step"):
        steps.setdefault(b["params"]["batch"], {})[b["params"]["mode"]] = b
    return compiled, steps


def _failure(bench: dict | None) -> str | None:
    """The error a failed compilation recorded, if this point is one."""
    if bench is None or bench.get("status", "ok") == "ok":
        return None
    return bench["extra_info"].get("error", "torch.compile failed")


def _paired(steps: dict[int, dict[str, dict]]) -> list[tuple[int, dict, dict, stats.Ratio]]:
    """(batch, eager, compiled, eager ÷ compiled) where both were measured."""
    return [(batch, modes["eager"], modes["compiled"],
             stats.paired_ratio(modes["eager"]["stats"], modes["compiled"]["stats"]))
            for batch, modes in sorted(steps.items()) if {"eager", "compiled"} <= modes.keys()]


@section
def compile_speed(data: Dataset) -> Html:
    """Per machine and model: torch.compile's compile time, then eager against compiled step time per batch,
    with the steps a compile takes to pay for itself where compiled is faster."""
    repaid = []  # whether any table shows a count of steps to repay, which the rules under them then explain

    def one(m: Machine) -> Html:
        compiles, rows, shown, apart = [], [], [], []
        for model in ("mlp", "transformer"):
            compiled, steps = _compile_points(m, model)
            if compiled is None:
                continue
            error = _failure(compiled)
            if error is not None:
                compiles.append([model, compiled["params"]["batch"], html("<strong>failed</strong>: {}", error)])
                continue
            shown.append(compiled)
            compiles.append([model, compiled["params"]["batch"],
                             measured_value(compiled["stats"], compiled["extra_info"], "s")])
            for batch, eager, fast, ratio in _paired(steps):
                shown += [eager, fast]
                twin = _twin_step(m, model, batch)
                if twin and not consistency.within_tolerance(eager["stats"]["median"] / twin):
                    apart.append(_twin_words(model, batch, eager["stats"]["median"] / twin))
                saved = eager["stats"]["median"] - fast["stats"]["median"]
                # Two significant figures: a four-digit count from two noisy medians claims more than they show.
                repay = (f"about {rough_count(compiled['stats']['median'] / saved)}" if ratio.verdict > 0
                         else "no measured saving")
                repaid.append(ratio.verdict > 0)
                rows.append([model, batch, measured_value(eager["stats"], eager["extra_info"], "s"),
                             measured_value(fast["stats"], fast["extra_info"], "s"),
                             ratio_sentence(ratio, "{} faster compiled", "{} slower compiled",
                                            _within_spread(ratio)),
                             repay])
        if not compiles:
            return missing("torch.compile was not measured on this machine.")
        head = ["model", "batch", "eager step", "compiled step", "compiled against eager", "steps to repay the compile"]
        # A column that says "no measured saving" in every row is said once, in the caption.
        head, rows, same = fold_constant_columns(head, rows, [5])
        # Its own run: an eager step here can differ from the step table's twin, within the tolerance (#39 read).
        caption = (f"Steps after compilation, eager against compiled ({COMPILED_SIZES}), timed in their own run, so "
                   "an eager step can differ from the step table's")
        return (table(["model", "batch", "compile time"], compiles,
                      caption="torch.compile (inductor) on the CPU: the first compiled training step, compilation "
                              "included, from an empty compiler cache")
                # A folded "no measured saving" reads as what it means, not as a column the table lacks.
                + table(head, rows, caption=(f"{caption}. No row saved time, so the compile never repays" if same
                                             and all("no measured saving" in str(c) for c in same) else
                                             html("{}. In every row, {}", caption, join(same, "; ")) if same
                                             else caption))
                + marks_note_for(shown)
                + (note(" ".join(apart) + " They were timed at different moments: lean on those rows less.")
                   if apart else Html("")))
    # Said once under every machine's tables, not under each; the repay rule only where a table counts steps.
    tables = per_machine(data, COMPILE, one)
    repay = (" Steps to repay divide the compile time by the time each step saves. They are a lower bound: a first "
             "step at a new batch size can compile again, once." if any(repaid) else "")
    rules = note("The ratio is of the two medians; its interval comes from the paired rounds (with two rounds, from "
                 f"the quartiles). A ratio within the spread is shown but not called.{repay}")
    return tables + (rules if data.shown(COMPILE) else Html(""))


def _twin_step(machine: Machine, model: str, batch: int) -> float | None:
    """The median of the same eager step timed by its own experiment (the transformer's table, or the MLP's training
    step at the compiled width), where it was: a second timing of one configuration (consistency.py's rule)."""
    if model == "transformer":
        sizes = _COMPILED["TRANSFORMER"]
        points = machine.measured(STEP, device="cpu", batch=batch, d_model=sizes["d_model"], seq=sizes["seq"])
    else:
        points = machine.measured(analysis.STEP, device="cpu", batch=batch, width=_COMPILED["MLP_WIDTH"])
    return points[0]["stats"]["median"] if points and points[0]["stats"]["median"] > 0 else None


def _twin_words(model: str, batch: int, ratio: float) -> str:
    """One sentence: how far the compile run's eager step was from its twin in the model's own experiment."""
    where = "the transformer's step table" if model == "transformer" else "the training-step experiment"
    return f"{capitalised(MODEL_NAMES[model])}'s eager step at batch {batch} took {ratio:.2f}× its time in {where}."


def _within_spread(ratio: stats.Ratio) -> str:
    """A compiled-against-eager ratio the spread does not separate, with its medians' direction shown but not called:
    a reader sees the 1.25× a table would otherwise hide behind "the same"."""
    if stats.compare(ratio.value, 1) == 0:
        return "same within the spread"
    said = (f"{multiple(ratio.value)} faster" if ratio.value > 1 else f"{multiple(1 / ratio.value)} slower")
    return f"same within the spread ({said} by median)"  # the same words as a tie: the spread does not separate them


@fact
def compile_summary(data: Dataset) -> str:
    """Per model: the compile time, then per batch whether compiled steps were faster, slower or the same as eager
    beyond the spread, with both medians."""
    if unmeasured(data, COMPILE):
        return NOT_MEASURED
    machine = first_with(data, COMPILE)
    sentences = []
    for model in ("mlp", "transformer"):
        compiled, steps = _compile_points(machine, model)
        name = MODEL_NAMES[model]
        if compiled is None:
            sentences.append(f"{name} was not compiled in this build"
                             + (" (a quick build compiles the MLP only)" if data.quick else ""))
            continue
        error = _failure(compiled)
        if error is not None:
            sentences.append(f"on {name}, torch.compile failed here ({untrusted.placeholder(error)})")
            continue
        # The per-batch ratios and medians are the table's (compile_speed): here, only which way each batch went.
        sentences.append(f"compiling {name} took {si(compiled['stats']['median'], 's')}, timed as its first step at "
                         f"batch {compiled['params']['batch']} from an empty cache{marked_timings([compiled])}. "
                         + _compiled_verdicts(_paired(steps)))
    said = ". ".join(s[0].upper() + s[1:] for s in sentences) + _other_machines_compile(data, machine)
    # "level" is the site's rule, said once: a small gap every round shows can still be level by it.
    return said + (f". Level: {stats.LEVEL_WORDS}" if " level " in f"{said} " else "")


def _other_machines_compile(data: Dataset, first: Machine) -> str:
    """Where other machines ran the compile experiment: how many batches their compiled transformer steps won and
    lost, so a gain on one machine is not read as a rule (#39 review). Said as the machine-dependence it shows only
    where the machines' directions differ."""
    others = [m for m in data.with_experiment(COMPILE) if m is not first]
    verdicts = [v for m in others
                if (v := [ratio.verdict for *_, ratio in _paired(_compile_points(m, "transformer")[1])])]
    if not verdicts:
        return ""
    counts = {word: sum(v.count(verdict) for v in verdicts)
              for verdict, word in VERDICT_WORDS.items()}
    total, n = sum(counts.values()), len(verdicts)
    who = "the other machine that ran it" if n == 1 else f"the {n} other machines that ran it"
    parts = [f"{word} at {k}" for word, k in counts.items() if k]
    where = (f"{next(w for w, k in counts.items() if k)} at all {total} batches" if len(parts) == 1
             else f"{listing(parts)} of {total} batches")
    said = f". On {who}, compiled transformer steps were {where}"
    mine = {ratio.verdict for *_, ratio in _paired(_compile_points(first, "transformer")[1])}
    # A gain here and none there (or a loss here and none there): the direction is the machine's, not compiling's.
    differs = (1 in mine and not counts["faster"]) or (-1 in mine and not counts["slower"])
    return said + (". So compiling's gain depends on the machine: measure it on yours" if differs else "")


@fact
def compile_repaid(data: Dataset) -> str:
    """Whether any compiled step was faster than eager beyond the spread (then the table's last column says after how
    many steps the compile pays for itself), or that none was, so the compile never paid for itself here."""
    if unmeasured(data, COMPILE):
        return NOT_MEASURED
    machine = first_with(data, COMPILE)
    faster = [batch for model in ("mlp", "transformer") for batch, _, _, ratio in _paired(_compile_points(machine,
                                                                                                         model)[1])
              if ratio.verdict > 0]
    if not faster:
        return "No compiled step here was faster than eager, so the compile never paid for itself"
    return ("Where a compiled step was faster, the compile pays for itself after the last column's steps. A real "
            "training run takes thousands")


VERDICT_WORDS = {1: "faster", -1: "slower", 0: "level"}  # a compiled step against eager, by stats' verdict


def _compiled_verdicts(pairs: list) -> str:
    """Which way compiled steps went at each batch, beyond the spread: "Compiled steps were faster at batch 16;
    level at batches 64 and 256" (the table beside it has the ratios and medians)."""
    if not pairs:
        return "No compiled steps were measured"
    grouped = {v: [batch for batch, _, _, ratio in pairs if ratio.verdict == v] for v in (1, -1, 0)}
    parts = [f"{VERDICT_WORDS[v]} at {'batch' if len(b) == 1 else 'batches'} {listing([str(x) for x in b])}"
             for v, b in grouped.items() if b]
    return "Compiled steps were " + "; ".join(parts)


@section
def transformer_profile(data: Dataset) -> Html:
    """Per machine and device: the profiler's host self time per step by kind of operation, the MLP and the
    transformer side by side, with each kind's share."""
    config = experiments.declared(PROFILE)
    mlp_config = experiments.declared("step_profile")

    def one(m: Machine) -> Html:
        parts = []
        for device in m.devices(PROFILE):
            by_model = {model: {b["params"]["kind"]: b for b in m.measured(PROFILE, device=device, model=model)}
                        for model in ("mlp", "transformer")}
            totals = {model: sum(b["stats"]["median"] for b in points.values()) or 1.0
                      for model, points in by_model.items()}
            kinds = sorted({k for points in by_model.values() for k in points},
                           key=lambda k: -by_model["transformer"].get(k, {"stats": {"median": 0}})["stats"]["median"])
            rows = []
            for kind in kinds:
                row = [kind]
                for model in ("mlp", "transformer"):
                    b = by_model[model].get(kind)
                    if b is None or not b["extra_info"]["calls_per_step"]:  # a kind this model never ran
                        row += ["not measured" if b is None else "none", "", 0 if b else ""]
                        continue
                    row += [measured_value(b["stats"], b["extra_info"], "s"),
                            f"{100 * b['stats']['median'] / totals[model]:.0f}%", b["extra_info"]["calls_per_step"]]
                rows.append(row)
            t = config["TRANSFORMER"]
            caption = (f"{DEVICE_NAME[device]}: one training step each, by torch.profiler (host self time). MLP: batch "
                       f"{mlp_config['BATCH']}, width {mlp_config['WIDTH']}; transformer: batch {t['batch']}, d_model "
                       f"{t['d_model']}, sequence {t['seq']}{_between_steps(m, t['batch'])}")
            shown = [b for points in by_model.values() for b in points.values()]
            parts.append(table(["kind of operation", "MLP: time per step", "MLP: share", "MLP: calls",
                                "transformer: time per step", "transformer: share", "transformer: calls"],
                               rows, caption=caption) + marks_note_for(shown))
        return join(parts, "\n") if parts else missing("Not profiled on this machine.")
    return per_machine(data, PROFILE, one)


def _between_steps(machine: Machine, batch: int) -> str:
    """Where the profiled batch is not one the step table timed, which two it lies between (a reader looks for it
    there), as a clause; else nothing."""
    timed = sorted({b["params"]["batch"] for b in machine.measured(STEP, device="cpu")})
    below = [b for b in timed if b < batch]
    above = [b for b in timed if b > batch]
    if batch in timed or not below or not above:
        return ""
    return f" (between the step table's batches {below[-1]} and {above[0]})"


@fact
def transformer_profile_summary(data: Dataset) -> str:
    """The largest kind of each model's profiled CPU step with its share, and the transformer's shares of the
    kinds the MLP does not have (attention, normalisation)."""
    if unmeasured(data, PROFILE):
        return NOT_MEASURED
    machine = first_with(data, PROFILE)
    shares = {}
    for model in ("mlp", "transformer"):
        points = machine.measured(PROFILE, device="cpu", model=model)
        total = sum(b["stats"]["median"] for b in points)
        if not points or total <= 0:
            raise MissingData(f"no CPU profile of {model}")
        shares[model] = {b["params"]["kind"]: b["stats"]["median"] / total for b in points}
    parts = []
    for model, share in shares.items():
        top = max(share, key=share.get)
        parts.append(f"in {MODEL_NAMES[model]}'s step, {untrusted.placeholder(top)} took the largest share, "
                     f"{100 * share[top]:.0f}%")
    own = [f"{untrusted.placeholder(kind)} {100 * shares['transformer'][kind]:.0f}%"
           for kind in ("attention", "normalisation") if kind in shares["transformer"]]
    text = _sentences(parts)
    if own:
        text += f". Of the transformer's step, {listing(own)}"
    return text
