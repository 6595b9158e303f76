"""Mixed precision: what 16-bit arithmetic did to time and memory on each device."""

from __future__ import annotations

from build_hooks import analysis, plots, stats, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.page import fact, section
from build_hooks.render import (
    DEVICE_NAME,
    TABLE_MACHINES,
    Html,
    MissingData,
    figure,
    first_with,
    gpu_with,
    join,
    listing,
    machines_table,
    marks_note_for,
    measured_value,
    median_text,
    missing,
    mostly_slow,
    multiple,
    on_machine,
    per_machine,
    si,
    table,
)
from build_hooks.wording import claimed_multiple, interval_words, near_threshold, ratio_sentence

GROUP = "precision"
DTYPES = ["fp64", "fp32", "bf16", "fp16"]


def precision_times(machine: Machine, device: str, op: str) -> dict[str, float]:
    return analysis.medians(machine, GROUP, "dtype", device=device, op=op)


@section
def precision(data: Dataset) -> Html:
    """Per machine and device: matmul, training-step (and on the CPU numpy) times by precision,
    plotted and tabled."""
    def one(m: Machine) -> Html:
        parts = []
        for device in m.devices(GROUP):
            ops = ["matmul", "train_step"] + (["numpy_matmul"] if device == "cpu" else [])
            took = {op: precision_times(m, device, op) for op in ops}
            series = {dt: [took[op].get(dt) for op in ops] for dt in DTYPES
                      if any(dt in took[op] for op in ops)}
            svg = plots.bars([op.replace("_", " ") for op in ops], series,
                             title=f"{DEVICE_NAME[device]}: time per operation by precision",
                             ylabel="time per operation (log scale)", log=True, unit="s", keys=DTYPES,
                             alt=f"Time of {listing([op.replace('_', ' ') for op in ops])} in each precision "
                                 f"on the {DEVICE_NAME[device]}; the table below has the numbers.")
            points = [b for op in ops for b in m.measured(GROUP, device=device, op=op)]
            rows = [[b["params"]["op"].replace("_", " "), b["params"]["dtype"],
                     measured_value(b["stats"], b["extra_info"], "s"), _size(b)] for b in points]
            numpy_note = " numpy's product is plain numpy." if "numpy_matmul" in ops else ""
            parts.append(figure(svg, "Lower is better. Torch's matmul and training step use torch.autocast for "
                                     f"16-bit.{numpy_note} Each size is the largest whose slowest precision fits "
                                     "the time budget.")
                         + table(["operation", "precision", "median time", "size"], rows) + marks_note_for(points))
        return join(parts, "\n")
    return per_machine(data, GROUP, one)


def _size(bench: dict) -> str:
    extra = bench["extra_info"]
    if "n" in extra:
        return f"{extra['n']}×{extra['n']}"
    if "width" in extra:
        return f"batch {extra.get('batch', '?')}, width {extra['width']}"
    return ""


def precision_stats(machine: Machine, device: str, op: str) -> dict[str, dict]:
    return analysis.point_stats(machine, GROUP, "dtype", device=device, op=op)


def bf16_against_fp32(machine: Machine, device: str = "cpu") -> str | None:
    """A device's bf16 matrix product against its fp32 one: "2.7× faster", "92× slower" or "level" (beyond the
    spread only), or None where one of the two was not measured."""
    took = precision_stats(machine, device, "matmul")
    if not {"fp32", "bf16"} <= set(took):
        return None
    verdict = stats.compare_points(took["fp32"], took["bf16"])
    ratio = took["fp32"]["median"] / took["bf16"]["median"]
    return f"{multiple(ratio)} faster" if verdict > 0 else f"{multiple(1 / ratio)} slower" if verdict < 0 else "level"


def precision_side(machine: Machine, device: str = "cpu") -> int | None:
    """The side of the square product the precision experiment chose on this device, or None."""
    point = machine.measured(GROUP, device=device, op="matmul", dtype="fp32")
    return point[0]["extra_info"].get("n") if point else None


def product_words(machine: Machine, device: str = "cpu") -> str:
    """ "a 256×256 matrix product": the side the probe chose for this machine (sizes differ between
    machines, so a comparison across them names each)."""
    point = machine.measured(GROUP, device=device, op="matmul", dtype="fp32")
    side = point[0]["extra_info"].get("n") if point else None
    if not side:
        return "a matrix product"
    article = "an" if str(side).startswith("8") or str(side)[:2] in ("11", "18") else "a"  # said "an eight..."
    return f"{article} {side}×{side} matrix product"


def _bf16_versus_fp32(took: dict[str, dict], what: str) -> str:
    what += f" ({median_text(took['fp32'])} in fp32, {median_text(took['bf16'])} in bf16)"  # as its table prints
    return ratio_sentence(stats.paired_ratio(took["fp32"], took["bf16"]),
                          f"{what} ran {{}} faster in bf16 than in fp32",
                          f"{what} ran {{}} slower in bf16 than in fp32",
                          f"{what} took the same time in bf16 and fp32 ({stats.LEVEL_WORDS})")


@fact
def precision_cpu_summary(data: Dataset) -> str:
    """A sentence: bf16 against fp32 on the CPU, for a matrix product and a mixed-precision
    training step."""
    machine = first_with(data, GROUP)
    matmul = precision_stats(machine, "cpu", "matmul")
    step = precision_stats(machine, "cpu", "train_step")
    return (f"On the build host, {_bf16_versus_fp32(matmul, product_words(machine))}. "
            f"{_bf16_versus_fp32(step, 'The mixed-precision training step' + _step_size(machine))}.")


@fact
def precision_gpu_takeaway(data: Dataset) -> str:
    """The page's first line: what bf16 did on the first measured GPU, one short sentence per operation (its
    interval is in the table below it); or that no GPU measured it."""
    machine = gpu_with(data, GROUP)
    if machine is None:
        return "No GPU measured 16-bit arithmetic for this build, so the measured results below are CPUs'"
    device = machine.gpu_device(GROUP)
    said, signs, found = [], [], _gpu_ratios(machine, device)
    for op, ratio, _ in found:
        what = product_words(machine, device) if op == "matmul" else "a training step"
        leaning = ratio if ratio.verdict > 0 else ratio.inverted()
        verdict = (f"{claimed_multiple(leaning.value)} {'faster' if ratio.verdict > 0 else 'slower'}"
                   if ratio.verdict else "no faster or slower")
        # A verdict whose interval's near end is under the meaningful ratio barely clears it: its interval is said.
        if ratio.verdict and leaning.low < stats.MEANINGFUL_RATIO:
            verdict += f" ({interval_words(leaning, precise=near_threshold(leaning.value))})"
        said.append(f"{what} {verdict}")
        signs.append(ratio.verdict)
    if not said:
        return "No GPU timed both fp32 and bf16 for this build, so the measured results below are CPUs'"
    # One sentence: "14× faster, but ... 1.2× slower" where the two go opposite ways.
    joined = said[0] if len(said) == 1 else f"{said[0]}{', but' if signs[0] != signs[1] else ' and'} {said[1]}"
    rounds = min((len(took["fp32"].get("round_medians", [])) for _, _, took in found), default=0)
    # Few rounds, or a machine often slow, weaken both verdicts: said once, in plain words.
    few, slow = 0 < rounds < FEW_ROUNDS, mostly_slow(machine)
    machine_words = "a machine that began most rounds slow"
    doubt = (f". Both rest on {rounds} rounds each, on {machine_words}" if few and slow else
             f". Both rest on {rounds} rounds each" if few else
             f". Both come from {machine_words}" if slow else "")
    return f"Measured on the {untrusted.placeholder(machine.device_label(device))}, bf16 ran {joined} than fp32{doubt}"


FEW_ROUNDS = 3  # below this, a verdict's interval rests on a handful of numbers (About the data)


def _gpu_ratios(machine: Machine, device: str) -> list[tuple[str, stats.Ratio, dict]]:
    """(op, bf16 against fp32, both dtypes' stats) for the GPU's matrix product and training step, where both were
    timed: the table and the page's first line read the same verdicts."""
    found = []
    for op in ("matmul", "train_step"):
        took = precision_stats(machine, device, op)
        if {"fp32", "bf16"} <= set(took):
            found.append((op, stats.paired_ratio(took["fp32"], took["bf16"]), took))
    return found


@section
def precision_gpu_answer(data: Dataset) -> Html:
    """Mixed precision's answer first, as a table: bf16 against fp32 on the first measured GPU, for its matrix product
    and its mixed-precision training step, each with both times, the verdict with its interval, and the rounds it
    rests on; or a line that no GPU measured it."""
    machine = gpu_with(data, GROUP)
    if machine is None:
        return missing("This build has no 16-bit timing from a GPU.")
    device = machine.gpu_device(GROUP)
    rows, points = [], []
    for op, ratio, took in _gpu_ratios(machine, device):
        what = (product_words(machine, device).removeprefix("a ").removeprefix("an ") if op == "matmul" else
                "training step" + _step_size(machine, device))
        verdict = ratio_sentence(ratio, "{} faster", "{} slower", f"the same ({stats.LEVEL_WORDS})")
        rounds = len(took["fp32"].get("round_medians", [])) or "not recorded"
        bench = {b["params"]["dtype"]: b for b in machine.measured(GROUP, device=device, op=op)}
        times = [measured_value(bench[dt]["stats"], bench[dt]["extra_info"], "s") for dt in ("fp32", "bf16")]
        rows.append([what, *times, verdict, rounds])
        points += [bench["fp32"], bench["bf16"]]
    if not rows:
        return missing("This build has no GPU timing in both fp32 and bf16.")
    gpu = machine.device_label(device)
    strict = ", fp32 with TF32 off" if machine.doc["software"].get("cuda_matmul_allow_tf32") is False else ""
    return table(["operation", "fp32", "bf16", "bf16 against fp32", "rounds"], rows,
                 caption=f"bf16 against fp32, measured on the {gpu}{strict}") + marks_note_for(points)


@fact
def precision_step_arithmetic(data: Dataset) -> str:
    """How much of the measured GPU's fp32 mixed-precision step its matrix arithmetic could explain: the step's FLOPs
    (counted from the network's layers) at the GPU's fastest fp32 product, as a share of the step's median time. A
    step mostly not arithmetic gains little from 16-bit products."""
    machine = gpu_with(data, GROUP)
    device = machine.gpu_device(GROUP) if machine else None
    point = next(iter(machine.measured(GROUP, device=device, op="train_step", dtype="fp32")), None) if device else None
    rate = analysis.best_matmul_rate(machine, device) if device else None
    extra = point["extra_info"] if point else {}
    if not point or not rate or "batch" not in extra or "width" not in extra:
        return "No GPU timed the fp32 training step beside its matrix products, so its arithmetic share is not known"
    flops = step_flops(extra["batch"], extra["width"])
    seconds = point["stats"]["median"]
    share = flops / rate / seconds
    # The fastest product's rate gives the least time the arithmetic can take: its share is a lower bound.
    said = (f"That fp32 step does {si(flops, 'FLOP')} of matrix arithmetic in {si(seconds, 's')}. Even at "
            f"{si(rate, 'FLOP/s')}, the GPU's fastest measured fp32 product, that arithmetic takes at least "
            f"{100 * share:.0f}% of the step")
    # The rest in plain words, not as a double bound (#39 read).
    return said + (f". The rest, up to {100 - 100 * share:.0f}%, goes to issuing and small operations, which tensor "
                   "cores do not speed up" if share < 0.5 else "")


def step_flops(batch: int, width: int) -> float:
    """The matrix FLOPs of one training step of precision's network (inputs → width → width → classes): forward and
    the weight gradients for every layer, and the input gradient for all but the first, which needs none."""
    from snippets.precision import STEP
    layers = [(STEP["inputs"], width), (width, width), (width, STEP["classes"])]
    products = [2 * batch * inputs * outputs for inputs, outputs in layers]
    return 2 * sum(products) + sum(products[1:])


def _step_size(machine: Machine, device: str = "cpu") -> str:
    """ " at batch 64 and width 256": the step the probe chose for this machine (sizes differ between machines)."""
    point = machine.measured(GROUP, device=device, op="train_step", dtype="fp32")
    extra = point[0]["extra_info"] if point else {}
    return f" at batch {extra['batch']} and width {extra['width']}" if "batch" in extra and "width" in extra else ""


@section
def precision_cpu_table(data: Dataset) -> Html:
    """bf16 against fp32 for a CPU matrix product on every machine in the data that measured both (the instruction
    set decides; each probe chose its own size), one row each, its widest vector unit named from the hardware
    record; or a line that only this machine measured it."""
    rows, shown = [], []
    for m in data.with_experiment(GROUP):
        # Each timing with its own marks, as the machine's detail table shows it.
        points = {dtype: next(iter(m.measured(GROUP, device="cpu", op="matmul", dtype=dtype)), None)
                  for dtype in ("fp32", "bf16")}
        if all(points.values()):
            shown.append(list(points.values()))
            rows.append([m.label, m.vector_units or "not recorded", product_words(m).removeprefix("a "),
                         *(measured_value(p["stats"], p["extra_info"], "s") for p in points.values()),
                         bf16_against_fp32(m)])
    if len(rows) < 2:
        return missing("No other machine in this build's data measured bf16 against fp32 on its CPU.")
    return machines_table(["CPU", "widest vector or matrix unit", "product", "fp32", "bf16", "bf16 against fp32"], rows,
                          "One CPU matrix product in fp32 and in bf16, per machine; each chose its own size"
                          ) + marks_note_for([p for row in shown[:TABLE_MACHINES] for p in row])


GENERIC_KERNEL_RATIO = 3.0  # converting formats costs little beside a product; a slowdown past this is a slow kernel


@fact
def precision_cpu_explanation(data: Dataset) -> str:
    """Why the CPU's bf16 matmul was faster, equal to or slower than fp32: native 16-bit
    instructions, no gain, format conversion or a generic kernel."""
    machine = first_with(data, GROUP)
    matmul_stats = precision_stats(machine, "cpu", "matmul")
    matmul = {dtype: point["median"] for dtype, point in matmul_stats.items()}
    verdict = stats.compare_points(matmul_stats["fp32"], matmul_stats["bf16"])
    if verdict > 0:
        # The file records the instruction set: say what it reports, rather than infer it from the timing.
        units = machine.vector_units
        native = units if units in ("AVX-512 BF16", "AVX-512 + AMX") else None
        if native:
            return (f"The build host reports {native}, native 16-bit dot-product instructions: it multiplies bf16 "
                    "pairs directly and moves half the bytes. Many CPUs lack them.")
        return ("A speed-up like this usually comes from native 16-bit dot-product instructions (AVX-512 BF16, or "
                "AMX, Intel's matrix units), which multiply bf16 pairs directly. Many CPUs lack them.")
    if verdict == 0:
        return ("Equal times mean the 16-bit path gained nothing here: without native 16-bit "
                "matrix instructions the arithmetic still runs at fp32 speed, and only the memory "
                "saving remains.")
    if matmul["bf16"] / matmul["fp32"] >= GENERIC_KERNEL_RATIO:
        # What the file reports is said as reported; the kernel that ran is an inference, said as one.
        units = machine.vector_units
        reports = ("" if units in ("AVX-512 BF16", "AVX-512 + AMX") else
                   f" The build host reports {units}, not one of these." if units else
                   " The build host's file does not record its instruction set.")
        return (f"Converting bf16 to fp32 and back touches each number once, little beside a product's arithmetic. "
                f"So a slowdown of {GENERIC_KERNEL_RATIO:g}× or more most likely means a generic, untuned bf16 kernel "
                "ran, while fp32 used the tuned BLAS. On x86, "
                "oneDNN's fast bf16 kernels need AVX-512 BF16 or AMX, or AVX2's newer 16-bit extensions."
                f"{reports} Only the memory saving remains.")
    return ("A CPU without native 16-bit matrix instructions converts bf16 to fp32 to multiply "
            "and back to store. So the 16-bit path does extra work for no arithmetic gain. Only "
            "the memory saving remains.")


@fact
def precision_memory(data: Dataset) -> str:
    """A sentence: the bytes autograd saved for backward in a CPU training step, fp32 and bf16."""
    machine = first_with(data, GROUP)
    saved = {b["params"]["dtype"]: b["extra_info"].get("saved_bytes")
             for b in machine.measured(GROUP, device="cpu", op="train_step")}
    if not saved.get("fp32") or saved.get("bf16") is None:
        raise MissingData("no saved-bytes count for the fp32 and bf16 training steps")
    where = on_machine(data, machine)  # follows the page's "Memory follows the bytes:", so in lower case
    return (f"{where[:1].lower()}{where[1:]}, autograd saved {si(saved['fp32'], 'B')} for backward in fp32 and "
            f"{si(saved['bf16'], 'B')} under bf16 autocast ({100 * saved['bf16'] / saved['fp32']:.0f}%)")


@fact
def numpy_fp16(data: Dataset) -> str:
    """A sentence: numpy's float64, float32 and float16 product times, float16 against float32."""
    points = precision_stats(first_with(data, GROUP), "cpu", "numpy_matmul")
    took = {dtype: point["median"] for dtype, point in points.items()}
    ratio = stats.paired_ratio(points["fp16"], points["fp32"])
    verdict = ratio_sentence(ratio, "{} slower than float32", "{} faster than float32",
                             "the same as float32 within the measurements' spread")
    return (f"numpy's float64 product took {si(took['fp64'], 's')}. Float16 took {si(took['fp16'], 's')} "
            f"against float32's {si(took['fp32'], 's')}: {verdict}")


@fact
def bf16_answer(data: Dataset) -> str:
    """The FAQ's measured answer: bf16 against fp32 for a CPU matrix product on the build host, then how many other
    machines were faster, slower or level in bf16."""
    said = [(m, bf16_against_fp32(m)) for m in data.with_experiment(GROUP)]
    said = [(m, words) for m, words in said if words]
    if not said:
        raise MissingData("no CPU measured bf16 against fp32")
    (first, words), others = said[0], said[1:]
    where = f"On {'the build host, ' if first is data.host else ''}{untrusted.placeholder(first.label)}"
    text = f"{where}, a matrix product ran {words} in bf16" if words != "level" else f"{where}, the two were level"
    if others:  # a count, not a list in a sentence: the mixed-precision page tables every machine
        kinds = {kind: [w for _, w in others if w.endswith(kind)] for kind in ("faster", "slower", "level")}
        parts = [f"{kind} on {len(found)}" for kind, found in kinds.items() if found]
        n = len(others)
        text += f". Of the {n} other machine{'s' if n != 1 else ''}, bf16 was {listing(parts)}"
    # The largest gain and loss measured are named, so "can gain" and "far slower" have their examples.
    for kind, pick, name in (("faster", max, "gain"), ("slower", min, "loss")):
        found = [(_fp32_over_bf16(m), m) for m, w in others if w.endswith(kind)]
        if found:
            ratio, machine = pick(found, key=lambda pair: pair[0])
            shown = multiple(ratio if kind == "faster" else 1 / ratio)
            side = precision_side(machine)  # its size: a small product pays fixed costs (#39 read)
            size = f", with a {side}×{side} product" if side else ""
            text += f". The largest {name} was {shown}, on {untrusted.placeholder(machine.label)}{size}"
    sizes = {precision_side(m) for m, _ in said}
    return text + (". The product's size differs between machines" if len(sizes) > 1 else "")


def _fp32_over_bf16(machine: Machine) -> float:
    """How many times faster a machine's CPU matrix product ran in bf16 than in fp32 (medians)."""
    took = precision_stats(machine, "cpu", "matmul")
    return took["fp32"]["median"] / took["bf16"]["median"]
