"""A GPU machine's slot in one process: check, forecast, measure, publish, check against the datasheet.

    python -m build_hooks.gpu_slot --device cuda --limit-s 450   (scripts/measure-gpu runs this)

One process imports torch and starts CUDA once for every step; a process per step would pay
that start-up three or four times out of a slot of a few minutes. Measuring stops at the
limit, less RESERVE_S kept for publishing. Whatever happens, what finished is published:
an experiment that failed, or that the limit left out, is listed in the file as unfinished
(with why), and the site shows it as not measured.

Exit status: 0 published whole; 3 published what finished (run again with the same folder
to measure the rest: what failed is retried last); 1 a check failed and nothing is to be
committed; 130 interrupted (finished experiments are kept in the cache).
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import threading
import time

from build_hooks import config, experiments, forecast, measure, plausibility, publish, store, untrusted

RESERVE_S = 20  # kept after measuring for publishing and the plausibility check (no torch import left to pay)
MIN_TORCH = (2, 3)


class CheckFailed(RuntimeError):
    """A sanity or plausibility check failed: nothing from this run is to be committed."""


def check_software(device: str) -> str:
    """Python, torch and (for CUDA) a visible GPU: the line naming what is measured, or CheckFailed."""
    if sys.version_info < (3, 11):  # noqa: UP036 - runs on the GPU machine's own Python, which may be older
        raise CheckFailed(f"measuring needs Python 3.11 or newer (this is {sys.version.split()[0]})")
    import torch

    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < MIN_TORCH:
        raise CheckFailed(f"measuring needs torch {'.'.join(map(str, MIN_TORCH))} or newer "
                          f"(this is {torch.__version__})")
    if device == "cuda" and not torch.cuda.is_available():
        raise CheckFailed("torch sees no CUDA device (a CPU-only torch build, or no driver); "
                          "ALLOW_CPU=1 rehearses this script without one")
    name = torch.cuda.get_device_name(0) if device == "cuda" else "the CPU (rehearsal)"
    return f"measuring on {name} with Python {sys.version.split()[0]}, torch {torch.__version__}"


def measure_until(seconds: float, log=print) -> bool:
    """Measure what the cache lacks for at most `seconds`; True if the limit stopped it.

    The limit interrupts the running experiment the way Ctrl-C would (what finished is saved;
    the interrupted experiment is measured again on the next run); a Ctrl-C of the reader's
    own still ends the whole run.
    """
    reached, finished, lock = threading.Event(), threading.Event(), threading.Lock()

    def stop() -> None:
        with lock:
            if finished.is_set():  # measuring ended as the limit came: nothing to interrupt
                return
            reached.set()
            # A real signal, not _thread.interrupt_main(): it also wakes a main thread blocked in a system
            # call (a sleep, a wait for a worker), which a flag alone would leave until the call returned.
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    timer = threading.Timer(seconds, stop)
    timer.daemon = True
    timer.start()
    try:
        try:
            measure.run(log=log, keep_going=True)
        finally:
            with lock:
                finished.set()
            timer.cancel()
    except KeyboardInterrupt:  # the limit's, which may land as measuring ends; a reader's Ctrl-C ends the run
        if not reached.is_set():
            raise
    return reached.is_set()


def run(device: str, limit_s: float, box_s: float | None, quick: bool, started: float, log=print) -> int:
    """The slot's steps in order; the exit status (module docstring)."""
    def say(text: str) -> None:
        log(f"crossover[{time.time() - started:.0f} s]: {text}")

    say(check_software(device))
    costs = forecast.measure_costs(device)  # imports torch and starts CUDA: once, for the whole run
    costs = dataclasses.replace(costs, settle_s=config.settle_budget_s() or 0.0)
    lines = forecast.forecast(None if device == "cpu" else device, costs, quick, box_s,
                              names=experiments.suite(gpu_slot=True))
    log(forecast.table(lines, costs))
    if forecast.total_s(lines, costs) > limit_s:
        say(f"the forecast exceeds the {limit_s:g} s limit: measuring stops there and publishes what finished")
    left = limit_s - (time.time() - started) - RESERVE_S
    stopped = left <= 0 or measure_until(left, log)
    if stopped:
        say("stopped at the time limit; what finished is kept and published, the rest is listed as unfinished")
    target = publish.publish(rehearsal=quick, partial=True)
    say(f"published {target}")
    found = plausibility.violations(store.load(target))
    for line in found:
        log(f"crossover: IMPLAUSIBLE: {line}")
    if found:  # kept for inspection, under a name no results glob picks up
        kept = target.replace(target.with_name(target.name + ".implausible"))
        raise CheckFailed(f"{len(found)} number(s) above the datasheet peak: a timer that stopped early or a wrong "
                          f"count; kept as {kept}, not to be committed")
    unfinished = store.load(target).get("unfinished", {})
    for name, why in unfinished.items():
        say(f"unfinished: {name}: {untrusted.terminal(why)}")
    where = "a CPU rehearsal, not for results/" if device == "cpu" else "commit it to results/"
    if unfinished:
        say(f"published {len(unfinished)} experiment(s) short ({where}); run 'scripts/measure-gpu' again with the "
            "same folder to measure them")
        return 3
    say(f"done: {target} is whole and plausible ({where})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cpu: a rehearsal (ALLOW_CPU=1)")
    parser.add_argument("--limit-s", type=float, required=True, help="the whole slot, in seconds, start-up included")
    parser.add_argument("--box-s", type=float, default=None, help="each experiment's time box, in seconds")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--started-at", type=float, default=None, help="when the slot began (Unix time)")
    args = parser.parse_args(argv)
    try:
        return run(args.device, args.limit_s, args.box_s, args.quick, args.started_at or time.time())
    except (CheckFailed, ValueError, FileNotFoundError, measure.MeasurementError, store.ResultsError,
            config.SettingError) as exc:
        print(untrusted.terminal(f"crossover: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("crossover: interrupted; experiments that finished are kept in the cache", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
