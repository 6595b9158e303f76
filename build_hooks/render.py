"""Formatting primitives every view shares: numbers, tables, figures, provenance.

Only formatting: no experiment knows about this module's internals and nothing here
measures. Every string that comes from a results file goes through `esc` (HTML) or
`untrusted.text` (Markdown), so a machine called `<script>` is shown as text.
"""

from __future__ import annotations

import math
import re
from typing import Callable

from build_hooks import stats, untrusted
from build_hooks.dataset import Dataset, Machine

esc = untrusted.escape
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


def times(ratio: float) -> str:
    """A ratio as prose: 1.5×, 12×."""
    return f"{ratio:.1f}×" if ratio < 10 else f"{ratio:.0f}×"


def same_configuration(pairs: list[tuple[dict, dict]]) -> str:
    """How points of one experiment agree with the same configurations measured by another.

    The two were timed at different moments, so their rounds cannot be paired: they are
    compared by their quartiles (stats.unpaired_ratio).
    """
    ratios = [a["median"] / b["median"] for a, b in pairs if stats.unpaired_ratio(a, b).verdict != 0]
    if not ratios:
        return "agree with them within the measurements' spread"
    agree = f"agree within the spread for {len(pairs) - len(ratios)} of {len(pairs)} and differ" if len(ratios) < len(pairs) \
        else "differ"
    spread = (f"by {100 * (ratios[0] - 1):+.0f}%" if len(ratios) == 1 else
              f"by {100 * (min(ratios) - 1):+.0f}% to {100 * (max(ratios) - 1):+.0f}%")
    return (f"{agree} {spread}{' for the others' if len(ratios) < len(pairs) else ''}: the same step, timed "
            "at another moment, on a machine whose speed drifts (see About the data)")


def ratio_sentence(ratio: stats.Ratio, larger: str, smaller: str, same: str) -> str:
    """`larger`, `smaller` or `same` as the ratio's verdict says; "{}" in `larger` takes the
    ratio with its interval, in `smaller` the inverted ratio (always read as "N× ...")."""
    if ratio.verdict > 0:
        return larger.format(times_with_interval(ratio))
    if ratio.verdict < 0:
        return smaller.format(times_with_interval(ratio.inverted()))
    return same


def times_with_interval(ratio: stats.Ratio) -> str:
    """A measured ratio with its interval: "1.3× (1.2× to 1.4× round by round)"."""
    where = "round by round" if ratio.paired else "between the quartiles"
    if times(ratio.low) == times(ratio.high):
        return f"{times(ratio.value)} ({times(ratio.low)} {where})"
    return f"{times(ratio.value)} ({times(ratio.low)} to {times(ratio.high)} {where})"


def first_with(data: Dataset, group: str) -> Machine:
    """The first machine (the build host when it has it) that measured `group`."""
    machines = data.with_experiment(group)
    if not machines:
        raise MissingData(f"no machine has measured {group}")
    return machines[0]


def gpu_with(data: Dataset, group: str) -> Machine | None:
    """The first machine that measured `group` on a GPU, if any."""
    return next((m for m in data.with_experiment(group) if "cuda" in m.devices(group)), None)


def versus_peak(rate: float, machine: Machine, fast_end: float | None = None) -> str:
    """A rate compared with the CPU's theoretical peak, honest when the peak is too low.

    `fast_end` is the machine's best matrix-product rate at the fast end of its spread: if
    even that exceeds the peak computed from the reported clock, the clock is too low
    (boost), and a fraction of that peak would be a number that flips with noise.
    """
    cpu = machine.cpu
    peak = cpu["fp32_peak_flops"]
    if not peak:
        return "(this machine does not expose its clock, so no peak can be computed)"
    if rate <= peak and (fast_end is None or fast_end <= peak):
        return f"{100 * rate / peak:.0f}% of this CPU's theoretical fp32 peak of {si(peak, 'FLOP/s')}"
    return (f"close to or above the {si(peak, 'FLOP/s')} theoretical peak computed from the "
            f"{si(cpu['clock_hz'], 'Hz')} clock the operating system reports: at the fast end of their "
            "spread this machine's matrix products exceed it, so the cores must run faster than that "
            "(boost clocks), and the true fraction of peak cannot be computed from what it exposes")


def version_note(machine: Machine, host: Machine | None) -> str:
    """A visible note when a committed file was measured with other library versions."""
    if host is None or machine is host:
        return ""
    ours, theirs = host.doc["software"], machine.doc["software"]
    differences = [f"{name} {esc(str(theirs[name]))} (this build: {esc(str(ours[name]))})"
                   for name in VERSIONED if theirs.get(name) != ours.get(name)]
    if not differences:
        return ""
    return (' <strong class="crossover-version-note">Measured with different library versions: '
            + ", ".join(differences) + "; compare with care.</strong>")


def table(head: list[str], rows: list[list[str]], caption: str = "", table_id: str = "") -> str:
    """An HTML table in the site's scrolling wrapper; cells are HTML, already escaped."""
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    ident = f' id="{table_id}"' if table_id else ""
    cap = f"<caption>{caption}</caption>" if caption else ""
    # A wide table scrolls sideways inside its wrapper; keyboard users reach that scroll
    # area only if the wrapper can take focus, and screen readers need its name.
    name = _TAGS.sub("", caption) or "Table: " + ", ".join(_TAGS.sub("", h) for h in head)
    return (f'<div class="crossover-table" role="region" tabindex="0" aria-label="{name}">'
            f"<table{ident}>{cap}<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>")


_TAGS = re.compile(r"<[^>]+>")


def figure(svg: str, caption: str) -> str:
    return f'<figure class="crossover-figure">{svg}<figcaption>{caption}</figcaption></figure>'


def missing(text: str) -> str:
    return f'<p class="crossover-missing">{text}</p>'


MARKS = {  # symbol, and what it means in words (the note under a table)
    "noisy": ("†", lambda: f"noisy: {stats.noise_rule()}"),
    "few": ("‡", lambda: f"too few samples: fewer than {stats.MIN_SAMPLES}, so the spread is unknown"),
    "load": ("*", lambda: "measured while other processes used the CPU: treat with care"),
}


def mark(point_stats: dict, extra: dict, timing: bool = True) -> str:
    """Superscript symbols for a point's caveats, each with a tooltip."""
    titles = {"noisy": f"IQR is {100 * point_stats['iqr'] / point_stats['median']:.0f}% of the median"
              if point_stats["median"] else "noisy",
              "few": f"only {point_stats['rounds']} samples", "load": "taken under load"}
    return "".join(f'<sup title="{titles[k]}">{MARKS[k][0]}</sup>'
                   for k in stats.caveats(point_stats, extra, timing))


def marks_note_for(benches: list[dict]) -> str:
    """The legend for the caveats of these measured points (nothing when none has any)."""
    return marks_note({k for b in benches
                       for k in stats.caveats(b["stats"], b["extra_info"], b["unit"] == "s")})


def marks_note(kinds: set[str]) -> str:
    """The legend for the symbols that appear in a table (nothing when none do)."""
    if not kinds:
        return ""
    return ('<p class="crossover-note">'
            + "; ".join(f"{MARKS[k][0]} {MARKS[k][1]()}" for k in MARKS if k in kinds) + ".</p>")


def measured_value(point_stats: dict, extra: dict, unit: str) -> str:
    """A median with the digits its spread supports, and its caveat marks."""
    timing = unit == "s"
    digits = stats.significant_figures(point_stats) if timing else 3
    return si(point_stats["median"], unit, digits) + mark(point_stats, extra, timing)


def provenance(machine: Machine, host: Machine | None = None) -> str:
    """One line saying where, when and with what a machine's numbers were measured."""
    cpu, sw, commit = machine.cpu, machine.doc["software"], machine.doc["commit_info"]
    peak = si(cpu["fp32_peak_flops"], "FLOP/s") if cpu["fp32_peak_flops"] else "unknown"
    clock = si(cpu["clock_hz"], "Hz") if cpu["clock_hz"] else "clock unknown"
    gpu = machine.gpu
    gpu_text = (f"GPU {esc(gpu['name'])} ({si(gpu['memory_bytes'], 'B')}, CUDA "
                f"{esc(str(gpu['cuda_version']))}, driver {esc(str(gpu.get('driver')))})"
                if gpu else "no GPU")
    commit_text = esc(commit["id"][:10]) if commit["id"] else "uncommitted"
    if commit["dirty"]:
        commit_text += " (modified)"
    return (
        '<p class="crossover-provenance">'
        f"Measured on <strong>{esc(cpu['brand'])}</strong>, {cpu['threads_used']} threads at "
        f"{clock} (fp32 peak {peak} = {esc(cpu['peak_formula'])}); {gpu_text}. "
        f"Python {esc(sw['python'])}, torch {esc(sw['torch'])} (BLAS {esc(sw['blas'])}), "
        f"numpy {esc(str(sw['numpy']))}, fp32 matmul precision "
        f"“{esc(sw['float32_matmul_precision'])}”. {esc(machine.doc['datetime'][:10])}, "
        f"commit {commit_text}, {esc(machine.origin)} ({esc(machine.source)})."
        f"{version_note(machine, host)}</p>"
    )


def per_machine(data: Dataset, group: str, render: Callable[[Machine], str]) -> str:
    """`render(machine)` for every machine that measured `group`, each with its provenance."""
    machines = data.with_experiment(group)
    if not machines:
        return missing("Not measured on any machine in this build.")
    parts = []
    for machine in machines:
        heading = f"<p><strong>{esc(machine.label)}</strong></p>" if len(machines) > 1 else ""
        parts.append(heading + render(machine) + provenance(machine, data.host))
    return "\n".join(parts)


def medians_table(data: Dataset, group: str, columns: list[tuple[str, str]]) -> str:
    """A plain table of an experiment's medians with the given (param, heading) columns."""
    def one(m: Machine) -> str:
        points = m.measured(group)
        rows = [[esc(str(b["params"].get(p, ""))) for p, _ in columns]
                + [measured_value(b["stats"], b["extra_info"], "s")] for b in points]
        return table([h for _, h in columns] + ["median time"], rows) + marks_note_for(points)
    return per_machine(data, group, one)
