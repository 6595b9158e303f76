"""How far to trust the numbers: the conditions each run had, and what a re-run changes."""

from __future__ import annotations

import statistics

from build_hooks import analysis, conditions, consistency, forecast, gate, stats
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import DEVICE_NAME, Html, html, join, machine_label, missing, more_machines, note, table


def _percent(value: float | None) -> str:
    return "not recorded" if value is None else f"{100 * value:.0f}%"


def _drift(readings: list[float] | None) -> str:
    """How far a canary moved over an experiment's rounds: max / min − 1."""
    if not readings:
        return "not recorded"
    moved = conditions.drift(readings)
    return "one reading" if moved is None else f"{100 * (moved - 1):.0f}%"


@section
def machine_trust(data: Dataset) -> Html:
    """About the data's first table: per machine, how much to lean on its numbers, from its recorded conditions: the
    share of rounds begun slow, the experiments its time box cut short, and its largest canary drift."""
    rows = []
    for m in data.machines:
        recorded = [meta["conditions"] for meta in m.doc["experiments"].values() if meta.get("conditions")]
        short, _ = gate.time_box_cuts(m.doc)
        drifts = [moved for c in recorded for readings in c.get("canaries", {}).values()
                  if (moved := conditions.drift(readings)) is not None]
        slow = gate.slow_start_share(m.doc)
        rows.append([m.label, html("{}, {}", m.origin, m.doc["datetime"][:10]), _percent(slow),
                     f"{short} of {len(recorded)}" if recorded else "not recorded",
                     f"{100 * (max(drifts) - 1):.0f}%" if drifts else "not recorded"])
    if not rows:
        return missing("No results files were found.")
    return table(["machine", "source", "rounds begun slow", "experiments the time box cut short",
                  "largest canary drift"], rows, caption="How much to lean on each machine") + note(
        f"Begun slow: a short check task, timed as a round began, took over {gate.SLOW_STATE_RATIO:g}× its best. "
        "Cut short: the experiment ran fewer rounds than planned. Canary drift: its slowest check over its fastest, "
        "minus one; thousands of percent mean a stall. The more of each, the less to lean on that machine's numbers.")


@section
def measurement_conditions(data: Dataset) -> Html:
    """Per machine and experiment: rounds, canary drift, other processes' CPU use, steal, load."""
    machines = [m for m in data.shown() if any("conditions" in meta for meta in m.doc["experiments"].values())]
    if not machines:
        return missing("No results file in this build records its measuring conditions "
                       "(files measured before this was recorded).")
    parts = []
    for m in machines:
        rows = []
        for name, meta in sorted(m.doc["experiments"].items()):
            measured_under = meta.get("conditions")
            if not measured_under:
                continue
            canaries = measured_under.get("canaries", {"one_thread": measured_under["canary_s"]})
            loaded = sum(1 for b in m.measured(name) if b["extra_info"].get("under_load"))
            load = measured_under.get("load_before")
            gated = ([measured_under["remeasured"], measured_under["unsettled"], f"{measured_under['waited_s']:.1f} s"]
                     if "remeasured" in measured_under else ["not recorded"] * 3)
            planned = measured_under.get("planned_rounds")
            rounds = (f"{measured_under['rounds']} of {planned}" if planned and planned != measured_under["rounds"]
                      else measured_under["rounds"])
            box = measured_under.get("time_box_s")
            rows.append([name, rounds, f"{box:g} s" if box else "none recorded"]
                        + [_drift(canaries.get(kind)) for kind in ("one_thread", "all_threads", "memory")]
                        + gated + [_percent(measured_under.get("foreign_cpu")), _percent(measured_under.get("steal")),
                           f"{load[0]:.2f}" if load else "not recorded", loaded])
        short, _ = gate.time_box_cuts(m.doc)
        # Rounds cut by a time box weaken every comparison on that machine: said above its table, not only in it.
        cut = (html("<p>The time box ran out: {} of its {} experiments ran fewer rounds than planned.</p>", short,
                    len(rows)) if short else "")
        parts.append(machine_label(m) + cut + table(
            ["experiment", "rounds (of planned)", "time box", "one-core canary drift", "all-thread canary drift",
             "memory canary drift",
             "rounds re-measured", "points unsettled", "time added", "CPU used by other processes", "steal",
             "load average before", "points under load"], rows))
    return join(parts, "\n") + more_machines(data) + note(
        f"Time box: an experiment always runs its first {forecast.MIN_ROUNDS_IN_BOX} rounds (a one-round experiment, "
        "its one). After them, it starts "
        "a round only if it should end inside its box, and re-measures nothing once the box is spent. So an "
        "experiment can run past its box. Canary drift: the slowest reading over the fastest, minus one. So 100% means "
        "one reading took twice as long as another, and a drift of thousands of percent means a stall.") + note(
                                    "A point is marked under load when other processes used more than "
                                    f"{100 * conditions.FOREIGN_CPU_LIMIT:.0f}% of the CPU while it was measured.")


@section
def unsettled_points(data: Dataset) -> Html:
    """Per machine: every point whose rounds still disagreed, and which canary moved under it."""
    parts = []
    for m in data.shown():
        rows = []
        for name, meta in sorted(m.doc["experiments"].items()):
            for b in m.measured(name):
                if not b["extra_info"].get("unsettled"):
                    continue
                medians = b["stats"].get("round_medians") or []
                spread = f"{max(medians) / min(medians):.1f}×" if medians else "not recorded"
                point = ", ".join(f"{k} {v}" for k, v in b["params"].items())
                rows.append([name, point, spread, gate.what_moved(b, meta.get("conditions") or {})])
        if rows:
            # The machine names the table in its caption: a bare name in a paragraph reads as a sentence.
            parts.append(table(["experiment", "point", "slowest round over fastest", "what the canaries saw"], rows,
                               caption=m.label))
    if not parts:
        return missing("No point in this build is marked §: every point's rounds agreed, or were "
                       "re-measured until they did.")
    return join(parts, "\n") + more_machines(data)


@section
def run_to_run(data: Dataset) -> Html:
    """How much a re-measurement of the same machine moved the medians, per experiment."""
    host = data.host
    if host is None or host.id not in data.earlier:
        return missing("This build has no earlier measurement of its own machine to compare with: the "
                       "comparison appears when a machine whose results are committed in results/ "
                       "measures itself again.")
    earlier = data.earlier[host.id]
    if earlier.doc["datetime"] == host.doc["datetime"]:
        return missing(f"The committed {earlier.source} is this build's own measurement (the same "
                       "run), so there is nothing to compare yet: the comparison appears when this machine "
                       "measures itself again.")
    return _ratios(host, earlier)


def _ratios(now: Machine, before: Machine) -> Html:
    rows = []
    for name in sorted(set(now.doc["experiments"]) & set(before.doc["experiments"])):
        earlier = {b["name"]: b["stats"]["median"] for b in before.measured(name)}
        ratios = [b["stats"]["median"] / earlier[b["name"]] for b in now.measured(name)
                  if b["name"] in earlier and earlier[b["name"]] > 0]
        if not ratios:
            continue
        moved = sum(1 for r in ratios if stats.compare(r, 1.0) != 0)
        rows.append([name, len(ratios), f"{statistics.median(ratios):.2f}",
                     f"{min(ratios):.2f} to {max(ratios):.2f}", moved])
    if not rows:
        return missing("The two measurements share no points.")
    return (html("<p>This build ({}) against {} ({}): the ratio of each point's median, now over before.</p>",
                 now.doc["datetime"][:10], before.source, before.doc["datetime"][:10])
            + table(["experiment", "points", "median ratio", "range", "points that moved by more than "
                     f"{100 * (stats.MEANINGFUL_RATIO - 1):.0f}%"], rows))


@fact
def min_samples(data: Dataset) -> str:
    """The fewest samples whose spread a table quotes (stats.MIN_SAMPLES; a setting, not a measurement)."""
    return f"{stats.MIN_SAMPLES}"


@fact
def meaningful_ratio(data: Dataset) -> str:
    """The smallest ratio a sentence calls a difference (a setting, not a measurement)."""
    return f"{stats.MEANINGFUL_RATIO:g}"


@section
def consistency_checks(data: Dataset) -> Html:
    """Per machine: where two experiments timed one configuration, how often they agree."""
    parts = []
    for m in data.shown():
        rows = []
        for device in m.devices(analysis.STEP):
            found = consistency.checks(m, device)
            for kind, words in consistency.KINDS.items():
                of_kind = [c for c in found if c.kind == kind]
                if not of_kind:
                    continue
                off = [c for c in of_kind if not c.agrees]
                ratios = [c.ratio for c in of_kind]
                rows.append([words, DEVICE_NAME[device], len(of_kind), f"{len(of_kind) - len(off)} of {len(of_kind)}",
                             f"{min(ratios):.2g} to {max(ratios):.2g}",
                             ", ".join(f"batch {c.batch}, width {c.width} ({c.ratio:.2f})" for c in off) or "none"])
        if rows:
            parts.append(table(["what is compared", "device", "configurations", "consistent (rule below)",
                                "ratio range", "inconsistent (ratio)"], rows, caption=m.label))
    if not parts:
        return missing("No machine in this build timed a configuration in two experiments.")
    return join(parts, "\n") + more_machines(data) + note(
        "Ratios are the training step's time over the other experiment's view of the same step. For the "
        "matrix products, the ratio is the step's FLOP rate over the fastest square product's. Two views count as "
        "consistent within "
        f"{consistency.TOLERANCE:g}× either way, except for epochs. An epoch also slices batches, runs "
        f"Python's loop and reads fresh rows, so it may cost up to {consistency.EPOCH_EXTRA_LIMIT:g}× the step "
        f"alone. But a step alone more than {consistency.TOLERANCE:g}× slower than its share of an epoch is a "
        "contradiction. So is a step alone faster than the fastest matrix product allows. On a GPU, a step alone "
        f"may take up to {consistency.GPU_OVERLAP_LIMIT:g}× its share of an epoch. That wider allowance is a "
        "judgement, not a law: both experiments run steps back to back, but a GPU step that waits on its host "
        "moves with the host's state, met at different moments. A disagreeing step "
        "is marked in the "
        "training-step table on Why batch size matters and kept out of the cost model's fit.")


@fact
def gate_rule(data: Dataset) -> str:
    """The rule every experiment follows when the machine changes state (settings, not measurements)."""
    return (f"before each point the all-thread canary is read. A reading more than "
            f"{gate.SLOW_STATE_RATIO:g}× the fastest of the run means a slow state, and the point waits up to "
            f"{gate.WAIT_FOR_STEADY_S:g} s for it to pass. After the rounds, a round more than "
            f"{gate.ROUND_SPREAD_LIMIT:g}× slower than the point's fastest round is measured again, up to "
            f"{gate.REMEASURE_ATTEMPTS} times, worst points first. (A slow state only adds time.) It is measured "
            f"again in place, so it stays paired by its index. Waiting may add {100 * gate.WAIT_TIME_SHARE:.0f}% "
            f"to an experiment's time and re-measuring {100 * gate.EXTRA_TIME_SHARE:.0f}%, at least "
            f"{gate.MIN_EXTRA_S:g} s each. Both limits are checked before a wait or a round starts, so the last "
            "one can run past its box. A point whose rounds still disagree is marked §")
