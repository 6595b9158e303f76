"""The Gate: how every experiment keeps its points to the machine's usual state.

A virtual machine flips between states for a tenth of a second to several seconds at a
time (a second vCPU not delivering, a neighbour's traffic): points timed in the slow
state disagree with the same configuration timed in the usual one. The runner
(measure.py) asks the Gate before each point and, after the rounds, re-measures the
rounds `outlying_rounds` names. The rule is stated on About the data from these
constants. Nothing here imports torch: the canary is passed in as a function.
"""

from __future__ import annotations

import math
import time

# The rule every experiment follows when the machine changes state under it (About the data).
SLOW_STATE_RATIO = 1.4    # the all-thread canary this far above the run's fastest reading: a slow state
WAIT_FOR_STEADY_S = 1.5   # how long one point waits for the usual state before it is measured anyway
ROUND_SPREAD_LIMIT = 1.5  # a round this much slower than the point's fastest is re-measured
WAIT_TIME_SHARE = 0.15    # waiting may add at most this share to an experiment's time ...
EXTRA_TIME_SHARE = 0.3    # ... and re-measuring outlying rounds this share
MIN_EXTRA_S = 5.0
REMEASURE_ATTEMPTS = 2    # how often one outlying round may be measured again


class Gate:
    """Times a point only while the machine is in its usual state, within a time box.

    Before each point the all-thread canary is read. A reading more than SLOW_STATE_RATIO
    above the fastest of the run means a slow state (a second vCPU not delivering, a
    neighbour's traffic: it lasts from a tenth of a second to several seconds), and the
    point waits for it to pass, within the time box. A state that changes during a point
    shows in its rounds, which outlying_rounds judges afterwards.

    One Gate serves a whole run: the fastest reading carries from one experiment to the
    next, so a slow state that lasts a whole experiment is seen too; the time boxes start
    afresh with each experiment (begin). `last` is the reading the latest point started
    under, which the runner records per round (options.canary_s) to say what moved.
    """

    def __init__(self, read, clock=time.perf_counter, sleep=time.sleep, run_budget_s: float | None = None):
        self.read, self.clock, self.sleep = read, clock, sleep
        self.fastest = math.inf
        self.last: float | None = None
        # A time-limited run (a GPU machine's slot) caps waiting and re-measuring over the whole run,
        # so its forecast can count them: CROSSOVER_SETTLE_BUDGET.
        self.run_budget_s = run_budget_s
        self.earlier_s = 0.0  # what finished experiments spent waiting and re-measuring
        self.waited_s = self.extra_s = 0.0
        self.begin()

    def begin(self) -> None:
        """A new experiment: its own waiting and re-measuring boxes, the run's fastest reading kept."""
        self.earlier_s += self.spent_s
        self.waited_s = 0.0
        self.extra_s = 0.0
        self.started = self.clock()

    def _run_budget_left(self) -> float:
        return math.inf if self.run_budget_s is None else self.run_budget_s - self.earlier_s - self.spent_s

    @property
    def spent_s(self) -> float:
        return self.waited_s + self.extra_s

    def _box(self, share: float) -> float:
        """`share` of the time spent measuring so far (at least MIN_EXTRA_S)."""
        return max(MIN_EXTRA_S, share * (self.clock() - self.started - self.spent_s))

    def steady(self) -> bool:
        reading = self.last = self.read()
        self.fastest = min(self.fastest, reading)
        return reading <= self.fastest * SLOW_STATE_RATIO

    def has_time(self) -> bool:
        """Whether re-measuring an outlying round still fits its box (and the run's budget)."""
        return self.extra_s < self._box(EXTRA_TIME_SHARE) and self._run_budget_left() > 0

    def wait_for_steady(self) -> bool:
        """Wait (within the waiting box) until the canary reads the usual state; False if it never did."""
        start = self.clock()
        try:
            while not self.steady():
                waited = self.clock() - start
                if (waited > WAIT_FOR_STEADY_S or self.waited_s + waited > self._box(WAIT_TIME_SHARE)
                        or waited >= self._run_budget_left()):
                    return False
                self.sleep(0.05)
            return True
        finally:
            self.waited_s += self.clock() - start

    def measure(self, run, extra: bool = False) -> tuple[dict, bool]:
        """(result, whether the state was steady when it started); an extra run counts against the box."""
        steady = self.wait_for_steady()
        start = self.clock()
        result = run()
        if extra:
            self.extra_s += self.clock() - start
        return result, steady


def outlying_rounds(round_medians: list[float]) -> list[int]:
    """Rounds more than ROUND_SPREAD_LIMIT slower than the point's fastest round.

    A slow state only ever adds time (nothing makes a machine faster than it is), so a
    round far above the fastest is the suspect, whichever way the other rounds went.
    """
    fastest = min(round_medians)
    return [r for r, median in enumerate(round_medians) if median > fastest * ROUND_SPREAD_LIMIT]


def what_moved(point: dict, measured_under: dict) -> str:
    """Which canary moved under a point, in words (About the data, the run's summary).

    Each round of a point starts under an all-thread canary reading (options.canary_s),
    compared with the run's fastest; the memory and one-core canaries are read between
    rounds, so the two readings around a round are compared with their experiment's fastest.
    """
    started = point.get("options", {}).get("canary_s")
    fastest = measured_under.get("fastest_all_threads_s")
    if not started or not fastest:
        return "not recorded (measured before each round's canary reading was kept)"
    moved = [f"all-thread canary {reading / fastest:.1f}× the run's fastest as round {r + 1} began"
             for r, reading in enumerate(started) if reading > fastest * SLOW_STATE_RATIO]
    between = measured_under.get("canaries", {})
    for kind, words in (("memory", "memory canary"), ("one_thread", "one-core canary")):
        readings = between.get(kind) or []
        if len(readings) != len(started) + 1:
            continue
        low = min(readings)
        for r in range(len(started)):
            around = max(readings[r], readings[r + 1]) / low
            if around > SLOW_STATE_RATIO:
                moved.append(f"{words} {around:.1f}× its fastest around round {r + 1}")
    if not moved:
        return (f"no canary moved beyond {SLOW_STATE_RATIO:g}×: the cause was not seen by any canary")
    return "; ".join(moved)


MOSTLY_SLOW = 0.5  # a machine that began more than half its rounds slow is named where its results are read


def slow_start_share(doc: dict, groups: set[str] | None = None) -> float | None:
    """The share of a results document's rounds (of `groups` only, if given) that began with the all-thread canary
    in a slow state (above SLOW_STATE_RATIO x its experiment's fastest reading), or None where the readings were not
    kept (files measured before options.canary_s)."""
    slow = total = 0
    for bench in doc["benchmarks"]:
        if groups is not None and bench["group"] not in groups:
            continue
        measured_under = (doc["experiments"].get(bench["group"]) or {}).get("conditions") or {}
        fastest = measured_under.get("fastest_all_threads_s")
        readings = bench.get("options", {}).get("canary_s", [])
        if fastest:
            slow += sum(r > fastest * SLOW_STATE_RATIO for r in readings)
            total += len(readings)
    return slow / total if total else None


def time_box_cuts(doc: dict) -> tuple[int, int]:
    """(experiments that ran fewer rounds than planned, experiments that recorded their conditions) in a results
    document: how often its time box cut a run short."""
    recorded = [meta["conditions"] for meta in doc["experiments"].values() if meta.get("conditions")]
    return sum(1 for c in recorded if c.get("planned_rounds") and c["rounds"] < c["planned_rounds"]), len(recorded)
