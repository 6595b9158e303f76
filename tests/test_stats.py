"""Tests for build_hooks.stats."""

import pytest

from build_hooks import stats


def test_summarise_computes_median_and_quartiles():
    """Median, quartiles and IQR match hand-computed values; the raw data is kept and its length is the only sample count."""
    s = stats.summarise([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s["median"], s["q1"], s["q3"], s["iqr"]) == (3.0, 2.0, 4.0, 2.0)
    assert s["data"] == [5.0, 1.0, 3.0, 2.0, 4.0] and "rounds" not in s


def test_single_sample_has_zero_iqr():
    """One sample gives quartiles equal to it rather than an error."""
    s = stats.summarise([0.5])
    assert s["q1"] == s["q3"] == s["median"] == 0.5 and s["iqr"] == 0


@pytest.mark.parametrize("bad", [[], [float("nan")], [-1.0], [float("inf")]])
def test_rejects_invalid_samples(bad):
    """Empty, NaN, infinite or negative samples are refused, never summarised."""
    with pytest.raises(ValueError):
        stats.summarise(bad)


def test_noisy_flag_uses_ten_percent_of_median():
    """A point is flagged when its IQR exceeds 10% of its median, and only then."""
    assert stats.is_noisy({"median": 1.0, "iqr": 0.11})
    assert not stats.is_noisy({"median": 1.0, "iqr": 0.09})


def test_paired_rounds_cancel_drift():
    """Two points whose every round differs by 1.5x are different, although drift makes their IQRs overlap."""
    a = stats.summarise([1.5, 1.5, 3.0, 3.0, 6.0, 6.0], [[1.5, 1.5], [3.0, 3.0], [6.0, 6.0]])
    b = stats.summarise([1.0, 1.0, 2.0, 2.0, 4.0, 4.0], [[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]])
    assert a["round_medians"] == [1.5, 3.0, 6.0]
    assert stats.compare_points(a, b) == 1 and stats.compare_points(b, a) == -1
    assert stats.compare_points({k: v for k, v in a.items() if k != "round_medians"}, b) == 0  # IQRs overlap


def test_paired_rounds_that_disagree_are_about_the_same():
    """If one round says faster and another slower, the verdict is 'about the same'."""
    a = stats.summarise([1.0, 2.0, 1.0], [[1.0], [2.0], [1.0]])
    b = stats.summarise([1.5, 1.0, 1.5], [[1.5], [1.0], [1.5]])
    assert stats.compare_points(a, b) == 0


def test_paired_ratio_carries_the_interval_of_its_rounds():
    """A paired ratio is the ratio of the medians with the rounds' range; inverted, both ends swap."""
    a = stats.summarise([1.2, 1.3, 1.5], [[1.2], [1.3], [1.5]])
    b = stats.summarise([1.0, 1.0, 1.0], [[1.0], [1.0], [1.0]])
    ratio = stats.paired_ratio(a, b)
    assert (ratio.value, ratio.low, ratio.high, ratio.paired) == (1.3, 1.2, 1.5, True)
    assert ratio.verdict == 1
    inverted = ratio.inverted()
    assert inverted.low == 1 / 1.5 and inverted.high == 1 / 1.2 and inverted.verdict == -1


def test_an_interval_that_reaches_one_claims_nothing():
    """A typical ratio of 1.3 whose interval reaches below 1 is 'about the same'."""
    a = stats.summarise([0.95, 1.3, 1.5], [[0.95], [1.3], [1.5]])
    b = stats.summarise([1.0, 1.0, 1.0], [[1.0], [1.0], [1.0]])
    assert stats.paired_ratio(a, b).verdict == 0


def test_from_five_rounds_one_odd_round_cannot_veto_an_effect():
    """With five paired rounds the extreme round at each end is left out of the interval."""
    a = stats.summarise([1.5, 1.6, 1.4, 1.5, 0.9], [[1.5], [1.6], [1.4], [1.5], [0.9]])
    b = stats.summarise([1.0] * 5, [[1.0]] * 5)
    ratio = stats.paired_ratio(a, b)
    assert (ratio.low, ratio.high) == (1.4, 1.5) and ratio.verdict == 1
    three = stats.paired_ratio(stats.summarise([1.5, 1.6, 0.9], [[1.5], [1.6], [0.9]]),
                               stats.summarise([1.0] * 3, [[1.0]] * 3))
    assert three.verdict == 0  # with three rounds every round must agree


def test_round_interval_trims_by_the_sign_test():
    """3 rounds keep the whole range, 5 leave out one extreme at each end, 15 leave out five (about 70% coverage)."""
    assert [stats.sign_test_trim(n) for n in (2, 3, 5, 9, 15)] == [0, 0, 1, 2, 5]
    rounds = [1.0 + i / 100 for i in range(15)]
    ratio = stats.paired_ratio({"median": 1.07, "round_medians": rounds}, {"median": 1.0, "round_medians": [1.0] * 15})
    assert (ratio.low, ratio.high) == (rounds[5], rounds[9])


def test_a_stated_ratio_is_the_ratio_of_the_medians_a_table_shows():
    """The printed ratio is median(a) / median(b), not the median of round ratios; the interval is the middle rounds'."""
    a = stats.summarise([14.0, 14.0, 14.0, 30.0, 42.0], [[14.0], [14.0], [14.0], [30.0], [42.0]])
    b = stats.summarise([7.0, 5.6, 5.6, 10.0, 14.0], [[7.0], [5.6], [5.6], [10.0], [14.0]])
    ratio = stats.paired_ratio(a, b)
    assert ratio.value == a["median"] / b["median"] == 2.0
    assert sorted(x / y for x, y in zip(a["round_medians"], b["round_medians"]))[2] == 2.5  # what used to be printed
    assert (ratio.low, ratio.high, ratio.rounds, ratio.kept) == (2.5, 3.0, 5, 3)  # the middle 3 of 5 round ratios
    assert ratio.verdict == 1  # beyond 1.1x, and the ratio and the interval both above 1
