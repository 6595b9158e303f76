"""Data parallelism on one CPU: two DDP processes against one process with every thread."""

from __future__ import annotations

from build_hooks import analysis, stats, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import fact, section
from build_hooks.render import Html, caveat, first_with, median_text, medians_table
from build_hooks.wording import multiple, ratio_sentence

GROUP = "data_parallel"


@section
def data_parallel(data: Dataset) -> Html:
    """Per machine: median times of one all-thread process, two DDP processes and the all-reduce."""
    return medians_table(data, GROUP, [("setup", "setup"), ("processes", "processes"),
                                       ("global_batch", "global batch")], words=SETUP_WORDS)


SETUP_WORDS = {"one_process": "one process, every thread", "ddp": "DDP, the threads split between processes",
               "all_reduce": "the all-reduce of one model's gradients, alone"}


@fact
def ddp_summary(data: Dataset) -> str:
    """A sentence: one all-thread process against two DDP processes per step, and the all-reduce's
    share of a DDP step."""
    points = analysis.point_stats(first_with(data, GROUP), GROUP, "setup")
    ddp, reduce = (points[k]["median"] for k in ("ddp", "all_reduce"))
    said = {k: median_text(points[k]) for k in ("one_process", "ddp", "all_reduce")}  # as the table prints them
    ratio = stats.paired_ratio(points["one_process"], points["ddp"])
    verdict = ratio_sentence(ratio, "{} faster than one process", "{} slower than one process",
                             "level with one process, within the measurements' spread")
    return (f"one process with every thread took {said['one_process']} per step. Two DDP processes "
            f"sharing the same cores took {said['ddp']}, {verdict}. "
            f"The all-reduce of one model's gradients alone took {said['all_reduce']}, "
            f"{100 * reduce / ddp:.0f}% of a DDP step ({_share_range(points['all_reduce'], points['ddp'])} "
            "between the quartiles)")


@fact
def ddp_elsewhere(data: Dataset) -> str:
    """Two DDP processes over one process's step on every other machine that ran it, as a span: the price of
    coordination depends on the machine (#39 review: one noisy machine alone taught it); or that none other did."""
    first = first_with(data, GROUP)
    ratios = []
    for machine in data.with_experiment(GROUP):
        points = analysis.point_stats(machine, GROUP, "setup") if machine is not first else {}
        if {"ddp", "one_process"} <= points.keys():
            ratios.append(points["ddp"]["median"] / points["one_process"]["median"])
    if not ratios:
        return "No other machine in this build ran it"
    n = len(ratios)
    who = "the other machine that ran it" if n == 1 else f"the {n} other machines that ran it"
    low, high = min(ratios), max(ratios)
    span = multiple(low) if stats.compare(low, high) == 0 else f"{multiple(low)} to {multiple(high)}"
    depends = ". So the price of coordination depends on the machine" if stats.compare(low, high) else ""
    return f"On {who}, two processes took {span} one process's time per step{depends}"


def _share_range(part: dict, whole: dict) -> str:
    """part / whole as percentages from part's lower quartile over whole's upper to the reverse."""
    low = 100 * part["q1"] / whole["q3"] if whole["q3"] else 0.0
    high = 100 * part["q3"] / whole["q1"] if whole["q1"] else float("inf")
    return f"{low:.0f}% to {high:.0f}%"


@fact
def ddp_answer(data: Dataset) -> str:
    """The FAQ's measured answer: whether two DDP processes beat one process on the build host, with both times."""
    machine = first_with(data, GROUP)
    points = analysis.point_stats(machine, GROUP, "setup")
    verdict = stats.paired_ratio(points["one_process"], points["ddp"]).verdict
    answer = "no" if verdict < 0 else "yes" if verdict > 0 else "not beyond the spread"
    # Named: a reader of the FAQ assumes the GPU machine unless told which CPU split its cores.
    where = ("On the build host" if machine is data.host
             else f"On {untrusted.placeholder(machine.label)}")
    threads = machine.cpu.get("threads_used")
    cores = f" ({threads} threads)" if threads and machine is data.host else ""
    # Each time carries its caveats in words: the FAQ has no key for the tables' marks.
    benches = {b["params"]["setup"]: b for b in machine.measured(GROUP)}
    return (f"{where}{cores}, {answer}: two processes took {median_text(points['ddp'])}{caveat(benches['ddp'])} per "
            f"step, and one took {median_text(points['one_process'])}{caveat(benches['one_process'])}")
