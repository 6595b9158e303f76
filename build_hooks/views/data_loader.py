"""Data loading: how many DataLoader workers a CPU-heavy pipeline needs."""

from __future__ import annotations

from build_hooks import analysis, plots, stats
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (
    Html,
    caveat,
    figure,
    first_with,
    listing,
    mark,
    marks_note_for,
    multiple,
    note,
    per_machine,
    si,
    table,
)

GROUP = "data_loader"


def rates(machine: Machine, pin_memory: bool = False) -> dict[int, float]:
    """Samples per second by number of DataLoader workers."""
    return {w: 1 / s for w, s in analysis.medians(machine, GROUP, "workers", pin_memory=pin_memory).items()}


def useful_workers(seconds: dict[int, dict]) -> int | None:
    """The largest worker count that beat every smaller count beyond the spread of both.

    `seconds` maps worker counts to the stats of seconds per sample.
    """
    best_count = None
    for workers in sorted(seconds):
        if best_count is None or stats.compare_points(seconds[best_count], seconds[workers]) > 0:
            best_count = workers
    return best_count


@section
def data_loader(data: Dataset) -> Html:
    """Per machine: throughput by DataLoader worker count, pageable and pinned, plotted, tabled."""
    def one(m: Machine) -> Html:
        series, rows, shown = [], [], []
        for pin in sorted({b["params"]["pin_memory"] for b in m.benchmarks(GROUP)}):
            by_workers = rates(m, pin)
            points = {b["params"]["workers"]: b for b in m.measured(GROUP, pin_memory=pin)}
            label = "pinned memory" if pin else "pageable memory"
            # A count beyond what its cores can give stays in the table, marked, but off the plot: a line through it
            # would draw a gain no core count explains (_beyond_the_workers says so).
            plotted = {w: r for w, r in by_workers.items() if w not in _superlinear(m, pin)}
            series.append(plots.Series(label, list(plotted), list(plotted.values()), "-", label))
            rows += [[w, label, si(r, "samples/s") + mark(points[w]["stats"], points[w]["extra_info"])]
                     for w, r in by_workers.items()]
            shown += points.values()
        svg = plots.line_panels([{"series": series, "xlabel": "DataLoader num_workers",
                                  "ylabel": "throughput (samples/s)", "subtitle": "Higher is better", "eng": True,
                                  "xscale": "linear", "yscale": "linear",
                                  "xticks": sorted({w for s in series for w in s.x})}],
                                title="Data loading with a CPU-heavy augmentation",
                                alt="Samples per second versus number of DataLoader workers; "
                                    "the table below has the numbers.")
        return (figure(svg, "Worker start-up excluded.")
                + table(["num_workers", "host memory", "throughput"], rows) + marks_note_for(shown)
                + _beyond_the_workers(m))
    return per_machine(data, GROUP, one)


def _beyond_the_workers(machine: Machine) -> Html:
    """A note where N workers delivered more than N + 1 times the main process alone (beyond the meaningful ratio):
    N workers and the main process, one core each, cannot do more than N + 1 times one core's work, so the main
    process alone was held back by something else. Said, not explained away."""
    found = [pair for pin in sorted({b["params"]["pin_memory"] for b in machine.benchmarks(GROUP)})
             for pair in _superlinear(machine, pin).items()]
    if not found:
        return Html("")
    workers, gain = max(found, key=lambda pair: pair[1] / pair[0])
    # Before version 3 the clock started after the first batch, when many workers had prepared more: that flatters
    # them. From version 3 a whole warm pass is timed, so only the main process's own slowness is left to blame.
    version = (machine.doc["experiments"].get(GROUP) or {}).get("bench_version", TIMED_WHOLE_PASS)
    why = ("This file's timing began after the first batch, when the workers had already prepared others. That "
           "flatters many workers" if version < TIMED_WHOLE_PASS
           else "So something else slowed the main process alone")
    return note(f"Superlinear: {workers} workers delivered {gain:.3g}× the main process alone. {workers + 1} "
                f"processes on {machine.cpu['threads_used']} threads can give at most {_bound(machine, workers)}×. "
                f"{why}: read that row with care. The plot leaves out every such point.")


def _superlinear(machine: Machine, pin: bool) -> dict[int, float]:
    """{workers: gain over the main process alone} where N workers delivered meaningfully more than the N + 1 cores
    they and the main process have (_bound) can give."""
    by_workers = rates(machine, pin)
    alone = by_workers.get(0)
    return {w: r / alone for w, r in by_workers.items()
            if alone and w > 0 and stats.compare(r / alone, _bound(machine, w)) > 0}


TIMED_WHOLE_PASS = 3  # snippets/data_loader.py's BENCH_VERSION from which a whole warm pass is timed


def _bound(machine, workers: int) -> int:
    """The most N workers and the main process can deliver over the main process alone: one core each, and no more
    cores than the machine's threads (processes beyond them share)."""
    return min(workers + 1, machine.cpu["threads_used"] or workers + 1)


def _workers(counts: list[int]) -> str:
    """"1 worker", "2 and 4 workers"."""
    return f"{listing([str(c) for c in counts])} worker{'s' if counts != [1] else ''}"


def _beat_alone(seconds: dict[int, dict]) -> str:
    """Which worker counts beat num_workers=0 beyond the spread, which were slower than it beyond
    the spread, and which were level, in words."""
    verdicts = {w: stats.compare_points(seconds[0], seconds[w]) for w in sorted(seconds) if w > 0}
    beat, slower, level = ([w for w, v in verdicts.items() if v == sign] for sign in (1, -1, 0))
    if not beat:
        return "No worker count beat the main process alone beyond the measurements' spread"
    return (f"Beyond the measurements' spread, {_workers(beat)} beat the main process alone"
            + (f"; {_workers(slower)} {'was' if len(slower) == 1 else 'were'} slower than it" if slower else "")
            + (f"; {_workers(level)} did not beat it" if level else ""))


@fact
def loader_summary(data: Dataset) -> str:
    """A sentence: throughput with no workers against the best count, and which counts beat
    the main process alone beyond the spread (and which did not)."""
    machine = first_with(data, GROUP)
    by_workers = rates(machine)
    seconds = analysis.point_stats(machine, GROUP, "workers", pin_memory=False)
    base = by_workers[0]
    best = max(by_workers, key=by_workers.get)
    alone = machine.measured(GROUP, workers=0, pin_memory=False)[0]
    text = (f"in the training process itself (num_workers=0) the pipeline delivered "
            f"{si(base, 'samples/s')}{caveat(alone)}. The best was {si(by_workers[best], 'samples/s')} with "
            f"{best} worker{'s' if best != 1 else ''} ({multiple(by_workers[best] / base)})")
    if 1 in seconds:
        # A general truth, not a measured claim: one worker against none sits within this VM's
        # run-to-run noise (1.02x to 1.17x in three idle runs), so its direction is left to the table.
        text += (". A single worker does the same work as the main process, on one core. It also adds the cost "
                 "of sending batches between processes. On its own, it can only help by overlapping with training")
    text += ". " + _beat_alone(seconds)
    return text + "."

