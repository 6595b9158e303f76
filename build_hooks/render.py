"""What every view shares: formatting primitives (numbers, tables, figures, marks) and the few
sentences every page words the same way (the provenance line, ratios with their interval,
"more machines", a machine's table per experiment), which read the dataset they are given.

Nothing here measures, and no experiment's view knows another's internals: the shared
sentences live here so one page cannot word them differently from the next. (They are
prose, not formatting: a module of verdict templates is where they belong.)

HTML is built so that the safe path is the only one: `table`, `figure`,
`missing` and `html` escape every value they are given unless it is `Html` (markupsafe's
Markup, made only by these helpers and by `esc`), attribute values included, so a
results file's `1" onfocus="…` or `<img onerror>` is shown as text wherever a view puts
it. In Markdown, strings from results files go through `untrusted.placeholder`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from markupsafe import Markup as Html

from build_hooks import conditions, stats, untrusted
from build_hooks.dataset import Dataset, Machine

esc = untrusted.escape  # text -> Html, escaped, bidi controls removed
DEVICE_NAME = {"cpu": "CPU", "cuda": "GPU", "mps": "GPU (MPS)"}
VERSIONED = ("torch", "numpy", "python")


class MissingData(LookupError):
    """A view needs data the dataset does not have (re-exported as page.MissingData)."""


def si(value: float, unit: str, digits: int = 3) -> str:
    """`value` with an SI prefix and `digits` significant figures: 1.23e-4 s -> 123 µs."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    prefixes = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""),
                (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
    scale, prefix = next(((s, p) for s, p in prefixes if abs(value) >= s), prefixes[-1])
    scaled = value / scale
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(scaled)))))
    return f"{scaled:.{decimals}f} {prefix}{unit}"


def listing(items: list[str]) -> str:
    """Items as prose: "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def multiple(ratio: float) -> str:
    """A ratio as prose: 1.5×, 12×."""
    return f"{ratio:.1f}×" if ratio < 10 else f"{ratio:.0f}×"


CANARY_MOVED = 1.3  # a canary whose readings over an experiment span more than this has seen the machine move


def canary_moves(machine: Machine, groups: list[str]) -> list[str]:
    """Which canaries moved beyond CANARY_MOVED over these experiments' rounds, in words."""
    words = {"all_threads": "all-thread", "memory": "memory", "one_thread": "one-core"}
    moved = []
    for kind, word in words.items():
        readings = [x for g in groups for x in
                    (machine.doc["experiments"].get(g) or {}).get("conditions", {}).get("canaries", {}).get(kind, [])]
        ratio = conditions.drift(readings)
        if ratio is not None and ratio > CANARY_MOVED:
            moved.append(f"the {word} canary moved by {100 * (ratio - 1):.0f}%")
    return moved


def same_configuration(pairs: list[tuple[dict, dict]], machine: Machine | None = None,
                       groups: list[str] = ()) -> str:
    """How points of one experiment agree with the same configurations measured by another.

    The two were timed at different moments, so their rounds cannot be paired: they are
    compared by their quartiles (stats.unpaired_ratio). A difference is explained by the
    machine's state only where the canaries of those experiments saw it move.
    """
    ratios = [a["median"] / b["median"] for a, b in pairs if stats.unpaired_ratio(a, b).verdict != 0]
    if not ratios:
        return f"agree with them ({stats.LEVEL_WORDS})"
    agree = (f"agree ({stats.LEVEL_WORDS}) for {len(pairs) - len(ratios)} of {len(pairs)} and differ"
             if len(ratios) < len(pairs) else "differ")
    spread = (f"by {100 * (ratios[0] - 1):+.0f}%" if len(ratios) == 1 else
              f"by {100 * (min(ratios) - 1):+.0f}% to {100 * (max(ratios) - 1):+.0f}%")
    rest = "" if len(ratios) == len(pairs) else " for the other" if len(ratios) == 1 else " for the others"
    return f"{agree} {spread}{rest}{_why(machine, groups)}"


def _why(machine: Machine | None, groups: list[str]) -> str:
    """What the canaries say about a difference between two experiments; nothing invented."""
    if machine is None:
        return ". It is the same step, timed at another moment"
    moved = canary_moves(machine, list(groups))
    if moved:
        return f". Over these experiments, {' and '.join(moved)} (see About the data)"
    return (". It is the same step, timed at another moment. The canaries stayed within "
            f"{100 * (CANARY_MOVED - 1):.0f}% (see About the data)")


def ratio_sentence(ratio: stats.Ratio, larger: str, smaller: str, same: str) -> str:
    """`larger`, `smaller` or `same` as the ratio's verdict says; "{}" in `larger` takes the
    ratio with its interval, in `smaller` the inverted ratio (always read as "N× ...")."""
    if ratio.verdict > 0:
        return larger.format(times_with_interval(ratio))
    if ratio.verdict < 0:
        return smaller.format(times_with_interval(ratio.inverted()))
    return same


def times_with_interval(ratio: stats.Ratio) -> str:
    """A measured ratio (of the medians) with its interval, named for what it is: "1.3× (1.2×
    to 1.4× over all 3 rounds)", "(… in the middle 3 of 5 rounds)", "(2.2× in each of the 3
    rounds)", "(… between the quartiles)"."""
    low, high = multiple(ratio.low), multiple(ratio.high)
    if not ratio.paired:
        spread = f"{low} between the quartiles" if low == high else f"{low} to {high} between the quartiles"
    elif low == high:
        which = f"the {ratio.rounds}" if ratio.kept == ratio.rounds else f"the middle {ratio.kept} of {ratio.rounds}"
        spread = f"{low} in each of {which} rounds"
    else:
        which = (f"over all {ratio.rounds}" if ratio.kept == ratio.rounds
                 else f"in the middle {ratio.kept} of {ratio.rounds}")
        spread = f"{low} to {high} {which} rounds"
    if ratio.paired and not ratio.low <= ratio.value <= ratio.high:
        spread += (", though the medians of all samples differ by more" if ratio.value > ratio.high
                   else ", though the medians of all samples differ by less")
    return f"{multiple(ratio.value)} ({spread})"


def first_with(data: Dataset, group: str) -> Machine:
    """The first machine (the build host when it has it) that measured `group`."""
    machines = data.with_experiment(group)
    if not machines:
        raise MissingData(f"no machine has measured {group}")
    return machines[0]


def gpu_with(data: Dataset, group: str) -> Machine | None:
    """The first machine that measured `group` on a GPU, if any."""
    return next((m for m in data.with_experiment(group) if m.gpu_device(group)), None)


def why_no_transfer(machine: Machine) -> str:
    """Why a machine has no host↔device copies, in words: no GPU, or one that shares the CPU's memory."""
    if machine.gpu is None:
        return "it has no GPU, so there is no host↔device bus to measure"
    if machine.uses_mps:
        return "its GPU (Apple's, through MPS) shares the CPU's memory, so there is no host↔device bus to measure"
    return "its GPU's copies were not measured"


def versus_peak(rate: float, machine: Machine, fast_end: float | None = None, explain: bool = True) -> str:
    """A rate as a percentage of the CPU's theoretical peak, "above" only when it is above.

    `fast_end` is the machine's best matrix-product rate at the fast end of its spread: when
    even that exceeds the peak computed from the reported clock, the cores ran faster than
    that clock (boost, or a host that changed state), so the true peak is higher and the
    percentage overstates the fraction reached; the sentence says so. With explain=False the
    caveat is one clause: its explanation lives on the page that states it once (why-gpu).
    """
    cpu = machine.cpu
    peak = cpu["fp32_peak_flops"]
    if not peak:
        return "(this machine does not expose its clock, so no peak can be computed)"
    share = f"{100 * rate / peak:.0f}%"
    overstated = fast_end is not None and fast_end > peak
    if rate > peak:
        text = f"above this CPU's theoretical fp32 peak of {si(peak, 'FLOP/s')} ({share} of it)"
    elif not explain:
        return (f"{share} of this CPU's theoretical fp32 peak of {si(peak, 'FLOP/s')}, "
                + ("an overstatement, since its cores beat that peak" if overstated else "at most"))
    else:
        clock = si(cpu["clock_hz"], "Hz") if cpu.get("clock_hz") else "reported"
        text = (f"{share} of this CPU's theoretical fp32 peak of {si(peak, 'FLOP/s')}. That peak is computed from "
                f"the {clock} clock its operating system reports. Cores that boost above it have a higher true "
                "peak, so the share reached is at most this")
    if overstated and explain:
        text += (f". At the fast end of their spread, this machine's matrix products reached "
                 f"{si(fast_end, 'FLOP/s')}, above that peak. So its cores ran faster than the "
                 f"{si(cpu['clock_hz'], 'Hz')} clock the operating system reports (boost clocks, or a host "
                 "that changed state). The true peak is higher, and the percentage overstates the share reached")
    return text


def version_note(machine: Machine, host: Machine | None) -> Html:
    """A visible note when a committed file was measured with other library versions."""
    if host is None or machine is host:
        return Html("")
    ours, theirs = host.doc["software"], machine.doc["software"]
    differences = [f"{name} {theirs[name]} (this build: {ours[name]})"
                   for name in VERSIONED if theirs.get(name) != ours.get(name)]
    if not differences:
        return Html("")
    return html(' <strong class="crossover-version-note">Measured with different library versions: {}; '
                "compare with care.</strong>", ", ".join(differences))


def html(template: str, *values: object, **named: object) -> Html:
    """`template` (HTML written by a view) with `values` filled in as text unless they are Html.

    Format specs work as in str.format: html("<td>{:.1f}</td>", 0.25).
    """
    return Html(template).format(*map(_as_html, values), **{k: _as_html(v) for k, v in named.items()})


def _as_html(value: object) -> object:
    """Html as it is; numbers as they are (so format specs apply); anything else as escaped text."""
    if isinstance(value, Html) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    return esc(value)


def join(parts, separator: str = "") -> Html:
    """Html parts (text parts escaped) joined by a separator written by the view."""
    return Html(separator).join(_as_html(part) for part in parts)


def plain(value: object) -> str:
    """What a reader hears of a cell or caption: Html without its tags, or the text itself."""
    return value.striptags() if isinstance(value, Html) else str(value)


def table(head: list, rows: list[list], caption: object = "", table_id: str = "") -> Html:
    """An HTML table in the site's scrolling wrapper; every head, cell and caption is text
    (escaped here) unless it is Html."""
    th = join(html("<th>{}</th>", h) for h in head)
    body = join(html("<tr>{}</tr>", join(html("<td>{}</td>", c) for c in row)) for row in rows)
    ident = html(' id="{}"', table_id) if table_id else ""
    cap = html("<caption>{}</caption>", caption) if caption else ""
    # A wide table scrolls sideways inside its wrapper; keyboard users reach that scroll
    # area only if the wrapper can take focus, and screen readers need its name. Its cells are
    # measured numbers, not words anyone searches for: the search index leaves them out.
    name = plain(caption) or "Table: " + ", ".join(plain(h) for h in head)
    return html('<div class="crossover-table" role="region" tabindex="0" aria-label="{}" data-search-exclude>'
                "<table{}>{}<thead><tr>{}</tr></thead><tbody>{}</tbody></table></div>",
                name, ident, cap, th, body)


def figure(svg: Html, caption: object) -> Html:
    """A plot (Html from plots) with its caption (text unless Html)."""
    return html('<figure class="crossover-figure">{}<figcaption>{}</figcaption></figure>', svg, caption)


def missing(text: object) -> Html:
    return html('<p class="crossover-missing">{}</p>', text)


def note(text: object) -> Html:
    """A note under a table or figure (text unless Html)."""
    return html('<p class="crossover-note">{}</p>', text)


MARKS = {  # symbol, and what it means in words (the note under a table)
    "noisy": ("†", lambda: f"noisy: {stats.noise_rule()}"),
    "few": ("‡", lambda: f"too few samples: fewer than {stats.MIN_SAMPLES}, so the spread is unknown"),
    "load": ("*", lambda: "measured while other processes used the CPU: treat with care"),
    "unsettled": ("§", lambda: "the machine changed state while this point was measured and no steady "
                               "re-measurement fitted the time box (About the data): treat with care"),
}


MARK_TITLES = {"noisy": "noisy", "few": "too few samples", "load": "taken under load",
               "unsettled": "the machine's state moved under this point (About the data says which canary saw it)"}


def mark(point_stats: dict, extra: dict, timing: bool = True) -> Html:
    """Superscript symbols for a point's caveats, each with a tooltip that gives its numbers."""
    titles = {**MARK_TITLES, "few": f"only {len(point_stats['data'])} samples"}
    if point_stats["median"]:
        titles["noisy"] = f"IQR is {iqr_share(point_stats)} of the median"
    return marks(stats.caveats(point_stats, extra, timing), titles)


def iqr_share(point_stats: dict) -> str:
    """The IQR as a share of the median: whole percent, but one decimal where whole percent would
    print the noisy threshold itself, so a marked 10.2% and an unmarked 9.9% do not both read 10%."""
    share = 100 * point_stats["iqr"] / point_stats["median"]
    return f"{share:.1f}%" if round(share) == round(100 * stats.NOISY_IQR_RATIO) else f"{share:.0f}%"


def marks(kinds: list[str], titles: dict[str, str] = MARK_TITLES) -> Html:
    """Superscript symbols for caveats already judged (stats.caveats), each with a tooltip."""
    return join(html('<sup title="{}">{}</sup>', titles[k], MARKS[k][0]) for k in kinds)


CAVEAT_WORDS = {"noisy": "noisy", "few": "from too few samples", "load": "taken under load",
                "unsettled": "taken while the machine changed state"}


def caveat(bench: dict) -> str:
    """A quoted point's caveats in words, for a sentence: " (noisy; taken under load)", or ""."""
    kinds = stats.caveats(bench["stats"], bench["extra_info"], bench.get("unit", "s") == "s")
    return f" ({'; '.join(CAVEAT_WORDS[k] for k in kinds)}: treat with care)" if kinds else ""


def marks_note_for(benches: list[dict]) -> Html:
    """The legend for the caveats of these measured points (nothing when none has any)."""
    return marks_note({k for b in benches
                       for k in stats.caveats(b["stats"], b["extra_info"], b["unit"] == "s")})


def marks_note(kinds: set[str]) -> Html:
    """The legend for the symbols that appear in a table (nothing when none do)."""
    if not kinds:
        return Html("")
    # "Key:" opens it as a sentence of its own: after a table the legend must not read as the end of a fact.
    return note("Key: " + "; ".join(f"{MARKS[k][0]} {MARKS[k][1]()}" for k in MARKS if k in kinds) + ".")


def measured_value(point_stats: dict, extra: dict, unit: str, per: str = "") -> Html:
    """A median with the digits its spread supports (and what it is `per`), then its caveat marks."""
    timing = unit == "s"
    digits = stats.significant_figures(point_stats) if timing else 3
    return esc(si(point_stats["median"], unit, digits) + per) + mark(point_stats, extra, timing)


def provenance(machine: Machine, host: Machine | None = None) -> Html:
    """One line saying where, when and with what a machine's numbers were measured."""
    cpu, sw, commit = machine.cpu, machine.doc["software"], machine.doc["commit_info"]
    peak = si(cpu["fp32_peak_flops"], "FLOP/s") if cpu["fp32_peak_flops"] else "unknown"
    clock = si(cpu["clock_hz"], "Hz") if cpu["clock_hz"] else "clock unknown"
    gpu = machine.gpu
    gpu_text = f"GPU {gpu['name']} ({_gpu_stack(machine)})" if gpu else "no GPU"
    commit_text = commit["id"][:10] if commit["id"] else "uncommitted"
    if commit["dirty"]:
        commit_text += " (modified)"
    return html(
        '<p class="crossover-provenance">Measured on <strong>{}</strong>, {} threads at {}; {}. '
        "Its fp32 peak is {} = {}.{} "
        "Python {}, torch {} (BLAS {}), numpy {}, fp32 matmul precision “{}”. {}, commit {}, {} ({}).{}</p>",
        cpu["brand"], cpu["threads_used"], clock, gpu_text, peak, cpu["peak_formula"], _peak_beaten(machine),
        sw["python"], sw["torch"],
        sw["blas"], sw["numpy"], sw["float32_matmul_precision"], machine.doc["datetime"][:10], commit_text,
        machine.origin, machine.source, version_note(machine, host))


def _peak_beaten(machine: Machine) -> str:
    """" That is a floor, not a ceiling: ..." when the machine's own matrix products beat the peak
    computed from its reported clock (its cores ran faster than that clock), else nothing."""
    from build_hooks import analysis  # views' helper; imported here to keep render's imports light
    from build_hooks.dataset import not_recording

    with not_recording():  # about the machine, not an input of the section it sits under
        best = analysis.rate_above_peak(machine)
    if not best:
        return ""
    return (f" That is a floor, not a ceiling: its square matrix-product sweep reached {si(best, 'FLOP/s')}. "
            "So its cores ran above the reported clock.")


def _gpu_stack(machine: Machine) -> str:
    """The GPU's memory and software stack as its file records them: CUDA and driver, or Metal (MPS)."""
    gpu = machine.gpu
    memory = si(gpu["memory_bytes"], "B") if gpu.get("memory_bytes") else "memory not reported"
    if gpu.get("cuda_version"):
        return f"{memory}, CUDA {gpu['cuda_version']}, driver {gpu.get('driver')}"
    return f"{memory} shared with the CPU, through Metal" if machine.uses_mps else memory


def per_machine(data: Dataset, group: str, render: Callable[[Machine], Html]) -> Html:
    """`render(machine)` for the machines a page shows for `group`, each with its provenance."""
    machines = data.shown(group)
    if not machines:
        return missing("Not measured on any machine in this build.")
    parts = []
    for machine in machines:
        heading = html("<p><strong>{}</strong></p>", machine.label) if len(machines) > 1 else Html("")
        parts.append(heading + render(machine) + provenance(machine, data.host))
    return join(parts, "\n") + more_machines(data, group)


_PROVENANCE = re.compile(r'<p class="crossover-provenance">(Measured on <strong>.*?</strong>).*?</p>', re.S)


def provenance_once(page_html: str) -> str:
    """A machine's provenance line in full the first time a page shows it; after that, its name and "as above".
    Every section states where its numbers come from, so a page of four sections over three machines said the
    same dozen lines again (#39: caveats stated once per page). Runs on the finished page, after its sections."""
    seen: set[str] = set()

    def once(match: re.Match) -> str:
        if match.group(0) in seen:
            return f'<p class="crossover-provenance crossover-provenance--again">{match.group(1)}, as above.</p>'
        seen.add(match.group(0))
        return match.group(0)

    return _PROVENANCE.sub(once, page_html)


def more_machines(data: Dataset, group: str | None = None) -> Html:
    """Where the machines a page leaves out are: nothing when it shows them all."""
    hidden = data.not_shown(group)
    if not hidden:
        return Html("")
    return note(html('{} more machine{} measured this too: every machine is in the <a href="{}">gallery</a> and in '
                     '<a href="{}">data/results.json</a>.', hidden, "s" if hidden != 1 else "",
                     SITE_ROOT + "gallery/", SITE_ROOT + "data/results.json"))


# Links to other pages start here, and each page's hooks make them relative to that page
# (site_root_links): one rendering serves home, a lesson page or a site served under a sub-path.
SITE_ROOT = "crossover-site-root:/"


def site_root_links(html: str, depth: int) -> str:
    """`html` with every link to SITE_ROOT made relative to a page `depth` folders below the site root.
    Only whole href attributes are rewritten, and text from a results file is escaped before it gets
    here, so a name that imitates the marker stays text."""
    return str(html).replace(f'href="{SITE_ROOT}', f'href="{"../" * depth}')


def medians_table(data: Dataset, group: str, columns: list[tuple[str, str]],
                  after: Callable[[Machine], Html] = lambda m: Html("")) -> Html:
    """A plain table of an experiment's medians with the given (param, heading) columns, per machine;
    `after(machine)` follows each machine's table (a note about that machine's points)."""
    def one(m: Machine) -> Html:
        points = m.measured(group)
        rows = [[b["params"].get(p, "") for p, _ in columns]
                + [measured_value(b["stats"], b["extra_info"], "s")] for b in points]
        return table([h for _, h in columns] + ["median time"], rows) + marks_note_for(points) + after(m)
    return per_machine(data, group, one)
