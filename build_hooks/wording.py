"""The sentences several pages word the same way, from the values they are given: how two
experiments' timings of one configuration agree, a measured ratio with its interval, a rate
against the CPU's peak, why a machine has no copies to measure.

render.py formats (numbers, tables, figures, marks); this module words. A sentence that more
than one view says lives here, so one page cannot word it differently from the next.
"""

from __future__ import annotations

from build_hooks import analysis, conditions, consistency, render, stats
from build_hooks.dataset import Machine
from build_hooks.render import listing, multiple, si

CANARY_MOVED = 1.3  # a canary whose readings over an experiment span more than this has seen the machine move


def canary_moves(machine: Machine, groups: list[str]) -> list[float]:
    """How far each canary that moved beyond CANARY_MOVED over these experiments' rounds moved (max / min)."""
    moved = []
    for kind in ("all_threads", "memory", "one_thread"):
        readings = [x for g in groups for x in
                    (machine.doc["experiments"].get(g) or {}).get("conditions", {}).get("canaries", {}).get(kind, [])]
        ratio = conditions.drift(readings)
        if ratio is not None and ratio > CANARY_MOVED:
            moved.append(ratio)
    return moved


def same_configuration(pairs: list[tuple[dict, dict]], machine: Machine | None = None,
                       groups: list[str] = (), flagged: bool = False) -> str:
    """How points of one experiment agree with the same configurations measured by another.

    The two were timed at different moments, so their rounds cannot be paired: they are
    compared by their quartiles (stats.unpaired_ratio). A difference is explained by the
    machine's state only where the canaries of those experiments saw it move. `flagged`: the
    consistency check (About the data) marks these pairs ≠ beyond its tolerance.
    """
    ratios = [a["median"] / b["median"] for a, b in pairs if stats.unpaired_ratio(a, b).verdict != 0]
    if not ratios:
        # Spreads that overlap can still hide medians the consistency check marks ≠: never "agree" beside a ≠.
        medians = [a["median"] / b["median"] for a, b in pairs]
        beyond = [r for r in medians if not consistency.within_tolerance(r)]
        if not (flagged and beyond):
            return f"They agree ({stats.LEVEL_WORDS})"
        which = "one of them differs" if len(beyond) == 1 else f"{len(beyond)} of them differ"
        return (f"Their spreads overlap, so no difference is claimed. Yet {which} {_differ_by(beyond)}, beyond the "
                f"{consistency.TOLERANCE:g}× the consistency check allows, and is marked ≠{_why(machine, groups)}")
    # Sentences, not clauses (#39): how many agree, then by how much the rest differ.
    if len(ratios) == len(pairs):
        differ = f"They differ {_differ_by(ratios)}"
    else:
        rest = "The other differs" if len(ratios) == 1 else f"The other {len(ratios)} differ"
        agree = f"{len(pairs) - len(ratios)} of the {len(pairs)} agree ({stats.LEVEL_WORDS})"
        differ = f"{agree}. {rest} {_differ_by(ratios)}"
    return f"{differ}{_against_tolerance(ratios, flagged)}{_why(machine, groups)}"


def _differ_by(ratios: list[float]) -> str:
    """"by 1.43× (slower here)", or "by 1.10× to 1.43× (faster here)": multiples, as the tolerance they are held
    against is one (a signed percentage beside "1.3×" reads as a contradiction), two decimals near it."""
    sizes = sorted(max(r, 1 / r) for r in ratios)
    side = (" (slower here)" if all(r > 1 for r in ratios) else " (faster here)" if all(r < 1 for r in ratios)
            else " (either way)")
    shown = [f"{s:.2f}×" if s < 10 else multiple(s) for s in (sizes[0], sizes[-1])]
    return f"by {shown[0]}{side}" if shown[0] == shown[1] else f"by {shown[0]} to {shown[1]}{side}"


def _against_tolerance(ratios: list[float], flagged: bool) -> str:
    """Where differences stand against the consistency check's tolerance (About the data), so a
    "differ" here never reads as a contradiction the check does not make, or hides one it does."""
    beyond = [r for r in ratios if not consistency.within_tolerance(r)]
    limit = f"{consistency.TOLERANCE:g}×"
    if not beyond:
        return (f". That is inside the consistency check's {limit} tolerance (About the data)"
                + (", so no point is marked ≠" if flagged else ""))
    which = "That is" if len(ratios) == 1 else f"{len(beyond)} of them {'is' if len(beyond) == 1 else 'are'}"
    return (f". {which} outside the consistency check's {limit} tolerance (About the data)"
            + (", and marked ≠" if flagged else ""))


def _why(machine: Machine | None, groups: list[str]) -> str:
    """What the canaries say about a difference between two experiments; nothing invented."""
    if machine is None:
        return ". It is the same step, timed at another moment"
    moved = canary_moves(machine, list(groups))
    if moved:  # one number a learner can hold: the largest move ("canary" is in the glossary and on About the data)
        # Under 12 words: pages that compare two experiments each say it (#39: no long sentence on two pages).
        return f". Between the runs, the machine's check tasks moved up to {100 * (max(moved) - 1):.0f}%"
    return (". It is the same step, timed at another moment. The canaries stayed within "
            f"{100 * (CANARY_MOVED - 1):.0f}%")


def ratio_sentence(ratio: stats.Ratio, larger: str, smaller: str, same: str) -> str:
    """`larger`, `smaller` or `same` as the ratio's verdict says; "{}" in `larger` takes the
    ratio, in `smaller` the inverted ratio (always read as "N× ..."). Its interval ends the clause
    in brackets, so "2.2× faster in bf16" reads as one phrase, not split by its spread."""
    if ratio.verdict > 0:
        return _with_interval(larger, ratio)
    if ratio.verdict < 0:
        return _with_interval(smaller, ratio.inverted())
    return same


def _with_interval(words: str, ratio: stats.Ratio) -> str:
    """`words` with the ratio in its "{}" and its interval after, two decimals near the threshold."""
    precise = near_threshold(ratio.value)
    return f"{words.format(claimed_multiple(ratio.value))} ({interval_words(ratio, precise=precise)})"


def _interval_end(ratio: float) -> str:
    """An interval's end as multiple() writes it, but never a bare "1.0×" for a ratio that is not 1:
    an interval "1.0× to 1.5×" beside a claimed difference reads as if it included no difference."""
    text = multiple(ratio)
    return f"{ratio:.2f}×" if text == "1.0×" and round(ratio, 2) != 1 else text


def times_with_interval(ratio: stats.Ratio) -> str:
    """A measured ratio (of the medians) with its interval, named for what it is: "1.3× (1.2×
    to 1.4× over all 3 rounds)", "(… in the middle 3 of 5 rounds)", "(2.2× in each of the 3
    rounds)", "(… between the quartiles)". Near the meaningful ratio, two decimals (near_threshold)."""
    return f"{claimed_multiple(ratio.value)} ({interval_words(ratio, precise=near_threshold(ratio.value))})"


def claimed_multiple(value: float) -> str:
    """A ratio as multiple() prints it, with two decimals near the meaningful ratio (near_threshold)."""
    return f"{value:.2f}×" if near_threshold(value) else multiple(value)


def near_threshold(value: float) -> bool:
    """Whether a ratio prints as the meaningful ratio itself ("1.1×"): a claimed 1.108× must not read as exactly the
    threshold, nor a 1.06× as past it, so such a ratio is printed with two decimals."""
    return multiple(value) == multiple(stats.MEANINGFUL_RATIO)


def interval_words(ratio: stats.Ratio, precise: bool = False) -> str:
    """A measured ratio's interval in words, without brackets (times_with_interval). `precise`: the ends with two
    decimals, for a ratio printed so beside it (a "1.53×" must not sit above a printed top of "1.5×")."""
    end = (lambda r: f"{r:.2f}×") if precise else _interval_end
    low, high = end(ratio.low), end(ratio.high)
    if not ratio.paired:
        spread = f"{low} between the quartiles" if low == high else f"{low} to {high} between the quartiles"
    elif low == high:
        which = f"the {ratio.rounds}" if ratio.kept == ratio.rounds else f"the middle {ratio.kept} of {ratio.rounds}"
        spread = f"{low} in each of {which} rounds"
    else:
        which = (f"over all {ratio.rounds}" if ratio.kept == ratio.rounds
                 else f"in the middle {ratio.kept} of {ratio.rounds}")
        spread = f"{low} to {high} {which} rounds"
    shown = f"{ratio.value:.2f}×" if precise else multiple(ratio.value)
    # Outside the round ratios, but printed the same as the nearer end: the note would say nothing a reader sees.
    if ratio.paired and not ratio.low <= ratio.value <= ratio.high and shown not in (low, high):
        # Each round's own ratio first, then what the printed ratio is: a reader sees why it falls outside.
        spread = (f"each round alone: {low} to {high}; the {shown} pools every round's samples, and rounds with "
                  "more samples weigh more")
    # "92× (in each of the 3 rounds)"; a trimmed interval keeps its number, or "the middle 3 of 5" reads as "only 3".
    if ratio.paired and low == high == shown and ratio.kept == ratio.rounds:
        return spread.removeprefix(low + " ")
    return spread


def why_no_transfer(machine: Machine) -> str:
    """Why a machine has no host↔device copies, in words: no GPU, or one that shares the CPU's memory."""
    if machine.gpu is None:
        return "it has no GPU, so there is no host↔device bus to measure"
    if machine.uses_mps:
        return "its GPU (Apple's, through MPS) shares the CPU's memory, so there is no host↔device bus to measure"
    return "its GPU's copies were not measured"


def versus_peak(rate: float, machine: Machine, fast_end: float | None = None, explain: bool = True) -> str:
    """A rate as a percentage of the CPU's fp32 peak at its reported clock, "above" only when it is above.

    `fast_end` is the machine's best matrix-product rate at the fast end of its spread: when
    even that exceeds the peak computed from the reported clock, the cores ran faster than
    that clock (boost), so the true peak is higher and the
    percentage overstates the fraction reached; the sentence says so. With explain=False the
    caveat is one clause: its explanation lives on the page that states it once (why-gpu).
    """
    cpu = machine.cpu
    peak = cpu["fp32_peak_flops"]
    if not peak:
        return "(this machine does not expose its clock, so no peak can be computed)"
    share = f"{100 * rate / peak:.0f}%"
    overstated = fast_end is not None and fast_end > peak
    if rate > peak:
        text = f"above its CPU's fp32 peak at the reported clock, {si(peak, 'FLOP/s')} ({share} of it)"
    elif not explain:
        best = analysis.best_matmul_rate(machine)
        if overstated and best:  # a peak its own products beat is no yardstick: the best product is
            return f"{100 * rate / best:.0f}% of the fastest matrix product measured on it ({si(best, 'FLOP/s')})"
        return f"at most {share} of its CPU's fp32 peak at the reported clock, {si(peak, 'FLOP/s')}"
    else:
        clock = si(cpu["clock_hz"], "Hz") if cpu.get("clock_hz") else "reported"
        text = (f"{share} of its CPU's fp32 peak of {si(peak, 'FLOP/s')}. That peak is computed from "
                f"the {clock} clock its operating system reports")
        if not overstated:
            return text + ". Cores that boost above it have a higher true peak, so the share reached is at most this"
    if overstated and explain:
        # A slow state only adds time, so it cannot lift a rate above the peak: boost clocks (or a wrong FLOPs-per-cycle
        # figure in the peak's formula) can.
        why = ("So the peak's inputs are too low: most often the clock the system reports (cores boost above it), "
               "else the FLOPs per cycle assumed for the core. The true peak is higher, and the percentage overstates "
               "the share reached")
        if rate > peak:  # the rate itself says it: no second figure
            return f"{text}. {why}"
        # Else the number that beat the peak, named by the experiment that timed it.
        median = analysis.rate_above_peak(machine, split_too=True)
        where = ("Its square products" if median and analysis.rate_above_peak(machine) == median else
                 "Timed in the shapes experiment (Worked examples), its matrix products")
        reached = (f"{where} reached {si(median, 'FLOP/s')} (median)" if median else
                   f"At the fast end of their spread, this machine's matrix products reached {si(fast_end, 'FLOP/s')}")
        text += f". {reached}, above that peak. {why}"
    return text


def bracketed(text: str, bracket: str) -> str:
    """`text` with a bracket such as marked_timings' " (timings noisy)" added: inside the bracket that ends it,
    if one does ("1.3× slower (over all 3 rounds; timings noisy)"), never as a second bracket after it."""
    if not bracket:
        return text
    inner = bracket.strip()[1:-1]
    return f"{text[:-1]}; {inner})" if text.endswith(")") else text + bracket


def marked_timings(benches: list[dict]) -> str:
    """A short bracket for a headline built on points the table marks (noisy, under load, ...):
    " (timings taken under load)", or "" for unmarked points: a mark, not a sentence of its own."""
    marked = [stats.caveats(b["stats"], b["extra_info"]) for b in benches]
    kinds = list(dict.fromkeys(k for found in marked for k in found))
    if not kinds:
        return ""
    which = "timings" if all(marked) else "some timings"
    return f" ({which} {listing([render.CAVEAT_WORDS[k] for k in kinds])})"
