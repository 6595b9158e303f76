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


def test_noise_note_states_the_threshold_the_code_uses(monkeypatch):
    """The words about noisy points come from stats.NOISY_IQR_RATIO, never typed separately."""
    monkeypatch.setattr(stats, "NOISY_IQR_RATIO", 0.25)
    assert "above 25% of the median" in render.noise_note()


def test_bidi_controls_are_removed_and_html_escaped():
    """An unclosed right-to-left override cannot reorder a number; markup is escaped."""
    assert render.esc("<b>\u202e61</b>") == "&lt;b&gt;61&lt;/b&gt;"
