"""Tests for build_hooks.analysis: curves, crossover and achieved rates."""

from build_hooks import analysis
from build_hooks.dataset import Machine
from conftest import bare_cells, synthetic_doc


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


def test_the_crossover_rule_counts_a_lead_only_beyond_the_spread_at_every_larger_batch():
    """A level or lost batch after a lead breaks it; no lead at the largest batch, no crossover."""
    assert analysis.crossover({1: -1, 8: 0, 64: 1, 128: 0, 512: 1}) == 512
    assert analysis.crossover({1: -1, 8: 1, 64: 1, 128: 1, 512: 1}) == 8
    assert analysis.crossover({1: 1, 8: 1, 512: 0}) is None
    assert analysis.crossover({}) is None


# GPU time per CPU time that gives each verdict with the fixtures' 1% spread: ahead, level, behind.
VERDICT_TIMES = {1: 1 / 3, 0: 1.0, -1: 3.0}


def test_race_cpu_choice_facts_and_tables_give_one_answer_for_the_same_verdicts():
    """Steps, the race's epochs, the cpu-choice rule and the batch-size facts all name the same crossover."""
    from build_hooks import page, race
    from build_hooks.dataset import Dataset

    for verdicts, expected in [({1: -1, 8: 1, 64: 0, 512: 1}, 512), ({1: -1, 8: 1, 64: 1, 512: 1}, 8),
                               ({1: 1, 8: 1, 64: -1, 512: 0}, None)]:
        cpu = {b: 1e-3 * (1 + b / 8) for b in verdicts}
        times = {("cpu", 32, b): t for b, t in cpu.items()} | \
                {("cuda", 32, b): cpu[b] * VERDICT_TIMES[v] for b, v in verdicts.items()}
        doc = synthetic_doc(gpu="Fixture GPU", step_times=times, epoch_times={k: 100 * t for k, t in times.items()})
        data = Dataset([Machine(doc, "fixture", "this build host")])
        m = data.machines[0]
        assert analysis.crossover_batch(m, 32) == analysis.crossover_batch(m, 32, race.EPOCH) == expected
        assert race.race_data(data)["machines"][0]["crossover"] == {"32": expected}
        rule, summary = page.render_section("cpu_choice_table", data), page.render_fact("crossover_summary", data)
        answer = bare_cells(page.render_section("step_answer", data))
        if expected is None:
            assert "not ahead by batch 512" in rule and "never became the shorter" in summary
            assert "only at batch 1 and 8" in answer  # it led at batches 1 and 8, then fell behind
        else:
            assert f"from batch {expected}" in rule and \
                f"first from batch {expected} (width 32)" in summary and f"<td>from batch {expected}" in answer



def test_the_square_sweeps_rates_are_its_own_whatever_another_experiment_timed():
    """gemm_rates is gemm_rate's medians alone: a faster matmul_shapes timing of the same product is not folded in,
    since every table labels these rates as gemm_rate's."""
    from conftest import add_points

    flops = 2 * 512**3
    both = add_points(synthetic_doc(), "gemm_rate", [({"n": 512}, 2e-3, {"flops": flops})])
    both = add_points(both, "matmul_shapes", [({"side": 512, "calls": 1}, 1e-3, {"flops": flops})])
    assert analysis.gemm_rates(Machine(both, "f", "t"), "cpu") == {512: flops / 2e-3}


def test_a_gpu_lead_over_a_cpu_step_slower_than_the_next_batch_is_left_out_not_counted():
    """A CPU step that took meaningfully longer than the next larger batch's is out of line: the GPU's stray lead over
    it is a doubted lead, not a stray one, and the cell says it was left out; a lead over a steady CPU step stays."""
    from build_hooks.dataset import Dataset
    from build_hooks.views.training_step import step_lead_words

    cpu = {1: 1e-3, 8: 1.2e-3, 16: 5e-3, 64: 1.5e-3, 512: 3e-3}  # batch 16 is slower than batch 64: out of line
    gpu = {1: 3e-3, 8: 3e-3, 16: 2e-3, 64: 3e-3, 512: 6e-3}
    times = {("cpu", 32, b): t for b, t in cpu.items()} | {("cuda", 32, b): t for b, t in gpu.items()}
    m = Dataset([Machine(synthetic_doc(gpu="Fixture GPU", step_times=times), "f", "t")]).machines[0]
    assert analysis.out_of_line_steps(m, "cpu", 32) == {16}
    assert analysis.stray_leads(m, 32) == [] and analysis.doubted_leads(m, 32) == [16]
    assert step_lead_words(m, 32) == "never (batch 16 left out)"
    steady = {**times, ("cpu", 32, 16): 1.4e-3, ("cuda", 32, 16): 0.4e-3}
    m = Dataset([Machine(synthetic_doc(gpu="Fixture GPU", step_times=steady), "f", "t")]).machines[0]
    assert analysis.stray_leads(m, 32) == [16] and step_lead_words(m, 32) == "only at batch 16"
