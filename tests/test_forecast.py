"""The forecast: the H200 suite fits its slot, the box is honoured the way the runner honours it."""

from __future__ import annotations

import math

from build_hooks import experiments, forecast

STATED = forecast.Costs(sync_s=5e-6, launch_s=5e-6, startup_s=20.0, source="stated")
GPU_SCRIPT_BOX_S = 12  # scripts/measure-gpu's BOX_S
GPU_SCRIPT_LIMIT_S = 540  # scripts/measure-gpu's LIMIT_S: the whole script, start-up included


def test_the_full_h200_suite_is_forecast_within_the_scripts_limit():
    """From a stated 5 µs synchronize (and launch), the GPU slot's full suite with the script's box is forecast
    to finish inside the script's own limit (the CPU side priced at the slowest committed CPU host's pace)."""
    lines = forecast.forecast("cuda", STATED, quick=False, box_s=GPU_SCRIPT_BOX_S, names=experiments.suite(gpu_slot=True))
    assert all(line.seconds is not None for line in lines)
    assert forecast.total_s(lines, STATED) <= GPU_SCRIPT_LIMIT_S
    script = open("scripts/measure-gpu").read()
    assert script.count(f'BOX_S="${{BOX_S:-{GPU_SCRIPT_BOX_S}}}"') == 1
    assert script.count(f'LIMIT_S="${{LIMIT_S:-{GPU_SCRIPT_LIMIT_S}}}"') == 1
    assert "CROSSOVER_GPU_SLOT=1" in open("scripts/measure-gpu").read()


def test_a_slower_synchronize_costs_more_but_blocks_keep_it_small():
    """Blocks sized once put a few hundred waits in a run: 5 µs → 50 µs per wait adds seconds, not minutes."""
    slow = forecast.Costs(sync_s=50e-6, launch_s=5e-6, startup_s=20.0, source="stated")
    fast_total = forecast.total_s(forecast.forecast("cuda", STATED, False, None), STATED)
    slow_total = forecast.total_s(forecast.forecast("cuda", slow, False, None), slow)
    assert fast_total < slow_total < fast_total + 60


def test_the_box_leaves_the_rounds_the_runner_would_run():
    """rounds_in_box equals the count another_round_fits lets the runner reach, and never cuts below two."""
    for rounds in (1, 2, 3, 9, 15):
        for per_round in (0.5, 3.0, 7.0, 20.0):
            done = 1
            while done < rounds and forecast.another_round_fits(done, done * per_round, 12):
                done += 1
            assert forecast.rounds_in_box(rounds, per_round, 12) == done
            assert done >= min(rounds, forecast.MIN_ROUNDS_IN_BOX)


def test_the_timer_bound_covers_a_third_of_the_budget():
    """A time_it round on a GPU is at most budget x 7/3 plus the waits at block edges."""
    bound = forecast.bounded_gpu_round_s(0.1, STATED)
    assert math.isclose(bound, 0.1 * 7 / 3 + 2 * 41 * 5e-6)
