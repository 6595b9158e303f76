"""Matplotlib figures rendered to inline SVG that read well in light and dark mode.

Text, axes and grid are drawn in a placeholder colour that is swapped for CSS
`currentColor`, so the figure takes the page's text colour in either scheme. Series
use the Okabe-Ito palette, distinguishable for colour-blind readers on both
backgrounds. Plots only draw what they are given; they never measure.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import textwrap
from dataclasses import dataclass
from functools import cache

from markupsafe import Markup as Html

from build_hooks import untrusted

INK = "#010203"  # placeholder, replaced by currentColor in the SVG
LOG_SPAN = 30  # rates this far apart in one plot get a log axis: on a linear one the lower curve lies flat


def y_scale(series: list[Series]) -> str:
    """"log" where the series' positive values span more than LOG_SPAN, else "linear": linear reads best for one
    device, and beside a GPU tens of times faster a CPU's curve lies flat on it."""
    values = [y for s in series for y in s.y if y > 0]
    return "log" if values and max(values) > LOG_SPAN * min(values) else "linear"
PALETTE = ["#E69F00", "#56B4E9", "#009E73", "#D55E00", "#CC79A7", "#0072B2", "#F0E442"]


@cache
def _pyplot():
    """matplotlib, imported on the first plot: a warm build whose figures are all cached never needs it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plain_numbers():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: f"{value:g}")


def _plain_minor_labels(unit: str | None = None, decades: float = 2.5):
    """matplotlib's choice of which minor log ticks to label (an axis under a decade or so), written as the major
    ticks are: 0.6 and 200 (LogFormatter writes 6e-01 below 1), or 6 ms beside 10 ms with a `unit`."""
    from matplotlib.ticker import EngFormatter, LogFormatter

    engineering = EngFormatter(unit=unit, sep=" ") if unit is not None else None

    class PlainLog(LogFormatter):
        def _num_to_string(self, x, vmin, vmax):
            return engineering.format_eng(x) if engineering else f"{x:g}"

    # Some minor ticks labelled on an axis of up to `decades` decades: a line plot's points between two labelled
    # decades could not be read (#39 read). Every minor tick under 0.4 of a decade.
    return PlainLog(labelOnlyBase=False, minor_thresholds=(decades, 0.4))


# Figures drawn by this process, by their salt (a digest of everything they draw): a figure is a
# pure function of its inputs, so drawing the same one twice (a rebuild, a second page) is waste.
_drawn: dict[str, Html] = {}


def _salt(*inputs: object) -> str:
    """The SVG's id salt, from what the figure draws: ids differ between figures on one page
    and stay the same from build to build (a cached figure never collides with a fresh one)."""
    return "crossover-" + hashlib.sha256(repr(inputs).encode()).hexdigest()[:16]


@dataclass
class Series:
    label: str
    x: list[float]
    y: list[float]
    style: str = "-"  # matplotlib line style: "-" CPU, "--" GPU by convention here; "o": dots only
    colour_key: str = ""  # series sharing a key share a colour
    flagged: list[bool] | None = None  # points to mark as noisy
    markers: bool = True  # False: a bare line, such as a roof
    colour: str = ""  # an explicit colour (the race's lane styles), else the palette's by colour_key
    dashes: tuple[float, ...] = ()  # an explicit dash pattern, on and off lengths in points
    band: tuple[list[float], list[float]] | None = None  # (low, high) per x: a stated range shaded around the line


def _plain(text: str) -> str:
    """Text matplotlib draws as written: a "$" in a machine name must not start mathtext."""
    return str(text).replace("$", r"\$")


def _style() -> dict:
    return {
        "svg.fonttype": "none",  # real <text>, set in the page's font
        "font.family": "sans-serif",
        "font.size": 10,
        "text.color": INK, "axes.labelcolor": INK, "axes.edgecolor": INK,
        "xtick.color": INK, "ytick.color": INK,
        "axes.facecolor": "none", "figure.facecolor": "none", "savefig.transparent": True,
        "grid.color": INK, "grid.alpha": 0.15, "legend.frameon": False,
    }


def line_panels(panels: list[dict], title: str, alt: str, size: tuple[float, float] = (4.4, 3.6)) -> Html:
    """Log-log line plots; each panel: series, xlabel, ylabel, subtitle.

    Optional panel keys: xscale ("log" base 2, "log10", "linear"), yscale, xticks, and xunit / yunit: a unit
    ("B", "s") that writes the axis in engineering steps, 10 kB or 100 ms (with xunit a log axis steps by tens).
    `size` is one panel's size in inches; a series styled "o" is dots only, and one without `markers` is a bare line
    (a roof, a limit). Each panel is an SVG of its own, side by side where the page is wide and stacked on a phone,
    under a title in HTML (it wraps) and the first panel's legend, drawn at its own size above them: on a narrow
    screen the text keeps its size.
    """
    salt = _salt(panels, title, alt, size)
    if salt in _drawn:
        return _drawn[salt]
    colours: dict[str, str] = {}  # one colour per key across the panels
    svgs = [_inline_svg(_draw_panel(panel, size, colours, f"{salt}-{i}"), f"{panel['subtitle']}: {alt}")
            for i, panel in enumerate(panels)]
    # One legend for every panel: a series only a later panel draws (a roof in a rate panel) is named too.
    named = {}
    for panel in panels:
        for series in panel["series"]:
            named.setdefault(series.label, series)
    _drawn[salt] = _titled(svgs, title, alt, _line_legend(list(named.values()), colours, f"{salt}-legend"))
    return _drawn[salt]


def _titled(svgs: list[Html], title: str, alt: str, legend: Html) -> Html:
    """SVGs under a title that is page text (it wraps on a phone) and their legend, in one group named by `alt`.
    The legend comes before the panels: on a phone they stack, and a key under the last one is a screen away from the
    first. The title ends in a full stop: it is a sentence of its own, not the start of the caption's."""
    return Html('<div class="crossover-panels" role="group" aria-label="{}"><p class="crossover-panels__title">{}.</p>'
                '{}<div class="crossover-panels__row">{}</div></div>').format(
        untrusted.escape(alt), untrusted.html_text(title), legend, Html("").join(svgs))


def _draw_panel(panel: dict, size: tuple[float, float], colours: dict[str, str], salt: str) -> str:
    """One panel as SVG text, with no title or legend (the page gives them). `colours` maps series keys to colours,
    filled as new keys appear."""
    plt = _pyplot()
    from matplotlib.ticker import EngFormatter

    with plt.rc_context(_style() | {"svg.hashsalt": salt}):
        # Constrained layout fits the title and labels in the one draw savefig makes (tight_layout drew the
        # figure once more to measure it: a third of a plot's time).
        fig, ax = plt.subplots(figsize=size, layout="constrained")
        for s in panel["series"]:
            colour = _colour(s, colours)
            if s.band:  # an estimate's band, shaded: a reader sees the range a lead must clear, not just its middle
                ax.fill_between(s.x, s.band[0], s.band[1], color=colour, alpha=0.12, linewidth=0)
            ax.plot(s.x, s.y, linestyle="none" if s.style == "o" else s.style, color=colour,
                    marker="o" if s.markers else None, markersize=3.5,
                    linewidth=1.6, **({"dashes": s.dashes} if s.dashes else {}))
            if s.flagged and any(s.flagged):
                fx = [x for x, f in zip(s.x, s.flagged) if f]
                fy = [y for y, f in zip(s.y, s.flagged) if f]
                ax.plot(fx, fy, linestyle="none", marker="o", markersize=8,
                        markerfacecolor="none", markeredgecolor=colour, alpha=0.7)
        xscale = panel.get("xscale", "log")
        if xscale == "log" and not panel.get("xunit"):
            ax.set_xscale("log", base=2)
        elif xscale != "linear":  # "log10", or a unit's axis: 10 kB, 100 kB, 1 MB read better than powers of two
            ax.set_xscale("log")
        ax.set_yscale(panel.get("yscale", "log"))
        # 1, 4, 16 rather than 2^0, 2^2, 2^4; with a unit, 10 kB rather than 1e4
        ax.xaxis.set_major_formatter(EngFormatter(unit=panel["xunit"], sep=" ") if panel.get("xunit")
                                     else _plain_numbers())
        if panel.get("yunit") is not None or panel.get("eng"):
            unit = panel.get("yunit", "")
            ax.yaxis.set_major_formatter(EngFormatter(unit=unit, sep=" " if unit else ""))
        else:
            ax.yaxis.set_major_formatter(_plain_numbers())
        if panel.get("yscale", "log") == "log" and not panel.get("eng"):
            ax.yaxis.set_minor_formatter(_plain_minor_labels(panel.get("yunit")))
        if "xticks" in panel:
            ax.set_xticks(panel["xticks"])
        if panel.get("yscale") == "linear":
            ax.set_ylim(bottom=0)
        ax.set_xlabel(panel["xlabel"])
        ax.set_ylabel(panel["ylabel"])
        ax.set_title(panel["subtitle"], fontsize=10)
        ax.grid(True, which="major")
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
        plt.close(fig)
    return buffer.getvalue()


def _colour(series: Series, colours: dict[str, str]) -> str:
    return series.colour or colours.setdefault(series.colour_key or series.label, PALETTE[len(colours) % len(PALETTE)])


def _legend(handles: list, labels: list[str], salt: str) -> Html:
    """A legend alone, as an SVG shown at its own size (not scaled to the page's width like a panel), so its text
    stays readable on a phone: two columns when the labels are short, one when they are long."""
    plt = _pyplot()
    with plt.rc_context(_style() | {"svg.hashsalt": salt}):
        fig = plt.figure(figsize=(0.1, 0.1))
        columns = 2 if len(labels) > 1 and max(len(label) for label in labels) <= 20 else 1
        # A long label wraps, so that one column fits a phone's width at full size.
        wrapped = [textwrap.fill(_plain(label), 40, break_on_hyphens=False) for label in labels]
        fig.legend(handles, wrapped, loc="center", ncol=columns, frameon=False)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", bbox_inches="tight", pad_inches=0.02)  # the legend's own extent
        plt.close(fig)
    return _page_svg(buffer.getvalue(), 'aria-hidden="true" class="crossover-panels__legend"')


def _line_legend(series: list[Series], colours: dict[str, str], salt: str) -> Html:
    """The panels' shared legend: each series' colour and line style as the panels draw them; a marker only for a
    series of dots alone (a marker per line would add a glyph's path per entry, and the line already tells them
    apart)."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], linestyle="none" if s.style == "o" else s.style, color=_colour(s, colours),
                      marker="o" if s.style == "o" else None, markersize=3.5, linewidth=1.6,
                      **({"dashes": s.dashes} if s.dashes else {})) for s in series]
    return _legend(handles, [s.label for s in series], salt)


# Matplotlib writes coordinates to six decimals of a point, each marker's style on every <use>,
# ids nothing refers to, and its whole fallback font list on every label: a third of a plot's
# bytes, on pages that carry several plots. compact() drops them and draws the same picture.
_LONG_DECIMALS = re.compile(r"(\d\.\d\d)\d+")  # a hundredth of a point is far below a pixel
_GEOMETRY = re.compile(r'(\s(?:d|x|y|width|height|transform|viewBox)=")([^"]*)"')
_PATH_DATA = re.compile(r'\sd="([^"]*)"')
# A group of markers: <use .../> as matplotlib writes them, <use ...></use> once an HTML sanitiser
# has rewritten them (the lab notebook's plot, through nbconvert).
_USE_GROUP = re.compile(r"<g([^>]*)>((?:\s*<use [^>]*?/?>(?:</use>)?)+)\s*</g>")
_STYLE = re.compile(r' style="([^"]*)"')
_ID = re.compile(r' id="([^"]+)"')
_NO_ROTATION = re.compile(r' transform="rotate\(-?0 [^")]*\)"')  # every horizontal label's
_FONT_LIST = re.compile(r"font-family: 'DejaVu Sans'[^;\"]*")
FONT_FAMILY = "'DejaVu Sans', Arial, Helvetica, sans-serif"  # the font matplotlib measured with, then the usual


def compact(svg: str) -> str:
    """The same drawing in fewer bytes (see above). Only tags change: text (which may come from
    a results file) is escaped, so it never contains a "<" and is left exactly as written."""
    referenced = set(re.findall(r"#([\w.-]+)", svg))  # url(#clip), xlink:href="#marker"
    for ids in re.findall(r'aria-(?:labelledby|describedby)="([^"]*)"', svg):  # a title or description
        referenced.update(ids.split())

    def tag(match: re.Match) -> str:
        text = _GEOMETRY.sub(lambda m: m.group(1) + _LONG_DECIMALS.sub(r"\1", m.group(2)) + '"', match.group(0))
        text = _PATH_DATA.sub(lambda m: ' d="' + " ".join(m.group(1).split()) + '"', text)
        text = _ID.sub(lambda m: m.group(0) if m.group(1) in referenced else "", text)
        text = _NO_ROTATION.sub("", text)
        return _FONT_LIST.sub("", text).replace("; ;", ";").replace('style="; ', 'style="')

    def shared_style(match: re.Match) -> str:
        """Markers of one line share one style: it moves to their group (styles inherit)."""
        styles = set(_STYLE.findall(match.group(2)))
        if len(styles) != 1 or "style=" in match.group(1):
            return match.group(0)
        return f'<g{match.group(1)} style="{styles.pop()}">' + _STYLE.sub("", match.group(2)) + "</g>"

    svg = _USE_GROUP.sub(shared_style, re.sub(r"<[^>]+>", tag, svg))
    svg = _with_root_style(svg, f"font-family: {FONT_FAMILY}")  # every label's, said once
    return re.sub(r">\s+<", "><", svg)


def _with_root_style(svg: str, declaration: str) -> str:
    """`declaration` added to the root element's style (into its style attribute if it has one)."""
    root = re.match(r"<svg\b[^>]*>", svg)
    if root is None:
        return svg
    tag = root.group(0)
    if ' style="' in tag:
        tag = tag.replace(' style="', f' style="{declaration}; ', 1)
    else:
        tag = tag.replace("<svg", f'<svg style="{declaration}"', 1)
    return tag + svg[root.end():]


def _inline_svg(svg: str, alt: str) -> Html:
    """Strip the XML prologue, make colours follow the page, compact it and attach the text alternative."""
    label = untrusted.escape(alt)  # quotes included: alt text names machines
    return _page_svg(svg, f'role="img" aria-label="{label}" class="crossover-plot"')


def _page_svg(svg: str, attributes: str) -> Html:
    """matplotlib's SVG without its XML prologue and metadata, in the page's colours, compacted, with `attributes`
    on its root element."""
    svg = svg[svg.index("<svg"):]
    # Matplotlib's <metadata> (tool name, version, date) would show up as text in search results.
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = compact(svg.replace(INK, "currentColor"))
    # matplotlib writes every label as escaped SVG text: the document is HTML as it stands.
    return Html(svg.replace("<svg ", f"<svg {attributes} ", 1))


def bars(groups: list[str], series: dict[str, list[float | None]], title: str, ylabel: str,
         alt: str, log: bool = False, unit: str = "", keys: list[str] | None = None) -> Html:
    """Grouped vertical bars: one group per label in `groups`, one bar per series key (on a `log` axis, a dot per
    value instead: a bar's length there misleads). `keys` lists every key a set of charts can have, so a key keeps
    its colour from chart to chart when some charts lack some keys."""
    salt = _salt(groups, series, title, ylabel, alt, log, unit, keys)
    if salt in _drawn:
        return _drawn[salt]
    plt = _pyplot()
    from matplotlib.ticker import EngFormatter

    with plt.rc_context(_style() | {"svg.hashsalt": salt}):
        fig, ax = plt.subplots(figsize=(max(4.4, 0.9 * len(groups) + 1.2), 3.4), layout="constrained")
        width = 0.8 / max(1, len(series))
        order = keys or list(series)
        colours = [PALETTE[order.index(key) % len(PALETTE)] for key in series]
        for i, (values, colour) in enumerate(zip(series.values(), colours)):
            xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
            present = [(x, v) for x, v in zip(xs, values) if v is not None]
            if log:  # a bar's length on a log axis depends on where the axis is cut: dots show only the value
                ax.plot([x for x, _ in present], [v for _, v in present], linestyle="none", marker="o",
                        markersize=7, color=colour)
            else:
                ax.bar([x for x, _ in present], [v for _, v in present], width * 0.95, color=colour)
        ax.set_xticks(range(len(groups)), [_plain(g) for g in groups])
        if log:
            ax.set_yscale("log")
            # Down to the decade under the lowest point, so that every point has a labelled line beneath it; minor
            # labels only on a short axis (dots in columns leave room for few).
            low = min(v for values in series.values() for v in values if v)
            ax.set_ylim(bottom=10 ** math.floor(math.log10(low)))
            ax.yaxis.set_minor_formatter(_plain_minor_labels(unit, decades=1))  # 6 ms under 10 ms, not 6×10⁻³
        ax.yaxis.set_major_formatter(EngFormatter(unit=unit, sep=" "))
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y")
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
        plt.close(fig)
    from matplotlib.patches import Patch

    legend = _legend([Patch(color=c) for c in colours], list(series), f"{salt}-legend") if len(series) > 1 else Html("")
    _drawn[salt] = _titled([_inline_svg(buffer.getvalue(), alt)], title, alt, legend)
    return _drawn[salt]
