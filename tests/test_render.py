"""Tests for build_hooks.render: formatting primitives and the noise rule in words."""

import pytest

from build_hooks import render, stats


@pytest.mark.parametrize("value, unit, text", [
    (1.234e-4, "s", "123 µs"), (0.0456, "s", "45.6 ms"), (1.5e11, "FLOP/s", "150 GFLOP/s"),
    (12.0, "s", "12.0 s"), (0, "s", "0 s"),
])
def test_si_formatting(value, unit, text):
    """Values get an SI prefix and three significant figures."""
    assert render.si(value, unit) == text


def test_marks_note_states_the_thresholds_the_code_uses(monkeypatch):
    """The words about noisy points and sample counts come from stats, never typed separately."""
    monkeypatch.setattr(stats, "NOISY_IQR_RATIO", 0.25)
    monkeypatch.setattr(stats, "MIN_SAMPLES", 7)
    note = render.marks_note({"noisy", "few"})
    assert "above 25% of the median" in note and "fewer than 7" in note


def test_a_single_sample_is_never_shown_as_quiet():
    """A point with one sample carries the 'too few samples' mark, whatever its IQR of zero says."""
    one = stats.summarise([1e-3])
    assert "‡" in render.mark(one, {"noisy": False}) and "only 1 samples" in render.mark(one, {})


def test_digits_follow_the_spread():
    """A tight point shows more digits than a spread-out one."""
    tight = stats.summarise([1.0, 1.0001, 0.9999, 1.0, 1.0002, 0.9998])
    loose = stats.summarise([1.0, 1.4, 0.7, 1.2, 0.8, 1.1])
    assert len(render.measured_value(tight, {}, "s")) > len(render.measured_value(loose, {}, "s"))


def test_bidi_controls_are_removed_and_html_escaped():
    """An unclosed right-to-left override cannot reorder a number; markup is escaped."""
    assert render.esc("<b>\u202e61</b>") == "&lt;b&gt;61&lt;/b&gt;"
