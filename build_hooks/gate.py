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
    """

    def __init__(self, read, clock=time.perf_counter, sleep=time.sleep):
        self.read, self.clock, self.sleep = read, clock, sleep
        self.fastest = math.inf
        self.waited_s = 0.0
        self.extra_s = 0.0
        self.started = clock()

    @property
    def spent_s(self) -> float:
        return self.waited_s + self.extra_s

    def _box(self, share: float) -> float:
        """`share` of the time spent measuring so far (at least MIN_EXTRA_S)."""
        return max(MIN_EXTRA_S, share * (self.clock() - self.started - self.spent_s))

    def steady(self) -> bool:
        reading = self.read()
        self.fastest = min(self.fastest, reading)
        return reading <= self.fastest * SLOW_STATE_RATIO

    def has_time(self) -> bool:
        """Whether re-measuring an outlying round still fits its box."""
        return self.extra_s < self._box(EXTRA_TIME_SHARE)

    def wait_for_steady(self) -> bool:
        """Wait (within the waiting box) until the canary reads the usual state; False if it never did."""
        start = self.clock()
        try:
            while not self.steady():
                waited = self.clock() - start
                if waited > WAIT_FOR_STEADY_S or self.waited_s + waited > self._box(WAIT_TIME_SHARE):
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
