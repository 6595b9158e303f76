"""When the CPU is right: a batch-size rule from this build's data (measured GPU, else the estimate)."""

from __future__ import annotations

from build_hooks import analysis, race, stats, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import fact, section
from build_hooks.render import (
    MARKS,
    SITE_ROOT,
    Html,
    MissingData,
    html,
    listing,
    marks,
    marks_note,
    mostly_slow,
    note,
    table,
)


def _lanes(data: Dataset) -> tuple[dict, list[dict]]:
    """The race's GPU lane and its CPU lanes, the GPU's own host's first."""
    lanes = race.race_data(data)["lanes"]
    gpu = next((lane for lane in lanes if lane["kind"] == "GPU"), None)
    cpus = sorted((lane for lane in lanes if lane["kind"] == "CPU"),
                  key=lambda lane: gpu is None or lane["machine_id"] != gpu["machine_id"])
    if gpu is None or not cpus or cpus[0]["machine_id"] != gpu["machine_id"]:
        raise MissingData("no GPU epochs, measured or estimated, beside a CPU's")
    return gpu, cpus


@fact
def cpu_choice_rule(data: Dataset) -> str:
    """What the rule's table compares: the race's GPU lane, measured or estimated (with the
    estimate's caveats), against each CPU lane, leads counted only beyond the spread."""
    gpu, cpus = _lanes(data)
    text = (f"the table gives the batch from which "
            f"the {untrusted.placeholder(gpu['label'])}{' (estimated)' if gpu['estimate'] else ''} finishes an "
            f"epoch first beyond the spread and stays ahead. It gives one for each of {len(cpus)} "
            f"CPU{'s' if len(cpus) != 1 else ''}, comparing epochs as the race does")
    if not gpu["estimate"]:
        return text
    bound, raced = race.host_bound_sizes(data, gpu)
    # Three short sentences (#39): what the GPU is, what a row then means, what would move it.
    meaning = ("So a row marks where that CPU's epoch outgrows the time the build host needs to send the GPU its work"
               if bound == raced else "Where the host is the bound, a row compares that CPU with the build host's pace")
    return (text + ". That GPU is an estimate driven by the build host (Predicting a step). "
            f"{meaning}. A faster host would move the GPU's batches down")


@section
def cpu_choice_table(data: Dataset) -> Html:
    """Per CPU lane (the GPU's own host first) and width: the batch from which the GPU lane leads."""
    gpu, cpus = _lanes(data)
    widths = sorted({int(w) for cpu in cpus for w in cpu["epochs"]} & {int(w) for w in gpu["epochs"]})
    # A lane from a machine that began most rounds slow carries ° by its name, keyed under the table.
    slow = {m.id for m in data.machines if mostly_slow(m)}

    def mark(lane: dict) -> Html:
        return marks(["slow"]) if lane["machine_id"] in slow and not lane["estimate"] else Html("")
    rows = [[html("{}{}{}", cpu["label"], mark(cpu),
                  ((" (the estimate's host)" if gpu["estimate"] else " (the GPU's host)") if i == 0 else ""))]
            + [_crossover_words(cpu, gpu, width) for width in widths] for i, cpu in enumerate(cpus)]
    caption = html("Where the {}{}{} pulls ahead of each CPU, by whole epochs (a single step can cross at another "
                   "batch)", gpu["label"], mark(gpu), " (estimated)" if gpu["estimate"] else "")
    changed = {"unsettled"} if any(MARKS["unsettled"][0] in str(cell) for row in rows for cell in row[1:]) else set()
    keyed = marks_note(({"slow"} if any(str(mark(lane)) for lane in [gpu, *cpus]) else set()) | changed)
    # Rows across machines compare runs apart in time and software: said once, under the table.
    apart = note(html('Each other row is another machine, run at another time, with its own library versions '
                      '(<a href="{}gallery/">gallery</a>).', Html(SITE_ROOT))) if len(cpus) > 1 else Html("")
    return (table(["CPU lane"] + [f"width {w}" for w in widths], rows, caption=caption) + keyed + apart
            + _gpu_lane_doubts(gpu))


def _gpu_lane_doubts(gpu: dict) -> Html:
    """What weakens every cell at once: the GPU lane's epochs all resting on too few samples (its marks are not in
    the cells, which name batches, not times). Nothing where they do not."""
    points = [point for epochs in gpu["epochs"].values() for point in epochs.values()]
    if gpu["estimate"] or not points or not all("few" in p.get("caveats", []) for p in points):
        return Html("")
    return note(f"Every epoch of the GPU lane rests on fewer than {stats.MIN_SAMPLES} samples, so a rerun may move "
                "a crossover by a batch step.")


@fact
def cpu_choice_answer(data: Dataset) -> str:
    """The page's answer first, from its table: the widths where the GPU lane stayed ahead of no CPU lane, and at the
    others the range of batches from which it pulled ahead, over every CPU."""
    gpu, cpus = _lanes(data)
    widths = sorted({int(w) for cpu in cpus for w in cpu["epochs"]} & {int(w) for w in gpu["epochs"]})
    never, ranges, largest = [], [], 0
    for width in widths:
        found = [_crossover_batch(cpu, gpu, width) for cpu in cpus]
        largest = max([largest] + [max(batches) for _, batches in found if batches])
        crossings = [batch for batch, batches in found if batches and batch is not None]
        if not crossings:
            never.append(str(width))
        else:
            low, high = min(crossings), max(crossings)
            span = f"{low}" if low == high else f"between {low} and {high}"
            ranges.append(f"{span} at width {width}" + ("" if len(crossings) == len(cpus) else
                                                      f" (against {len(crossings)} of the {len(cpus)} CPUs)"))
    gpu_name = untrusted.placeholder(gpu["label"]) + (" (estimated)" if gpu["estimate"] else "")
    said = []
    # How wide the CPUs were, said beside their count: a 2-thread slice is not a server (#39 read).
    threads = sorted({m.cpu["threads_used"] for m in data.machines if m.id in {c["machine_id"] for c in cpus}})
    width_words = (f" ({threads[0]} threads)" if len(threads) == 1 else f" ({threads[0]} to {threads[-1]} threads)"
                   if threads else "")
    if never:
        # One negative, plainly (#39 read: "never stayed ahead of any" took two readings).
        # Said from the GPU's side, as a reader asks it (#39 read: "fell behind for good" was hard going).
        said.append(f"with a hidden layer of width {' or '.join(never)}, the {gpu_name} never stayed ahead "
                    f"of any of the {len(cpus)} CPUs{width_words}, up to batch {largest}")
    if ranges:
        # Two short sentences: that it pulled ahead, then from which batch (where the lead begins, not a range).
        who = "With a wider layer, it" if never else f"The {gpu_name}"
        said.append(f"{who} pulled ahead from a batch that depends on the CPU. That batch is {listing(ranges)}"
                    if len(cpus) > 1 else f"{who} pulled ahead from batch {listing(ranges)}")
    if not said:
        raise MissingData("no epochs to compare")
    # Whole epochs, said: the gallery's crossovers are per step and can fall at other batches.
    rough = (". Each GPU epoch rests on too few timed runs, so read these batches as rough"
             if not gpu["estimate"] and race.all_points_have(gpu, "few") else "")
    return "Measured here in whole epochs, " + ". ".join(said) + rough


def _crossover_batch(cpu: dict, gpu: dict, width: int) -> tuple[int | None, list[int]]:
    """(the batch from which the GPU lane's epoch is ahead of the CPU lane's at `width` and stays so, or None; the
    batches both timed)."""
    ours, theirs = cpu["epochs"].get(str(width), {}), gpu["epochs"].get(str(width), {})
    batches = sorted(int(b) for b in set(ours) & set(theirs))
    if not batches:
        return None, []
    # "Ahead" only beyond both spreads (and an estimate's error), so a near-tie is no crossover.
    return analysis.crossover(analysis.verdicts({b: race.point_stats(ours[str(b)]) for b in batches},
                                                {b: race.point_stats(theirs[str(b)]) for b in batches})), batches


def _crossover_words(cpu: dict, gpu: dict, width: int) -> str:
    """Where the GPU lane's epoch gets ahead of the CPU lane's at `width` and stays so, in words."""
    batch, batches = _crossover_batch(cpu, gpu, width)
    if not batches:
        return "not measured"
    if batch is None:
        return f"not ahead by batch {max(batches)}"
    # The crossing's own epochs keep their changed-state mark (§): a learner reads this cell without the grid.
    changed = _changed_at(cpu, gpu, width, batch)
    if batch == min(batches):
        return f"from batch {batch}{changed}, the smallest"
    return f"from batch {batch}{changed}"  # the batch alone: "64 (tens)" read as a contradiction (#39 read)


def _changed_at(cpu: dict, gpu: dict, width: int, batch: int) -> str:
    """§ where either lane's epoch at that setting was timed while its machine changed state, else nothing."""
    points = [lane["epochs"].get(str(width), {}).get(str(batch), {}) for lane in (cpu, gpu)]
    return MARKS["unsettled"][0] if any("unsettled" in p.get("caveats", []) for p in points) else ""
