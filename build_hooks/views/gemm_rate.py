"""Square fp32 matrix products: the achieved arithmetic rate against the CPU's peak."""

from __future__ import annotations

from build_hooks import analysis, datasheets, plots, stats, untrusted
from build_hooks.dataset import Dataset, Machine, is_gpu
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    Html,
    MissingData,
    caveat,
    figure,
    first_with,
    gpu_with,
    html,
    join,
    listing,
    mark,
    marks_note_for,
    multiple,
    note,
    per_machine,
    si,
    table,
)
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
                                       "--" if is_gpu(device) else "-", DEVICE_NAME[device],
                                       colour=PEAK_COLOURS["gpu" if is_gpu(device) else "cpu"]))
            points = {b["params"]["n"]: b for b in m.measured(GROUP, device=device)}
            rows += [[DEVICE_NAME[device], n, si(r, "FLOP/s") + mark(points[n]["stats"], points[n]["extra_info"])]
                     for n, r in achieved.items()]
            shown += points.values()
        peak, cpu_rates = m.cpu["fp32_peak_flops"], analysis.gemm_rates(m, "cpu")
        if peak:
            xs = sorted(cpu_rates)
            series.append(plots.Series("CPU peak at its reported clock", xs, [peak / 1e9] * len(xs),
                                       ":", "peak", colour=PEAK_COLOURS["cpu peak"], markers=False))
        gpu_device = next((d for d in m.devices(GROUP) if is_gpu(d)), None)
        sheet = datasheets.for_gpu(m.gpu["name"]) if gpu_device and m.gpu else None
        if sheet is not None and sheet.fp32_flops:  # the question the section asks needs both peaks (#39 read)
            xs = sorted(analysis.gemm_rates(m, gpu_device))
            series.append(plots.Series(f"GPU FP32 peak (published: {sheet.name} datasheet)", xs,
                                       [sheet.fp32_flops / 1e9] * len(xs), "-.", "gpu peak",
                                       colour=PEAK_COLOURS["gpu peak"], markers=False))
        scale = plots.y_scale(series)
        svg = plots.line_panels([{"series": series, "xlabel": "matrix side n (n×n @ n×n)",
                                  "ylabel": "achieved rate (GFLOP/s)", "subtitle": "Higher is better",
                                  "yscale": scale}],
                                title="Square fp32 matrix product: achieved FLOP/s",
                                alt="Achieved FLOP/s of square fp32 matrix products versus matrix side; "
                                    "the table below has the numbers.")
        caption = f"Formula: peak = {m.cpu['peak_formula']}."
        best = analysis.rate_above_peak(m)
        if best:  # the sentence under the figure says why (wording.versus_peak); the caption only marks it
            caption += (" The curve rises above the peak line. That peak uses the clock the system reports, so the "
                        "true peak is higher.")
        return (figure(svg, caption)
                + table(["device", "n", "achieved"], rows) + marks_note_for(list(shown)))
    return per_machine(data, GROUP, one)


# One colour per meaning on every machine's plot (#39 read: the CPU's peak took the GPU's blue on a CPU-only plot).
PEAK_COLOURS = {"cpu": plots.PALETTE[0], "gpu": plots.PALETTE[1], "cpu peak": plots.PALETTE[2],
                "gpu peak": plots.PALETTE[5]}


@section
def flop_table(data: Dataset) -> Html:
    """The worked example's FLOP counts, timed at a measured GPU's fastest fp32 product where one was measured (#39
    read: a measured rate beside a measured rate), at the H200's datasheet FP32 peak, and at this build's measured
    CPU."""
    sheet = datasheets.by_name("NVIDIA H200 SXM")
    # Short column heads; where each rate comes from is said once, in the caption. A head names a rate, measured or
    # published: the times under it are computed from it (#39 read: "(measured)" over FLOPs ÷ rate).
    rates, sources = {}, []
    gpu_machine = gpu_with(data, GROUP)
    device = gpu_machine.gpu_device(GROUP) if gpu_machine else None
    gpu_rate = analysis.best_matmul_rate(gpu_machine, device) if device else None
    if gpu_rate:
        name = untrusted.placeholder(gpu_machine.device_label(device))
        rates[f"{name}'s measured rate"] = gpu_rate
        sources.append(f"{name}: {si(gpu_rate, 'FLOP/s')}, its fastest fp32 matrix product, measured.")
    rates[f"{sheet.name}'s FP32 peak (published)"] = sheet.fp32_flops
    sources.append(f"{sheet.name}: {si(sheet.fp32_flops, 'FLOP/s')} FP32, published: {sheet.source}.")
    machines = data.with_experiment(GROUP)
    if machines:
        machine = machines[0]
        best = analysis.best_matmul_rate(machine)
        rates["the build host's measured rate"] = best
        sources.append(f"The build host: {si(best, 'FLOP/s')}, its fastest matrix product, measured on all "
                       f"{machine.cpu['threads_used']} threads it offers.")
    rows = [[f"{b}, {d}, {h}", si(forward, "FLOP"), si(backward, "FLOP"), si(forward + backward, "FLOP")]
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
    # With ties, which size had the highest median is noise: no size is named (the table shows them all).
    where = f" (n = {n})" if len(tied) <= 1 else ""
    text = f"{si(rate, 'FLOP/s')}{where}, which is {versus_peak(rate, machine, analysis.gemm_rate_fast_end(machine))}"
    if not analysis.best_matmul_is_the_sweeps(machine) and rate > machine.cpu["fp32_peak_flops"]:
        # The figure every other page quotes as the fastest product, named by the experiment that timed it.
        text += (f". The fastest product measured on it, in the shapes experiment (Worked examples), reached "
                 f"{si(analysis.best_matmul_rate(machine), 'FLOP/s')}")
    return text


@fact
def cpu_gemm_small(data: Dataset) -> str:
    """The CPU matmul rate at the smallest matrix side measured."""
    machine = first_with(data, GROUP)
    achieved = analysis.gemm_rates(machine, "cpu")
    n = min(achieved)
    return f"{si(achieved[n], 'FLOP/s')} at n = {n}{caveat(machine.measured(GROUP, device='cpu', n=n)[0])}"


@section
def cpus_above_peak_table(data: Dataset) -> Html:
    """How many machines' fastest median matrix product (analysis.best_matmul_rate) beat the peak computed from
    their reported clock, then those machines in a table (or a line that none did); a rate from the shapes
    experiment rather than the square sweep is named as such."""
    machines = data.with_experiment(GROUP)
    rows, clearly = [], 0
    for m in machines:
        best = analysis.rate_above_peak(m, split_too=True)  # the fastest product, as every page quotes it
        if best:
            above = best / m.cpu["fp32_peak_flops"]
            clearly += above >= stats.MEANINGFUL_RATIO
            rows.append([m.label, si(m.cpu["fp32_peak_flops"], "FLOP/s"),
                         si(best, "FLOP/s") + ("" if analysis.best_matmul_is_the_sweeps(m) else
                                               " (shapes experiment)"),
                         f"+{100 * (above - 1):.0f}%" + ("" if above >= stats.MEANINGFUL_RATIO else ": level")])
    if not rows:
        return html("<p>In this build's data, no machine had a median matrix-product rate above its computed "
                    "peak.</p>")
    # Above by less than the site's smallest difference is level with the peak, not above it: counted apart.
    who = f"{clearly} of the {len(machines)} machines" if len(machines) > 1 else ("its one machine" if clearly else
                                                                                 "no machine")
    count = html("<p>In this build's data, {} had a median matrix-product rate at least {}× its computed peak.</p>",
                 who, f"{stats.MEANINGFUL_RATIO:g}")
    level = len(rows) - clearly
    if level:
        count += html("<p>{} more {} above it by less than that, which this site counts as level.</p>",
                      level, "was" if level == 1 else "were")
    return count + table(["CPU", "computed fp32 peak", "fastest matrix product (median)", "above the peak by"], rows,
                         caption="Rates above the peak computed from the reported clock")


# A worked workload (not measured): a 100-million-parameter language model trained on two
# billion tokens costs about 6 FLOPs per parameter per token (Kaplan et al. 2020, section 2.1).
WORKLOAD_PARAMS, WORKLOAD_TOKENS = 1e8, 2e9


@fact
def gpu_gap_headline(data: Dataset) -> str:
    """why-gpu's first line in numbers: the first measured GPU's fastest fp32 product against its own machine's CPU's,
    and where its CPU beat it on small products; without a GPU, the datasheet's FP32 peak against the build host's
    fastest product, labelled published (#39 read: "many times" gave no number on the first screen)."""
    machine = gpu_with(data, GROUP)
    if machine is None:
        sheet = datasheets.by_name("NVIDIA H200 SXM")
        host = data.host or first_with(data, GROUP)
        # A machine with a GPU that timed no product (a Mac's file, say) still had a GPU measured: said so.
        none = "No GPU's matrix product was" if any(m.gpu for m in data.machines) else "No GPU was"
        return (f"{none} measured here. An {sheet.name}'s published FP32 peak is "
                f"{multiple(sheet.fp32_flops / analysis.best_matmul_rate(host))} the build host's fastest product")
    device = machine.gpu_device(GROUP)
    gpu, cpu = analysis.best_matmul_rate(machine, device), analysis.best_matmul_rate(machine)
    return (f"Measured here, the {untrusted.placeholder(machine.device_label(device))}'s fastest fp32 product ran "
            f"{multiple(gpu / cpu)} its own CPU's")


@fact
def workload_headline(data: Dataset) -> str:
    """why-gpu's answer first: the worked 6·N·D run's pure arithmetic at measured rates. With a measured GPU, its own
    machine's CPU against it (one machine, both measured), format for format where the CPU's bf16 was measured too;
    without one, the build host against an H200's datasheet peaks, FP32 and dense bf16: floors on the GPU's time,
    never measurements."""
    flops = 6 * WORKLOAD_PARAMS * WORKLOAD_TOKENS
    run = (f"training a {WORKLOAD_PARAMS / 1e6:.0f}-million-parameter model on {WORKLOAD_TOKENS / 1e9:.0f} billion "
           "tokens")
    machine = gpu_with(data, GROUP)
    gpu_rates = machine and {fmt: rate for fmt, _, rate in _measured_rates(machine, machine.gpu_device(GROUP))}
    cpu_rates = machine and {fmt: rate for fmt, _, rate in _measured_rates(machine, "cpu")}
    if cpu_rates and "fp32" in cpu_rates and "fp32" in gpu_rates:
        gpu = untrusted.placeholder(machine.device_label(machine.gpu_device(GROUP)))
        cpu = f"the {untrusted.placeholder(machine.cpu_short_name)}"  # a few words: the table has the full label
        # Two short sentences: the run, then each device's time; fp32 and bf16 named by their widths once.
        model = (f"a {WORKLOAD_PARAMS / 1e6:.0f}-million-parameter language model trained on "
                 f"{WORKLOAD_TOKENS / 1e9:.0f} billion tokens (word pieces)")
        # "about" throughout: a floor (the fastest product, arithmetic only) and a bf16 rate (one product) read alike.
        # Each time is pure arithmetic at one product's rate: a real run takes longer, said in the closing sentence.
        return (f"Take {model}. At its fastest fp32 matrix product (32-bit numbers), {cpu} needs about "
                f"{_duration(flops / cpu_rates['fp32'])} of pure arithmetic"
                f"{_or_bf16(flops, cpu_rates, ' (16-bit)', _bf16_product(machine, 'cpu'))}. The {gpu} beside it needs "
                f"about {_duration(flops / gpu_rates['fp32'])} in fp32"
                f"{_or_bf16(flops, gpu_rates, product=_bf16_product(machine, machine.gpu_device(GROUP)))}. "
                "A real run takes longer than these floors")
    rate = analysis.best_matmul_rate(first_with(data, GROUP))
    sheet = datasheets.by_name("NVIDIA H200 SXM")
    return (f"{run[:1].upper() + run[1:]} is about {_duration(flops / rate)} of arithmetic on the build host. "
            f"At an {sheet.name}'s "
            f"datasheet peak it is {_duration(flops / sheet.fp32_flops)} in FP32, or "
            f"{_duration(flops / sheet.bf16_flops)} in bf16 (published)")


def _or_bf16(flops: float, rates: dict[str, float], gloss: str = "", product: str | None = None) -> str:
    # "about": a bf16 rate is one product's, not the fastest of a sweep, so it bounds nothing. Its size is said, since
    # the two devices' products can differ (#39 read: 2048² on the CPU beside 8192² on the GPU read as like for like).
    size = f" ({product})" if product else ""
    return (f", or about {_duration(flops / rates['bf16'])} at its measured bf16{gloss} rate{size}" if "bf16" in rates
            else "")


def _bf16_product(machine: Machine, device: str) -> str | None:
    """The bf16 product a device's bf16 rate comes from ("one 2048×2048 product"), or None where not recorded."""
    side = _bf16_side(machine, device)
    return f"one {side} product" if side else None


@fact
def gpu_machine_peak_shares(data: Dataset) -> str:
    """why-gpu's peak section for the measured GPU machine: the share of its CPU's computed fp32 peak and of its GPU's
    datasheet FP32 peak that each one's fastest matrix product reached; or that no GPU was measured."""
    machine = gpu_with(data, GROUP)
    if machine is None:
        return "No GPU's matrix products were timed for this build, so only the build host's peak is compared"
    device = machine.gpu_device(GROUP)
    said = []
    cpu_rate, cpu_peak = analysis.best_matmul_rate(machine), machine.cpu.get("fp32_peak_flops")
    if cpu_rate and cpu_peak:
        # The peak counts every thread as a core; hyper-threads would halve it (said under the peaks' paragraph).
        threads = machine.cpu.get("threads_used")
        counted = f", each of its {threads} threads counted as a core" if threads else ""
        share = cpu_rate / cpu_peak
        said.append(f"On {untrusted.placeholder(machine.label)}, the CPU reached {100 * share:.0f}% "
                    f"of its computed peak ({si(cpu_rate, 'FLOP/s')} of {si(cpu_peak, 'FLOP/s')}{counted})")
        if threads and threads % 2 == 0:  # a cloud vCPU is often a hyper-thread: the other reading, computed
            halved = (f"If its {threads} threads are hyper-threads on {threads // 2} cores, the peak halves and the "
                      f"share is {200 * share:.0f}%")
            # Over 100% does not settle it: a clock boosting past the reported one also passes a computed peak.
            over = ", which would need a clock above the reported one" if share > 0.5 else ""
            said.append(halved + over + ". This data cannot tell which")
    sheet, gpu_rate = datasheets.for_gpu(machine.gpu["name"]), analysis.best_matmul_rate(machine, device)
    if sheet and sheet.fp32_flops and gpu_rate:
        # The file names the GPU as torch does; where the datasheet names a variant, that variant is an assumption.
        assumed = ("" if sheet.name.lower() == machine.gpu["name"].lower() else
                   f". That assumes the {sheet.name}: the device reports only "
                   f"{untrusted.placeholder(machine.gpu['name'])}")
        said.append(f"Its GPU reached {100 * gpu_rate / sheet.fp32_flops:.0f}% of the {sheet.name}'s datasheet "
                    f"FP32 peak ({si(gpu_rate, 'FLOP/s')} of {si(sheet.fp32_flops, 'FLOP/s')}){assumed}")
    if not said:
        raise MissingData("no matrix-product rate and peak on the GPU machine")
    return ". ".join(said)  # one sentence per device


@fact
def workload_gap(data: Dataset) -> str:
    """The worked 6·N·D training run's FLOPs; workload_table gives its time at each rate."""
    mantissa, exponent = f"{6 * WORKLOAD_PARAMS * WORKLOAD_TOKENS:.1e}".split("e")
    return f"about {mantissa}e{int(exponent)} FLOPs"


@section
def workload_table(data: Dataset) -> Html:
    """The worked 6·N·D run at measured rates, format for format: a measured GPU machine's CPU and GPU first (the pair
    the page's first line sets side by side), then the build host's fastest fp32 matrix product and its bf16 one,
    then an H200's datasheet peaks (plain FP32, dense bf16 tensor cores: floors on the GPU's time, never
    measurements). Each row's time against the first CPU's fp32: the GPU's own CPU where one was measured."""
    flops = 6 * WORKLOAD_PARAMS * WORKLOAD_TOKENS
    host = first_with(data, GROUP)
    gpu_machine = gpu_with(data, GROUP)
    reference = gpu_machine if gpu_machine and analysis.best_matmul_rate(gpu_machine) else host
    rate = analysis.best_matmul_rate(reference)
    measured = []  # (the row's device, its format, how, rate, point)
    if gpu_machine:
        device = gpu_machine.gpu_device(GROUP)
        measured += [(gpu_machine.device_label(d), *found) for d in ("cpu", device)
                     for found in _measured_points(gpu_machine, d)]
    if host is not gpu_machine:
        measured += [(f"CPU: {host.label}", *found) for found in _measured_points(host, "cpu")]
    rows = [_row(*found, flops, rate) for found in measured]
    sheet = datasheets.by_name("NVIDIA H200 SXM")
    for what, peak in ((f"{sheet.name}, plain FP32 (published peak)", sheet.fp32_flops),
                       (f"{sheet.name}, bf16 tensor cores, dense (published peak)", sheet.bf16_flops)):
        rows.append([what, si(peak, "FLOP/s"), _duration(flops / peak), f"{multiple(peak / rate)} shorter"])
    threads = host.cpu["threads_used"]
    strict = any("TF32 off" in how for _, _, how, _, _ in measured)
    tf32 = (f"TF32 off means full fp32 precision. Allowing TF32 moves fp32 products onto tensor cores: "
            f"{si(sheet.tf32_flops, 'FLOP/s')} at the published dense peak. " if strict and sheet.tf32_flops else "")
    why = (f"{tf32}Source of the published rows: {sheet.source}. A bf16 row is one product; Mixed precision sets "
           f"it against fp32 at the same size. The build host ran on {threads} thread{'s' if threads != 1 else ''}; "
           "a server socket with many more cores cuts its time, though rarely in proportion.")
    against = "against the GPU's own CPU, fp32" if reference is gpu_machine else "against the build host, fp32"
    mantissa, exponent = f"{flops:.1e}".split("e")
    return join([table(["device and format", "rate", "time for the run", against], rows,
                       caption=f"One training run of {mantissa}e{int(exponent)} FLOPs at {len(rows)} rates"),
                 marks_note_for([point for *_, point in measured]), note(why),
                 *([note(same)] if (same := _bf16_like_for_like(gpu_machine)) else []),
                 *[note(text) for m in {m.id: m for m in (gpu_machine, host) if m}.values()
                   if (text := _slow_bf16(m))]])


BF16_UNITS = ("avx512_bf16", "amx_tile")  # the x86 flags of instructions that multiply bf16 directly


def _slow_bf16(machine: Machine) -> str:
    """Why a CPU's bf16 product ran slower than its fp32 one, where its file lists its instruction set and none of it
    multiplies bf16 (#39 read: a slower 16-bit row, unexplained); else nothing."""
    rates = {fmt: rate for fmt, _, rate in _measured_rates(machine, "cpu")}
    isa = machine.cpu.get("isa")
    if "bf16" not in rates or "fp32" not in rates or rates["bf16"] >= rates["fp32"] or not isa:
        return ""
    if any(flag in isa for flag in BF16_UNITS):
        return ""
    return (f"{untrusted.placeholder(machine.cpu_short_name)}: bf16 ran slower than fp32. Its CPU lists no bf16 "
            "instructions (AVX-512 BF16 or AMX), so 16 bits buy it nothing.")


def _bf16_like_for_like(machine: Machine | None) -> str:
    """The last column sets every row against fp32; where the GPU machine's CPU and GPU both ran bf16, the same
    format's ratio too, so a GPU's bf16 row is not read as its lead over the CPU's bf16."""
    if machine is None:
        return ""
    cpu = {fmt: rate for fmt, _, rate in _measured_rates(machine, "cpu")}
    gpu = {fmt: rate for fmt, _, rate in _measured_rates(machine, machine.gpu_device(GROUP))}
    if "bf16" not in cpu or "bf16" not in gpu:
        return ""
    sizes = {d: _bf16_side(machine, d) for d in ("cpu", machine.gpu_device(GROUP))}
    apart = (f" The two products differ in size: {sizes[machine.gpu_device(GROUP)]} on the GPU, {sizes['cpu']} on the "
             "CPU." if len(set(sizes.values())) > 1 and all(sizes.values()) else "")
    return (f"Format for format, the GPU's bf16 run is {_against(gpu['bf16'], cpu['bf16'])} than its CPU's bf16 "
            f"run.{apart}")


def _bf16_side(machine: Machine, device: str) -> str:
    """The side of a device's bf16 product ("8192×8192"), or empty where not recorded."""
    bf16 = next(iter(machine.measured("precision", device=device, op="matmul", dtype="bf16")), None)
    side = bf16 and bf16["extra_info"].get("n")
    return f"{side}×{side}" if side else ""


def _row(device: str, fmt: str, how: str, measured: float, point: dict, flops: float, host_rate: float) -> list:
    against = "1×" if measured == host_rate else _against(measured, host_rate)
    return [f"{device}, {fmt} ({how})", si(measured, "FLOP/s") + mark(point["stats"], point["extra_info"]),
            _duration(flops / measured), against]


def _against(other: float, rate: float) -> str:
    """A rate's time for the run against the build host's, as the table's last column says it."""
    if stats.compare(other, rate) == 0:
        return "about the same"
    return f"{multiple(other / rate)} shorter" if other > rate else f"{multiple(rate / other)} longer"


def _measured_rates(machine: Machine, device: str) -> list[tuple[str, str, float]]:
    """A device's own rates, as (format, how it was measured, FLOP/s): its fastest fp32 matrix product, and its
    bf16 product in the precision experiment, each where it was measured."""
    return [(fmt, how, rate) for fmt, how, rate, _ in _measured_points(machine, device)]


def _measured_points(machine: Machine, device: str) -> list[tuple[str, str, float, dict]]:
    """_measured_rates with the point behind each rate, whose caveats its row marks."""
    found = []
    fp32 = analysis.best_matmul_rate(machine, device)
    if fp32:
        # A GPU's fp32 rate depends on whether TF32 tensor cores were allowed: the row says which, from the file.
        tf32 = ("" if device == "cpu" else
                ", TF32 off" if machine.doc["software"].get("cuda_matmul_allow_tf32") is False else
                ", TF32 allowed" if machine.doc["software"].get("cuda_matmul_allow_tf32") else "")
        found.append(("fp32", f"measured: its fastest matrix product{tf32}", fp32, _point_at(machine, device, fp32)))
    bf16 = next(iter(machine.measured("precision", device=device, op="matmul", dtype="bf16")), None)
    if bf16 and bf16["extra_info"].get("flops"):
        side = bf16["extra_info"].get("n")
        found.append(("bf16", f"measured: one {side}×{side} product",
                      bf16["extra_info"]["flops"] / bf16["stats"]["median"], bf16))
    return found


def _point_at(machine: Machine, device: str, rate: float) -> dict:
    """The matrix-product point (square sweep or shapes) whose median rate is `rate`: the fastest one's."""
    points = [*machine.measured(GROUP, device=device), *machine.measured("matmul_shapes", device=device)]
    return min(points, key=lambda b: abs(b["extra_info"]["flops"] / b["stats"]["median"] - rate))


def _duration(seconds: float) -> str:
    """A long time in the unit a reader thinks in: minutes, hours, days or years."""
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


@fact
def small_products_on_the_cpu(data: Dataset) -> str:
    """On the first machine that swept both its CPU and its GPU: the product sizes at which its CPU was faster beyond
    the spread (a call's fixed cost outweighs a small product's arithmetic), or that its GPU was never slower; or
    that no GPU swept."""
    machine = gpu_with(data, GROUP)
    if machine is None:
        return "No GPU's matrix products were measured here, so small products are not compared"
    device = machine.gpu_device(GROUP)
    points = {d: {b["params"]["n"]: b["stats"] for b in machine.measured(GROUP, device=d)} for d in ("cpu", device)}
    # The CPU is faster where its time is shorter beyond both points' spread (the sizes' FLOPs are the same).
    cpu_won = sorted(n for n in set(points["cpu"]) & set(points[device])
                     if stats.compare_points(points["cpu"][n], points[device][n]) < 0)
    gpu = untrusted.placeholder(machine.device_label(device))
    if not cpu_won:
        return f"At every size swept, the {gpu} multiplied at least as fast as its own CPU"
    sizes = sorted(set(points["cpu"]) & set(points[device]))
    where = (f"up to n = {cpu_won[-1]}" if cpu_won == sizes[:len(cpu_won)]
             else "at n = " + listing([str(n) for n in cpu_won]))
    # Why, as a general truth: a small product's GPU time is its fixed cost per call, not unfilled lanes alone.
    return (f"On the {gpu}'s own machine, the CPU multiplied faster than the GPU {where}. There, a call's fixed cost "
            "outweighs a small product's arithmetic")
