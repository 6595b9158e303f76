"""Square fp32 matrix products: the achieved arithmetic rate against the CPU's peak."""

from __future__ import annotations

from build_hooks import analysis, datasheets, plots, stats, untrusted
from build_hooks.dataset import Dataset, Machine, is_gpu
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    Html,
    caveat,
    figure,
    first_with,
    listing,
    mark,
    marks_note_for,
    per_machine,
    si,
    table,
)
from build_hooks.views.precision import bf16_against_fp32, precision_stats, product_words
from build_hooks.wording import versus_peak
from snippets import flop_count  # plain arithmetic, no torch

GROUP = "gemm_rate"


@section
def gemm_rate(data: Dataset) -> Html:
    """Per machine: square fp32 matmul FLOP/s by side per device against the CPU's peak, plotted
    and tabled."""
    def one(m: Machine) -> Html:
        series, rows, shown = [], [], []
        for device in m.devices(GROUP):
            achieved = analysis.gemm_rates(m, device)
            series.append(plots.Series(DEVICE_NAME[device], list(achieved), [r / 1e9 for r in achieved.values()],
                                       "--" if is_gpu(device) else "-", DEVICE_NAME[device]))
            points = {b["params"]["n"]: b for b in m.measured(GROUP, device=device)}
            rows += [[DEVICE_NAME[device], n, si(r, "FLOP/s") + mark(points[n]["stats"], points[n]["extra_info"])]
                     for n, r in achieved.items()]
            shown += points.values()
        peak, cpu_rates = m.cpu["fp32_peak_flops"], analysis.gemm_rates(m, "cpu")
        if peak:
            xs = sorted(cpu_rates)
            series.append(plots.Series("CPU theoretical peak (reported clock)", xs, [peak / 1e9] * len(xs),
                                       ":", "peak"))
        svg = plots.line_panels([{"series": series, "xlabel": "matrix side n (n×n @ n×n)",
                                  "ylabel": "achieved rate (GFLOP/s)", "subtitle": "Higher is better",
                                  "yscale": "linear"}],
                                title="Square fp32 matrix product: achieved FLOP/s",
                                alt="Achieved FLOP/s of square fp32 matrix products versus matrix side; "
                                    "the table below has the numbers.")
        caption = f"Formula: peak = {m.cpu['peak_formula']}."
        best = analysis.rate_above_peak(m)
        if best:
            caption += (f" The best median rate, {si(best, 'FLOP/s')}, is above this peak. The cores ran faster "
                        "than the clock the operating system reports. So the line is a floor on the true peak, "
                        "not a ceiling.")
        return (figure(svg, caption)
                + table(["device", "n", "achieved"], rows) + marks_note_for(list(shown)))
    return per_machine(data, GROUP, one)


@section
def flop_table(data: Dataset) -> Html:
    """The worked example's FLOP counts, timed at the H200's datasheet FP32 rate and this build's measured CPU."""
    sheet = datasheets.by_name("NVIDIA H200 SXM")
    # Short column heads; where each rate comes from is said once, in the caption.
    rates = {f"{sheet.name}, FP32 (published)": sheet.fp32_flops}
    sources = [f"{sheet.name}: {si(sheet.fp32_flops, 'FLOP/s')} FP32, published: {sheet.source}."]
    machines = data.with_experiment(GROUP)
    if machines:
        machine = machines[0]
        best = max(analysis.gemm_rates(machine, "cpu").values())
        rates["this build's CPU (measured)"] = best
        sources.append(f"This build's CPU: {si(best, 'FLOP/s')}, the best median of its square matrix products on "
                       f"all {machine.cpu['threads_used']} threads it offers, measured.")
    rows = [[f"{b}, {d}, {h}", f"{forward:.3g}", f"{backward:.3g}", f"{forward + backward:.3g}"]
            + [si(s, "s") for s in seconds]
            for (b, d, h), forward, backward, seconds in flop_count.counts(list(rates.values()))]
    return table(["B, D, H", "forward FLOPs", "backward FLOPs", "total", *[f"time at {r}" for r in rates]], rows,
                 caption="Times are FLOPs ÷ rate. " + " ".join(sources))


@fact
def cpu_gemm_best(data: Dataset) -> str:
    """The best CPU matmul rate, with its side unless other sides tie within the spread, against
    the CPU's peak."""
    machine = first_with(data, GROUP)
    points = {b["params"]["n"]: b for b in machine.measured(GROUP, device="cpu")}
    n, rate = max(analysis.gemm_rates(machine, "cpu").items(), key=lambda kv: kv[1])
    # Sides whose fast end reaches the best's slow end are tied with it (the best moves with noise).
    fast = lambda side, key: points[side]["extra_info"]["flops"] / points[side]["stats"][key]  # noqa: E731
    tied = sorted(side for side in points if fast(side, "q1") >= fast(n, "q3"))
    # With ties, which size had the highest median is noise; the table shows them all.
    tie = f". Other matrix sizes also reached {si(rate, 'FLOP/s')} within the spread"
    where, tie = (f" (n = {n})", "") if len(tied) <= 1 else ("", tie)
    return (f"{si(rate, 'FLOP/s')}{where}, which is {versus_peak(rate, machine, analysis.gemm_rate_fast_end(machine))}"
            + tie)


@fact
def cpu_gemm_small(data: Dataset) -> str:
    """The CPU matmul rate at the smallest matrix side measured."""
    machine = first_with(data, GROUP)
    achieved = analysis.gemm_rates(machine, "cpu")
    n = min(achieved)
    return f"{si(achieved[n], 'FLOP/s')} at n = {n}{caveat(machine.measured(GROUP, device='cpu', n=n)[0])}"


@fact
def cpus_above_computed_peak(data: Dataset) -> str:
    """Which machines' median CPU matrix-product rate (square, or the same FLOPs split into smaller products)
    exceeded the peak computed from their reported clock (or that none did)."""
    above = []
    for machine in data.with_experiment(GROUP):
        best = analysis.rate_above_peak(machine, split_too=True)
        if best:
            above.append(f"on {untrusted.placeholder(machine.label)} a matrix product ran at "
                         f"{si(best, 'FLOP/s')} (median), above its computed peak of "
                         f"{si(machine.cpu['fp32_peak_flops'], 'FLOP/s')}")
    if not above:
        return "no machine in this build's data had a median matrix-product rate above its computed peak"
    # One machine per sentence: "on A ... . On B ...".
    return ". ".join([above[0]] + ["O" + part[1:] for part in above[1:]])


# A worked workload (not measured): a 100-million-parameter language model trained on two
# billion tokens costs about 6 FLOPs per parameter per token (Kaplan et al. 2020, section 2.1).
WORKLOAD_PARAMS, WORKLOAD_TOKENS = 1e8, 2e9


@fact
def workload_headline(data: Dataset) -> str:
    """why-gpu's answer first: the worked 6·N·D run's pure arithmetic on this CPU (its best measured fp32 rate)
    against an H200's datasheet peaks, FP32 and dense bf16: floors on the GPU's time, never measurements."""
    flops = 6 * WORKLOAD_PARAMS * WORKLOAD_TOKENS
    rate = max(analysis.gemm_rates(first_with(data, GROUP), "cpu").values())
    sheet = datasheets.by_name("NVIDIA H200 SXM")
    return (f"training a {WORKLOAD_PARAMS / 1e6:.0f}-million-parameter model on {WORKLOAD_TOKENS / 1e9:.0f} billion "
            f"tokens is about {_duration(flops / rate)} of arithmetic on this build's CPU. At an {sheet.name}'s "
            f"datasheet peak it is {_duration(flops / sheet.fp32_flops)} in FP32, or "
            f"{_duration(flops / sheet.bf16_flops)} in bf16 (published)")


@fact
def workload_gap(data: Dataset) -> str:
    """The worked 6·N·D training run at this CPU's best measured fp32 matrix-product rate against
    an H200's datasheet peaks, format for format: its plain FP32 rate, then its dense bf16 tensor
    cores, with what bf16 did on this CPU (floors on the GPU's time, never measurements)."""
    flops = 6 * WORKLOAD_PARAMS * WORKLOAD_TOKENS
    machine = first_with(data, GROUP)
    rate = max(analysis.gemm_rates(machine, "cpu").values())
    threads = machine.cpu["threads_used"]
    sheet = datasheets.by_name("NVIDIA H200 SXM")
    mantissa, exponent = f"{flops:.1e}".split("e")
    return (f"about {mantissa}e{int(exponent)} FLOPs. "
            "At the best median rate of this CPU's square fp32 matrix-product sweep "
            f"({si(rate, 'FLOP/s')}), that is {_duration(flops / rate)} of pure arithmetic. "
            f"That rate is on the {threads} thread{'s' if threads != 1 else ''} this build had. A server "
            "socket with many times the cores divides this time and the gaps below by about that many. "
            f"Format for format, at the {sheet.name}'s plain "
            f"FP32 peak ({si(sheet.fp32_flops, 'FLOP/s')}) it is {_duration(flops / sheet.fp32_flops)}, "
            f"{sheet.fp32_flops / rate:,.0f}× shorter. On its tensor cores in bf16, the format such models train in "
            f"({si(sheet.bf16_flops, 'FLOP/s')} dense), it is {_duration(flops / sheet.bf16_flops)}, "
            f"{sheet.bf16_flops / rate:,.0f}× shorter than this CPU in fp32. Both GPU figures are published: "
            f"{sheet.source}. Both times are floors no real run reaches. "
            f"{_cpu_bf16(machine)}{_bf16_elsewhere(data, machine)}")


def _bf16_elsewhere(data: Dataset, host: Machine) -> str:
    """The other machines whose bf16 matrix product beat their fp32 one beyond the spread (there the gap bf16
    against bf16 narrows: CPUs with native bf16 support), and those where it lost (there it widens)."""
    said = {"faster": [], "slower": [], "level": []}  # in this order: wins, losses, ties
    for m in data.with_experiment("precision"):
        words = None if m is host else bf16_against_fp32(m)
        if words:
            said[words.split()[-1]].append(f"{words} on {untrusted.placeholder(m.label)}")
    faster, slower, level = said.values()
    if not faster + slower + level:
        return ""
    return (" Elsewhere in this build's data, bf16 matrix products against fp32 ran "
            f"{listing(faster + slower + level)}. Each was timed at its own matrix size (Mixed precision).")


def _cpu_bf16(machine: Machine) -> str:
    """What bf16 did to this CPU's own matrix product: whether the bf16-to-bf16 gap is narrower."""
    took = precision_stats(machine, "cpu", "matmul")
    if not {"fp32", "bf16"} <= set(took):
        return "This build did not measure bf16 on this CPU, so the gap bf16 against bf16 is not known here."
    product = "its " + product_words(machine).removeprefix("a ")
    verdict = stats.compare_points(took["fp32"], took["bf16"])
    ratio = took["fp32"]["median"] / took["bf16"]["median"]
    if verdict > 0:
        return (f"On this CPU bf16 narrows the gap too: {product} ran {ratio:.1f}× faster in bf16 than in fp32 "
                "(Mixed precision). So bf16 against bf16, the gap is smaller by about that factor.")
    if verdict < 0:
        return (f"On this CPU bf16 widens the gap: {product} ran {1 / ratio:.1f}× slower in bf16 than in fp32 "
                "(Mixed precision says why). So in bf16 on both, it is wider still.")
    return (f"On this CPU bf16 changed nothing: {product} took the same time in bf16 and fp32 "
            f"({stats.LEVEL_WORDS}; Mixed precision). So bf16 against bf16, the gap is about the same.")


def _duration(seconds: float) -> str:
    """A long time in the unit a reader thinks in: minutes, hours, days or years."""
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"
