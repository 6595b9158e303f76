"""Data loading: how many DataLoader workers a CPU-heavy pipeline needs."""

from __future__ import annotations

from build_hooks import analysis, plots, stats
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import figure, first_with, per_machine, si, table, times

GROUP = "data_loader"


def rates(machine: Machine, pin_memory: bool = False) -> dict[int, float]:
    """Samples per second by number of DataLoader workers."""
    return {w: 1 / s for w, s in analysis.medians(machine, GROUP, "workers", pin_memory=pin_memory).items()}


def useful_workers(by_workers: dict[int, float]) -> int | None:
    """The largest worker count that still beat every smaller count meaningfully."""
    best_count, best_rate = None, 0.0
    for workers in sorted(by_workers):
        if best_count is None or stats.compare(by_workers[workers], best_rate) > 0:
            best_count, best_rate = workers, by_workers[workers]
    return best_count


@section
def data_loader(data: Dataset) -> str:
    def one(m: Machine) -> str:
        series, rows = [], []
        for pin in sorted({b["params"]["pin_memory"] for b in m.benchmarks(GROUP)}):
            by_workers = rates(m, pin)
            label = "pinned memory" if pin else "pageable memory"
            series.append(plots.Series(label, list(by_workers), list(by_workers.values()), "-", label))
            rows += [[str(w), label, si(r, "samples/s")] for w, r in by_workers.items()]
        svg = plots.line_panels([{"series": series, "xlabel": "DataLoader num_workers",
                                  "ylabel": "throughput (samples/s)", "subtitle": "Higher is better", "eng": True,
                                  "xscale": "linear", "yscale": "linear",
                                  "xticks": sorted({w for s in series for w in s.x})}],
                                title="Data loading with a CPU-heavy augmentation",
                                alt="Samples per second versus number of DataLoader workers; the table below has the numbers.")
        return figure(svg, "Worker start-up excluded.") + table(["num_workers", "host memory", "throughput"], rows)
    return per_machine(data, GROUP, one)


@fact
def loader_summary(data: Dataset) -> str:
    by_workers = rates(first_with(data, GROUP))
    base = by_workers[0]
    best = max(by_workers, key=by_workers.get)
    useful = useful_workers(by_workers)
    text = (f"in the training process itself (num_workers=0) the pipeline delivered "
            f"{si(base, 'samples/s')}; the best was {si(by_workers[best], 'samples/s')} with "
            f"{best} worker{'s' if best != 1 else ''} ({times(by_workers[best] / base)})")
    if 1 in by_workers and stats.compare(by_workers[1], base) < 0:
        text += (f". A single worker was slower than none ({si(by_workers[1], 'samples/s')}): it does the "
                 "same work on one core and adds the cost of sending batches between processes")
    text += f". Adding workers helped up to {useful} on this machine" if useful else ""
    return text + "."
