"""Summary statistics computed from raw samples (the samples are kept alongside)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

NOISY_IQR_RATIO = 0.10  # a point whose IQR exceeds 10% of its median is flagged as noisy
# Two medians are called different only when one is at least this many times the other;
# closer than that, pages say "about the same".
MEANINGFUL_RATIO = 1.1
# How a level comparison is said, everywhere: a gap under the ratio but outside the quartiles is level too, so
# "within the spread" alone would say more than the data shows.
LEVEL_WORDS = f"less than {MEANINGFUL_RATIO:g}× apart, or inside the spread"
# The exact rule (every round, or from five rounds on all but the most extreme at each end) is on About the data.
SAME_MEANS = (f"within one experiment, this site calls two timings different only when one is at least "
              f"{MEANINGFUL_RATIO:g}× the other in nearly every round")
MIN_SAMPLES = 5  # fewer and a point is "too few samples", never called quiet
MIN_FIGURES, MAX_FIGURES = 2, 4


def summarise(samples: list[float], rounds: list[list[float]] | None = None) -> dict:
    """Median, quartiles and friends of `samples`, in pytest-benchmark's field names.

    With `rounds` (the samples of each interleaved round), each round's median is kept
    too, so two points of one experiment can be compared round by round.
    """
    if not samples:
        raise ValueError("no samples to summarise")
    if any(not math.isfinite(s) or s < 0 for s in samples):
        raise ValueError(f"samples must be finite and non-negative, got {samples[:5]}")
    data = sorted(samples)
    if len(data) >= 2:
        q1, _, q3 = statistics.quantiles(data, n=4, method="inclusive")
    else:
        q1 = q3 = data[0]
    return {
        "median": statistics.median(data),
        "q1": q1,
        "q3": q3,
        "iqr": q3 - q1,
        "min": data[0],
        "max": data[-1],
        "mean": statistics.fmean(data),
        "data": list(samples),  # its length is the sample count (no "rounds" field: rounds are interleaved passes)
    } | ({"round_medians": [statistics.median(r) for r in rounds]} if rounds and len(rounds) > 1 else {})


def is_noisy(stats: dict) -> bool:
    return stats["median"] > 0 and stats["iqr"] / stats["median"] > NOISY_IQR_RATIO


def too_few(stats: dict) -> bool:
    return len(stats["data"]) < MIN_SAMPLES


def caveats(point: dict, extra: dict, timing: bool = True) -> list[str]:
    """Which caveats apply to a point: "noisy", "few" samples (timings only: a count is
    exact), "load" (measured while other processes used the CPU) and "unsettled" (the
    machine's state moved under it and could not be settled within the time box)."""
    kinds = ["noisy"] if extra.get("noisy") else []
    if timing and too_few(point):
        kinds.append("few")
    if extra.get("under_load"):
        kinds.append("load")
    if extra.get("unsettled"):
        kinds.append("unsettled")
    return kinds


def significant_figures(stats: dict) -> int:
    """How many digits the spread supports, as torch.utils.benchmark estimates it.

    A 90% confidence interval of the median from the interquartile samples
    (1.645 * std / sqrt(n)); the digits are those of median / interval, from 2 to 4.
    """
    data = sorted(stats["data"])
    middle = data[len(data) // 4: math.ceil(3 * len(data) / 4)] or data
    if len(middle) < 2 or stats["median"] <= 0:
        return 2 if len(data) < MIN_SAMPLES else 3
    interval = max(1.645 * statistics.pstdev(middle) / math.sqrt(len(middle)), stats["median"] * 1e-4)
    # At least two digits: one digit would print 1.34 ms and 1.43 ms both as "1 ms", hiding
    # the very difference a sentence beside the table discusses.
    return max(MIN_FIGURES, min(MAX_FIGURES, math.floor(math.log10(stats["median"] / interval))))


def noise_rule() -> str:
    """The noisy-point rule in words, from the threshold itself."""
    return f"the middle half of its timings spans more than {100 * NOISY_IQR_RATIO:.0f}% of the median"


def compare(a: float, b: float) -> int:
    """+1 when `a` is meaningfully larger than `b`, -1 when meaningfully smaller, else 0."""
    if a >= b * MEANINGFUL_RATIO:
        return 1
    if a * MEANINGFUL_RATIO <= b:
        return -1
    return 0


@dataclass(frozen=True)
class Ratio:
    """a / b for two measured points, with the interval the measurements support."""

    value: float  # the ratio of the two medians: what a reader gets by dividing the table's numbers
    low: float
    high: float
    paired: bool  # True: round i of a against round i of b, so the machine's drift cancels
    rounds: int = 0  # paired: how many rounds, and how many of them the interval spans (the middle ones)
    kept: int = 0

    @property
    def verdict(self) -> int:
        """+1 when a is meaningfully larger and the interval and the ratio itself lie above 1; -1 the
        other way; else 0."""
        typical = compare(self.value, 1.0)
        if typical > 0 and min(self.low, self.value) > 1:
            return 1
        if typical < 0 and max(self.high, self.value) < 1:
            return -1
        return 0

    def inverted(self) -> Ratio:
        return Ratio(1 / self.value, 1 / self.high, 1 / self.low, self.paired, self.rounds, self.kept)


def paired_ratio(a: dict, b: dict) -> Ratio:
    """The ratio of two points' times, with its interval.

    The ratio itself is always the ratio of the two medians, the number a reader computes from
    the table printed beside the sentence. Only its uncertainty comes from the rounds: when both
    points carry per-round medians (three or more) from the same interleaved run, the rounds are
    paired (measured moments apart, so drift cancels) and the interval is the range of the
    round ratios (3 rounds: a 75% interval for the typical ratio by the sign test), or
    from 5 rounds on the range without the two extreme rounds (5 rounds: about 62%).
    Otherwise the interval runs from a's lower quartile over b's upper one to a's upper
    quartile over b's lower one.
    """
    pairs = list(zip(a.get("round_medians", []), b.get("round_medians", [])))
    # Two rounds' range holds the typical ratio only half the time (the sign test): below the
    # 60% the site promises, so two rounds are compared by their quartiles instead.
    if len(pairs) >= 3 and len(a["round_medians"]) == len(b["round_medians"]):
        ratios = sorted(x / y for x, y in pairs)
        trim = sign_test_trim(len(ratios))
        # Pooled medians can fall outside the kept round ratios; the verdict then counts the ratio
        # too, and wording.times_with_interval says so rather than print "1.5× (1.1× to 1.2×)" bare.
        return Ratio(a["median"] / b["median"], ratios[trim], ratios[-1 - trim], True, len(ratios),
                     len(ratios) - 2 * trim)
    return unpaired_ratio(a, b)


ROUND_INTERVAL_COVERAGE = 0.6


def sign_test_trim(rounds: int) -> int:
    """How many extreme round ratios to leave out at each end of the interval.

    The k-th smallest and k-th largest of n round ratios bracket their median with
    probability 1 - 2 P(Binomial(n, 1/2) < k) (the sign test, no assumption about the
    noise). The most trimmed interval that still covers it with ROUND_INTERVAL_COVERAGE:
    3 rounds keep all (75%), 5 leave out one at each end (62.5%), 15 leave out five (70%),
    so one disturbed round cannot veto an effect every other round shows.
    """
    def coverage(k: int) -> float:
        return 1 - 2 * sum(math.comb(rounds, i) for i in range(k)) / 2 ** rounds

    k = 0
    while 2 * (k + 1) < rounds and coverage(k + 2) >= ROUND_INTERVAL_COVERAGE:
        k += 1
    return k


def unpaired_ratio(a: dict, b: dict) -> Ratio:
    """a / b for points of different experiments (their rounds ran at different moments)."""
    return Ratio(a["median"] / b["median"], a["q1"] / b["q3"] if b["q3"] > 0 else math.inf,
                 a["q3"] / b["q1"] if b["q1"] > 0 else math.inf, False)


def compare_points(a: dict, b: dict) -> int:
    """Like compare() for two measured points, beyond their spread: paired_ratio's verdict.

    +1 only when a is meaningfully larger than b and the interval of a / b lies wholly
    above 1 (paired: a was larger in every round, or from five rounds on in every round but the
    most extreme at each end), -1 the other way round, 0 otherwise
    ("about the same").
    """
    return paired_ratio(a, b).verdict
