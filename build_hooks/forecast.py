"""How long a measuring run will take, forecast from the plans before anything is timed.

    python -m build_hooks.forecast --gpu cuda --sync-us 5 --launch-us 5 --startup-s 20

A GPU run must fit the slot it is lent (scripts/measure-gpu has 9 minutes and aims at
6), so the forecast is printed before measuring, from:

- the plans: every point of every experiment, on each device, and its rounds;
- for CPU points, the seconds per point and round the slowest committed CPU-only
  reference spent (results/: measured, not assumed; a faster host only does better);
- for GPU points, the timers' own design: a point timed by time_it runs its warm-up,
  one sizing call and then blocks sized once for the budget (snippets/benchmarking.py),
  so a call no longer than a third of the budget gives a round of at most
  budget x 7/3 plus one synchronize at each block edge. An experiment whose GPU calls
  can be longer (whole epochs, 1 GiB copies) has its round modelled in ROUND_MODELS, from
  the stated costs and the sizes its snippet declares;
- the time box: the runner stops starting rounds of an experiment once its box would
  be overrun (measure.MIN_ROUNDS_IN_BOX rounds always run), and the forecast does the same;
- CUDA start-up, paid once by the process that checks, forecasts, measures and publishes;
- waiting for the machine's usual state and re-measuring spoiled rounds (the Gate), which a
  GPU slot caps for the whole run (CROSSOVER_SETTLE_BUDGET): the budget is counted whole.
  The committed CPU paces leave out their own machines' waits for that reason.

A training step on the GPU is charged EAGER_FACTOR times its operations' launches: an eager
step pays the allocator, autograd and Python on top of its bare launches.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from build_hooks import config, experiments, store

MIN_ROUNDS_IN_BOX = 2  # a spread needs two rounds: the box never cuts below this
EAGER_FACTOR = 2.0     # a real eager CUDA step costs 1.3-2x its bare launches: the upper end, to be safe
BLOCK_EDGE_WAITS = 2   # one synchronize before and one after each timed block
WARMUP_CALLS = 3


@dataclass(frozen=True)
class Costs:
    """What a GPU charges the run, in seconds: stated for a forecast, or measured on the machine."""
    sync_s: float     # one synchronize on an idle queue
    launch_s: float   # host time to issue one small kernel
    startup_s: float  # a fresh process's CUDA start-up, up to its first kernel
    source: str
    # Device rates for the few experiments whose calls are long: the GPU's datasheet figures
    # by default (build_hooks/datasheets.py), and a deliberately low host link.
    flop_rate: float = 67e12      # FP32 FLOP/s (H200 SXM, no tensor cores)
    link_bytes_s: float = 10e9    # host<->device copies: well under PCIe 5's 64 GB/s, to be safe
    profiler_start_s: float = 1.0  # one torch.profiler session on CUDA (CUPTI), stated
    settle_s: float = 0.0  # the run's budget for waiting and re-measuring (CROSSOVER_SETTLE_BUDGET)

    def inputs(self) -> str:
        """The model's inputs, in words, for the forecast's output."""
        return (f"{self.source}; each GPU training step {EAGER_FACTOR:g}× its launches; "
                f"settle budget {self.settle_s:g} s; profiler start {self.profiler_start_s:g} s; "
                f"host link {self.link_bytes_s / 1e9:g} GB/s; FP32 {self.flop_rate / 1e12:g} TFLOP/s")


def training_step_s(batch: int, width: int, costs: Costs) -> float:
    """One race-MLP step on a GPU: every operation CUDA issues launched (EAGER_FACTOR times), plus its
    FLOPs at the FP32 rate."""
    ops, flops = race_step_work(batch, width)
    return EAGER_FACTOR * ops * costs.launch_s + flops / costs.flop_rate


@functools.cache  # counted once per configuration: epochs, profiles and steps share them
def race_step_work(batch: int, width: int) -> tuple[int, int]:
    """(operations CUDA issues, FLOPs) of one training step of the race's MLP, counted on a CPU step
    with CUDA's foreach optimiser."""
    from snippets.training_step import count_work, make_step

    counts = count_work(make_step(batch, width, "cpu", foreach=True))
    return counts["ops"], counts["flops"]


def _epoch_round_s(point: dict, costs: Costs, quick: bool) -> float:
    """epoch_time on a GPU: the warm-up steps and the timed epochs (one a round quick, two full)."""
    steps = -(-point["rows"] // point["batch"])
    return (3 + steps * (1 if quick else 2)) * training_step_s(point["batch"], point["width"], costs)


def _profile_round_s(point: dict, costs: Costs, quick: bool) -> float:
    """step_profile: a point's share of its round's one profiler session (its start-up stated) over the
    warm-up and profiled steps; every kind of the round reads that session."""
    declared = experiments.declared("step_profile")
    steps = 3 + declared["QUICK_STEPS" if quick else "STEPS"]
    session = costs.profiler_start_s + steps * 2 * training_step_s(point["batch"], point["width"], costs)
    return session / (len(declared["KINDS"]) + 1)


def _transfer_round_s(point: dict, costs: Costs, quick: bool) -> float:
    """transfer: two warm-up copies, one sizing copy and at least three timed ones, over the stated host link."""
    from snippets.benchmarking import budget

    return max(bounded_gpu_round_s(budget(quick), costs), 6 * point["bytes"] / costs.link_bytes_s)


def _precision_round_s(point: dict, costs: Costs, quick: bool) -> float:
    """precision: seven calls of at most the call budget, plus a share of the one-off size probe (every
    candidate size below the budget, three calls per dtype)."""
    budget_s = experiments.declared("precision")["CALL_BUDGET_S"].get(point["op"], 0.05)
    probe = 3 * 3 * 2 * budget_s  # dtypes x calls x (the sizes' costs sum to under twice the last)
    return 7 * budget_s + probe / 3


# The experiments whose GPU calls can outlast a time_it round (whole epochs, 1 GiB copies, profiler
# sessions, sized products): their round is modelled here from the snippet's declared sizes, so the
# code a reader sees never depends on the forecast.
ROUND_MODELS = {"epoch_time": _epoch_round_s, "step_profile": _profile_round_s, "transfer": _transfer_round_s,
                "precision": _precision_round_s}


def measure_costs(device: str) -> Costs:
    """This machine's own costs, timed now: start-up, then the medians of many waits and launches.

    On a CPU (the GPU script's rehearsal) there is no queue: a "wait" costs nothing and a
    "launch" is one tiny operation's dispatch, so the forecast rehearses the same arithmetic.
    """
    import time

    began = time.perf_counter()
    import torch

    from snippets.benchmarking import synchronize

    x = torch.zeros(1, device=device)
    synchronize(device)
    startup = time.perf_counter() - began

    def median_of(fn, calls: int, per: int = 1) -> float:
        samples = []
        for _ in range(calls):
            synchronize(device)
            start = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - start) / per)
        return sorted(samples)[len(samples) // 2]

    def launches():
        for _ in range(100):
            x.add_(1)

    median_of(launches, 5, 100)  # warm-up
    sync = median_of(lambda: synchronize(device), 200)
    launch = median_of(launches, 50, 100)  # host issue time: no wait inside
    return Costs(sync, launch, startup, f"measured on this machine ({device}): synchronize "
                 f"{sync * 1e6:.1f} µs, launch {launch * 1e6:.1f} µs, start-up {startup:.1f} s")


def bounded_gpu_round_s(budget_s: float, costs: Costs) -> float:
    """The most a time_it round can take when a call is at most a third of the budget."""
    from snippets import benchmarking

    blocks = benchmarking.MAX_BLOCKS  # gpu_blocks never times more than this
    calls = budget_s / 3
    return (WARMUP_CALLS + 1) * calls + max(budget_s, benchmarking.MIN_SAMPLES_PER_ROUND * calls) \
        + BLOCK_EDGE_WAITS * (blocks + 1) * costs.sync_s


def cpu_point_round_s(results_dir: Path, typical: bool = False) -> dict[str, float]:
    """{experiment: seconds per CPU point and round} of the committed CPU-only machines, without the time
    their Gates spent waiting and re-measuring (a slot's settle budget is counted on its own): the slowest
    machine's (a GPU slot's forecast, which must not run over), or with typical the median machine's (a
    build host's ETA, which should be close, and corrects itself as experiments finish)."""
    paces: dict[str, list[float]] = {}
    for path in sorted(results_dir.glob("*.json")):
        doc = store.load(path)
        for name, meta in doc["experiments"].items():
            if meta.get("devices") != ["cpu"]:
                continue
            points = sum(1 for b in doc["benchmarks"] if b["group"] == name)
            conditions = meta.get("conditions", {})
            rounds = conditions.get("rounds") or 1
            measuring = meta["duration_s"] - (conditions.get("waited_s") or 0.0)
            if points:
                paces.setdefault(name, []).append(measuring / rounds / points)
    return {name: statistics.median(found) if typical else max(found) for name, found in paces.items()}


@dataclass(frozen=True)
class Line:
    name: str
    cpu_points: int
    gpu_points: int
    rounds: int
    seconds: float | None  # None: no committed CPU measurement of it to forecast from


def forecast(gpu: str | None, costs: Costs, quick: bool, box_s: float | None,
             results_dir: Path | None = None, names: list[str] | None = None) -> list[Line]:
    """One line per experiment: its points, the rounds the box leaves it and its forecast seconds."""
    from build_hooks.measure import in_measuring_order, rounds_of
    from snippets.benchmarking import budget

    devices = ["cpu"] + ([gpu] if gpu else [])
    cpu_costs = cpu_point_round_s(results_dir or config.PROJECT_ROOT / "results")  # the committed ones
    lines = []
    for name in in_measuring_order(names or experiments.suite(config.settings().gpu_slot)):
        module = experiments.load(name)
        plan = module.plan(experiments.supported_devices(name, devices), quick)
        cpu = [p for p in plan if p["device"] == "cpu"]
        on_gpu = [p for p in plan if p["device"] != "cpu"]
        host = cpu_costs.get(name)
        if cpu and host is None:  # a new experiment: no committed CPU measurement to forecast it from
            lines.append(Line(name, len(cpu), len(on_gpu), rounds_of(module, quick), None))
            continue
        own = ROUND_MODELS.get(name)
        per_round = len(cpu) * (host or 0.0) + sum(
            (own(p, costs, quick) if own else None) or
            (host if getattr(module, "HOST_BOUND", False) and host else bounded_gpu_round_s(budget(quick), costs))
            for p in on_gpu)
        rounds = rounds_in_box(rounds_of(module, quick), per_round, box_s)
        lines.append(Line(name, len(cpu), len(on_gpu), rounds, rounds * per_round))
    return lines


def host_seconds(name: str, points: int, rounds: int, paces: dict[str, float]) -> float | None:
    """A build host's forecast for one experiment: its points and rounds at the committed pace (None for an
    experiment no committed machine measured)."""
    pace = paces.get(name)
    if not points:
        return 0.0  # nothing to measure on this machine (copies to a GPU it does not have)
    return None if pace is None else points * rounds * pace


class Eta:
    """Time left in a build host's run: the forecast of what is left, scaled by how the finished experiments
    compared with their own forecast (this machine's pace, learnt as it goes)."""

    def __init__(self, forecast_s: dict[str, float | None]):
        self.forecast_s, self.took_s = dict(forecast_s), {}

    def finished(self, name: str, seconds: float) -> None:
        self.took_s[name] = seconds

    def left_s(self) -> float | None:
        left = [n for n in self.forecast_s if n not in self.took_s]
        paired = [(self.forecast_s[n], t) for n, t in self.took_s.items() if self.forecast_s.get(n)]
        scale = sum(t for _, t in paired) / sum(f for f, _ in paired) if paired else 1.0
        known = sum(self.forecast_s[n] for n in left if self.forecast_s[n] is not None)
        unknown = sum(self.forecast_s[n] is None for n in left)
        # An experiment no committed machine measured is priced like a typical one: this run's so far,
        # else the forecast's own.
        priced = list(self.took_s.values()) or [f for f in self.forecast_s.values() if f is not None]
        if unknown and not priced:
            return None  # nothing to price it by
        typical = sum(priced) / len(priced) if priced else 0.0
        return scale * known + unknown * (typical if self.took_s else scale * typical)

    def words(self) -> str:
        left = self.left_s()
        return "no forecast yet" if left is None else f"about {max(1, round(left / 60))} min left"


def another_round_fits(done: int, elapsed_s: float, box_s: float) -> bool:
    """Whether the runner starts round done+1: below the minimum always, else only if it fits the box."""
    return done < MIN_ROUNDS_IN_BOX or elapsed_s * (done + 1) / done <= box_s


def rounds_in_box(rounds: int, per_round_s: float, box_s: float | None) -> int:
    """The rounds the runner will run: all of them, unless the box stops it (never below the minimum)."""
    if box_s is None or rounds <= MIN_ROUNDS_IN_BOX or rounds * per_round_s <= box_s:
        return rounds
    return max(MIN_ROUNDS_IN_BOX, min(rounds, math.floor(box_s / per_round_s)))


def table(lines: list[Line], costs: Costs) -> str:
    rows = [f"{'experiment':<20} {'cpu pts':>7} {'gpu pts':>7} {'rounds':>6} {'forecast':>9}"]
    rows += [f"{x.name:<20} {x.cpu_points:>7} {x.gpu_points:>7} {x.rounds:>6} "
             + (f"{x.seconds:>8.1f}s" if x.seconds is not None else "  unknown") for x in lines]
    total = total_s(lines, costs)
    rows.append(f"{'start-up (to the first kernel)':<44} {costs.startup_s:>8.1f}s")
    rows.append(f"{'settle waits and re-measuring (budget)':<44} {costs.settle_s:>8.1f}s")
    rows.append(f"{'total':<44} {total:>8.1f}s  ({total / 60:.1f} min)")
    rows.append(f"model inputs: {costs.inputs()}")
    unknown = [x.name for x in lines if x.seconds is None]
    if unknown:
        rows.append(f"not forecast (no committed CPU measurement of them): {', '.join(unknown)}")
    return "\n".join(rows)


def total_s(lines: list[Line], costs: Costs) -> float:
    """The forecast's seconds, start-up and the settle budget included (experiments without a
    forecast count nothing)."""
    return sum(x.seconds or 0.0 for x in lines) + costs.startup_s + costs.settle_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", choices=["cuda", "mps"], default="cuda", help="the GPU the run measures")
    parser.add_argument("--sync-us", type=float, default=5.0, help="one synchronize, in µs (stated)")
    parser.add_argument("--launch-us", type=float, default=5.0, help="one kernel launch, in µs (stated)")
    parser.add_argument("--startup-s", type=float, default=20.0, help="CUDA start-up, in seconds (stated)")
    parser.add_argument("--box-s", type=float, default=None, help="each experiment's time box, in seconds")
    parser.add_argument("--settle-s", type=float, default=None,
                        help="the run's budget for settle waits and re-measuring, in seconds "
                             "(default: CROSSOVER_SETTLE_BUDGET, else none)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--measure-costs", metavar="DEVICE", choices=["cuda", "mps", "cpu"],
                        help="time this machine's synchronize, launch and start-up instead of the stated ones")
    parser.add_argument("--limit-s", type=float, default=None,
                        help="exit 2 (after printing) when the forecast exceeds this many seconds")
    args = parser.parse_args(argv)
    if args.measure_costs:
        costs = measure_costs(args.measure_costs)
    else:
        costs = Costs(args.sync_us * 1e-6, args.launch_us * 1e-6, args.startup_s,
                      f"stated: synchronize {args.sync_us:g} µs, launch {args.launch_us:g} µs, "
                      f"start-up {args.startup_s:g} s")
    settle = args.settle_s if args.settle_s is not None else (config.settle_budget_s() or 0.0)
    costs = dataclasses.replace(costs, settle_s=settle)
    gpu = None if args.measure_costs == "cpu" else args.gpu
    lines = forecast(gpu, costs, args.quick, args.box_s)
    print(table(lines, costs))
    if args.limit_s is not None and total_s(lines, costs) > args.limit_s:
        print(f"crossover: the forecast exceeds the {args.limit_s:g} s limit: the run will stop there and keep "
              "what finished; run the script again with the same folder to resume", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
