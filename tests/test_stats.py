"""Tests for build_hooks.stats."""

import pytest

from build_hooks import stats


def test_summarise_computes_median_and_quartiles():
    """Median, quartiles and IQR match hand-computed values and the raw data is kept."""
    s = stats.summarise([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s["median"], s["q1"], s["q3"], s["iqr"]) == (3.0, 2.0, 4.0, 2.0)
    assert s["data"] == [5.0, 1.0, 3.0, 2.0, 4.0] and s["rounds"] == 5


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
