"""Tests for build_hooks.facts: prose numbers follow the data."""

import pytest

from build_hooks import facts
from build_hooks.dataset import Dataset, Machine
from conftest import synthetic_doc


def data(times, gpu=None):
    return Dataset([Machine(synthetic_doc(gpu=gpu, step_times=times), "f", "t")])


def test_crossover_summary_without_gpu_says_not_measured():
    """With only a CPU measured, the crossover sentence says no GPU was measured."""
    text = facts.render("crossover_summary", data({("cpu", 32, 1): 1e-3}))
    assert "No GPU has been measured" in text


def test_crossover_summary_follows_the_data():
    """Changing which device is faster changes the sentence: it never repeats a stale claim."""
    base = {("cpu", 32, b): b * 1e-4 for b in (1, 8, 64)}
    gpu_wins_from_8 = base | {("cuda", 32, 1): 1.0, ("cuda", 32, 8): 1e-5, ("cuda", 32, 64): 1e-5}
    gpu_never = base | {("cuda", 32, b): 1.0 for b in (1, 8, 64)}
    assert "from batch 8" in facts.render("crossover_summary", data(gpu_wins_from_8, "G"))
    assert "never" in facts.render("crossover_summary", data(gpu_never, "G"))


def test_fraction_of_peak_is_computed_from_rate_and_peak():
    """The fraction of peak equals best achieved FLOP/s over the recorded peak."""
    times = {("cpu", 32, 512): 6 * 512 * 512 * 32 / 3.84e11 * 2}  # exactly half the fixture peak
    assert facts.render("cpu_best_step_fraction_of_peak", data(times)).startswith("50% of")


def test_rate_above_nominal_peak_is_not_reported_as_a_fraction():
    """A rate above the peak from the reported clock says the clock is boosting, never '120%'."""
    times = {("cpu", 32, 512): 6 * 512 * 512 * 32 / 3.84e11 / 1.2}
    text = facts.render("cpu_best_step_fraction_of_peak", data(times))
    assert text.startswith("more than") and "%" not in text


def test_unknown_fact_raises():
    """An unknown fact name raises KeyError listing the known ones."""
    with pytest.raises(KeyError, match="known:"):
        facts.render("no_such_fact", Dataset([]))


def test_missing_data_raises_instead_of_inventing():
    """A fact whose data is absent raises MissingData rather than printing a placeholder."""
    with pytest.raises(facts.MissingData):
        facts.render("cpu_best_step_rate", Dataset([]))
