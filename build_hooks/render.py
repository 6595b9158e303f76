"""What every view shares: formatting primitives (numbers, tables, figures, marks) and the few
page parts every page lays out the same way (the provenance line, "more machines", a machine's
table per experiment). The sentences several views word alike are in wording.py.

Nothing here measures, and no experiment's view knows another's internals.

HTML is built so that the safe path is the only one: `table`, `figure`,
`missing` and `html` escape every value they are given unless it is `Html` (markupsafe's
Markup, made only by these helpers and by `esc`), attribute values included, so a
results file's `1" onfocus="…` or `<img onerror>` is shown as text wherever a view puts
it. In Markdown, strings from results files go through `untrusted.placeholder`.
"""

from __future__ import annotations

import contextvars
import math
import re
from collections.abc import Callable

from markupsafe import Markup as Html

from build_hooks import gate, stats, untrusted
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


def rough_count(value: float) -> str:
    """A count to two significant figures, with thousands separators: 5423 -> "5,400" (an estimate or a ratio of
    noisy medians is not known to the unit)."""
    return f"{float(f'{value:.2g}'):,.0f}"


def listing(items: list[str]) -> str:
    """Items as prose: "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def multiple(ratio: float) -> str:
    """A ratio as prose: 1.5×, 12×, 2,090× (three figures at most: no measurement here is finer)."""
    if ratio < 10:
        return f"{ratio:.1f}×"
    return f"{ratio:.0f}×" if ratio < 1000 else f"{float(f'{ratio:.3g}'):,.0f}×"


def first_with(data: Dataset, group: str) -> Machine:
    """The first machine (the build host when it has it) that measured `group`."""
    machines = data.with_experiment(group)
    if not machines:
        raise MissingData(f"no machine has measured {group}")
    return machines[0]


def on_machine(data: Dataset, machine: Machine) -> str:
    """How a sentence opens on one machine's numbers: "On the build host", or the machine's name (untrusted text)."""
    return "On the build host" if machine is data.host else f"On {untrusted.placeholder(machine.label)}"


def gpu_with(data: Dataset, group: str) -> Machine | None:
    """The first machine that measured `group` on a GPU, if any."""
    return next((m for m in data.with_experiment(group) if m.gpu_device(group)), None)


def version_note(machine: Machine, host: Machine | None, full: bool = True) -> Html:
    """A visible note when a committed file was measured with other library versions: each one named, or (`full`
    False, under a lesson's result) said in a few words, since the full record names them."""
    if host is None or machine is host:
        return Html("")
    ours, theirs = host.doc["software"], machine.doc["software"]
    differences = [f"{name} {theirs[name]} (this build: {ours[name]})"
                   for name in VERSIONED if theirs.get(name) != ours.get(name)]
    if not differences:
        return Html("")
    if not full:
        return html(' <strong class="crossover-version-note">Other library versions than this build\'s: compare with '
                    "care.</strong>")
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


# A table this short but this wide is drawn as cards on a phone (crossover.css): one block per row, each value
# under its heading's name, so no column of an answer hides off-screen. Longer tables scroll, first column fixed.
CARD_MAX_ROWS, CARD_MIN_COLUMNS = 8, 4


def table(head: list, rows: list[list], caption: object = "", table_id: str = "") -> Html:
    """An HTML table in the site's scrolling wrapper; every head, cell and caption is text
    (escaped here) unless it is Html."""
    th = join(html("<th>{}</th>", h) for h in head)
    cards = len(rows) <= CARD_MAX_ROWS and len(head) >= CARD_MIN_COLUMNS
    # Only a card needs its heading beside each value: a long table's cells stay bare (the race page has a budget).
    cell = (lambda label, c: html('<td data-label="{}">{}</td>', label, c)) if cards else (lambda _, c: html(
        "<td>{}</td>", c))
    labels = [plain(h) for h in head]
    body = join(html("<tr>{}</tr>", join(cell(labels[i] if i < len(labels) else "", c) for i, c in enumerate(row)))
                for row in rows)
    ident = html(' id="{}"', table_id) if table_id else ""
    cap = html("<caption>{}</caption>", caption) if caption else ""
    # A wide table scrolls sideways inside its wrapper; keyboard users reach that scroll
    # area only if the wrapper can take focus, and screen readers need its name. Its cells are
    # measured numbers, not words anyone searches for: the search index leaves them out.
    name = plain(caption) or "Table: " + ", ".join(plain(h) for h in head)
    if _table_owner.get():  # per_machine draws one table per machine: each region gets a name of its own
        name += f" ({_table_owner.get()})"
    return html('<div class="crossover-table{}" role="region" tabindex="0" aria-label="{}" data-search-exclude>'
                "<table{}>{}<thead><tr>{}</tr></thead><tbody>{}</tbody></table></div>",
                Html(" crossover-table--cards" if cards else ""), name, ident, cap, th, body)


TABLE_MACHINES = 6  # rows of a one-row-per-machine table on a lesson page; the gallery lists every machine


def machines_table(head: list, rows: list[list], caption: str) -> Html:
    """A table with one row per machine, cut to TABLE_MACHINES rows; the caption says how many more the gallery
    holds (fifty committed files must not make a fifty-row lesson table)."""
    more = len(rows) - TABLE_MACHINES
    return table(head, rows[:TABLE_MACHINES],
                 caption=caption + (f"; {more} more machines are in the gallery" if more > 0 else ""))


def fold_constant_columns(head: list, rows: list[list], columns: list[int],
                          min_rows: int = 2) -> tuple[list, list[list], list[Html]]:
    """`head` and `rows` without those of `columns` that hold one value in every row (of `min_rows` or more rows),
    and for each column left out, "its heading: its value", to say once beside the table instead of in every row."""
    constant = [c for c in columns if len(rows) >= min_rows and len({str(row[c]) for row in rows}) == 1]
    said = [html("{}: {}", head[c], rows[0][c]) for c in constant]
    keep = [i for i in range(len(head)) if i not in constant]
    return [head[i] for i in keep], [[row[i] for i in keep] for row in rows], said


def figure(svg: Html, caption: object) -> Html:
    """A plot (Html from plots) with its caption (text unless Html)."""
    return html('<figure class="crossover-figure">{}<figcaption>{}</figcaption></figure>', svg, caption)


def missing(text: object) -> Html:
    return html('<p class="crossover-missing">{}</p>', text)


def note(text: object) -> Html:
    """A note under a table or figure (text unless Html)."""
    return html('<p class="crossover-note">{}</p>', text)


MARKS = {  # symbol, its name and what it means: the key under a table, one short sentence per mark
    "noisy": ("†", "Noisy", stats.noise_rule),  # the interquartile range, in words a learner reads
    "few": ("‡", "Too few samples", lambda: f"fewer than {stats.MIN_SAMPLES}, so its spread, † included, is rough"),
    "load": ("*", "Under load", lambda: "other processes used the CPU meanwhile"),
    "unsettled": ("§", "Changed state", lambda: "the machine's speed changed while this was measured, and no time "
                                                "was left to measure it again (About the data)"),
    # Of a machine, not of a point: one that began most rounds slow is marked wherever its numbers are read.
    "slow": ("°", "Slow machine", lambda: "it began most rounds running slow (gallery)"),
}


MARK_TITLES = {"noisy": "noisy", "few": "too few samples", "load": "taken under load",
               "unsettled": "the machine changed state", "slow": "began most rounds slow"}


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
                "unsettled": "taken while the machine changed state", "slow": "its machine began most rounds slow"}


def mostly_slow(machine: Machine) -> bool:
    """Whether a machine began most of its rounds in a slow state (gate.slow_start_share over gate.MOSTLY_SLOW)."""
    share = gate.slow_start_share(machine.doc)
    return share is not None and share > gate.MOSTLY_SLOW


def slow_mark(machine: Machine) -> Html:
    """The "slow machine" mark after a machine's name, or nothing; its key comes from marks_note({"slow"})."""
    return marks(["slow"]) if mostly_slow(machine) else Html("")


def slow_words(machine: Machine) -> str:
    """The same caveat in words, for a sentence: " (its machine began most rounds slow)", or ""."""
    return f" ({CAVEAT_WORDS['slow']})" if mostly_slow(machine) else ""


def caveat_words(kinds) -> list[str]:
    """Caveat kinds in words, in the keys' order ("noisy", "from too few samples", ...)."""
    return [CAVEAT_WORDS[k] for k in MARKS if k in kinds]


def caveat(bench: dict) -> str:
    """A quoted point's caveats in words, for a sentence: " (noisy; taken under load)", or "": a short mark in
    brackets, explained once on About the data, never a sentence of its own."""
    words = caveat_words(stats.caveats(bench["stats"], bench["extra_info"], bench.get("unit", "s") == "s"))
    return f" ({'; '.join(words)})" if words else ""


def point_mark(bench: dict | None) -> Html:
    """A measured point's caveat marks (mark), or nothing where there is no point."""
    return mark(bench["stats"], bench["extra_info"]) if bench else Html("")


def capitalised(text: str) -> str:
    """A clause as a sentence's start: its first letter upper-case, the rest as written."""
    return text[:1].upper() + text[1:]


def marks_note_for(benches: list[dict], also: set[str] = frozenset()) -> Html:
    """The legend for the caveats of these measured points, and for the marks `also` names (nothing when none)."""
    return marks_note({k for b in benches
                       for k in stats.caveats(b["stats"], b["extra_info"], b["unit"] == "s")} | set(also))


def marks_note(kinds: set[str]) -> Html:
    """The legend for the symbols that appear in a table (nothing when none do)."""
    if not kinds:
        return Html("")
    # A list, one short sentence per mark, name first: a key read as one long sentence is hard to scan.
    items = join(html("<li>{} ({}): {}.</li>", name, symbol, meaning()) for k, (symbol, name, meaning) in MARKS.items()
                 if k in kinds)
    return html('<ul class="crossover-key" aria-label="Key to the marks">{}</ul>', items)


def median_text(point_stats: dict) -> str:
    """A timing's median with the digits its spread supports: the same figure its table prints (measured_value),
    so a sentence never says 4.75 ms beside a table's 4.7 ms."""
    return si(point_stats["median"], "s", stats.significant_figures(point_stats))


def measured_value(point_stats: dict, extra: dict, unit: str, per: str = "") -> Html:
    """A median with the digits its spread supports (and what it is `per`), then its caveat marks."""
    timing = unit == "s"
    digits = stats.significant_figures(point_stats) if timing else 3
    return esc(si(point_stats["median"], unit, digits) + per) + mark(point_stats, extra, timing)


def provenance(machine: Machine, host: Machine | None = None, headed: bool = False, full: bool = False) -> Html:
    """One line saying where, when and with what a machine's numbers were measured; `headed` when a heading right
    above names the machine, so a repeat of the line adds nothing (provenance_once drops it).

    Under a lesson's result the line is short: the hardware, torch, the date and origin, and any caveat that weakens
    the numbers, with a link to the full record. `full` gives that record (every library version, the commit and the
    file), as About the data and All measurements print it (#39 read: a five-line paragraph under every result)."""
    cpu, sw = machine.cpu, machine.doc["software"]
    clock = si(cpu["clock_hz"], "Hz") if cpu["clock_hz"] else "clock unknown"
    caveats = html("{}{}", version_note(machine, host, full), _slow_note(machine))
    if not full:
        gpu_text = f"GPU {machine.gpu['name']}" if machine.gpu else "no GPU"
        return html('<p class="crossover-provenance{}">Measured on <strong>{}</strong>, {} threads at {}; {}; '
                    'torch {}. {}, {}.{} <a href="{}data/#machines-in-this-build">Full record</a>.</p>',
                    Html(" crossover-provenance--headed" if headed else ""), cpu["brand"], cpu["threads_used"], clock,
                    gpu_text, sw["torch"], machine.doc["datetime"][:10], machine.origin, caveats, Html(SITE_ROOT))
    gpu = machine.gpu
    gpu_text = f"GPU {gpu['name']} ({_gpu_stack(machine)})" if gpu else "no GPU"
    commit = machine.doc["commit_info"]
    commit_text = commit["id"][:10] if commit["id"] else "uncommitted"
    if commit["dirty"]:
        commit_text += " (modified)"
    return html(
        # Where, when and with what; no derived figure (the peak and what beat it live on why-gpu, where they
        # are explained: said under every table they were a caveat a reader met a dozen times).
        '<p class="crossover-provenance{}">Measured on <strong>{}</strong>, {} threads at {}; {}. '
        "Python {}, torch {} (BLAS {}), numpy {}, fp32 matmul precision “{}”. {}, commit {}, {} ({}).{}</p>",
        Html(" crossover-provenance--headed" if headed else ""), cpu["brand"], cpu["threads_used"], clock, gpu_text,
        sw["python"], sw["torch"],
        sw["blas"], sw["numpy"], sw["float32_matmul_precision"], machine.doc["datetime"][:10], commit_text,
        machine.origin, machine.source, caveats)


def _slow_note(machine: Machine) -> str:
    """A machine that began most rounds slow says so in its provenance: its numbers are read wherever that is."""
    if not mostly_slow(machine):
        return ""
    short, recorded = gate.time_box_cuts(machine.doc)
    # A time box that cut most runs short weakens every number too: said beside the slow starts (About the data).
    cut = (f" Its time box cut {short} of {recorded} experiments short (About the data)." if 2 * short > recorded
           else "")
    return (f" It began {100 * gate.slow_start_share(machine.doc):.0f}% of its measurements running slow, so its "
            f"times may be pessimistic.{cut}")


def _gpu_stack(machine: Machine) -> str:
    """The GPU's memory and software stack as its file records them: CUDA and driver, or Metal (MPS)."""
    gpu = machine.gpu
    # In GiB, as the driver reports it: datasheets give GB, and the two units differ by 7%.
    memory = (f"{gpu['memory_bytes'] / 2**30:.1f} GiB usable" if gpu.get("memory_bytes") else "memory not reported")
    if gpu.get("cuda_version"):
        return f"{memory}, CUDA {gpu['cuda_version']}, driver {gpu.get('driver')}"
    return f"{memory} shared with the CPU, through Metal" if machine.uses_mps else memory


def machine_label(machine: Machine) -> Html:
    """The name over one machine's figures and tables; post_html makes it a heading at the page's next level."""
    return html('<p class="crossover-machine"><strong>{}</strong></p>', machine.label)


def per_machine(data: Dataset, group: str, render: Callable[[Machine], Html]) -> Html:
    """`render(machine)` for the machines a page shows for `group`, each with its provenance."""
    machines = data.shown(group)
    if not machines:
        return missing("Not measured on any machine in this build.")
    parts = []
    for machine in machines:
        heading = machine_label(machine) if len(machines) > 1 else Html("")
        owner = _table_owner.set(machine.label if len(machines) > 1 else "")
        try:
            drawn = render(machine)
        finally:
            _table_owner.reset(owner)
        parts.append(heading + drawn + provenance(machine, data.host, headed=len(machines) > 1))
    return join(parts, "\n") + more_machines(data, group)


# The machine whose tables per_machine is drawing, named in each table's region label.
_table_owner: contextvars.ContextVar[str] = contextvars.ContextVar("table_owner", default="")


_PROVENANCE = re.compile(r'<p class="crossover-provenance( crossover-provenance--headed)?">'
                         r'((Measured on <strong>.*?</strong>).*?)</p>', re.S)


def provenance_once(page_html: str) -> str:
    """A machine's provenance line in full the first time a page shows it; after that, its name and "as above", or
    nothing under a heading that names the machine. Every section states where its numbers come from, so a page of
    four sections over three machines said the same dozen lines again (#39: caveats stated once per page). Runs on
    the finished page, after its sections."""
    seen: set[str] = set()

    def once(match: re.Match) -> str:
        headed, line, name = match.groups()
        if line in seen:
            again = f'<p class="crossover-provenance crossover-provenance--again">{name} (as above).</p>'
            return "" if headed else again
        seen.add(line)
        return match.group(0)

    return _MORE_MACHINES.sub(first_only(), _PROVENANCE.sub(once, page_html))


_MORE_MACHINES = re.compile(r'<p class="crossover-note"><a href="[^"]*">'
                            r'Measured on \d+ more machines?(?:, CPU only)?\.</a> .*?</p>', re.S)


def first_only(group: int = 0):
    """A substitution for one page that keeps the first match of each key (the match's `group`) and drops the
    others: the pointer to the machines a page leaves out is said once, not under each of twenty tables."""
    seen: set[str] = set()

    def keep(match: re.Match) -> str:
        if match.group(group) in seen:
            return ""
        seen.add(match.group(group))
        return match.group(0)
    return keep


def more_machines(data: Dataset, group: str | None = None) -> Html:
    """Where the machines a page leaves out are: nothing when it shows them all. A machine whose file holds the
    experiment but no measured point of it (a CPU-only machine's bus) is not counted: nothing of it is elsewhere.
    Where none of them has a GPU, the note says so: under a GPU's table, "more machines" would promise GPU numbers."""
    if group:
        shown = data.shown(group)
        hidden = [m for m in data.with_experiment(group) if all(m is not s for s in shown) and m.measured(group)]
    else:
        shown = data.shown()
        hidden = [m for m in data.machines if all(m is not s for s in shown)]
    if not hidden:
        return Html("")
    count = len(hidden)
    cpu_only = ", CPU only" if all(m.gpu is None for m in hidden) else ""
    # Opens with a word: a sentence that starts with a digit would read as the end of the one before it.
    # The gallery lists the machines, not every experiment's points: those are in the data file.
    # Two short sentences: this note sits under tables on many pages.
    return note(html('<a href="{}">Measured on {} more machine{}{}.</a> {} numbers are in '
                     '<a href="{}">data/results.json</a>.', SITE_ROOT + "gallery/", count, "s" if count != 1 else "",
                     cpu_only, "Their" if count != 1 else "Its", SITE_ROOT + "data/results.json"))


# Links to other pages start here, and each page's hooks make them relative to that page
# (site_root_links): one rendering serves home, a lesson page or a site served under a sub-path.
SITE_ROOT = "crossover-site-root:/"


def site_root_links(html: str, depth: int) -> str:
    """`html` with every link to SITE_ROOT made relative to a page `depth` folders below the site root.
    Only whole href attributes are rewritten, and text from a results file is escaped before it gets
    here, so a name that imitates the marker stays text."""
    return str(html).replace(f'href="{SITE_ROOT}', f'href="{"../" * depth}')


def medians_table(data: Dataset, group: str, columns: list[tuple[str, str]],
                  after: Callable[[Machine], Html] = lambda m: Html(""),
                  words: dict[str, str] | None = None) -> Html:
    """A plain table of an experiment's medians with the given (param, heading) columns, per machine;
    `after(machine)` follows each machine's table (a note about that machine's points); `words` names param
    values in plain words (data_parallel's "ddp" reads "DDP, the threads split between processes")."""
    def one(m: Machine) -> Html:
        points = m.measured(group)
        rows = [[(words or {}).get(str(b["params"].get(p, "")), b["params"].get(p, "")) for p, _ in columns]
                + [measured_value(b["stats"], b["extra_info"], "s")] for b in points]
        return table([h for _, h in columns] + ["median time"], rows) + marks_note_for(points) + after(m)
    return per_machine(data, group, one)
