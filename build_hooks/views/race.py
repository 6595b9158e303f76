"""The race page: measured epoch times baked in as inert JSON, and the same numbers as a table."""

from __future__ import annotations

from build_hooks import gpu_estimate, plots, race, stats, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import MissingData, fact, section
from build_hooks.render import Html, figure, missing, multiple, si

PREFERRED_WIDTH = 32  # the small network the lessons use, when it was measured


@section
def race_data(data: Dataset) -> Html:
    """The race's epoch times, every lane, as the inert JSON script element the race page reads."""
    return race.data_script(data)


@section
def race_table(data: Dataset) -> Html:
    """The race's epoch times as a table that needs no JavaScript, or a note that there are none."""
    return race.static_table(data)


@section
def race_chart_static(data: Dataset) -> Html:
    """The race chart as a static figure (no JavaScript needed): every lane's epoch time by batch at
    the small width, GPU lanes dashed and estimates dotted."""
    race_data = race.race_data(data)
    widths = race_data["widths"]
    if not race_data["lanes"]:
        return missing("No epoch times have been measured yet.")
    width = str(PREFERRED_WIDTH if PREFERRED_WIDTH in widths else widths[0])
    series = []
    for lane in race_data["lanes"]:
        epochs = lane["epochs"].get(width, {})
        batches = sorted(int(b) for b in epochs)
        if batches:
            style = ":" if lane["estimate"] else "--" if lane["kind"] == "GPU" else "-"
            # Plain text, not a placeholder: matplotlib draws a label as glyphs (and escapes what it writes).
            name = lane["label"] + (" (estimate)" if lane["estimate"] else "")
            series.append(plots.Series(name, batches, [epochs[str(b)]["seconds"] for b in batches], style))
    svg = plots.line_panels([{"series": series, "xlabel": "batch size (samples)", "ylabel": "epoch time (s)",
                              "subtitle": "Lower is better"}],
                            title=f"One epoch per lane at width {width}",
                            alt=f"Epoch time against batch size at width {width} for every lane of the race, "
                                "log scales; the tables below have the numbers.", size=(4.4, 3.4), legend_columns=1)
    return figure(svg, f"The race's epochs at width {width}, drawn when the site was built (solid: CPU, "
                       "dashed: GPU, dotted: an estimate, not a measurement). The tables below give every width.")


def _lane_name(lane: dict) -> str:
    return untrusted.placeholder(lane["label"]) + (" (estimate)" if lane["estimate"] else "")


def _verdict(data: Dataset, which: str) -> str:
    """Who finishes an epoch first at the smallest or largest raced batch, at the small width: the
    fastest CPU lane against the fastest GPU lane (an estimated GPU against its own host's CPU), or
    the two fastest lanes when only one kind raced."""
    race_data = race.race_data(data)
    if not race_data["lanes"]:
        raise MissingData("no epoch times to race")
    widths = race_data["widths"]
    width = str(PREFERRED_WIDTH if PREFERRED_WIDTH in widths else widths[0])
    lanes = [lane for lane in race_data["lanes"] if width in lane["epochs"]]
    batches = sorted({int(b) for lane in lanes for b in lane["epochs"][width]})
    batch = str(batches[0] if which == "smallest" else batches[-1])
    timed = sorted(((lane["epochs"][width][batch], lane) for lane in lanes
                    if batch in lane["epochs"][width]), key=lambda pair: pair[0]["seconds"])
    where = f"at batch {batch} and width {width}"
    if len(timed) == 1:
        point, lane = timed[0]
        return f"{where}, {_lane_name(lane)} takes {si(point['seconds'], 's')} per epoch; no other device was raced"
    # The race is CPU against GPU: the fastest lane of each kind, when both kinds raced. An estimated
    # GPU issues its operations at its own host's pace, so it meets that host's CPU, not another's.
    gpu = next((pair for pair in timed if pair[1]["kind"] == "GPU"), None)
    same_host = gpu is not None and gpu[1]["estimate"]
    cpu = next((pair for pair in timed if pair[1]["kind"] == "CPU"
                and (not same_host or pair[1]["machine_id"] == gpu[1]["machine_id"])), None)
    contenders = sorted([cpu, gpu], key=lambda pair: pair[0]["seconds"]) if cpu and gpu else timed
    (first, winner), (second, runner_up) = contenders[0], contenders[1]
    if cpu and gpu:
        where += (", the estimated GPU against the CPU of the host it is modelled on" if same_host
                  else ", the fastest CPU lane against the fastest GPU lane")
    fast, slow = first["seconds"], second["seconds"]
    if stats.compare_points(race.point_stats(second), race.point_stats(first)) == 0:
        error = (f" and the estimate's stated uncertainty ({gpu_estimate.UNCERTAINTY:g}× either way)"
                 if winner["estimate"] or runner_up["estimate"] else "")
        # A tie names the two lanes in a fixed order: which was a hair faster is noise.
        (one, one_lane), (other, other_lane) = sorted(((first, winner), (second, runner_up)),
                                                      key=lambda pair: pair[1]["label"])
        return (f"{where}, {_lane_name(one_lane)} takes {si(one['seconds'], 's')} per epoch and "
                f"{_lane_name(other_lane)} {si(other['seconds'], 's')}: {multiple(slow / fast)} apart, a gap inside "
                f"the measurements' spread{error}, too close to name a winner")
    uncertain = (f"; the estimate is uncertain by {gpu_estimate.UNCERTAINTY:g}× either way, and the lead "
                 "is beyond that" if winner["estimate"] or runner_up["estimate"] else "")
    return (f"{where}, {_lane_name(winner)} finishes first, {multiple(slow / fast)} ahead of "
            f"{_lane_name(runner_up)} ({si(fast, 's')} against {si(slow, 's')}{uncertain})")


@fact
def race_smallest_batch(data: Dataset) -> str:
    """A sentence: who finishes an epoch first at the smallest raced batch (or a tie), at the
    small width."""
    return _verdict(data, "smallest")


@fact
def race_largest_batch(data: Dataset) -> str:
    """A sentence: who finishes an epoch first at the largest raced batch (or a tie), at the
    small width."""
    return _verdict(data, "largest")


def _estimate_trails(lanes: list[dict]) -> str:
    """Where another machine's CPU lane beats the estimated GPU by more than the estimate's stated
    uncertainty: the estimate issues operations at its own host's pace, which a faster host beats."""
    estimate = next(lane for lane in lanes if lane["estimate"])
    beaten = []
    for lane in lanes:
        if lane["kind"] != "CPU" or lane["estimate"] or lane["machine_id"] == estimate["machine_id"]:
            continue
        for width, by_batch in estimate["epochs"].items():
            for batch, modelled in by_batch.items():
                theirs = lane["epochs"].get(width, {}).get(batch)
                if theirs and theirs["q3"] * gpu_estimate.UNCERTAINTY < modelled["seconds"]:
                    beaten.append((int(width), int(batch), lane))
    if not beaten:
        return ""
    width, batch, lane = min(beaten, key=lambda b: (b[1], b[0]))
    return (f". At some sizes (the smallest: batch {batch}, width {width}) another machine's CPU lane "
            f"({untrusted.placeholder(lane['label'])}) finishes an epoch more than {gpu_estimate.UNCERTAINTY:g}× "
            "sooner than the estimated GPU: the estimate issues its operations at this build host's measured pace, "
            "and a faster host would drive the same GPU faster")


@fact
def race_lanes_kind(data: Dataset) -> str:
    """What the lanes are: all measured, or measured CPU with an estimated GPU."""
    lanes = race.race_data(data)["lanes"]
    if any(lane["estimate"] for lane in lanes):
        return ("The CPU lanes replay this build's measured epochs; this build measured no GPU, so the "
                "GPU lane is an unvalidated estimate from its datasheet and this host's own per-operation "
                f"cost, uncertain by {gpu_estimate.UNCERTAINTY:g}× either way, and labelled as one everywhere"
                + _estimate_trails(lanes))
    if not lanes:
        return "No epoch times were measured in this build"
    return "Every lane replays an epoch this build measured; nothing here is estimated"
