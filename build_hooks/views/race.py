"""The race page: measured epoch times baked in as inert JSON, and the same numbers as a table."""

from __future__ import annotations

import math
import urllib.parse

from build_hooks import analysis, experiments, gate, gpu_estimate, plots, race, stats, untrusted
from build_hooks.dataset import Dataset
from build_hooks.page import MissingData, fact, section
from build_hooks.render import (
    MARK_TITLES,
    MARKS,
    SITE_ROOT,
    Html,
    capitalised,
    figure,
    html,
    join,
    listing,
    marks_note,
    missing,
    mostly_slow,
    multiple,
    note,
    si,
    table,
)

PREFERRED_WIDTH = race.OPENING[1]  # the small network the lessons use, when it was measured


@section
def race_data(data: Dataset) -> Html:
    """The race's epoch times, every lane, as the inert JSON script element the race page reads."""
    return race.data_script(data)


@section
def race_table(data: Dataset) -> Html:
    """The race's epoch times at the chart's width and the widest as tables that need no JavaScript, or a note that
    there are none. Two widths only: the small network the lessons use, and the widest, where a GPU's lead shows if it
    has one; the grid above gives every width's verdict, and All measurements every epoch (the page's weight)."""
    widths = race.race_data(data)["widths"]
    shown = sorted({chart_width(widths), max(widths)}) if widths else None
    others = note(html('Other widths: <a href="{}measurements/#epoch-time">All measurements</a> lists every epoch.',
                       Html(SITE_ROOT))) if len(widths) > len(shown or []) else Html("")
    return race.static_table(data, shown) + others


def chart_width(widths: list[int]) -> int:
    """The width the static chart and table show: the lessons' small network where it was raced."""
    return PREFERRED_WIDTH if PREFERRED_WIDTH in widths else widths[0]


@section
def race_chart_static(data: Dataset) -> Html:
    """The race chart as a static figure (no JavaScript needed): every lane's epoch time by batch at
    the small width, GPU lanes dashed and estimates dotted."""
    race_data = race.race_data(data)
    widths = race_data["widths"]
    if not race_data["lanes"]:
        return missing("No epoch times have been measured yet.")
    width = str(chart_width(widths))
    series = []
    for index, lane in enumerate(race_data["lanes"]):
        epochs = lane["epochs"].get(width, {})
        batches = sorted(int(b) for b in epochs)
        if batches:
            # The live chart's look (race.lane_style): its letter, colour and dash, so the two read alike.
            letter, colour, dashes = race.lane_style(index)
            # Plain text, not a placeholder: matplotlib draws a label as glyphs (and escapes what it writes).
            name = f"{letter}: {lane['label']}" + (" (estimate)" if lane["estimate"] else "")
            series.append(plots.Series(name, batches, [epochs[str(b)]["seconds"] for b in batches], "-",
                                       colour=colour, dashes=dashes))
    svg = plots.line_panels([{"series": series, "xlabel": "batch size (samples)", "ylabel": "epoch time (s)",
                              "subtitle": "Lower is better"}],
                            title=f"One epoch per lane at width {width}",
                            alt=f"Epoch time against batch size at width {width} for every lane of the race, "
                                "log scales; the tables below have the numbers.", size=(4.4, 3.4))
    return figure(svg, f"The race's epochs at width {width}, drawn when the site was built. Each lane has the "
                       "letter, colour and dash it has in the live race; an estimate says so in its name. The "
                       "tables below give this width and the widest.")


@section
def verdict_grid(data: Dataset) -> Html:
    """The race's verdict at every batch and width, as a grid of links: which device finishes an epoch first
    (race.matchup: CPU, GPU or level) and by how much; each cell opens the race at that setting. A row per
    batch and a column per width, so a phone shows every width without scrolling sideways. The race page's
    grid: it names who meets whom under it."""
    return _grid(data, paired=True)


@section
def verdict_grid_home(data: Dataset) -> Html:
    """The same grid on home, where the sentence above it (race_pairing) names who meets whom."""
    return _grid(data, paired=False)


def _grid(data: Dataset, paired: bool) -> Html:
    race_data = race.race_data(data)
    found = race.verdicts(race_data)
    if not found:
        return missing("No CPU and GPU pair has epoch times at the same setting yet, so there is no verdict.")
    widths = [w for w in race_data["widths"] if any((w, b) in found for b in race_data["batches"])]
    rough = {key for key, pairing in found.items() if _few_samples(key, pairing)}
    every_rough = rough == set(found)
    marked = set() if every_rough else rough  # when every cell is rough, one note says so
    # A mark most cells carry tells no cell apart: it is said once, under the grid, and left out of the cells.
    common = {kind for kind in MARKS if 2 * _carrying(found, kind) > len(found)}
    rows = [[html("{}", batch)] + [_verdict_cell(found.get((w, batch)), w, batch, (w, batch) in marked,
                                                 [k for k in _point_marks(found.get((w, batch)), w, batch)
                                                  if k not in common])
                                   for w in widths]
            for batch in race_data["batches"] if any((w, batch) in found for w in widths)]
    caption = ("Who finishes one epoch first, and how many times faster, by batch size and hidden width (the data "
               "start on the device: no copy is timed)")
    # Short notes: the grid appears on home and on the race page, and the band is stated where the estimate is.
    # "Level" and how rough every cell is stay in sight. The marks' key sits in a disclosure, open: its marks are on
    # the first screen's cells, and a reader who knows them can fold it (#39 read: a closed key hid them).
    shown_marks = {kind for key, pairing in found.items() for kind in _point_marks(pairing, *key)}
    notes = [note(_level_words(found))]
    # A mark most cells carry is said as a count in plain words, not as a symbol no cell shows (its meaning is in the
    # folded key). Short sentences: this note is on home and on the race page.
    # "Noisy" is defined where it is said, not in the key: no cell shows it (#39 read).
    # Under 12 words: the grid is on home and on the race page.
    what = {"noisy": f" Noisy: timings' middle half spans over {100 * stats.NOISY_IQR_RATIO:.0f}% of the median."}
    notes += [note(f"Most cells ({_carrying(found, kind)} of {len(found)}) rest on {MARKS[kind][1].lower()} timings."
                   f"{what.get(kind, '')} Read every ratio as rough.") for kind in sorted(common)]
    # The key lists only the marks a cell shows.
    key = [marks_note(shown_marks - common)] if shown_marks - common else []
    named = [MARKS[kind][0] for kind in MARKS if kind in shown_marks - common]
    if any(p["narrow"] for p in found.values()):
        key.append(note(f"Narrow: {NARROW_WORDS}."))
        named.append("narrow")
    if any(p["out_of_line"] for p in found.values()):
        key.append(note(OUT_OF_LINE_WORDS + reproduced_slowdowns(data, found)))
        named.append("out of line")
    if any(p.get("against_half") is not None and not p["out_of_line"] for p in found.values()):
        key.append(note(SMALLER_LEAD_WORDS))
        named.append(race.LONGER_MARK[0])
    if rough and not every_rough:
        key.append(note(f"Rough: an epoch it compares has fewer than {stats.MIN_SAMPLES} samples."))
        named.append("rough")
    if key:
        notes.append(html('<details class="crossover-marks" open><summary>What the marks mean: {}</summary>{}'
                          '</details>',
                          ", ".join(named) if named else "the noise rule", Html("").join(key)))
    if paired:  # on home, the sentence above the grid says these (race_ground, race_doubts), on its first screen
        notes += _doubt_notes(data, found)
    pairings = _pairings(found)
    if paired or len(pairings) > 1:  # one pairing is named in home's sentence above the grid
        notes.append(note(html("Paired: {}.", listing(pairings))))
    return table(["batch"] + [f"width {w}" for w in widths], rows, caption=caption,
                 table_id="verdict-grid") + Html("").join(notes)


# "Spread" is defined beside "level", the grid's first note (#39 read: a learner met it undefined).
NARROW_WORDS = f"it clears the two spreads by under {stats.MEANINGFUL_RATIO:g}×"
# Short sentences: the grid is on home and on the race page (race.out_of_line has the rule).
# The same rule as the steps' key (training_step.LEFT_OUT_WORDS): longer than a neighbour that should take longer.
OUT_OF_LINE_WORDS = ("Out of line: the loser broke its own trend. A neighbour that should take longer ran "
                     f"faster. At that neighbour's pace, the lead would be under {stats.MEANINGFUL_RATIO:g}×.")
def reproduced_slowdowns(data: Dataset, found: dict | None = None) -> str:
    """Whether the out-of-line losers' training steps, timed in the other experiment, broke their trend at the same
    settings too (analysis.out_of_line_steps): one short sentence opening with a space, or "" where none did. Two
    experiments timed apart that slow at one shape point to a slow code path there, not a slowed machine (#39 read:
    "this data cannot tell" was too weak where the data could). Under 12 words: the key is on four lesson pages."""
    found = race.verdicts(race.race_data(data)) if found is None else found
    machines = {m.id: m for m in data.machines}
    doubted = [(key, pairing) for key, pairing in sorted(found.items())
               if pairing["out_of_line"] and not pairing["estimate"]]
    seen = 0
    for (width, batch), pairing in doubted:
        side = "cpu" if pairing["leader"] == "GPU" else "gpu"
        machine = machines.get(pairing[side]["machine_id"])
        device = "cpu" if side == "cpu" or machine is None else machine.gpu_device(analysis.STEP)
        seen += bool(machine and device and batch in analysis.out_of_line_steps(machine, device, width))
    if not seen:
        return ""
    these = "these slowdowns" if seen == len(doubted) else f"{seen} of these slowdowns"
    return f" Both experiments show {these}: likely a slow code path."


# Short sentences: this key is under the grid on home and on the race page.
SMALLER_LEAD_WORDS = (f"Slow loser ({race.LONGER_MARK[0]}): slower than its epoch at half the batch. "
                      f"The figure after {race.LONGER_MARK[0]} is the lead against that faster epoch.")


def _doubts(data: Dataset, found: dict, define: bool = False) -> list[tuple[str, bool]]:
    """What weakens every verdict at once, a short sentence each, and whether the gallery shows it: every epoch
    resting on too few samples, and a raced GPU machine that began most of its rounds slow (the gallery's column).
    Said in words, not as a mark, since no cell would differ. Labels come back as placeholders (untrusted)."""
    doubts = []
    if all(_few_samples(key, pairing) for key, pairing in found.items()):
        doubts.append((f"Every verdict is rough: each epoch has under {stats.MIN_SAMPLES} timed runs", False))
    ids = {pairing["gpu"]["machine_id"] for pairing in found.values() if not pairing["estimate"]}
    for machine in (m for m in data.machines if m.id in ids):
        if mostly_slow(machine):
            share = gate.slow_start_share(machine.doc)
            # The grid's own rounds first: the machine's overall share spans every experiment, not just the epochs.
            grid = gate.slow_start_share(machine.doc, {race.EPOCH})
            who = "the GPU machine" if len(ids) == 1 else untrusted.placeholder(machine.label)
            # What "slow" means is defined in the gallery's key, which the race page's note links to.
            same = grid is None or f"{100 * grid:.0f}" == f"{100 * share:.0f}"
            # Short sentences: this note is under the grid on home and on the race page.
            # What "slow" means in a few words, on home (`define`): a learner met it undefined (#39 read). The race
            # page's note links to the gallery's key instead, so no long sentence repeats on the two pages.
            what = f" (a speed check before each ran over {gate.SLOW_STATE_RATIO:g}× its best)" if define else ""
            began = (f"{100 * share:.0f}% of its measurements running slow{what}" if same else
                     f"{100 * grid:.0f}% of the grid's measurements running slow{what}. Over all its experiments, "
                     f"the share was {100 * share:.0f}%")
            # Slow as a measurement began: the state is checked before each one, so the sentence says so.
            doubts.append((f"{capitalised(who)} began {began}. So both its CPU's and its GPU's times may run "
                           "long", True))
    return doubts


def _doubt_notes(data: Dataset, found: dict) -> list[Html]:
    """_doubts as notes under the grid, the slow machine's linking to the gallery."""
    link = html(' (<a href="{}gallery/">gallery</a>)', Html(SITE_ROOT))
    return [note(html("{}{}.", text, link if linked else "")) for text, linked in _doubts(data, found)]


def _point_marks(pairing: dict | None, width: int, batch: int) -> list[str]:
    """The caveats of the two epochs a verdict reads (noisy, under load, changed state), as a table marks a point;
    too few samples is said in words instead ("rough"), as the spread itself is what it doubts."""
    if pairing is None:
        return []
    kinds = {kind for side in ("gpu", "cpu")
             for kind in pairing[side]["epochs"][str(width)][str(batch)].get("caveats", [])}
    return [kind for kind in MARKS if kind in kinds and kind != "few"]


def _carrying(found: dict, kind: str) -> int:
    """How many of the grid's verdicts read an epoch that carries this mark."""
    return sum(kind in _point_marks(pairing, *key) for key, pairing in found.items())


def _few_samples(key: tuple[int, int], pairing: dict) -> bool:
    """Whether an epoch this verdict reads was marked as resting on too few samples (stats.caveats' "few")."""
    width, batch = key
    return any("few" in pairing[kind]["epochs"][str(width)][str(batch)].get("caveats", []) for kind in ("gpu", "cpu"))


def _level_words(found: dict) -> str:
    """What "level" means under the grid: too close to call, by the spread, or by the estimate's band (said with
    its numbers where an estimated GPU is in the grid)."""
    estimated = [p for p in found.values() if p["estimate"]]
    if not estimated:
        # The rule in full (stats.compare_points): a lead needs both the meaningful ratio and the spread cleared.
        return (f"Level: under {stats.MEANINGFUL_RATIO:g}× apart, or within the runs' spread. Spread: how much a "
                "setting's timed runs varied.")
    # Short sentences: the grid is on home and on the race page, and a long legend would repeat there.
    bands = {gpu_estimate.band_words(*p["gpu"].get("band", [gpu_estimate.FASTER])) for p in estimated}
    band = f"The estimate's band runs {next(iter(bands))}. " if len(bands) == 1 else ""
    return (f"Level: under {stats.MEANINGFUL_RATIO:g}× apart, or within the band or the runs' spread. {band}"
            "Only a lead beyond both counts. Spread: how much a setting's timed runs varied.")


def _pairings(found: dict) -> list[str]:
    """Who meets whom in the grid, once each: a GPU meets its own machine's CPU (an estimate, its host's)."""
    pairs = sorted({(p["gpu"]["label"] + (" (estimated)" if p["estimate"] else ""), p["cpu"]["label"])
                    for p in found.values()})
    return [f"{gpu} against its {cpu}" for gpu, cpu in pairs]  # cpu labels begin "CPU: "


def _verdict_cell(pairing: dict | None, width: int, batch: int, rough: bool = False,
                  point_marks: list[str] = ()) -> Html:
    if pairing is None:
        return html("not raced")
    # Bare symbols: the key sits under the grid and the link's label names each mark (the race page has a budget).
    longer = pairing.get("against_half") is not None and not pairing["out_of_line"]
    symbols = join([html("<sup>{}</sup>", MARKS[kind][0]) for kind in point_marks])
    leader = pairing["leader"]
    # An estimated GPU is named so in its own cell, not only in the sentence above the grid.
    shown = f"{leader} (est.)" if leader == "GPU" and pairing["estimate"] else leader
    words = [word for word, flag in (("narrow", pairing["narrow"]), ("out of line", pairing["out_of_line"]),
                                     ("rough", rough)) if flag]
    # A lead over a loser that slowed gives the lead against its faster half-batch epoch too, marked ↑ beside it.
    slowed = [f"{race.LONGER_MARK[0]}{multiple(pairing['against_half'])}"] if longer else []
    ratio = ", ".join([multiple(pairing["ratio"])] + slowed + [w for w in words if w != "out of line"])
    # An out-of-line lead leads with those words, its leader in small print: a learner counting "GPU" cells gets
    # the count above the grid, which leaves it out.
    text = (html("out of line{}<br><small>{} {}</small>", symbols, shown, ratio) if pairing["out_of_line"]
            else html("{}{}<br><small>{}</small>", shown, symbols, ratio) if leader != "level"
            else html("level{}<br><small>rough</small>", symbols) if rough else html("level{}", symbols))
    # The marks' names are read aloud too: a screen reader gets the link's label, not its superscripts.
    said = words + [MARK_TITLES[kind] for kind in point_marks] + (["loser " + race.LONGER_MARK[1]] if longer else [])
    label = (f"{leader} first at width {width}, batch {batch}{''.join(', ' + m for m in said)}"
             if leader != "level"
             else f"level at width {width}, batch {batch}{''.join(', ' + m for m in said)}")
    # The link names the pairing's machine too, so the race opens on the two lanes this cell compares.
    machine = urllib.parse.quote(pairing["gpu"]["machine_id"], safe="")
    # An out-of-line lead is coloured as level: the counts above the grid do not count it as a win either.
    look = "level" if pairing["out_of_line"] else leader.lower()
    return html('<a class="verdict verdict--{}" href="{}race/?batch={}&amp;width={}&amp;machine={}" aria-label="{}">'
                '{}</a>', look, Html(SITE_ROOT), batch, width, machine, label, text)


@fact
def race_ground(data: Dataset) -> str:
    """Home's short answer in the data's terms, before the grid: where the GPU's leads lie (_wins_where), or, where it
    leads nowhere, the counts. With the GPU's ground said here, the counts wait under the grid (race_doubts): the
    first screen keeps the answer and the grid."""
    _, where, counts = _summary_parts(data)
    return where or counts


@fact
def race_pairing(data: Dataset) -> str:
    """Whom home's grid pairs, when it is one pair (a learner must not read its verdicts into other CPUs); empty
    words otherwise."""
    intro, _, _ = _summary_parts(data)
    return intro.strip().rstrip(".") or "Each GPU in the grid races the CPU of its own machine"


def _summary_parts(data: Dataset, place: str = "below") -> tuple[str, str, str]:
    """Home's words about the grid: (whom it pairs, where the GPU leads, at how many settings each side leads, the
    grid said to be `place`: "below" above it, "above" under it). The first two may be empty; each ends a
    sentence."""
    found = race.verdicts(race.race_data(data))
    if not found:
        raise MissingData("no CPU and GPU pair at the same setting")
    pairs = {(p["gpu"]["label"], p["cpu"]["label"], p["estimate"]) for p in found.values()}
    # Whom the GPU meets, when that is one CPU: a learner must not read "never" into other CPUs.
    intro = ""
    if len(pairs) == 1:
        gpu_label, cpu_label, estimated = next(iter(pairs))
        # The CPU in a few words (Machine.cpu_short_name): the full label, trademarks and vector units, is in the
        # grid's key and the race's tables; on the first screen it only clutters.
        machine = next((m for m in data.machines if m.id == next(iter(found.values()))["gpu"]["machine_id"]), None)
        cpu_name = f"the {machine.cpu_short_name} in its own machine" if machine else f"its own {cpu_label}"
        intro = (f"No GPU was measured for this build. So the grid's GPU is a model of an "
                 f"{untrusted.placeholder(gpu_label)}, fed by the build host's CPU. " if estimated else
                 f"The grid below races {_network_words(data)}. It sets "
                 f"{untrusted.placeholder(gpu_label)} against {untrusted.placeholder(cpu_name)}. ")
    gpu, cpu = ("the GPU", "the CPU") if len(pairs) == 1 else ("a GPU", "a CPU")
    if all(estimated for *_, estimated in pairs):  # a model's lead is named as the model's, every time
        gpu = "the estimated GPU" if len(pairs) == 1 else "an estimated GPU"
    return intro, _wins_where(found, gpu), _verdict_counts(found, gpu, cpu, place)


def _network_words(data: Dataset) -> str:
    """The race's network in a phrase, from the experiment's own declarations and the epochs' rows, so the work per
    step home quotes can be tied to it: "a small network (512 inputs, one hidden layer, 10 outputs) through whole
    epochs of 2,048 rows"."""
    model = experiments.declared("training_step")
    rows = race.race_data(data).get("join", {}).get("rows", [])  # none said where the race has no epochs
    of_rows = f" of {rows[0]:,} rows" if len(rows) == 1 else ""
    return (f"a small network ({model['INPUTS']} inputs, one hidden layer, {model['CLASSES']} outputs) through whole "
            f"epochs{of_rows}")


@fact
def race_grid_counts(data: Dataset) -> str:
    """Above the race page's grid: the grid counted (out-of-line verdicts counted apart, as on home). The page's
    first screen keeps the corners and the controls (a phone must reach Start)."""
    settings, count, gpu = _tally(data)
    counts = (f"The grid below has all {settings} settings: the CPU finishes first at {count['CPU']}, "
              f"{gpu} at {count['GPU']}")
    # Where the GPU wins, so the two corners above read as ends of a rule, not as two anecdotes; as a short list,
    # since home says it in a sentence.
    found = race.verdicts(race.race_data(data))
    where = _wins_where(found, gpu, compact=True)
    return f"{counts}. {where}" if where else counts


@fact
def race_tally(data: Dataset) -> str:
    """The race's grid in one short sentence, for a page that says fixed costs can erase a GPU's lead: at how many of
    the raced settings each side finished first (out-of-line verdicts counted apart, as on home)."""
    settings, count, gpu = _tally(data)
    return (f"In the race's small network, the CPU finished first at {count['CPU']} of {settings} settings, "
            f"{gpu} at {count['GPU']}")


def _tally(data: Dataset) -> tuple[int, dict[str, int], str]:
    """(settings raced, each side's lead count, the GPU's name in a sentence) for the tally sentences."""
    found = race.verdicts(race.race_data(data))
    if not found:
        raise MissingData("no CPU and GPU pair at the same setting")
    gpu = "the estimated GPU" if all(p["estimate"] for p in found.values()) else "the GPU"
    return len(found), _lead_counts(found), gpu


def _lead_counts(found: dict) -> dict[str, int]:
    """At how many settings each of GPU, CPU and level is the verdict. One marked out of line is counted apart: it
    may come from a machine that slowed."""
    return {leader: sum(p["leader"] == leader and not p["out_of_line"] for p in found.values())
            for leader in ("GPU", "CPU", "level")}


def _verdict_counts(found: dict, gpu: str, cpu: str, place: str = "below") -> str:
    """At how many of the raced settings the GPU leads, the CPU leads, or neither does, and how many GPU leads rest
    on a changed state."""
    count = _lead_counts(found)
    doubted = sum(p["out_of_line"] for p in found.values())
    n = len(found)
    every = "the one setting" if n == 1 else f"all {n} settings"
    if count["level"] == n:
        return f"At {every} raced {place}, the two are level"
    for leader, who in (("GPU", gpu), ("CPU", cpu)):
        if count[leader] == n:
            return f"{capitalised(who)} finishes first at {every} raced {place}"
    leaders = [(who, count[leader]) for leader, who in (("GPU", gpu), ("CPU", cpu)) if count[leader]]
    # "the GPU finishes first at 7 and the CPU at 28": the verb once, with the first leader.
    leads = " and ".join(f"{who} {'finishes first ' if i == 0 else ''}at {k}" for i, (who, k) in enumerate(leaders))
    # The grid's own words, each said plainly where it first appears; the key under the grid has the rest.
    # Each sentence opens with a word, not a count: a reader (and a sentence splitter) sees where it starts.
    # The cell still shows who led: the count says that lead is not counted, or a reader counts it as a win.
    out = "out of line (a lead not counted: the loser broke its own trend)"
    others = [f"{k} {what}" for k, what in ((count["level"], "too close to call"), (doubted, out)) if k]
    rest = f". The rest: {', '.join(others)}" if others else ""
    return f"Of the {n} settings raced {place}, {leads}{rest}"


def _changed_leads(found: dict) -> str:
    """How many GPU leads rest on an epoch the machine timed while changing state (§), as a sentence that closes a
    fact: a learner counting the GPU's wins should know which are doubtful. Empty where none is."""
    changed = sorted(key for key, p in found.items()
                     if p["leader"] == "GPU" and not p["out_of_line"] and "unsettled" in _point_marks(p, *key))
    if not changed:
        return ""
    # A few are named, so a reader finds them in the grid; many are counted.
    named = (f" ({'; '.join(f'width {w}, batch {b}' for w, b in changed)})" if len(changed) <= NAMED_DOUBTS else "")
    return (f"Of the GPU's wins, {len(changed)}{named} {'rests' if len(changed) == 1 else 'rest'} on a time taken "
            "while the machine changed state (§)")


NAMED_DOUBTS = 3  # up to this many doubtful wins are named by their setting


def _wins_where(found: dict, gpu: str, compact: bool = False) -> str:
    """Where every clear GPU win lies, width by width, widest first, as one short sentence ("The GPU wins at width
    2048 from batch 64 up, and at width 512 at batch 512"), then the narrow ones in a second ("The GPU's lead is narrow
    at width 512, batch 64"); empty where it wins nowhere or everywhere. A lead marked out of line is left out.
    `compact`: the clear wins as a short list ("Clear GPU wins: width 2048 from batch 64 up; width 512 at batch
    512"), for the race page, whose opener must not repeat home's sentence."""
    wins = {(w, b) for (w, b), p in found.items() if p["leader"] == "GPU" and not p["out_of_line"]}
    if not wins or len(wins) == len(found):
        return ""
    # A win resting on a changed state keeps its § here too: the sentence sits above the grid and its key.
    changed = {key for key in wins if "unsettled" in _point_marks(found[key], *key)}
    narrow = {key for key in wins if found[key].get("narrow")}
    clear = wins - narrow
    said = ""
    if clear:
        said = _where_words(found, clear, changed, gpu, compact)
    # A narrow lead is named apart: a learner reading "wins" above the grid should not count it as a clear one.
    # A changed state is said in words too: this sentence sits above the key that explains §.
    lab = {key: f"width {key[0]}, batch {key[1]}" for key in narrow}
    if narrow and len(narrow) <= NAMED_DOUBTS:
        spots = listing([lab[key] for key in sorted(narrow, reverse=True)])
        shaky = narrow & changed
        state = ("" if not shaky else ", on a run taken while the machine changed state (§)" if shaky == narrow
                 else f"; {listing([lab[key] for key in sorted(shaky, reverse=True)])} on a run taken while the "
                      "machine changed state (§)")
        narrow_words = (f"The GPU's lead is narrow at {spots}{state}" if clear
                        else f"{capitalised(gpu)} leads only narrowly, at {spots}{state}")
    elif narrow:
        narrow_words = (f"The GPU's lead is narrow at {len(narrow)} more settings" if clear
                        else f"{capitalised(gpu)} leads only narrowly, at {len(narrow)} settings")
    else:
        narrow_words = ""
    return ". ".join(part for part in (said, narrow_words) if part)


def _where_words(found: dict, wins: set, changed: set, gpu: str, compact: bool = False) -> str:
    """The wins given, width by width, widest first, as one sentence (`compact`: as a short list)."""
    said = {w: _batches_words(sorted(b for v, b in wins if v == w), sorted(b for v, b in found if v == w),
                              {b for v, b in changed if v == w})
            for w in sorted({w for w, _ in wins}, reverse=True)}
    every = len(set(said.values())) == 1 and len(said) == len({w for w, _ in found}) > 1
    if compact:
        who = "Clear GPU wins" if gpu == "the GPU" else f"Clear wins of {gpu}"
        return (f"{who}: every width, {next(iter(said.values()))}" if every
                else f"{who}: " + "; ".join(f"width {w} {words}" for w, words in said.items()))
    if every:
        return f"{capitalised(gpu)} wins at every width, {next(iter(said.values()))}"
    return f"{capitalised(gpu)} wins " + listing([f"at width {w} {words}" for w, words in said.items()])


def _batches_words(won: list[int], raced: list[int], marked: set[int] = frozenset()) -> str:
    """The batches won, as runs of neighbouring raced batches: "from batch 64 up" (a run to the largest raced),
    "at batch 512", "at batches 64 to 256", "at batches 64§ and 512" (§: a `marked` batch)."""
    def lab(batch: int) -> str:
        return f"{batch}{MARKS['unsettled'][0]}" if batch in marked else str(batch)
    runs: list[list[int]] = []
    for batch in won:
        if runs and raced.index(batch) == raced.index(runs[-1][-1]) + 1:
            runs[-1].append(batch)
        else:
            runs.append([batch])
    if len(runs) == 1:
        run = runs[0]
        if len(run) == 1:
            return f"at batch {lab(run[0])}"
        return (f"from batch {lab(run[0])} up" if run[-1] == raced[-1]
                else f"at batches {lab(run[0])} to {lab(run[-1])}")
    return "at batches " + listing([lab(r[0]) if len(r) == 1 else f"{lab(r[0])} to {lab(r[-1])}" for r in runs])


@fact
def race_doubts(data: Dataset) -> str:
    """Under home's grid: the counts, where the sentence above it gave the GPU's ground instead (_summary_parts), then
    what weakens every verdict (_doubts) in short sentences, or that nothing does, then any lane that ran a narrower
    width slower (_width_inversions)."""
    found = race.verdicts(race.race_data(data))
    if not found:
        raise MissingData("no CPU and GPU pair at the same setting")
    # The canary in a few words, not three sentences (#39 read); the gallery defines it in full.
    said = [text for text, _ in _doubts(data, found, define=True)]
    said = said or ["Every verdict rests on enough timed runs, from machines in their usual state"]
    changed = _changed_leads(found)
    _, where, counts = _summary_parts(data, "above")
    return ". ".join(([counts] if where else []) + ([changed] if changed else []) + said
                     + _width_inversions(data, found))


def _width_inversions(data: Dataset, found: dict) -> list[str]:
    """Per measured lane the grid raced: where its epochs at one width ran slower, beyond both spreads, than at the
    next wider width at the same batch, which does more work. A sentence each, since the grid's own marks look only
    along the batch (#39 read: a CPU slower at width 8 than at 32 made its lead look larger at 32, unflagged). Only
    at half the batches or more: a stray batch is the grid's own marks' business, a pattern is said."""
    lanes = {id(lane): lane for pairing in found.values() if not pairing["estimate"]  # each lane once
             for lane in (pairing["cpu"], pairing["gpu"])}
    machines = {m.id: m for m in data.machines}
    one_machine = len({lane["machine_id"] for lane in lanes.values()}) == 1
    said = []
    for lane in lanes.values():
        widths = sorted(lane["epochs"], key=int)
        for narrow, wide in zip(widths, widths[1:]):
            batches = [b for b in lane["epochs"][narrow] if b in lane["epochs"][wide]]
            slower = sum(stats.compare_points(race.point_stats(lane["epochs"][narrow][b]),
                                              race.point_stats(lane["epochs"][wide][b])) > 0 for b in batches)
            if slower and 2 * slower >= len(batches):
                machine = machines.get(lane["machine_id"])
                whose = ("The GPU machine's" if one_machine or machine is None
                         else f"{untrusted.placeholder(machine.label)}'s")
                said.append(f"{whose} {lane['kind']} ran width {narrow} clearly slower than width {wide} at "
                            f"{slower} of {len(batches)} batches, though width {narrow} does less work")
    return said


@fact
def race_corners(data: Dataset) -> str:
    """The race's answer in two sentences: who finishes first at the smallest setting raced (smallest batch and
    width) and at the largest, by the grid's rule (race.matchup)."""
    found = race.verdicts(race.race_data(data))
    if not found:
        raise MissingData("no CPU and GPU pair at the same setting")
    small, large = min(found), max(found, key=lambda size: (size[1], size[0]))
    sentences = [_corner(found[small], *small)]
    if large != small:
        sentences.append(_corner(found[large], *large))
    return ". ".join(sentences)


def _corner(pairing: dict, width: int, batch: int) -> str:
    """One setting's verdict as a short sentence: "At batch 1 and width 32, the CPU finishes first, 2.0× ahead"."""
    at = f"At batch {batch} and width {width}"
    if pairing["leader"] == "level":
        return f"{at}, the two are level"
    gpu = "the estimated GPU" if pairing["estimate"] else "the GPU"
    who = gpu if pairing["leader"] == "GPU" else "the CPU"
    narrow = f" ({NARROW_WORDS})" if pairing["narrow"] else ""
    doubt = ", though the grid marks it out of line" if pairing["out_of_line"] else ""
    half = pairing.get("against_half")
    # A loser slower than at half the batch inflates the lead: the grid's figure first, then the lead against that
    # faster epoch, so the sentence matches the cell and says the smaller figure too.
    loser = "the CPU" if pairing["leader"] == "GPU" else gpu
    lead = (f"{multiple(half)} to {multiple(pairing['ratio'])} ahead ({loser}'s epoch here ran slower than at batch "
            f"{batch // 2})" if half and not pairing["out_of_line"] else f"{multiple(pairing['ratio'])} ahead")
    return f"{at}, {who} finishes first, {lead}{narrow}{doubt}"


def _lane_name(lane: dict) -> str:
    """A lane as a sentence names it: a CPU in a few words where the build gave it some, an estimate said so."""
    return untrusted.placeholder(lane.get("short", lane["label"])) + (" (estimate)" if lane["estimate"] else "")


def _example_width(race_data: dict, which: str) -> str:
    """The width a worked example reads at its smallest or largest raced batch: the lessons' small network, unless
    its verdict there carries a caveat mark and another width's does not (an example should not rest on a doubtful
    point)."""
    widths = race_data["widths"]
    preferred = chart_width(widths)
    found = race.verdicts(race_data)
    for width in [preferred] + [w for w in widths if w != preferred]:
        batches = sorted(b for w, b in found if w == width)
        if batches:
            batch = batches[0] if which == "smallest" else batches[-1]
            if not _point_marks(found[(width, batch)], width, batch):
                return str(width)
    return str(preferred)


def _verdict(data: Dataset, which: str, width: str | None = None) -> str:
    """Who finishes an epoch first at the smallest or largest raced batch, at `width` (else the small width): the
    fastest GPU lane against its own machine's CPU (the grid's pairing, race.matchup), or the two
    fastest lanes when only one kind raced."""
    race_data = race.race_data(data)
    if not race_data["lanes"]:
        raise MissingData("no epoch times to race")
    width = width or _example_width(race_data, which)
    lanes = [lane for lane in race_data["lanes"] if width in lane["epochs"]]
    batches = sorted({int(b) for lane in lanes for b in lane["epochs"][width]})
    batch = str(batches[0] if which == "smallest" else batches[-1] if which == "largest" else which)
    if int(batch) not in batches:
        raise MissingData(f"no epoch at batch {batch} and width {width}")
    timed = sorted(((lane["epochs"][width][batch], lane) for lane in lanes
                    if batch in lane["epochs"][width]), key=lambda pair: pair[0]["seconds"])
    where = f"at batch {batch} and width {width}"
    if len(timed) == 1:
        point, lane = timed[0]
        return f"{where}, {_lane_name(lane)} takes {si(point['seconds'], 's')} per epoch; no other device was raced"
    # The race is CPU against GPU: the fastest GPU lane and its own machine's CPU (race.matchup's pairing).
    gpu = next((pair for pair in timed if pair[1]["kind"] == "GPU"), None)
    estimated = gpu is not None and gpu[1]["estimate"]
    cpu = next((pair for pair in timed if pair[1]["kind"] == "CPU"
                and gpu is not None and pair[1]["machine_id"] == gpu[1]["machine_id"]), None)
    contenders = sorted([cpu, gpu], key=lambda pair: pair[0]["seconds"]) if cpu and gpu else timed
    (first, winner), (second, runner_up) = contenders[0], contenders[1]
    # Who meets whom is said once, under the grid ("Paired: ..."); here only the outcome.
    where += ", "
    fast, slow = first["seconds"], second["seconds"]
    if race.versus(second, first)[0] == 0:
        # An estimate's band is stated, far wider than a measured spread: a tie with it may lie well
        # outside the measured lane's quartiles, so only the band is named.
        # The medians alone may lie outside the band: the measured lane's spread is what reaches into it.
        # The band's numbers are said once, under "Reading the race" (race_lanes_kind); three significant figures,
        # so a gap just inside an edge of the band does not print as the edge itself.
        within = ("the estimate's band and the measured spread"
                  if winner["estimate"] or runner_up["estimate"] else "the measurements' spread")
        # A tie names the two lanes in a fixed order: which was a hair faster is noise.
        (one, one_lane), (other, other_lane) = sorted(((first, winner), (second, runner_up)),
                                                      key=lambda pair: pair[1]["label"])
        return (f"{where}{_lane_name(one_lane)} takes {si(one['seconds'], 's')} per epoch and "
                f"{_lane_name(other_lane)} {si(other['seconds'], 's')}. That is too close to call: the "
                f"{slow / fast:.3g}× gap is inside {within}")
    # The band's numbers are in the grid's note: here only that the lead clears it.
    uncertain = ", beyond the estimate's band" if winner["estimate"] or runner_up["estimate"] else ""
    others = _against_other_cpus(lanes, gpu[1], width, batch) if estimated else ""
    # Each time carries its point's marks, as the tables on the page mark it (their key is on the page).
    return (f"{where}{_lane_name(winner)} finishes first, {multiple(slow / fast)} ahead of "
            f"{_lane_name(runner_up)} ({si(fast, 's')}{_symbols(first, winner)} against {si(slow, 's')}"
            f"{_symbols(second, runner_up)})"
            f"{uncertain}{others}")


def _symbols(point: dict, lane: dict) -> str:
    """A race point's caveat marks as plain symbols, for a sentence on a page whose tables key them. A mark every
    point of its lane carries is left out, as in the race's tables: the page says it once, in words."""
    lane_wide = {kind for kind in MARKS if race.all_points_have(lane, kind)}
    return "".join(MARKS[kind][0] for kind in MARKS if kind in point.get("caveats", []) and kind not in lane_wide)


def _against_other_cpus(lanes: list[dict], estimate: dict, width: str, batch: str) -> str:
    """How the other machines' CPU lanes fare against an estimated GPU at one size: a lead over
    its own host's CPU need not hold against a faster one."""
    ours = estimate["epochs"][width][batch]
    parts = []
    for lane in lanes:
        theirs = lane["epochs"][width].get(batch)
        if lane["kind"] != "CPU" or lane["machine_id"] == estimate["machine_id"] or not theirs:
            continue
        verdict, ratio = race.versus(theirs, ours)
        apart = multiple(ratio)
        how = (f"{apart} behind it" if verdict > 0 else f"{apart} ahead of it" if verdict < 0
               else f"{apart} apart, level")
        parts.append(f"{untrusted.placeholder(lane['label'])} took {si(theirs['seconds'], 's')} ({how})")
    if not parts:
        return ""
    # One CPU per sentence, after a sentence that says whom "it" is.
    return (". The other CPUs in this build's data, which the estimate is not modelled on, are set against it too. "
            + ". ".join(parts))


def _estimated_leads(data: Dataset) -> dict[int, tuple[int | None, list[str]]]:
    """Per width, where the labelled estimate leads its host's CPU (grid_leads). Empty with a measured GPU."""
    return grid_leads(data, lambda pairing: pairing["estimate"], marked=False)


def grid_leads(data: Dataset, keep, marked: bool = True) -> dict[int, tuple[int | None, list[str]]]:
    """Per width, where the grid's GPU leads, among the pairings `keep` accepts: (the batch from which it leads at
    every larger batch raced, by the grid's rule, or None; the batches of any lone lead below it, with § where it
    rests on a changed state, if `marked`: for a table with a key, not a sentence). A lead marked out of line counts
    as none."""
    found = {size: p for size, p in race.verdicts(race.race_data(data)).items() if keep(p)}
    leads_by_width = {}
    for width in sorted({w for w, _ in found}):
        leads = {b: 1 if p["leader"] == "GPU" and not p["out_of_line"] else -1
                 for (w, b), p in found.items() if w == width}
        first = analysis.crossover(leads)  # the site's one crossover rule (analysis.crossover)
        # A lead the grid shows below the crossover (a level or CPU batch breaks the run after it) is named too.
        # A lone lead keeps the grid's § when it rests on a changed state: a reader meets it without the grid.
        lone = [_lone_lead(found[(width, b)], width, b, marked)
                for b in sorted(leads) if leads[b] == 1 and (first is None or b < first)]
        leads_by_width[width] = (first, lone)
    return leads_by_width


def _lone_lead(pairing: dict, width: int, batch: int, marked: bool) -> str:
    """A lone lead's batch as a cell names it: with § where it rests on a changed state, and "narrow" where the grid
    says so, if `marked` (for a table with a key, not a sentence)."""
    if not marked:
        return str(batch)
    changed = MARKS["unsettled"][0] if "unsettled" in _point_marks(pairing, width, batch) else ""
    return f"{batch}{changed}" + (", narrow" if pairing.get("narrow") else "")


def estimated_crossovers(data: Dataset) -> str:
    """Where no GPU was measured: per width, the batch from which the labelled estimate leads its host's CPU at every
    larger batch raced (the grid's rule) and any lone lead below it, or that it never leads; with a measured GPU,
    that none is estimated. Home says it through cost_model.home_one_number when no GPU was measured."""
    found = _estimated_leads(data)
    if not found:
        return "Every GPU here was measured, so no crossover is estimated"
    wins, never = [], []
    for width, (first, lone) in found.items():
        if first is not None:
            also = f" (and at batch {listing(lone)}, a lead the batches beside it do not share)" if lone else ""
            wins.append(f"from batch {first} at width {width}{also}")
        elif lone:
            wins.append(f"at width {width} only at batch {listing(lone)}")
        else:
            never.append(str(width))
    # Two short sentences: where it wins, then the widths where it never does.
    widths = f"width{'s' if len(never) > 1 else ''} {listing(never)}" if never else ""
    if not wins:
        return f"By the labelled estimate against the build host's CPU, a GPU wins at no batch raced, at {widths}"
    text = "By the labelled estimate against the build host's CPU, a GPU would win " + listing(wins)
    return text + (f". At {widths} it wins at no batch raced" if never else "")


@section
def estimated_crossover_table(data: Dataset) -> Html:
    """The cheat sheet's crossover at a glance: per width, the batch from which the labelled estimate leads its
    host's CPU (and any lone lead), or never; nothing when a GPU was measured (the measured table says it)."""
    found = _estimated_leads(data)
    if not found:  # the measured table above says it all: nothing to add
        return Html("")
    rows = [[width, f"from batch {first}" if first is not None else "never in the batches raced",
             listing(lone) if lone else "none"] for width, (first, lone) in found.items()]
    head = ["hidden width", "the estimated GPU leads", "also alone at batch"]
    if all(not lone for _, lone in found.values()):  # a column of "none" says nothing
        head, rows = head[:2], [row[:2] for row in rows]
    return table(head, rows,
                 caption="Where the labelled GPU estimate overtakes the build host's CPU at every larger batch")


def home_estimate_pace(data: Dataset) -> str:
    """Home's short warning above the grid: whether the GPU in it is a model whose time the build host's issuing
    sets."""
    estimate = next((lane for lane in race.race_data(data)["lanes"] if lane["estimate"]), None)
    if estimate is None:
        return "Every GPU in the grid was measured"
    bound, raced = race.host_bound_sizes(data, estimate)
    if not bound:
        return "The model's GPU time comes from the datasheet and the build host's cost per operation"
    if bound == raced:  # then a GPU cell is where the build host's own arithmetic outgrows that sending time
        return ("In the model, the GPU's time is how long the build host takes to hand it the work, so any GPU fast "
                "enough would give the same cells. A GPU cell is where the CPU's own epoch outlasts that hand-off "
                "by more than the band")
    return (f"At {bound} of the model's {raced} settings, the GPU's time is how long the build host takes to send it "
            "the work")


def _measured_fall(race_data: dict) -> str:
    """With measured lanes only: how far the first GPU's epoch and its own machine's CPU's fell from the smallest
    batch to the largest, at the widest width (where the point above shows best, and the guide's batch-512 step
    races; #39 review: at the chart's width a CPU may never stop falling). Ends where either lane changed state (§) are
    skipped while two steady batches remain."""
    widest = _widest_fall(race_data)
    if widest is None:
        return "No GPU lane here has its own CPU to set it against"
    (gpu, cpu), (width, first, last, fall) = widest

    def doubt(lane: dict) -> str:  # a ratio of two epochs carries the marks of both, as the table keys them
        kinds = {k for b in (first, last) for k in lane["epochs"][width][b].get("caveats", [])}
        return _symbols({"caveats": kinds}, lane)
    gain = fall["gpu"] / fall["cpu"]
    moved = (f"So the gap moved {multiple(gain)} towards the GPU" if gain >= stats.MEANINGFUL_RATIO else
             f"So the gap moved {multiple(1 / gain)} towards the CPU" if gain <= 1 / stats.MEANINGFUL_RATIO else
             "So neither gained much on the other")
    said = (f"At width {width}, between batch {first} and {last}, {untrusted.placeholder(gpu['label'])}'s epoch fell "
            f"{multiple(fall['gpu'])}{doubt(gpu)} and its CPU's {multiple(fall['cpu'])}{doubt(cpu)}. {moved}")
    # A fall past the steps' own ratio means a step got quicker as the batch grew: said, or it reads as an error.
    rows = gpu["epochs"][width][first].get("rows")
    fewer = math.ceil(rows / int(first)) / math.ceil(rows / int(last)) if rows else None
    # Claimed only beyond the spread and the meaningful ratio: the fall's low end (the first epoch's fast quartile
    # over the last one's slow quartile) must clear the steps' ratio (#39 read: 274× against 256× is noise).
    points = gpu["epochs"][width]
    low_fall = points[first].get("q1", points[first]["seconds"]) / points[last].get("q3", points[last]["seconds"])
    if fewer and stats.compare(low_fall, fewer) > 0:
        said += (f". The GPU's fall beats the {multiple(fewer)} fewer steps: inside the epoch, its step at batch "
                 f"{last} ran faster than at batch {first}")
    return said


def _widest_fall(race_data: dict) -> tuple[tuple[dict, dict], tuple[str, str, str, dict]] | None:
    """((the first measured GPU lane, its own machine's CPU lane), _fall_at's finding) at the widest width both
    raced, the width the guide's batch-512 step races; None without such a pair."""
    gpu = next((lane for lane in race_data["lanes"] if lane["kind"] == "GPU" and not lane["estimate"]), None)
    cpu = gpu and next((lane for lane in race_data["lanes"] if lane["kind"] == "CPU"
                        and lane["machine_id"] == gpu["machine_id"]), None)
    falls = [fall for width in (cpu and race_data["widths"] or [])
             if (fall := _fall_at(gpu, cpu, str(width))) is not None]
    return ((gpu, cpu), max(falls, key=lambda found: int(found[0]))) if falls else None


def _fall_at(gpu: dict, cpu: dict, width: str) -> tuple[str, str, str, dict] | None:
    """(width, first batch, last batch, {"gpu", "cpu": epoch at first ÷ epoch at last}) at one width, or None."""
    if width not in gpu["epochs"] or width not in cpu["epochs"]:
        return None
    batches = sorted(set(gpu["epochs"][width]) & set(cpu["epochs"][width]), key=int)
    if len(batches) < 2:
        return None
    # Ends the machine was steady at, where there are such: a fall from a changed-state epoch measures the change,
    # and one from an epoch out of line with a neighbour (↑, or slower steps than at twice the batch) the slowdown.
    steady = [b for b in batches if not any("unsettled" in lane["epochs"][width][b].get("caveats", [])
                                            or race.longer_than_half(lane, width, b)
                                            or race.at_double_pace(lane, width, b) is not None
                                            for lane in (gpu, cpu))]
    first, last = (steady[0], steady[-1]) if len(steady) > 1 else (batches[0], batches[-1])
    return width, first, last, {kind: lane["epochs"][width][first]["seconds"] / lane["epochs"][width][last]["seconds"]
                                for kind, lane in (("gpu", gpu), ("cpu", cpu))}


@fact
def race_estimate_flat(data: Dataset) -> str:
    """Whether the estimated GPU's step is bound by its host's issuing at every size (then its flat
    step, and its epoch halving with the batch, are the model's, not a finding); with measured lanes only, how far
    a GPU's epoch and its CPU's fell across the batches (_measured_fall)."""
    race_data = race.race_data(data)
    estimate = next((lane for lane in race_data["lanes"] if lane["estimate"]), None)
    if estimate is None:
        return _measured_fall(race_data)
    bound, raced = race.host_bound_sizes(data, estimate)
    if bound == raced:
        return ("This build's GPU lane cannot show that point. Its step time is flat by construction: at every size, "
                "the build host sends the work more slowly than the modelled GPU runs it. So its epoch keeps halving")
    return (f"This build's GPU lane shows that point only in part. At {bound} of the {raced} sizes, "
            "the build host sends "
            "the work more slowly than the modelled GPU runs it, so its step time is flat there by construction")


@fact
def race_opening(data: Dataset) -> str:
    """Where the live race opens (race.opening, which the page's script reads), so the intro prepares the race a
    reader first starts (#39 read: the intro named two corners, and Start raced a third setting)."""
    race_data = race.race_data(data)
    if not race_data["lanes"]:
        raise MissingData("no epoch times to race")
    batch, width = race_data["opening"]["batch"], race_data["opening"]["width"]
    # The network by its sizes, from the experiment's declarations (#39 read: "the lessons' small network" named none).
    model = experiments.declared("training_step")
    small = (f": the {model['INPUTS']}→{width}→{model['CLASSES']} network the lessons use"
             if width == PREFERRED_WIDTH else "")
    return f"The race opens at batch {batch} and width {width}{small}"


@fact
def race_smallest_batch(data: Dataset) -> str:
    """A sentence: who finishes an epoch first at the smallest raced batch (or a tie), at the widest width, as the
    guide's first step races it (#39 read: the step showed one width and the text quoted another)."""
    race_data = race.race_data(data)
    return _verdict(data, "smallest", str(max(race_data["widths"])) if race_data["lanes"] else None)


@fact
def race_middle_batches(data: Dataset) -> str:
    """The guide's second step in this build's numbers: who finishes first at batches 32 and 128 at the widest width
    (#39 read: the one step with no numbers)."""
    race_data = race.race_data(data)
    if not race_data["lanes"]:
        raise MissingData("no epoch times to race")
    widest = str(max(race_data["widths"]))
    said = [_verdict(data, str(batch), widest) for batch in GUIDE_MIDDLE if batch in race_data["batches"]]
    if not said:  # a quick build races fewer batches: its buttons then leave the batch as it was
        return f"the race has no epoch at batch {GUIDE_MIDDLE[0]} or {GUIDE_MIDDLE[1]}, so this step cannot show them"
    return ". ".join([said[0]] + [capitalised(s) for s in said[1:]])  # the page opens it: "In this build, "


GUIDE_MIDDLE = (32, 128)  # the race page's second guided step: its two buttons


@fact
def race_narrow_largest(data: Dataset) -> str:
    """A sentence: who finishes an epoch first at the largest raced batch at the width the race opens at, as the
    guide's last step races it."""
    race_data = race.race_data(data)
    return _verdict(data, "largest", str(race_data["opening"]["width"]) if race_data["lanes"] else None)


@fact
def race_largest_batch(data: Dataset) -> str:
    """A sentence: who finishes an epoch first at the largest raced batch (or a tie), at the widest width: the width
    the guide's batch-512 step races and the sentence before it reads (_measured_fall; #39 read: one bullet, one
    width)."""
    race_data = race.race_data(data)
    return _verdict(data, "largest", str(max(race_data["widths"])) if race_data["lanes"] else None)


def _estimate_trails(lanes: list[dict]) -> tuple[int, int, dict[str, dict[int, list[int]]]]:
    """Where another machine's CPU lane beats the estimated GPU by more than both spreads (its upper quartile below
    the estimate's lower band edge): (sizes lost, sizes raced, machine id -> {width: the batches it wins at})."""
    estimate = next(lane for lane in lanes if lane["estimate"])
    sizes = sum(len(by_batch) for by_batch in estimate["epochs"].values())
    beaten: dict[str, dict[int, list[int]]] = {}
    lost: set[tuple[str, str]] = set()  # the sizes where some other CPU lane does
    for lane in lanes:
        if lane["kind"] != "CPU" or lane["estimate"] or lane["machine_id"] == estimate["machine_id"]:
            continue
        for width, by_batch in estimate["epochs"].items():
            for batch, modelled in by_batch.items():
                theirs = lane["epochs"].get(width, {}).get(batch)
                if theirs and theirs["q3"] < modelled["q1"]:
                    lost.add((width, batch))
                    beaten.setdefault(lane["machine_id"], {}).setdefault(int(width), []).append(int(batch))
    return len(lost), sizes, beaten


def _sizes_words(by_width: dict[int, list[int]]) -> str:
    """"width 8: batch 4; width 32: batches 1 and 2"."""
    return "; ".join(f"width {w}: batch{'es' if len(bs) > 1 else ''} {listing([str(b) for b in sorted(bs)])}"
                     for w, bs in sorted(by_width.items()))


@section
def estimate_trails(data: Dataset) -> Html:
    """Where another machine's CPU lane beats the estimated GPU beyond both spreads: a one-line count, then a table
    of every CPU's fitted cost per operation and the sizes it wins at (the estimate issues at its host's cost, which
    a faster host beats); or one line that none does. Nothing where no lane is estimated: the page then has no
    estimate to qualify."""
    lanes = race.race_data(data)["lanes"]
    if not any(lane["estimate"] for lane in lanes):
        return Html("")
    lost, sizes, beaten = _estimate_trails(lanes)
    if not beaten:
        return html("<p>No other machine's CPU lane beats the estimated GPU beyond both spreads.</p>")
    estimate = next(lane for lane in lanes if lane["estimate"])
    lead = html("<p>At {} of the {} sizes raced, at least one other machine's CPU beats the estimated GPU. Even its "
                "slower runs (upper quartile) beat the estimate's fastest ({}× its value).</p>", lost, sizes,
                f"{estimate['band'][0]:.2g}")
    host = next(m for m in data.machines if m.id == estimate["machine_id"])  # whose cost per operation it issues at
    rows = []
    for machine in [host] + [m for m in data.machines if m is not host]:
        cost, wins = gpu_estimate.host_op_seconds(machine), beaten.get(machine.id)
        if cost or wins:
            name = machine.label + (", the estimate's host" if machine is host else "")
            rows.append([name, si(cost, "s") if cost else "not fitted", _sizes_words(wins) if wins else "none"])
    why = ("The estimate sends its work at its host's cost per operation, fitted to the measured steps "
           "(Predicting a step). A host with a lower cost would drive the same GPU faster.")
    return join([lead, table(["CPU", "cost per operation", "beats the estimated GPU at"], rows,
                             caption="Each CPU's cost per operation, and where its lane beats the estimated GPU"),
                 note(why)])


@fact
def race_lanes_kind(data: Dataset) -> str:
    """What the lanes are: all measured, or measured CPU with an estimated GPU."""
    lanes = race.race_data(data)["lanes"]
    if any(lane["estimate"] for lane in lanes):
        # The band's numbers are in the grid's note, once on this page.
        return ("CPU lanes replay measured epochs: the build host's, and those in the committed files. No GPU was "
                "measured, so the GPU lane is an estimate, mostly of the build host's time to hand a GPU its work. "
                "Nobody has checked it against a real GPU")
    if not lanes:
        return "No epoch times were measured in this build"
    return "Every lane replays a measured epoch: the build host's, and those in the committed files"


@fact
def race_estimate_rule(data: Dataset) -> str:
    """When an estimated GPU lane races: this build's case first, so the rule never reads as a promise the page
    does not keep."""
    if any(lane["estimate"] for lane in race.race_data(data)["lanes"]):
        return "No GPU was measured, so an estimated lane stands in, from the"
    return "This build measured a GPU, so no estimated lane races. A build without one races a lane from the"
