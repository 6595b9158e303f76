"""The race's data: measured epoch times per lane, width and batch, baked into the page.

A lane is one device of one machine. Its numbers are medians from the epoch_time
experiment. The "regime" of each point comes from the same epochs, each divided by its
steps, so a lane's note describes the run it replays: when a step of B samples costs
less than twice a step of one sample, fixed costs dominate; otherwise the work does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from build_hooks import analysis, experiments, gpu_estimate, render, stats, store
from build_hooks.dataset import GPU_DEVICES, MERGED_FORMAT, VECTOR_UNITS, Dataset, Machine, is_gpu

EPOCH = "epoch_time"
FIXED_COST_RATIO = 2.0

# "Race your browser" (docs/javascripts/browser-race.js) trains the same model in TensorFlow.js:
# its shape comes from snippets/training_step.py's declarations; its SGD learning rate is an
# argument inside make_model, so it is stated here (a test keeps it equal).
BROWSER_LEARNING_RATE = 0.01
BROWSER_BUDGET_S = {"full": 60, "quick": 20}  # the whole sweep's time box: fewer rounds, never longer
BROWSER_ROUNDS = (3, 5)  # at least, at most: each round times every batch once on each backend, alternating


def _per_step(point: dict) -> dict:
    """An epoch point's median and quartiles divided by its steps: the time of one of its steps."""
    steps = _steps(point, point["batch"])
    return {key: point[key] / steps for key in ("median", "q1", "q3")}


def _epoch_regimes(by_batch: dict[int, dict]) -> dict[int, dict | None]:
    """Each batch's regime from the epochs themselves (#39 review: a note taken from the separate step experiment
    could contradict the lane it sat under). 'Same' unless the batch-B step is slower beyond both points' spread:
    a noisy 1-sample epoch must not make a bigger step look cheaper than a single sample."""
    if 1 not in by_batch:
        return dict.fromkeys(by_batch)
    one = _per_step(by_batch[1])
    regimes = {}
    for batch, point in by_batch.items():
        here = _per_step(point)
        regimes[batch] = _regime_of(here["median"] / one["median"], stats.compare_points(here, one) <= 0)
    return regimes


def _regime_of(ratio: float, same: bool | None = None) -> dict:
    """How a batch-B step compares with a 1-sample step; 'same' when within the meaningful ratio."""
    return {"ratio": ratio, "kind": "fixed" if ratio < FIXED_COST_RATIO else "throughput",
            "same": stats.compare(ratio, 1.0) <= 0 if same is None else same}


def point_stats(point: dict) -> dict:
    """A lane's epoch point in the shape stats.compare_points reads."""
    return {"median": point["seconds"], "q1": point["q1"], "q3": point["q3"]}


def versus(a: dict, b: dict) -> tuple[int, float]:
    """Lane point `a` against `b`: +1 slower, -1 faster beyond both spreads (an estimate's being its
    stated uncertainty), 0 level; and the larger epoch time over the smaller."""
    return (stats.compare_points(point_stats(a), point_stats(b)),
            max(a["seconds"], b["seconds"]) / min(a["seconds"], b["seconds"]))


def matchup(race: dict, width: str, batch: str) -> dict | None:
    """The race's one pairing at a size, as a value: the fastest GPU lane against the CPU of its own machine (an
    estimated GPU's is the host it is modelled on), and who leads beyond both spreads (an estimate's spread is its
    stated band). None when either has no point there. A GPU meets its own machine's CPU: that is the choice a
    reader with that machine makes, and one pairing per GPU keeps the grid to one question.

    leader is "GPU", "CPU" or "level"; ratio is the slower epoch over the faster; narrow marks a lead whose spreads
    (an estimate's band) clear each other by less than the meaningful ratio: real, but a small change would undo it."""
    timed = sorted(((lane["epochs"][width][batch], lane) for lane in race["lanes"]
                    if batch in lane["epochs"].get(width, {})), key=lambda pair: pair[0]["seconds"])
    gpu = next((pair for pair in timed if pair[1]["kind"] == "GPU"), None)
    if gpu is None:
        return None
    cpu = next((pair for pair in timed if pair[1]["kind"] == "CPU" and pair[1]["machine_id"] == gpu[1]["machine_id"]),
               None)
    if cpu is None:
        return None
    ahead, ratio = versus(gpu[0], cpu[0])
    faster, slower = (gpu[0], cpu[0]) if ahead < 0 else (cpu[0], gpu[0])
    loser, winner = (cpu, gpu) if ahead < 0 else (gpu, cpu)
    # Narrow is judged against the loser's faster epoch at half the batch too, where it slowed (longer_than_half):
    # a lead that barely clears that time is no firmer than it.
    half = loser[1]["epochs"][width].get(str(int(batch) // 2)) if ahead and longer_than_half(loser[1], width,
                                                                                               batch) else None
    narrow = ahead != 0 and (slower["q1"] < stats.MEANINGFUL_RATIO * faster["q3"]
                             or (half is not None and half["q1"] < stats.MEANINGFUL_RATIO * faster["q3"]))
    return {"leader": "GPU" if ahead < 0 else "CPU" if ahead > 0 else "level", "ratio": ratio, "narrow": narrow,
            "out_of_line": ahead != 0 and out_of_line(loser[1], width, batch, winner[0]["seconds"]),
            "against_half": against_half(loser[1], width, batch, winner[0]["seconds"]) if ahead else None,
            "gpu": gpu[1], "cpu": cpu[1], "estimate": gpu[1]["estimate"]}


def against_half(lane: dict, width: str, batch: str, rival: float) -> float | None:
    """The lead against the loser's own epoch at half the batch, where that epoch was meaningfully faster: the lead
    the loser would have faced had it not slowed. A sentence that quotes the lead says both (the grid's
    out_of_line marks those where even the direction would change)."""
    half = lane["epochs"][width].get(str(int(batch) // 2))
    if half is None or lane["epochs"][width][batch]["seconds"] <= stats.MEANINGFUL_RATIO * half["seconds"]:
        return None
    return half["seconds"] / rival


def longer_than_half(lane: dict, width: str, batch: str) -> bool:
    """Whether a lane's epoch took longer than its own epoch at half the batch (beyond the meaningful ratio): twice
    the batch means half the steps, so the longer one is out of line with its neighbour."""
    half = lane["epochs"][width].get(str(int(batch) // 2))
    return half is not None and lane["epochs"][width][batch]["seconds"] > stats.MEANINGFUL_RATIO * half["seconds"]


LONGER_MARK = ("↑", "longer than at half the batch")
LONGER_WORDS = ("Longer than at half the batch (↑): twice the batch means half the steps, so a longer epoch is "
                "unexpected. A slower kernel at that size or a slowed machine can cause it; this data cannot tell.")


def at_double_pace(lane: dict, width: str, batch: str) -> float | None:
    """A lane's epoch priced at its own step time at twice the batch, where that step was quicker beyond the
    meaningful ratio; else None. A step of twice the samples does more work, so a slower smaller step is out of line
    with that neighbour (the training step's rule, analysis.out_of_line_steps, applied to the replayed epochs)."""
    double = lane["epochs"][width].get(str(2 * int(batch)))
    if double is None:
        return None
    here = lane["epochs"][width][batch]
    paced = double["seconds"] / _steps(double, 2 * int(batch)) * _steps(here, int(batch))
    return paced if here["seconds"] > stats.MEANINGFUL_RATIO * paced else None


def _steps(point: dict, batch: int) -> int:
    """An epoch point's step count (a compact point leaves it out: its rows over the batch, rounded up)."""
    return point.get("steps") or -(-point["rows"] // batch)


def out_of_line(lane: dict, width: str, batch: str, rival: float) -> bool:
    """Whether a lane's lost epoch is out of line with a neighbour, so the rival's lead (`rival`: its epoch in
    seconds) would not clear the neighbour's time by the meaningful ratio. Either neighbour: its own epoch at half the
    batch was faster (longer_than_half: twice the batch halves the steps for the same samples), or its steps at twice
    the batch were quicker (at_double_pace). Either suggests the machine slowed while it ran, or a slow code path at
    that one size: the spread of one point cannot show it. race.js applies the same rule."""
    half = lane["epochs"][width].get(str(int(batch) // 2))
    paced = at_double_pace(lane, width, batch)
    return ((longer_than_half(lane, width, batch) and half["seconds"] < stats.MEANINGFUL_RATIO * rival)
            or (paced is not None and paced < stats.MEANINGFUL_RATIO * rival))


def verdicts(race: dict) -> dict[tuple[int, int], dict]:
    """Every (width, batch) the race can pair a CPU and a GPU at, with its matchup."""
    found = {}
    for width in race["widths"]:
        for batch in race["batches"]:
            pairing = matchup(race, str(width), str(batch))
            if pairing is not None:
                found[(width, batch)] = pairing
    return found


# A lane's look, by its place among the lanes: the same in race.js (DASHES) and crossover.css
# (.race-chart__line--s0 ...), so the chart drawn without JavaScript matches the live one.
LANE_COLOURS = ["#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#8C8C8C"]
LANE_DASHES = ["", "7 3", "2 3", "9 3 2 3", "4 4", "1 2", "12 3", "6 2 1 2", "3 6", "10 2 2 2 2 2", "5 2 5 6", "1 4"]


def lane_style(index: int) -> tuple[str, str, tuple[float, ...]]:
    """(letter, colour, dash pattern) of the lane at this place, as the live race draws it."""
    dashes = tuple(float(x) for x in LANE_DASHES[index % len(LANE_DASHES)].split())
    return chr(65 + index % 26), LANE_COLOURS[index % len(LANE_COLOURS)], dashes


def _lane(index: int, machine: Machine, device: str) -> dict:
    by_width: dict[int, dict[int, dict]] = {}
    for bench in machine.measured(EPOCH, device=device):
        width, batch = bench["params"]["width"], bench["params"]["batch"]
        by_width.setdefault(width, {})[batch] = {
            "median": bench["stats"]["median"], "q1": bench["stats"]["q1"], "q3": bench["stats"]["q3"],
            "steps": bench["extra_info"].get("steps"), "rows": bench["params"]["rows"], "batch": batch,
            "caveats": stats.caveats(bench["stats"], bench["extra_info"])}
    epochs: dict[str, dict[str, dict]] = {}
    for width, by_batch in by_width.items():
        regimes = _epoch_regimes(by_batch)
        epochs[str(width)] = {str(batch): {"seconds": p["median"], "q1": p["q1"], "q3": p["q3"], "steps": p["steps"],
                                           "rows": p["rows"], "caveats": p["caveats"], "regime": regimes[batch]}
                              for batch, p in by_batch.items()}
    return {
        "id": f"lane-{index}",
        "machine": machine.label,
        "machine_id": machine.id,
        "device": device,
        "label": machine.device_label(device),
        # For sentences: a CPU in a few words ("the 16-thread Intel Xeon CPU"); the full label stays in tables.
        "short": machine.device_label(device) if is_gpu(device) else f"the {machine.cpu_short_name} CPU",
        "kind": "GPU" if is_gpu(device) else "CPU",
        "estimate": False,
        "epochs": epochs,
    }


def host_bound_sizes(data: Dataset, lane: dict) -> tuple[int, int]:
    """(sizes where issuing on the host outlasts the modelled GPU, sizes raced) for an estimated lane."""
    model = gpu_estimate.for_host(data.with_experiment(EPOCH)[0], data.machines)
    sizes = [(int(b), int(w)) for w, by_batch in lane["epochs"].items() for b in by_batch]
    return (len(model.host_bound(sizes)) if model else 0), len(sizes)


def estimate_lane(index: int, machine: Machine, peers: Iterable[Machine] = ()) -> dict | None:
    """A GPU lane from the first-principles estimate (build_hooks/gpu_estimate.py), for builds
    that measured no GPU, at the host's own epoch sizes. Labelled as an estimate wherever shown.

    A model has no spread; its quartiles are its band (gpu_estimate.band), so a lane that beats
    it by less than that is "about the same", not a win. `peers`, the other measured machines,
    can lower the band's lower edge (gpu_estimate.lower_edge).
    """
    estimate = gpu_estimate.for_host(machine, peers)
    if estimate is None:
        return None
    epochs: dict[str, dict[str, dict]] = {}
    for bench in machine.measured(EPOCH, device="cpu"):
        width, batch, rows = bench["params"]["width"], bench["params"]["batch"], bench["params"]["rows"]
        if (batch, width) not in estimate.work or (1, width) not in estimate.work:
            continue
        seconds = estimate.epoch(batch, width, rows)
        q1, q3 = estimate.epoch_band(batch, width, rows)
        epochs.setdefault(str(width), {})[str(batch)] = {
            "seconds": seconds, "q1": q1, "q3": q3, "steps": estimate.steps(batch, rows), "rows": rows,
            "regime": _regime_of(estimate.step(batch, width)["seconds"] / estimate.step(1, width)["seconds"]),
        }
    if not epochs:
        return None
    return {"id": f"lane-{index}", "machine": estimate.name, "machine_id": machine.id, "device": "cuda",
            "label": estimate.name, "kind": "GPU", "estimate": True, "source": estimate.brief_source,
            "band": [estimate.faster, estimate.slower], "epochs": epochs}


OPENING = (64, 32)  # (batch, width) the race opens at where raced: the lessons' small network, mid-range


def opening(widths: list[int], batches: list[int]) -> tuple[int, int]:
    """(batch, width) the race opens at: OPENING's, each where it was raced, else the smallest raced."""
    batch, width = OPENING
    return (batch if batch in batches else batches[0]), (width if width in widths else widths[0])


def race_data(data: Dataset) -> dict:
    """Every lane with measured epoch times, and the controls' choices."""
    lanes = []
    # Machines with a GPU first: the race opens on one, and its lanes then carry the first letters, A and B (#39 read:
    # a two-lane race lettered E and F looked like a bug).
    for machine in sorted(data.with_experiment(EPOCH), key=lambda m: m.gpu_device(EPOCH) is None):
        for device in machine.devices(EPOCH):
            lane = _lane(len(lanes), machine, device)
            if lane["epochs"]:
                lanes.append(lane)
    if lanes and not any(lane["kind"] == "GPU" for lane in lanes):
        estimate = estimate_lane(len(lanes), data.with_experiment(EPOCH)[0], data.machines)
        if estimate:
            lanes.append(estimate)
    widths = sorted({int(w) for lane in lanes for w in lane["epochs"]})
    batches = sorted({int(b) for lane in lanes for e in lane["epochs"].values() for b in e})
    machines = [{"id": m.id, "label": m.label, "crossover": _crossovers(m)}
                for m in data.with_experiment(EPOCH)]
    rows = sorted({point["rows"] for lane in lanes for e in lane["epochs"].values() for point in e.values()})
    # What a reader's own file must match to join the race (checked in the browser).
    join = {"mode": "quick" if data.quick else "full", "rows": rows, "schema_version": store.SCHEMA_VERSION,
            "time_bounds": store.BOUNDS["s"], "max_number": store.MAX_NUMBER,
            "vector_units": [list(pair) for pair in VECTOR_UNITS], "gpu_devices": list(GPU_DEVICES),
            "merged_format": MERGED_FORMAT}  # the site's own "Download the data" file, read machine by machine
    batch, width = opening(widths, batches) if lanes else (None, None)
    return {"lanes": lanes, "widths": widths, "batches": batches, "machines": machines, "join": join,
            "opening": {"batch": batch, "width": width},
            "browser": browser_plan(data),
            "fixed_cost_ratio": FIXED_COST_RATIO, "meaningful_ratio": stats.MEANINGFUL_RATIO}


def browser_plan(data: Dataset) -> dict | None:
    """What "Race your browser" trains: the epoch_time experiment's sizes as measured in this
    build's mode (rows, widths, batches), the same model and optimiser, and a time box."""
    mode = "quick" if data.quick else "full"
    points = [b["params"] for m in data.with_experiment(EPOCH) if m.doc["mode"] == mode
              for b in m.measured(EPOCH, device="cpu")]
    if not points:
        return None
    rows = max({p["rows"] for p in points}, key=lambda r: sum(p["rows"] == r for p in points))
    model = experiments.declared("training_step")
    return {"inputs": model["INPUTS"], "classes": model["CLASSES"], "learning_rate": BROWSER_LEARNING_RATE,
            "rows": rows, "mode": mode,
            "widths": sorted({p["width"] for p in points if p["rows"] == rows}),
            "batches": sorted({p["batch"] for p in points if p["rows"] == rows}),
            "budget_s": BROWSER_BUDGET_S[mode], "min_rounds": BROWSER_ROUNDS[0], "max_rounds": BROWSER_ROUNDS[1]}


def _crossovers(machine: Machine) -> dict[str, int | None]:
    """Per width, the batch from which this machine's GPU finishes the epoch first at every
    larger batch: the site's one crossover rule (analysis.crossover), on epochs."""
    if machine.gpu_device(EPOCH) is None:
        return {}
    return {str(w): analysis.crossover_batch(machine, w, EPOCH)
            for w in sorted({b["params"]["width"] for b in machine.benchmarks(EPOCH)})}


def _compact(race: dict) -> dict:
    """The race data with its spreads and regime ratios at 6 significant figures (the page shows 3), for the page's
    weight: a quartile printed to 17 digits says nothing more. Medians stay exact: the lanes display them. What the
    scripts never read, or can derive, is left out."""
    def point(p: dict) -> dict:
        # Left out: caveats (the static table marks them; the scripts never read them) and steps (rows ÷ batch).
        kept = {k: v for k, v in p.items() if k not in ("caveats", "steps", "regime")}
        return {**kept, "q1": float(f"{p['q1']:.6g}"), "q3": float(f"{p['q3']:.6g}"),
                **({"regime": compact_regime(p["regime"])} if p.get("regime") else {})}
    # A lane's short name is for the build's sentences; the scripts never read it.
    lanes = [{**{k: v for k, v in lane.items() if k != "short"},
              "epochs": {w: {b: point(p) for b, p in by_batch.items()} for w, by_batch in lane["epochs"].items()}}
             for lane in race["lanes"]]
    return {**race, "lanes": lanes}


def compact_regime(regime: dict) -> dict:
    """A regime as race.js reads it: {"same": true} alone when a step costs about what a 1-sample step does (its kind
    and ratio are then never shown), else its kind and its ratio at 6 significant figures."""
    if regime["same"]:
        return {"same": True}
    return {"kind": regime["kind"], "ratio": float(f"{regime['ratio']:.6g}")}


def data_script(data: Dataset) -> render.Html:
    """The race data as an inert JSON script element (no `<` survives, so no `</script>`)."""
    # allow_nan=False: an Infinity would pass here and kill the page's script. `&` is escaped
    # too, so no text in it can look like an HTML entity or a placeholder's neighbour.
    # Compact: the race page's first load is close to its budget (tests/test_site_weight.py).
    payload = json.dumps(_compact(race_data(data)), sort_keys=True, allow_nan=False, separators=(",", ":"))
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return render.Html(f'<script type="application/json" id="race-data">{payload}</script>')


def _short_lane_name(lane: dict, lanes: list[dict], data: Dataset) -> render.Html:
    """A lane's column heading: its letter in the live race and chart, then a CPU in a few words
    (Machine.cpu_short_name) or the lane's own label; the full label in its title (#39 read: headings of a machine's
    whole label wrapped to eight lines)."""
    letter = lane_style(lanes.index(lane))[0]
    machine = next((m for m in data.machines if m.id == lane["machine_id"]), None)
    short = machine.cpu_short_name if lane["kind"] == "CPU" and not lane["estimate"] and machine else lane["label"]
    return render.html('<span title="{}">{}: {}</span>', lane["label"], letter, short)


def _lane_role(lane: dict, lanes: list[dict], data: Dataset) -> render.Html | str:
    """A small line under a lane's name saying what it is, where its name alone does not: an estimate, the build host,
    or the CPU of a machine whose GPU also races (several CPUs of one brand read alike otherwise)."""
    if lane["estimate"]:
        return render.html("<br><small>estimate, not measured</small>")
    if lane["kind"] != "CPU":
        return ""
    if data.host is not None and lane["machine_id"] == data.host.id:
        return render.html("<br><small>the build host</small>")
    gpu = next((other for other in lanes if other["kind"] == "GPU" and not other["estimate"]
                and other["machine_id"] == lane["machine_id"]), None)
    return render.html("<br><small>{}'s own CPU</small>", gpu["label"]) if gpu else ""


def all_points_have(lane: dict, kind: str) -> bool:
    """Whether every epoch of a lane carries a caveat kind."""
    points = [point for epochs in lane["epochs"].values() for point in epochs.values()]
    return bool(points) and all(kind in point.get("caveats", []) for point in points)


def static_table(data: Dataset, widths: list[int] | None = None) -> render.Html:
    """The same numbers as the race, readable without JavaScript: a table for each of `widths` (default: every width
    raced)."""
    race = race_data(data)
    if not race["lanes"]:
        return render.missing("No epoch times have been measured yet.")
    # Lanes may come from machines with different widths or dataset sizes: read them all.
    dataset_rows = sorted({point["rows"] for lane in race["lanes"]
                           for epochs in lane["epochs"].values() for point in epochs.values()})
    rows_text = " or ".join(f"{n:,}" for n in dataset_rows)

    # A mark every point of a lane carries is said once under the tables, not in each cell.
    every_few = [lane for lane in race["lanes"] if all_points_have(lane, "few")]

    def cell(lane: dict, width: int, batch: int) -> render.Html:
        point = lane["epochs"][str(width)].get(str(batch))
        if not point:
            return render.esc("not measured")
        longer = (render.html('<sup title="{}">{}</sup>', LONGER_MARK[1], LONGER_MARK[0])
                  if longer_than_half(lane, str(width), str(batch)) else "")
        caveats = [k for k in point.get("caveats", []) if not (k == "few" and lane in every_few)]
        return render.esc(render.si(point["seconds"], "s")) + render.marks(caveats) + longer

    # The measured GPU and its own machine's CPU first: on a phone, the pair the race is about shows unscrolled.
    paired = {lane["machine_id"] for lane in race["lanes"] if lane["kind"] == "GPU" and not lane["estimate"]}
    # In letter order within that pair (A before B, #39 read), as the lanes and the chart list them.
    ordered = sorted(race["lanes"], key=lambda lane: (lane["machine_id"] not in paired, race["lanes"].index(lane)))
    # One table per width: a phone reads a few lanes side by side, not every lane at every width.
    tables = []
    for width in [w for w in race["widths"] if widths is None or w in widths]:
        lanes = [lane for lane in ordered if str(width) in lane["epochs"]]
        head = ["batch"] + [render.html("{}{}", _short_lane_name(lane, race["lanes"], data),
                                        _lane_role(lane, race["lanes"], data)) for lane in lanes]
        rows = [[batch] + [cell(lane, width, batch) for lane in lanes] for batch in race["batches"]]
        tables.append(render.table(head, rows, caption=f"Width {width}: time for one epoch of {rows_text} rows, "
                                                       "by batch size", table_id=f"race-table-{width}"))
    legend = render.marks_note({kind for lane in race["lanes"] for epochs in lane["epochs"].values()
                                for point in epochs.values() for kind in point.get("caveats", [])
                                if not (kind == "few" and lane in every_few)})
    if every_few:
        legend += render.note(f"Every epoch of {render.listing([lane['label'] for lane in every_few])} rests on "
                              f"fewer than {stats.MIN_SAMPLES} timed runs.")
    if any(longer_than_half(lane, str(width), batch) for lane in race["lanes"] for width in race["widths"]
           if widths is None or width in widths for batch in lane["epochs"].get(str(width), {})):
        legend += render.note(LONGER_WORDS)
    sources = render.join(render.note(f"{lane['label']}: {lane['source']}.")
                          for lane in race["lanes"] if lane["estimate"])
    return render.join(tables) + legend + sources
