"""Measure this machine: run the experiments whose results are missing or stale.

    python -m build_hooks.measure              # what is missing or stale
    python -m build_hooks.measure --force      # everything again
    python -m build_hooks.measure --only training_step

Results go to the host's cache file (one per machine and mode), saved atomically after
each experiment, so an interrupted run keeps every experiment that had finished.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import faulthandler
import itertools
import json
import math
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

try:  # a progress bar where tqdm is installed; plain lines on a bare measuring machine
    from tqdm import tqdm
except ImportError:  # pragma: no cover - exercised by the torch-and-numpy-only test
    from build_hooks.progress import LineProgress as tqdm

from build_hooks import (
    background,
    conditions,
    config,
    dataset,
    digests,
    experiments,
    forecast,
    provenance,
    stats,
    store,
    untrusted,
)
from build_hooks.gate import REMEASURE_ATTEMPTS, Gate, outlying_rounds, what_moved


class MeasurementError(RuntimeError):
    """An experiment failed; the message names it and the point it failed at."""


class PointTimeout(Exception):
    """One point ran past its deadline (a hang, a deadlock, a runaway size)."""


def point_timeout_s(module) -> float:
    """Seconds one point may take: CROSSOVER_POINT_TIMEOUT, else the experiment's own, else 300."""
    return config.seconds("CROSSOVER_POINT_TIMEOUT", getattr(module, "POINT_TIMEOUT_S", 300))


def hard_limit_s(seconds: float) -> float:
    """When the process is killed if a point's PointTimeout could not stop it."""
    return seconds + max(10.0, 0.25 * seconds)


@contextmanager
def deadline(seconds: float):
    """Stop a point after `seconds`: gently if Python gets control back, by force if not.

    SIGALRM raises PointTimeout in the main thread, which names the point and keeps every
    finished experiment. But a Python signal handler only runs between bytecodes: a hang
    inside native code (a CUDA call, a deadlocked collective) never reaches it. So a
    watchdog that needs neither the GIL nor the main thread (faulthandler's, a native
    thread) ends the whole process a little later, printing where every thread was
    stuck; experiments saved before are kept, and torchrun workers die with it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise PointTimeout(f"no result after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    # faulthandler prints "Timeout" and each thread's stack (the snippet's file and line
    # included), then exits with status 1.
    faulthandler.dump_traceback_later(hard_limit_s(seconds), exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cache_path(settings: config.Settings, machine_id: str) -> Path:
    return settings.cache_dir / f"{machine_id}.{settings.mode}.json"


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _new_document(prov: dict, env_key: str, mode: str) -> dict:
    return {"schema_version": store.SCHEMA_VERSION, "mode": mode, "environment_key": env_key,
            **prov, "experiments": {}, "benchmarks": []}


def _set_aside(path: Path, reason: str) -> Path:
    """Move an unusable cache file out of the way, never deleting it."""
    archive = path.parent / "archive"
    if archive.exists() and not archive.is_dir():
        raise MeasurementError(f"{path} cannot be used ({reason}) and cannot be set aside: {archive} is a file, "
                               "where a folder for set-aside results belongs. Move it away and run again")
    archive.mkdir(exist_ok=True)
    stem = f"{path.stem}.{time.strftime('%Y%m%dT%H%M%S')}.{reason}"
    target = archive / f"{stem}.json"
    for n in itertools.count(2):  # two set aside in the same second must both be kept
        if not target.exists():
            break
        target = archive / f"{stem}.{n}.json"
    shutil.move(path, target)
    return target


def _without_stale(path: Path, keys: dict[str, str]) -> dict | None:
    """The cache without the experiments whose code changed, if that makes it valid again.

    An experiment that starts recording a new extra_info key makes its old points invalid;
    they are stale anyway (their cache key differs), so only they are dropped, and every
    other experiment's results are kept instead of re-measuring the whole machine.
    """
    try:
        doc = json.loads(store.read_regular_file(path).decode("utf-8"))
        stale = [name for name, meta in doc["experiments"].items() if meta.get("cache_key") != keys.get(name)]
        doc["experiments"] = {n: m for n, m in doc["experiments"].items() if n not in stale}
        doc["benchmarks"] = [b for b in doc["benchmarks"] if b.get("group") not in stale]
        store.validate(doc, path)
    except (store.ResultsError, ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        return None
    return doc


def _open_cache(path: Path, prov: dict, env_key: str, mode: str, log, keys: dict[str, str]) -> dict:
    """The host's cache document, or a fresh one when it is unusable or from other software."""
    if not path.exists():
        return _new_document(prov, env_key, mode)
    try:
        doc = store.load(path)
    except store.ResultsError as exc:
        kept = _without_stale(path, keys)
        if kept is not None and kept["environment_key"] == env_key:
            log(f"crossover: results of experiments whose code changed no longer match their format "
                f"({exc}); dropped them and kept the rest")
            return kept
        moved = _set_aside(path, "invalid")
        log(f"crossover: the host cache is unusable ({exc}); moved it to {moved} "
            "and measuring afresh (committed results/ are untouched)")
        return _new_document(prov, env_key, mode)
    if doc["environment_key"] != env_key:
        moved = _set_aside(path, "previous-environment")
        log(f"crossover: hardware or library versions changed since the last measurement; "
            f"kept the old results in {moved} and measuring afresh")
        return _new_document(prov, env_key, mode)
    return doc


def stale_experiments(doc: dict, keys: dict[str, str]) -> list[str]:
    """The experiments whose stored cache key differs from the key of their current code."""
    return [name for name, key in keys.items() if doc["experiments"].get(name, {}).get("cache_key") != key]


# What the GPU pages' headlines read, measured first: a run stopped by its time limit keeps these.
FIRST = ["epoch_time", "training_step", "transfer", "gemm_rate", "memory_bandwidth", "call_overhead",
         "sync_cost", "precision", "inference_latency", "step_profile", "activation_memory", "matmul_shapes"]


def in_measuring_order(names: list[str], failed: dict | None = None) -> list[str]:
    """FIRST's experiments in its order, then the rest by name; those that failed last time go last,
    so a resumed run measures what can succeed before it retries them."""
    return sorted(names, key=lambda n: (n in (failed or {}), FIRST.index(n) if n in FIRST else len(FIRST), n))


ERROR_LIMIT = 500  # characters of a failure's message kept in a results file (the schema's bound)


def _record_failure(doc: dict, name: str, error: str) -> dict:
    """The document with `name` listed as unfinished (its error kept) and none of its old results."""
    kept = [b for b in doc["benchmarks"] if b["group"] != name]
    experiments_ = {n: m for n, m in doc["experiments"].items() if n != name}
    unfinished = {**doc.get("unfinished", {}), name: error[:ERROR_LIMIT]}
    return {**doc, "experiments": experiments_, "benchmarks": kept, "unfinished": unfinished}


ROUNDS = {"full": 3, "quick": 2}  # an experiment's points are measured round-robin this often


def rounds_of(module, quick: bool) -> int:
    """How many interleaved rounds an experiment gets (a snippet may set ROUNDS itself, and QUICK_ROUNDS for a
    quick build)."""
    if quick and hasattr(module, "QUICK_ROUNDS"):
        return module.QUICK_ROUNDS
    return getattr(module, "ROUNDS", ROUNDS["quick" if quick else "full"])


def _benchmark_entry(name: str, point: dict, results: list[dict], foreign: float | None,
                     remeasured: int = 0, unsettled: bool = False, threads: int | None = None,
                     canary_s: list[float | None] | None = None) -> dict:
    """One point's record from its rounds: samples pooled, so drift between rounds shows as spread.

    `options` says how it was timed: interleaved rounds, threads, the samples each round gave
    and how many calls each sample averaged, and the all-thread canary each round started
    under. A round is one interleaved pass over the points; the number of samples is len(stats.data).
    """
    label = "-".join(f"{k}={v}" for k, v in point.items())
    first = results[0]
    options = {"rounds": len(results), "threads": threads,
               "samples_per_round": [len(r.get("samples", [])) for r in results],
               "calls_per_sample": [r.get("calls_per_sample") for r in results]}
    if canary_s and all(c is not None for c in canary_s):
        options["canary_s"] = [round(c, 9) for c in canary_s]
    # A round that ran out of memory ("oom") or could not run at all ("failed") makes the point a
    # fact, not a number: its status and what went wrong, without stats.
    unmeasured = next((r for r in results if r.get("status", "ok") != "ok"), None)
    entry = {"group": name, "name": f"{name}[{label}]", "params": point, "unit": first["unit"],
             "status": unmeasured["status"] if unmeasured else "ok", "options": options}
    if unmeasured:
        return {**entry, "extra_info": unmeasured.get("extra", {})}
    summary = stats.summarise([s for r in results for s in r["samples"]], [r["samples"] for r in results])
    extra = {**first.get("extra", {}), "noisy": stats.is_noisy(summary),
             "under_load": foreign is not None and foreign > conditions.FOREIGN_CPU_LIMIT,
             "remeasured": remeasured, "unsettled": unsettled}
    return {**entry, "stats": summary, "extra_info": extra}


def _sample_median(result: dict) -> float:
    """A round's median, as the stored stats compute it (round_medians): the Gate's re-measuring
    and the § mark then judge rounds by the same numbers the pages print."""
    return statistics.median(result["samples"])


def round_order(points: int, round_number: int) -> list[int]:
    """The points' order in a round: as planned in odd rounds, reversed in even ones. Plans list the
    CPU's points before the GPU's, so neither device always starts a round (a GPU that waited while
    the CPU points ran starts from low clocks), and a drift over a round does not always favour one end."""
    order = list(range(points))
    return order if round_number % 2 else order[::-1]


@dataclass
class PointRecord:
    """One point of an experiment as its rounds are measured: what each round gave, the machine's
    state around it, the all-thread canary it started under, and what the Gate re-measured."""

    params: dict
    results: list[dict] = field(default_factory=list)
    windows: list[tuple] = field(default_factory=list)  # (before, after) snapshots of each round
    started_under: list[float | None] = field(default_factory=list)
    remeasured: int = 0
    unsettled: bool = False

    def round_medians(self) -> list[float]:
        return [_sample_median(r) for r in self.results if r.get("samples")]

    def spread(self) -> float:
        medians = self.round_medians()
        return max(medians) / min(medians) if medians else 0.0

    def failed(self) -> bool:
        return any(r.get("status", "ok") != "ok" for r in self.results)

    def entry(self, name: str, threads: int) -> dict:
        return _benchmark_entry(name, self.params, self.results, conditions.foreign_cpu_over(self.windows),
                                self.remeasured, self.unsettled, threads, self.started_under)


class _Rounds:
    """Runs one experiment's points: each round of a point timed, gated and recorded in its PointRecord."""

    def __init__(self, module, plan: list[dict], threads: int, quick: bool, gate: Gate | None):
        from snippets import benchmarking  # torch is loaded by now: the timers record their calls per sample here

        self.module, self.threads, self.quick, self.gate = module, threads, quick, gate
        self.timers = benchmarking.CALLS_PER_SAMPLE
        self.timeout = point_timeout_s(module)
        self.records = [PointRecord(point) for point in plan]
        self.unsteady_starts = 0
        # Processes this one had before the experiment began (a host's own helpers, a test runner's browser) are
        # not an earlier point's: each point ends its own (_ending_its_processes), and this checks that it did.
        self.present_before = set(benchmarking.descendants(os.getpid()))

    def _run(self, record: PointRecord) -> dict:
        _no_leftover_processes(self.module.NAME, self.present_before)
        before = conditions.snapshot()
        self.timers.clear()
        try:
            with deadline(self.timeout), _ending_its_processes():
                result = self.module.measure(record.params, self.threads, self.quick)
        except Exception as exc:
            raise MeasurementError(
                f"experiment '{self.module.NAME}' (snippets/{self.module.NAME}.py) failed at {record.params}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        record.windows.append((before, conditions.snapshot()))
        # One timer: its calls per sample; a snippet that timed by itself, or with several timers, says nothing.
        return {**result, "calls_per_sample": self.timers[0] if len(self.timers) == 1 else None}

    def gated(self, record: PointRecord, extra: bool = False) -> tuple[dict, float | None]:
        """A point's round, and the all-thread canary reading it started under."""
        if self.gate is None:
            return self._run(record), None
        result, steady = self.gate.measure(lambda: self._run(record), extra)
        self.unsteady_starts += not steady
        return result, self.gate.last


def _measure_experiment(module, plan: list[dict], threads: int, quick: bool, bar,
                        canaries=None, gate: Gate | None = None) -> tuple[list[dict], dict]:
    """Every point of one experiment, in interleaved rounds, with the conditions it ran under.

    Round-robin over the points (A B C, A B C, ...) rather than all of A then all of B:
    a machine whose speed drifts then shows it as spread within each point instead of as
    a false difference between points. Canaries between rounds record the drift itself,
    and the Gate keeps each point to the machine's usual state; a round far from the
    point's typical round (outlying_rounds) is re-measured once, in place (it stays paired
    by its index), and a point that stays unsettled is marked.
    """
    if canaries and gate is None:
        gate = Gate(canaries.all_threads)
    if gate is not None:
        gate.begin()
    readings = [canaries.read()] if canaries else []
    start, load_before = conditions.snapshot(), conditions.load_average()
    runner = _Rounds(module, plan, threads, quick, gate)
    box = config.experiment_box_s()
    began = time.perf_counter()
    planned = rounds_of(module, quick)
    rounds = _interleaved_rounds(runner, planned, box, began, bar, canaries, readings)
    within_box = (lambda: True) if box is None else (lambda: time.perf_counter() - began < box)
    _remeasure_outlying_rounds(runner, rounds, within_box)
    end = conditions.snapshot()
    measured_under = {"rounds": rounds, **({"planned_rounds": planned, "time_box_s": box} if rounds < planned else {}),
                      "canary_s": [r["one_thread"] for r in readings],
                      "load_before": load_before, "load_after": conditions.load_average(),
                      "foreign_cpu": conditions.foreign_cpu(start, end), "steal": conditions.steal(start, end)}
    if canaries:
        measured_under.update(_gate_conditions(runner, readings))
    return [record.entry(module.NAME, threads) for record in runner.records], measured_under


def _interleaved_rounds(runner: _Rounds, planned: int, box: float | None, began: float, bar, canaries,
                        readings: list) -> int:
    """Every point once per round, rounds alternating their order; the rounds the box allowed."""
    records = runner.records
    for done in range(1, planned + 1):
        for i in round_order(len(records), done):
            bar.set_postfix_str(" ".join(f"{k}={v}" for k, v in records[i].params.items()), refresh=False)
            result, reading = runner.gated(records[i])
            records[i].results.append(result)
            records[i].started_under.append(reading)
            bar.update()
        if canaries:
            readings.append(canaries.read())
        if box is not None and done < planned and not forecast.another_round_fits(done, time.perf_counter() - began,
                                                                                  box):
            bar.update(len(records) * (planned - done))  # the rounds the box left out
            return done
    return planned


def _remeasure_outlying_rounds(runner: _Rounds, rounds: int, within_box) -> None:
    """An outlying round is measured again in place while the box allows, worst points first; a point
    whose rounds still disagree is marked unsettled."""
    gate = runner.gate
    for record in sorted(runner.records, key=PointRecord.spread, reverse=True):
        if record.failed() or rounds < 2:
            continue
        for _ in range(REMEASURE_ATTEMPTS):
            for r in outlying_rounds(record.round_medians()):
                if (gate is None or gate.has_time()) and within_box():
                    record.results[r], record.started_under[r] = runner.gated(record, extra=True)
                    record.remeasured += 1
        record.unsettled = bool(outlying_rounds(record.round_medians()))


def _gate_conditions(runner: _Rounds, readings: list[dict]) -> dict:
    """What the canaries read between rounds and what the Gate did, for an experiment's conditions."""
    gate = runner.gate
    found = {"canaries": {kind: [r[kind] for r in readings] for kind in readings[0]},
             "waited_s": round(gate.spent_s, 3)}
    if math.isfinite(gate.fastest):  # the run's so far: what the Gate calls slow is measured against it
        found["fastest_all_threads_s"] = round(gate.fastest, 9)
    found["remeasured"] = sum(r.remeasured for r in runner.records)
    found["unsettled"] = sum(r.unsettled for r in runner.records)
    found["unsteady_starts"] = runner.unsteady_starts
    return found


def _no_leftover_processes(name: str, present_before: set[int], grace_s: float = 5.0) -> None:
    """No DataLoader or torchrun worker of an earlier point may run while this one is timed."""
    from snippets.benchmarking import descendants

    deadline_at = time.monotonic() + grace_s
    while True:
        alive = [pid for pid in descendants(os.getpid()) if pid not in present_before and not _is_helper(pid)]
        if not alive:
            return
        if time.monotonic() > deadline_at:
            raise MeasurementError(f"before timing {name}: processes started by an earlier point are still "
                                   f"running ({'; '.join(map(_described, alive))}); they would share the cores")
        time.sleep(0.05)


def _described(pid: int) -> str:
    """A process as its id and the start of its command line."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        command = "ended"
    return f"{pid} {command[:80]}"


def _is_helper(pid: int) -> bool:
    """multiprocessing's resource tracker: a sleeping bookkeeper that lives as long as we do."""
    try:
        return b"resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # gone already


@contextmanager
def _ctrl_c_held():
    """Hold a Ctrl-C until the block ends, then honour it. Inside torch's import, numpy's import can
    swallow the KeyboardInterrupt (the run then goes on, or ends in a RecursionError traceback)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield  # only the main thread has signals; an ignored Ctrl-C stays ignored
        return
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if held:
        raise KeyboardInterrupt


@contextmanager
def _ending_its_processes():
    """A point that fails, times out or is interrupted takes the processes it started with it
    (DataLoader workers, a launcher's children): the next point must have the cores to itself."""
    from snippets.benchmarking import descendants, kill_all

    already = set(descendants(os.getpid()))
    try:
        yield
    except BaseException:
        kill_all(set(descendants(os.getpid())) - already)
        raise


def _replace_experiment(doc: dict, name: str, meta: dict, entries: list[dict]) -> dict:
    kept = [b for b in doc["benchmarks"] if b["group"] != name]
    unfinished = {n: why for n, why in doc.get("unfinished", {}).items() if n != name}
    doc = {**doc, "experiments": {**doc["experiments"], name: meta}, "benchmarks": kept + entries}
    if unfinished:
        return {**doc, "unfinished": unfinished}
    return {k: v for k, v in doc.items() if k != "unfinished"}


def run(only: list[str] | None = None, force: bool = False,
        settings: config.Settings | None = None, log=print, keep_going: bool = False) -> Path:
    """Measure what is missing (or everything with force); return the cache file's path.

    keep_going (a GPU machine's slot): an experiment that fails is recorded under "unfinished"
    with its error and the run goes on, so one failure never costs the others; the build
    itself stops at the first failure instead, naming it.
    """
    settings = settings or config.settings()
    if not only and not force:
        current = current_without_torch(settings)
        if current is not None:
            store.sweep_temporaries(settings.cache_dir)  # stray temporaries go on every run
            return current
    usable_cache_dir(settings.cache_dir)
    with _ctrl_c_held():
        from snippets.benchmarking import all_threads  # imports torch: only from here on

    names = only or experiments.suite(settings.gpu_slot)
    # Loaded once, before anything is measured: an unknown or broken experiment fails fast,
    # and the keys come from the code that will run (an edit during the run must not
    # label old code's numbers as the new code's).
    modules, broken = _load_experiments(names, keep_going)
    _check_settings(modules)
    keys = experiments.current_keys(settings.mode, names)
    threads = all_threads()
    prov = provenance.collect(threads)
    path = cache_path(settings, prov["machine_id"])
    with _locked(path, log):
        store.remove_stale_temporaries(path)  # left by a writer that was killed mid-write
        doc = _open_cache(path, prov, experiments.environment_key(prov, settings.mode), settings.mode, log,
                          experiments.current_keys(settings.mode))
        for name, error in broken.items():
            log(untrusted.terminal(f"crossover: {error}; going on without it"))
            doc = _record_failure(doc, name, error)
        if broken:
            store.save_atomic(path, doc)
        todo = in_measuring_order([n for n in (names if force else stale_experiments(doc, keys)) if n in modules],
                                  doc.get("unfinished"))
        durations = {}
        if todo:
            doc.update(prov)  # commit and date of the newest measurement
            doc, durations = _measure_all(_Run(settings, path, modules, keys, threads, log, keep_going), doc, todo)
        _write_stamp(settings, path, doc)
    if durations:
        log(summary_table(doc, durations))
    return path


def _check_settings(modules: dict) -> None:
    """A bad setting fails now, not mid-run."""
    for module in modules.values():
        point_timeout_s(module)  # CROSSOVER_POINT_TIMEOUT
    config.experiment_box_s()  # CROSSOVER_EXPERIMENT_BOX
    config.settle_budget_s()  # CROSSOVER_SETTLE_BUDGET


@dataclass(frozen=True)
class _Run:
    """What every experiment of one measuring run shares."""
    settings: config.Settings
    path: Path  # the cache file, saved after each experiment
    modules: dict
    keys: dict[str, str]
    threads: int
    log: Callable
    keep_going: bool


def _measure_all(job: _Run, doc: dict, todo: list[str]) -> tuple[dict, dict[str, float]]:
    """Measure `todo` in order, saving after each experiment; (the document, seconds per experiment)."""
    from snippets.benchmarking import Canaries, devices

    settings = job.settings
    available = devices()
    plans = {name: job.modules[name].plan(experiments.supported_devices(name, available), settings.quick)
             for name in todo}
    total = sum(len(plans[n]) * rounds_of(job.modules[n], settings.quick) for n in todo)
    eta = _eta(todo, job.modules, plans, settings)
    job.log(f"crossover: measuring {len(todo)} experiment(s) on this machine, {eta.words()}")
    background.write(settings, 0, len(todo), eta.left_s(), job.path.name, todo[0])
    durations = {}
    # One Gate for the run: a state lasting a whole experiment is seen too. A smoke run (the tests' site
    # builds) reads no canaries and waits for nothing: its numbers only have to exist.
    canaries = None if settings.smoke else Canaries(job.threads)
    gate = None if settings.smoke else Gate(canaries.all_threads, run_budget_s=config.settle_budget_s())
    with tqdm(total=total, unit="point", file=sys.stderr, mininterval=0.5, dynamic_ncols=True) as bar:
        for name in todo:
            bar.set_description(name)
            started = time.perf_counter()
            try:
                entries, measured_under = _measure_experiment(job.modules[name], plans[name], job.threads,
                                                              settings.quick, bar, canaries, gate)
            except MeasurementError as exc:
                if not job.keep_going:
                    raise
                job.log(untrusted.terminal(f"crossover: {exc}; going on with the next experiment"))
                doc = _record_failure(doc, name, str(exc))
            else:
                durations[name] = time.perf_counter() - started
                eta.finished(name, durations[name])
                meta = {"bench_version": job.modules[name].BENCH_VERSION, "cache_key": job.keys[name],
                        "measured_at": _now(), "duration_s": round(durations[name], 3),
                        "devices": sorted({p["device"] for p in plans[name]}), "conditions": measured_under}
                doc = _replace_experiment(doc, name, meta, entries)
            store.save_atomic(job.path, doc)  # one experiment done (or failed) = one durable save
            _say_progress(settings, bar, todo, name, eta, job.path)
    return doc, durations


def _say_progress(settings: config.Settings, bar, todo: list[str], name: str, eta: forecast.Eta, path: Path) -> None:
    """After each experiment: the progress file a serving build reads, and a line in the terminal."""
    done = todo.index(name) + 1
    background.write(settings, done, len(todo), eta.left_s(), path.name, todo[done] if done < len(todo) else None)
    if done < len(todo):
        bar.write(f"crossover: {done} of {len(todo)} experiments done, {eta.words()}")


def _eta(todo: list[str], modules: dict, plans: dict, settings: config.Settings) -> forecast.Eta:
    """The run's time left, forecast from the median committed machine's pace (none in quick mode, whose tiny
    sizes no committed file measured) and corrected by this machine's own pace as experiments finish."""
    paces = {} if settings.quick else forecast.cpu_point_round_s(settings.results_dir, typical=True)
    return forecast.Eta({n: forecast.host_seconds(n, len(plans[n]), rounds_of(modules[n], settings.quick), paces)
                         for n in todo})


def _load_experiments(names: list[str], keep_going: bool) -> tuple[dict, dict[str, str]]:
    """The experiments' modules, and (keep_going only) why each that would not import failed."""
    modules, broken = {}, {}
    for name in names:
        try:
            modules[name] = experiments.load(name)
        except Exception as exc:
            if not keep_going or name not in experiments.REGISTRY:
                raise
            broken[name] = f"experiment '{name}' (snippets/{name}.py) did not import: {type(exc).__name__}: {exc}"
    return modules, broken


def summary_table(doc: dict, durations: dict[str, float]) -> str:
    """Time per experiment of this run, and whether the machine was idle while it ran."""
    lines = [f"{'experiment':<20} {'time':>8} {'points':>7} {'under load':>11} {'canary spread':>14} "
             f"{'re-measured':>12} {'unsettled':>10}"]
    for name, seconds in durations.items():
        points = [b for b in doc["benchmarks"] if b["group"] == name]
        loaded = sum(1 for b in points if b["extra_info"].get("under_load"))
        measured_under = doc["experiments"][name]["conditions"]
        moved = conditions.drift(measured_under.get("canaries", {}).get("all_threads") or measured_under["canary_s"])
        spread = "n/a" if moved is None else f"{100 * (moved - 1):.0f}%"
        lines.append(f"{name:<20} {seconds:>7.1f}s {len(points):>7} {loaded:>11} {spread:>14} "
                     f"{measured_under.get('remeasured', 0):>12} {measured_under.get('unsettled', 0):>10}")
    lines.append(f"{'total':<20} {sum(durations.values()):>7.1f}s")
    for name in durations:  # per unsettled point, what moved under it
        measured_under = doc["experiments"][name]["conditions"]
        for b in doc["benchmarks"]:
            if b["group"] == name and b["extra_info"].get("unsettled"):
                lines.append(f"unsettled: {b['name']}: {what_moved(b, measured_under)}")
    loaded = sum(1 for b in doc["benchmarks"] if b["extra_info"].get("under_load"))
    if loaded:
        lines.append(f"crossover: WARNING: the machine was not idle: other processes used more than "
                     f"{100 * conditions.FOREIGN_CPU_LIMIT:.0f}% of the CPU during {loaded} points, which "
                     "are marked 'under load'. Re-measure on an idle machine for numbers to keep.")
    return "\n".join(lines)


@contextmanager
def _locked(path: Path, log):
    try:
        with store.locked(path, timeout_s=config.seconds("CROSSOVER_LOCK_TIMEOUT", 3 * 3600), log=log):
            yield
    except store.LockTimeout as exc:
        raise MeasurementError(str(exc)) from None


def usable_cache_dir(directory: Path) -> None:
    """Make sure the host cache can be written, or say plainly why not."""
    if directory.exists() and not directory.is_dir():
        raise MeasurementError(f"the cache directory {directory} is a file; remove it or set "
                               "CROSSOVER_CACHE_DIR to a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise MeasurementError(f"cannot write the cache directory {directory} ({exc.strerror}); "
                               "set CROSSOVER_CACHE_DIR to a writable folder") from None


STAMP_BYTES = 64 * 1024  # a stamp is a few hundred bytes


def _stamp_path(settings: config.Settings) -> Path:
    return settings.cache_dir / f"host.{settings.mode}.stamp"  # not *.json: it is no results file


def _write_stamp(settings: config.Settings, path: Path, doc: dict) -> None:
    """Remember that `path` was current for this machine, so a warm build can skip torch."""
    keys = experiments.current_keys(settings.mode)
    if stale_experiments(doc, keys):
        return  # a partial run (--only): the next build must still check
    stamp = {"fingerprint": provenance.light_fingerprint(), "results": path.name,
             "environment_key": doc["environment_key"]}
    text = json.dumps(stamp, sort_keys=True)
    target = _stamp_path(settings)
    if digests.read_regular(target, STAMP_BYTES) != text.encode():
        with contextlib.suppress(OSError):  # a stamp only saves the next build a check: failing to write costs that
            store.write_atomically(target, text)


def current_without_torch(settings: config.Settings) -> Path | None:
    """The host's results file when nothing that decides it changed since the last check.

    Compares the stored light fingerprint (hardware, libraries, thread settings) and
    every experiment's cache key (its code) with now, without importing torch; None
    means the full check, which imports torch, must run.
    """
    try:
        # A regular file of a stamp's size only: a FIFO or a link to /dev/zero must not hang or exhaust memory.
        stamp = json.loads(digests.read_regular(_stamp_path(settings), STAMP_BYTES) or b"null")
        if not re.fullmatch(r"[A-Za-z0-9][\w.-]*\.json", stamp["results"]):
            return None  # a name only: a path would let the stamp pick another machine's file
        path = settings.cache_dir / stamp["results"]
        if stamp["fingerprint"] != json.loads(json.dumps(provenance.light_fingerprint())):
            return None
        doc = store.load(path)
    except (OSError, ValueError, KeyError, TypeError, store.ResultsError):
        return None
    keys = experiments.current_keys(settings.mode)
    if doc["environment_key"] != stamp["environment_key"] or stale_experiments(doc, keys):
        return None
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", metavar="NAME",
                        help=f"measure only this experiment (repeatable): {', '.join(experiments.REGISTRY)}")
    parser.add_argument("--force", action="store_true", help="re-measure even if cached")
    parser.add_argument("--list", action="store_true", help="list the experiments and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(experiments.REGISTRY))
        return 0
    try:
        # A broken committed file should stop us before minutes of measuring.
        dataset.load_committed(config.settings().results_dir, config.PROJECT_ROOT)
        path = run(only=args.only, force=args.force)
    except (MeasurementError, KeyError, store.ResultsError, config.SettingError) as exc:
        print(untrusted.terminal(f"crossover: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("crossover: interrupted; experiments that finished are saved", file=sys.stderr)
        return 130
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
