"""CPU threads: one thread against all of them, at a small and a large batch."""

from __future__ import annotations

from build_hooks import stats
from build_hooks.dataset import Dataset
from build_hooks.page import fact, section
from build_hooks.render import first_with, medians_table, times

GROUP = "threads"


@section
def threads(data: Dataset) -> str:
    return medians_table(data, GROUP, [("batch", "batch"), ("width", "width"), ("threads", "threads")])


@fact
def threads_summary(data: Dataset) -> str:
    took = {(b["params"]["batch"], b["params"]["threads"]): b["stats"]
            for b in first_with(data, GROUP).measured(GROUP)}
    most = max(t for _, t in took)
    if most == 1:
        return "This machine has a single thread to offer, so there is nothing to compare."
    parts = []
    for batch in sorted({b for b, _ in took}):
        one, all_ = took[(batch, 1)], took[(batch, most)]
        verdict = {1: f"{most} threads were {times(one['median'] / all_['median'])} faster",
                   -1: f"one thread was {times(all_['median'] / one['median'])} faster",
                   0: "one thread and all of them took the same time within the measurements' spread"
                   }[stats.compare_points(one, all_)]
        parts.append(f"at batch {batch}, {verdict}")
    return "; ".join(parts) + "."
