"""Tests for build_hooks.analysis: curves, crossover and achieved rates."""

from build_hooks import analysis
from build_hooks.dataset import Machine
from conftest import synthetic_doc


def machine(times):
    return Machine(synthetic_doc(gpu="Fixture GPU", step_times=times), "fixture", "test")


def test_crossover_is_first_batch_from_which_gpu_stays_ahead():
    """The crossover is the smallest batch after which the GPU is faster at every larger batch."""
    cpu = {1: 1.0, 8: 2.0, 64: 4.0, 512: 30.0}
    gpu = {1: 1.5, 8: 1.9, 64: 4.1, 512: 3.0}  # briefly ahead at 8, behind at 64, ahead from 512
    times = {("cpu", 32, b): t for b, t in cpu.items()} | {("cuda", 32, b): t for b, t in gpu.items()}
    assert analysis.crossover_batch(machine(times), 32) == 512


def test_no_crossover_without_a_gpu_or_when_cpu_always_wins():
    """No GPU curve, or a GPU that never stays ahead, gives None."""
    cpu_only = Machine(synthetic_doc(), "fixture", "test")
    assert analysis.crossover_batch(cpu_only, 32) is None
    times = {("cpu", 32, b): 1.0 for b in (1, 8)} | {("cuda", 32, b): 2.0 for b in (1, 8)}
    assert analysis.crossover_batch(machine(times), 32) is None


def test_best_rate_picks_highest_flops_per_second():
    """best_rate returns the point with the most FLOP/s and its width."""
    times = {("cpu", 32, 1): 1.0, ("cpu", 32, 512): 1.0, ("cpu", 64, 512): 1.0}
    point, width = analysis.best_rate(Machine(synthetic_doc(step_times=times), "f", "t"), "cpu")
    assert (point.batch, width) == (512, 64)
