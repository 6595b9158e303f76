"""Tests for build_hooks.gate: points timed in the usual state, outlying rounds named, within time boxes."""

import pytest

from build_hooks import gate


class FakeMachine:
    """Canary readings from a script, and a clock that only the Gate's own sleeps and runs move."""

    def __init__(self, readings, run_s=0.1):
        self.readings, self.now, self.run_s, self.runs = list(readings), 0.0, run_s, 0

    def read(self):
        return self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds

    def run(self):
        self.runs += 1
        self.now += self.run_s
        return {"samples": [self.run_s]}


def gate_for(machine):
    checker = gate.Gate(machine.read, clock=machine.clock, sleep=machine.sleep)
    checker.fastest = 1.0  # the run's fastest all-thread reading so far
    return checker


@pytest.mark.parametrize("readings, steady, waited", [
    ([1.0], True, 0.0),                # the usual state: measured at once
    ([3.0, 3.0, 1.0], True, 0.1),      # a slow state: waits for it to pass, then measures
    ([3.0], False, None),              # never back within the wait: measured anyway, and said so
], ids=["steady", "waits for steady", "never steady"])
def test_the_gate_measures_in_the_usual_state_or_says_it_could_not(readings, steady, waited):
    """Each case of the rule: wait for the usual state within the box, then measure once."""
    machine = FakeMachine(readings)
    result, was_steady = gate_for(machine).measure(machine.run)
    assert machine.runs == 1 and was_steady is steady and result["samples"]
    if waited is not None:
        assert machine.now - machine.run_s == pytest.approx(waited)
    else:
        assert machine.now - machine.run_s > gate.WAIT_FOR_STEADY_S


def test_the_gate_keeps_within_its_time_boxes():
    """Waiting and re-measuring never take more than their boxes allow, however long the slow state lasts."""
    machine = FakeMachine([3.0], run_s=1.0)
    checker = gate_for(machine)
    for _ in range(40):
        checker.measure(machine.run)  # the planned rounds
        if checker.has_time():
            checker.measure(machine.run, extra=True)  # an outlying round measured again
    planned = 40 * machine.run_s
    assert checker.waited_s <= max(gate.MIN_EXTRA_S, gate.WAIT_TIME_SHARE * planned) + gate.WAIT_FOR_STEADY_S
    assert checker.extra_s <= max(gate.MIN_EXTRA_S, gate.EXTRA_TIME_SHARE * planned) + machine.run_s


@pytest.mark.parametrize("medians, outliers", [
    ([1.0, 1.1, 2.5], [2]), ([1.0, 1.1, 1.2], []), ([2.0, 1.0, 1.05, 0.98, 1.02], [0]), ([1.0, 2.0], [1]),
    ([1.0, 1.4], []), ([3.0, 3.3, 1.6], [0, 1]),
])
def test_a_round_far_slower_than_the_fastest_is_the_outlier(medians, outliers):
    """Rounds more than ROUND_SPREAD_LIMIT slower than the point's fastest are re-measured, even a majority."""
    assert gate.outlying_rounds(medians) == outliers


def test_the_fastest_reading_carries_over_experiments_and_the_last_one_is_kept():
    """begin() starts an experiment's boxes afresh but keeps the run's fastest reading; `last` is the latest."""
    machine = FakeMachine([1.0, 2.0, 3.0])
    checker = gate.Gate(machine.read, clock=machine.clock, sleep=machine.sleep)
    checker.steady()
    checker.waited_s = 4.0
    checker.begin()
    assert checker.waited_s == 0.0 and checker.fastest == 1.0
    assert not checker.steady() and checker.last == 2.0  # 2x the fastest of an earlier experiment: slow


MEASURED_UNDER = {"fastest_all_threads_s": 0.01,
                  "canaries": {"memory": [0.02, 0.02, 0.05, 0.02], "one_thread": [1e-4] * 4}}


@pytest.mark.parametrize("started, says", [
    ([0.01, 0.025, 0.011], "all-thread canary 2.5× the run's fastest as round 2 began"),
    ([0.01, 0.011, 0.011], "memory canary 2.5× its fastest around round 2"),
    (None, "not recorded"),
], ids=["all threads", "memory", "old file"])
def test_what_moved_names_the_canary_and_the_round(started, says):
    """An unsettled point's words name the canary that moved and the round it moved in, or say it was not recorded."""
    point = {"options": {"canary_s": started}} if started else {"options": {}}
    assert says in gate.what_moved(point, MEASURED_UNDER)


def test_what_moved_says_when_no_canary_saw_it():
    """When no canary moved beyond the slow-state ratio the words say the cause was not seen."""
    quiet = {"fastest_all_threads_s": 0.01, "canaries": {"memory": [0.02] * 4}}
    assert "not seen" in gate.what_moved({"options": {"canary_s": [0.01, 0.011, 0.012]}}, quiet)


def test_the_share_of_slow_starts_counts_readings_above_the_ratio_of_their_experiments_fastest():
    """Rounds that began above SLOW_STATE_RATIO x their experiment's fastest reading are counted; no readings, no share."""
    from build_hooks.gate import SLOW_STATE_RATIO, slow_start_share

    doc = {"experiments": {"a": {"conditions": {"fastest_all_threads_s": 1.0}}, "b": {}},
           "benchmarks": [{"group": "a", "options": {"canary_s": [1.0, SLOW_STATE_RATIO * 1.01, 1.2, 3.0]}},
                          {"group": "b", "options": {"canary_s": [9.0]}}]}  # b kept no fastest: not counted
    assert slow_start_share(doc) == 0.5
    assert slow_start_share(doc, {"a"}) == 0.5 and slow_start_share(doc, {"b"}) is None  # one experiment's rounds
    assert slow_start_share({"experiments": {}, "benchmarks": [{"group": "a", "options": {}}]}) is None


def test_a_run_budget_caps_waiting_and_re_measuring_across_experiments():
    """With a run-wide settle budget, waiting stops once the whole run has spent it, whatever each experiment's own
    box would still allow, and re-measuring is refused too; without one, each experiment's box alone decides."""
    machine = FakeMachine([3.0], run_s=10.0)  # always slow: every point waits as long as it may
    checker = gate.Gate(machine.read, clock=machine.clock, sleep=machine.sleep, run_budget_s=1.0)
    checker.fastest = 1.0
    for _ in range(3):  # three experiments, each with a fresh box
        checker.begin()
        checker.measure(machine.run)
    assert checker.earlier_s + checker.spent_s <= 1.0 + 0.05
    assert not checker.has_time()
    unbudgeted = gate.Gate(machine.read, clock=machine.clock, sleep=machine.sleep)
    unbudgeted.fastest = 1.0
    unbudgeted.measure(machine.run)
    assert unbudgeted.has_time() and unbudgeted.waited_s > 1.0
