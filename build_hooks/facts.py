"""Numbers and short claims that prose embeds as `{{ fact: name }}`, computed from the data.

Each fact is a function of the dataset returning Markdown text; a string from a results
file goes in through `untrusted.text`, never as Markdown. The Markdown extension
`build_hooks.markdown_facts` replaces the markers; an unknown name stops the build.
"""

from __future__ import annotations

from typing import Callable

from build_hooks import analysis
from build_hooks.dataset import Dataset, Machine
from build_hooks import untrusted
from build_hooks.render import si

FACTS: dict[str, Callable[[Dataset], str]] = {}


def fact(fn: Callable[[Dataset], str]) -> Callable[[Dataset], str]:
    FACTS[fn.__name__] = fn
    return fn


class MissingData(LookupError):
    """A fact's data is not in the dataset."""


def _with(data: Dataset, group: str) -> Machine:
    machines = data.with_experiment(group)
    if not machines:
        raise MissingData(f"no machine has measured {group}")
    return machines[0]


@fact
def host_cpu(data: Dataset) -> str:
    machine = _with(data, analysis.STEP)
    return f"{untrusted.text(machine.cpu['brand'])} ({machine.cpu['threads_used']} threads)"


@fact
def cpu_peak(data: Dataset) -> str:
    peak = _with(data, analysis.STEP).cpu["fp32_peak_flops"]
    return si(peak, "FLOP/s") if peak else "an unknown peak"


@fact
def cpu_best_step_rate(data: Dataset) -> str:
    best = analysis.best_rate(_with(data, analysis.STEP), "cpu")
    if best is None:
        raise MissingData("no CPU training-step point with a FLOP count")
    point, width = best
    return f"{si(point.flops_per_s, 'FLOP/s')} (batch {point.batch}, width {width})"


def versus_peak(rate: float, machine: Machine) -> str:
    """A rate compared with the CPU's theoretical peak, honest when the peak is too low."""
    cpu = machine.cpu
    peak = cpu["fp32_peak_flops"]
    if not peak:
        return "(this machine does not expose its clock, so no peak can be computed)"
    if rate <= peak:
        return f"{100 * rate / peak:.0f}% of this CPU's theoretical fp32 peak of {si(peak, 'FLOP/s')}"
    return (f"more than the {si(peak, 'FLOP/s')} theoretical peak computed from the "
            f"{si(cpu['clock_hz'], 'Hz')} clock the operating system reports: the cores must be "
            "running faster than that (boost clocks), so the true fraction of peak cannot be "
            "computed from what this machine exposes")


@fact
def cpu_best_step_fraction_of_peak(data: Dataset) -> str:
    machine = _with(data, analysis.STEP)
    best = analysis.best_rate(machine, "cpu")
    if best is None:
        raise MissingData("no CPU training-step rate")
    return versus_peak(best[0].flops_per_s, machine)


@fact
def crossover_summary(data: Dataset) -> str:
    sentences = []
    for machine in data.with_experiment(analysis.STEP):
        if "cuda" not in machine.devices(analysis.STEP):
            continue
        parts = []
        for width in analysis.widths(machine):
            batch = analysis.crossover_batch(machine, width)
            parts.append(f"width {width}: " + (f"from batch {batch}" if batch else "never, in the measured range"))
        sentences.append(f"On {untrusted.text(machine.label)} the GPU step is faster " + "; ".join(parts) + ".")
    if not sentences:
        return ("No GPU has been measured for this build, so no crossover is measured here: "
                "the CPU curves stand alone.")
    return " ".join(sentences)


def render(name: str, data: Dataset) -> str:
    if name not in FACTS:
        raise KeyError(f"unknown fact '{name}'; known: {', '.join(sorted(FACTS))}")
    return FACTS[name](data)


# --- lesson facts: each sentence is built from the data and adapts to it -------------


def _x(ratio: float) -> str:
    return f"{ratio:.1f}×" if ratio < 10 else f"{ratio:.0f}×"


def _gpu_machine(data: Dataset, group: str) -> Machine | None:
    return next((m for m in data.with_experiment(group) if "cuda" in m.devices(group)), None)


@fact
def cpu_gemm_best(data: Dataset) -> str:
    machine = _with(data, "gemm_rate")
    rates = analysis.gemm_rates(machine, "cpu")
    n, rate = max(rates.items(), key=lambda kv: kv[1])
    return f"{si(rate, 'FLOP/s')} (n = {n}), which is {versus_peak(rate, machine)}"


@fact
def cpu_gemm_small(data: Dataset) -> str:
    rates = analysis.gemm_rates(_with(data, "gemm_rate"), "cpu")
    n = min(rates)
    return f"{si(rates[n], 'FLOP/s')} at n = {n}"


@fact
def shapes_summary(data: Dataset) -> str:
    machine = _with(data, "matmul_shapes")
    parts = []
    for device in machine.devices("matmul_shapes"):
        times = analysis.shape_times(machine, device)
        small, large = min(times), max(times)
        name = "the GPU" if device == "cuda" else "the CPU"
        parts.append(f"on {name}, spending it as {small}×{small} products took {si(times[small], 's')} "
                     f"and as {large}×{large} products {si(times[large], 's')}: "
                     f"{_x(times[small] / times[large])} longer for the same arithmetic")
    return "; ".join(parts)


@fact
def call_overhead(data: Dataset) -> str:
    machine = _with(data, "call_overhead")
    costs = {d: analysis.medians(machine, "call_overhead", "op", device=d)["add_"]
             for d in machine.devices("call_overhead")}
    text = f"{si(costs['cpu'], 's')} per call on the CPU"
    if "cuda" in costs:
        text += f" and {si(costs['cuda'], 's')} per call (mostly kernel launch) on the GPU"
    return text


@fact
def threads_summary(data: Dataset) -> str:
    machine = _with(data, "threads")
    times = analysis.thread_times(machine)
    most = max(t for _, t in times)
    if most == 1:
        return "This machine has a single thread to offer, so there is nothing to compare."
    parts = []
    for batch in sorted({b for b, _ in times}):
        ratio = times[(batch, 1)] / times[(batch, most)]
        verdict = (f"{most} threads were {_x(ratio)} faster" if ratio >= 1.1 else
                   f"one thread was {_x(1 / ratio)} faster" if ratio <= 1 / 1.1 else
                   "one thread and all of them took about the same time")
        parts.append(f"at batch {batch}, {verdict}")
    return "; ".join(parts) + "."


@fact
def memory_summary(data: Dataset) -> str:
    machine = _with(data, "activation_memory")
    sizes = analysis.medians(machine, "activation_memory", "batch", device="cpu")
    batch = max(sizes)
    weights = machine.benchmarks("activation_memory", device="cpu", batch=batch)[0]["extra_info"]["weight_bytes"]
    ratio = sizes[batch] / weights
    relation = f"{_x(ratio)} the weights" if ratio >= 1 else f"{_x(1 / ratio)} smaller than the weights"
    return (f"the network's weights take {si(weights, 'B')}; the activations saved for "
            f"backward take {si(sizes[min(sizes)], 'B')} at batch {min(sizes)} and "
            f"{si(sizes[batch], 'B')} at batch {batch}, {relation}")


@fact
def memory_limits(data: Dataset) -> str:
    fit = analysis.activation_fit(_with(data, "activation_memory"), "cpu")
    if fit is None or fit[1] <= 0:
        raise MissingData("not enough activation-memory points for a fit")
    fixed, per_sample = fit
    limits = ", ".join(f"{gb} GB at about batch {int((gb * 1e9 - fixed) // per_sample):,}"
                       for gb in (8, 24, 80))
    return (f"each sample adds {si(per_sample, 'B')} of saved activations, so a straight-line "
            f"extrapolation of the measured points (an estimate, ignoring weights, gradients, "
            f"optimiser state and framework overhead) fills {limits}")


@fact
def loader_summary(data: Dataset) -> str:
    machine = _with(data, "data_loader")
    rates = analysis.loader_rates(machine)
    base = rates[0]
    best_workers = max(rates, key=rates.get)
    useful = analysis.useful_workers(rates)
    text = (f"in the training process itself (num_workers=0) the pipeline delivered "
            f"{si(base, 'samples/s')}; the best was {si(rates[best_workers], 'samples/s')} with "
            f"{best_workers} worker{'s' if best_workers != 1 else ''} ({_x(rates[best_workers] / base)})")
    if 1 in rates and rates[1] < base:
        text += (f". A single worker was slower than none ({si(rates[1], 'samples/s')}): it does the "
                 "same work on one core and adds the cost of sending batches between processes")
    text += f". Adding workers helped up to {useful} on this machine" if useful else ""
    return text + "."


@fact
def sync_summary(data: Dataset) -> str:
    machine = _with(data, "sync_cost")
    parts = []
    for device in machine.devices("sync_cost"):
        points = {b["params"]["read_loss"]: b["stats"] for b in machine.benchmarks("sync_cost", device=device)}
        every, once = points["every_step"], points["on_device"]
        diff = every["median"] - once["median"]
        noise = max(every["iqr"], once["iqr"])
        name = "GPU" if device == "cuda" else "CPU"
        if abs(diff) <= noise:
            parts.append(f"on the {name} the difference ({si(abs(diff), 's')} per step) is within "
                         f"the measurement noise: there is no queue to drain")
        else:
            parts.append(f"on the {name} reading the loss every step {'cost' if diff > 0 else 'saved'} "
                         f"{si(abs(diff), 's')} per step ({100 * diff / once['median']:+.0f}%)")
    return "; ".join(parts) + "."


@fact
def precision_cpu_summary(data: Dataset) -> str:
    machine = _with(data, "precision")
    mm = analysis.precision_times(machine, "cpu", "matmul")
    step = analysis.precision_times(machine, "cpu", "train_step")

    def compare(times: dict, what: str) -> str:
        ratio = times["fp32"] / times["bf16"]
        if ratio >= 1.1:
            return f"{what} ran {_x(ratio)} faster in bf16 than in fp32"
        if ratio <= 1 / 1.1:
            return f"{what} ran {_x(1 / ratio)} slower in bf16 than in fp32"
        return f"{what} took about the same time in bf16 and fp32"

    return f"On this CPU, {compare(mm, 'a matrix product')} and {compare(step, 'the mixed-precision training step')}."


@fact
def precision_cpu_explanation(data: Dataset) -> str:
    mm = analysis.precision_times(_with(data, "precision"), "cpu", "matmul")
    if mm["bf16"] < mm["fp32"] / 1.1:
        return ("That speed-up means this CPU has native 16-bit dot-product instructions "
                "(such as AVX-512 BF16 or AMX): it multiplies bf16 pairs directly and moves half "
                "the bytes. Many CPUs lack them.")
    return ("A CPU without native 16-bit matrix instructions converts bf16 to fp32 to multiply "
            "and back to store, so the 16-bit path does extra work for no arithmetic gain; only "
            "the memory saving remains.")


@fact
def precision_memory(data: Dataset) -> str:
    machine = _with(data, "precision")
    saved = {b["params"]["dtype"]: b["extra_info"]["saved_bytes"]
             for b in machine.benchmarks("precision", device="cpu", op="train_step")}
    return (f"autograd saved {si(saved['fp32'], 'B')} for backward in fp32 and "
            f"{si(saved['bf16'], 'B')} under bf16 autocast ({100 * saved['bf16'] / saved['fp32']:.0f}%)")


@fact
def numpy_fp16(data: Dataset) -> str:
    times = analysis.medians(_with(data, "precision"), "precision", "dtype", device="cpu", op="numpy_matmul")
    return (f"numpy's float64 product took {si(times['fp64'], 's')}, float32 {si(times['fp32'], 's')} "
            f"and float16 {si(times['fp16'], 's')}: {_x(times['fp16'] / times['fp32'])} slower than float32")


@fact
def ddp_summary(data: Dataset) -> str:
    machine = _with(data, "data_parallel")
    t = analysis.medians(machine, "data_parallel", "setup")
    one, ddp, reduce = t["one_process"], t["ddp"], t["all_reduce"]
    verdict = (f"{_x(one / ddp)} faster than" if ddp < one / 1.1 else
               f"{_x(ddp / one)} slower than" if ddp > one * 1.1 else "about as fast as")
    return (f"one process with every thread took {si(one, 's')} per step; two DDP processes "
            f"sharing the same cores took {si(ddp, 's')}, {verdict} the single process. "
            f"The all-reduce of one model's gradients alone took {si(reduce, 's')}, "
            f"{100 * reduce / ddp:.0f}% of a DDP step")


@fact
def transfer_summary(data: Dataset) -> str:
    gpu = _gpu_machine(data, "transfer")
    if gpu is None:
        return ("This build has no GPU, so there is no host↔device bus to measure: the transfer "
                "experiment is not applicable here and records nothing.")
    pinned = analysis.transfer_bandwidth(gpu, "host_to_device", "pinned")
    pageable = analysis.transfer_bandwidth(gpu, "host_to_device", "pageable")
    size = max(pinned)
    return (f"On {untrusted.text(gpu.label)}, copying {si(size, 'B')} to the GPU reached {si(pinned[size], 'B/s')} "
            f"from pinned memory and {si(pageable[size], 'B/s')} from pageable memory; a "
            f"{si(min(pinned), 'B')} copy reached only {si(pinned[min(pinned)], 'B/s')}, because "
            "every copy has a fixed cost.")


@fact
def small_network_epoch(data: Dataset) -> str:
    machine = _with(data, "epoch_time")
    cpu = analysis.medians(machine, "epoch_time", "batch", device="cpu", width=32)
    if not cpu:
        raise MissingData("no epoch time at width 32")
    batch = 64 if 64 in cpu else max(cpu)
    rows = machine.benchmarks("epoch_time", device="cpu", width=32, batch=batch)[0]["params"]["rows"]
    text = (f"one epoch of the 512→32→10 network over {rows:,} rows took {si(cpu[batch], 's')} "
            f"on the CPU at batch {batch}")
    gpu = _gpu_machine(data, "epoch_time")
    if gpu is not None:
        g = analysis.medians(gpu, "epoch_time", "batch", device="cuda", width=32)
        if batch in g:
            text += f" and {si(g[batch], 's')} on {untrusted.text(gpu.label)}"
    return text


@fact
def cost_model_error(data: Dataset) -> str:
    from build_hooks import cost_model

    machine = _with(data, "training_step")
    raw = cost_model.validate(machine, "cpu")
    fitted = cost_model.validate(machine, "cpu", calibrated=True)
    if raw is None:
        raise MissingData("the cost model lacks call_overhead, gemm_rate or memory_bandwidth results")

    def describe(check) -> str:
        batch, width, worst = check.worst
        return (f"a median error of {100 * check.median_error:.0f}% and a worst of {100 * worst:.0f}% "
                f"(batch {batch}, width {width}) over {len(check.points)} measured CPU points")

    text = f"with t_op from the tiny operation, {describe(raw)}"
    if fitted is not None:
        text += (f"; with t_op calibrated on the smallest step ({si(fitted.params.op_seconds, 's')} per "
                 f"operation instead of {si(raw.params.op_seconds, 's')}), {describe(fitted)}")
    return text


@fact
def cost_model_small_batch_bias(data: Dataset) -> str:
    from build_hooks import cost_model

    check = cost_model.validate(_with(data, "training_step"), "cpu")
    if check is None:
        raise MissingData("no cost-model validation")
    ratios = {width: pred / meas for batch, width, meas, pred in check.points if batch == 1}
    low, high = min(ratios, key=ratios.get), max(ratios, key=ratios.get)
    text = (f"At batch 1 the raw model predicts from {100 * ratios[low]:.0f}% (width {low}) to "
            f"{100 * ratios[high]:.0f}% (width {high}) of the measured time.")
    if ratios[low] < 0.9:
        text += (" Where it predicts too little, a real step's operations carry autograd and optimiser "
                 "bookkeeping that one bare tiny addition does not: hence the calibration.")
    if ratios[high] > 1.1:
        text += (" Where it predicts too much, the three terms overlap in practice and the model "
                 "adds them.")
    return text
