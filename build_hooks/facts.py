"""Numbers and short claims that prose embeds as `{{ fact: name }}`, computed from the data.

Each fact is a function of the dataset returning Markdown text. The hook replaces the
markers before a page renders; an unknown name stops the build, naming page and marker.
"""

from __future__ import annotations

from typing import Callable

from build_hooks import analysis
from build_hooks.dataset import Dataset, Machine
from build_hooks.render import esc, si

FACTS: dict[str, Callable[[Dataset], str]] = {}


def fact(fn: Callable[[Dataset], str]) -> Callable[[Dataset], str]:
    FACTS[fn.__name__] = fn
    return fn


class MissingData(LookupError):
    """A fact's data is not in the dataset."""


def _host(data: Dataset) -> Machine:
    machines = data.with_experiment(analysis.STEP)
    if not machines:
        raise MissingData("no machine has measured the training step")
    return machines[0]


@fact
def host_cpu(data: Dataset) -> str:
    machine = _host(data)
    return f"{esc(machine.cpu['brand'])} ({machine.cpu['threads_used']} threads)"


@fact
def cpu_peak(data: Dataset) -> str:
    peak = _host(data).cpu["fp32_peak_flops"]
    return si(peak, "FLOP/s") if peak else "an unknown peak"


@fact
def cpu_best_step_rate(data: Dataset) -> str:
    best = analysis.best_rate(_host(data), "cpu")
    if best is None:
        raise MissingData("no CPU training-step point with a FLOP count")
    point, width = best
    return f"{si(point.flops_per_s, 'FLOP/s')} (batch {point.batch}, width {width})"


def versus_peak(rate: float, machine: Machine) -> str:
    """A rate compared with the CPU's theoretical peak, honest when the peak is too low."""
    cpu = machine.cpu
    peak = cpu["fp32_peak_flops"]
    if not peak:
        return "(this machine does not expose its clock, so no peak can be computed)"
    if rate <= peak:
        return f"{100 * rate / peak:.0f}% of this CPU's theoretical fp32 peak of {si(peak, 'FLOP/s')}"
    return (f"more than the {si(peak, 'FLOP/s')} theoretical peak computed from the "
            f"{si(cpu['clock_hz'], 'Hz')} clock the operating system reports: the cores must be "
            "running faster than that (boost clocks), so the true fraction of peak cannot be "
            "computed from what this machine exposes")


@fact
def cpu_best_step_fraction_of_peak(data: Dataset) -> str:
    machine = _host(data)
    best = analysis.best_rate(machine, "cpu")
    if best is None:
        raise MissingData("no CPU training-step rate")
    return versus_peak(best[0].flops_per_s, machine)


@fact
def crossover_summary(data: Dataset) -> str:
    sentences = []
    for machine in data.with_experiment(analysis.STEP):
        if "cuda" not in machine.devices(analysis.STEP):
            continue
        parts = []
        for width in analysis.widths(machine):
            batch = analysis.crossover_batch(machine, width)
            parts.append(f"width {width}: " + (f"from batch {batch}" if batch else "never, in the measured range"))
        sentences.append(f"On {esc(machine.label)} the GPU step is faster " + "; ".join(parts) + ".")
    if not sentences:
        return ("No GPU has been measured for this build, so no crossover is measured here: "
                "the CPU curves stand alone.")
    return " ".join(sentences)


def render(name: str, data: Dataset) -> str:
    if name not in FACTS:
        raise KeyError(f"unknown fact '{name}'; known: {', '.join(sorted(FACTS))}")
    return FACTS[name](data)
