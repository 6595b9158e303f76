"""Tests for build_hooks.cost_model: interpolation, prediction, calibration and validation."""

import pytest

from build_hooks import cost_model
from build_hooks.dataset import Machine
from conftest import add_points, bare_cells, synthetic_doc


def params(**overrides):
    base = {"name": "fixture", "op_seconds": 1e-6, "gemm_rates": {64: 1e9, 4096: 1e11},
            "bandwidths": {10**4: 1e11, 10**8: 1e10}, "source": "fixture"}
    return cost_model.DeviceParams(**(base | overrides))


def test_rate_interpolates_on_log_scale_and_clamps():
    """R(n) is geometric between measured sides and constant beyond them."""
    p = params()
    assert p.rate(512) == pytest.approx(1e10)  # halfway in log(n) between 64 and 4096
    assert p.rate(8) == 1e9 and p.rate(10**5) == 1e11


def test_prediction_is_the_sum_of_three_terms():
    """Overhead, compute and memory terms add up to the predicted time."""
    out = cost_model.predict(params(), {"ops": 10, "flops": 1e9, "bytes": 1e8}, batch=8, width=64)
    assert out["overhead"] == pytest.approx(1e-5) and out["memory"] == pytest.approx(1e-2)
    assert out["seconds"] == pytest.approx(out["overhead"] + out["compute"] + out["memory"])


def test_memory_term_moves_bytes_at_the_bandwidth_of_the_steps_footprint():
    """A step that fits in cache moves its bytes at cache speed; one without a footprint at main memory's."""
    work = {"ops": 0, "flops": 0, "bytes": 1e8}
    assert cost_model.predict(params(), work | {"footprint": 10**4}, 1, 8)["memory"] == pytest.approx(1e-3)
    assert cost_model.predict(params(), work | {"footprint": 10**6}, 1, 8)["memory"] == pytest.approx(10**-2.5)
    assert cost_model.predict(params(), work, 1, 8)["memory"] == pytest.approx(1e-2)


def machine_from_model(true_op: float) -> Machine:
    """A fixture machine whose step times follow the raw model exactly with per-op cost `true_op`."""
    p = params(op_seconds=true_op)
    steps, work = {}, {}
    for batch in (1, 2, 4, 8, 16, 32):
        counts = {"ops": 40, "flops": 3 * 2 * batch * 512 * 32, "bytes": 300 * batch**2 + 50_000}
        work[batch] = counts
        steps[("cpu", 32, batch)] = cost_model.predict(p, counts, batch, 32)["seconds"]
    doc = synthetic_doc(step_times=steps)
    for bench in doc["benchmarks"]:
        bench["extra_info"].update(work[bench["params"]["batch"]])
    add_points(doc, "call_overhead", [({"op": "add_"}, 1e-6, {})])  # the tiny op underprices a real op
    add_points(doc, "gemm_rate", [({"n": 64}, 2 * 64**3 / 1e9, {"flops": 2 * 64**3}),
                                  ({"n": 4096}, 2 * 4096**3 / 1e11, {"flops": 2 * 4096**3})])
    add_points(doc, "memory_bandwidth", [({"bytes": 10**4 // 2}, 1e-7, {"bytes": 10**4}),
                                         ({"bytes": 10**8 // 2}, 1e-2, {"bytes": 10**8})])
    return Machine(doc, "fixture", "test")


def test_fit_recovers_the_true_costs_and_is_judged_only_on_held_out_batches():
    """Fitted on batches 1, 4, 16 the model recovers t_op, c and m; its error counts only 2, 8, 32."""
    machine = machine_from_model(true_op=5e-6)
    raw = cost_model.validate(machine, "cpu")
    fitted = cost_model.validate(machine, "cpu", calibrated=True)
    assert raw.median_error > 0.1  # the tiny op (1 µs) underprices the real 5 µs
    assert fitted.params.op_seconds == pytest.approx(5e-6, rel=1e-6)
    assert fitted.fitted.compute_factor == pytest.approx(1, rel=1e-6)
    assert fitted.fitted.memory_factor == pytest.approx(1, rel=1e-6)
    assert fitted.median_error == pytest.approx(0, abs=1e-6)
    assert {b for b, _, _, _ in fitted.points} == {2, 8, 32}
    assert {b for b, _ in fitted.fitted.trained_on} == {1, 4, 16}


def test_regime_is_the_largest_term():
    """A step is overhead-, compute- or memory-bound according to which fitted term is largest."""
    model = cost_model.Fitted(params(), 1.0, 1.0, ())
    assert model.regime({"ops": 1000, "flops": 1, "bytes": 1}, 1, 8) == "overhead"
    assert model.regime({"ops": 1, "flops": 1e12, "bytes": 1}, 1024, 2048) == "compute"
    assert model.regime({"ops": 1, "flops": 1, "bytes": 1e10}, 1, 8) == "memory"


def test_a_second_term_within_the_near_tie_makes_a_close_call():
    """close_call holds where the second-largest term is within NEAR_TIE of the largest, and not beyond it."""
    model = cost_model.Fitted(params(), 1.0, 1.0, ())
    work = {"ops": 1000, "flops": 1, "bytes": 1}
    overhead = model.terms(work, 1, 8)["overhead"]
    memory = model.terms({"ops": 0, "flops": 0, "bytes": 1e6}, 1, 8)["memory"]  # seconds per megabyte moved
    near = {**work, "bytes": 1e6 * overhead / cost_model.NEAR_TIE / memory * 1.01}
    far = {**work, "bytes": 1e6 * overhead / cost_model.NEAR_TIE / memory * 0.9}
    assert model.close_call(near, 1, 8) and not model.close_call(far, 1, 8)


def test_model_falls_back_to_the_raw_parameters_when_it_cannot_be_fitted():
    """Too few steps to fit: the raw measured parameters stand in, with factors 1."""
    machine = machine_from_model(true_op=5e-6)
    machine.doc["benchmarks"] = [b for b in machine.doc["benchmarks"]
                                 if b["group"] != "training_step" or b["params"]["batch"] <= 2]
    fallback = cost_model.model(machine, "cpu")
    assert cost_model.fit(machine, "cpu") is None
    assert (fallback.compute_factor, fallback.memory_factor) == (1.0, 1.0)
    assert fallback.params.op_seconds == pytest.approx(1e-6)


def test_accuracy_table_gives_each_forms_errors_from_the_data():
    """The cost model page's table: one row per device, with the raw form's error over every step and the fitted
    form's and a constant's over held-out steps, each as validate computes it; the machine named once, in the
    caption."""
    import re

    from build_hooks import page
    from build_hooks.dataset import Dataset

    machine = machine_from_model(true_op=5e-6)
    raw = cost_model.validate(machine, "cpu")
    constant = cost_model.constant_baseline(machine, "cpu")
    html = bare_cells(page.render_section("cost_model_accuracy", Dataset([machine])))
    head, *rows = re.findall(r"<tr>(.*?)</tr>", html)
    assert re.findall(r"<th[^>]*>(.*?)</th>", head) == ["steps (unseen)", "raw model", "fitted model", "the median, as a guess"]
    assert re.findall(r"<td>(.*?)</td>", rows[0]) == [
        "6 (3)", f"{100 * raw.median_error:.0f}% (worst {100 * raw.worst[2]:.0f}%)",
        "0% (worst 0%)",  # a true model misses none of its unseen steps
        f"{100 * constant.median_error:.0f}% (worst {100 * constant.worst[2]:.0f}%)"]
    assert len(rows) == 1 and constant.median_error > 0.1
    assert "How far the model misses measured steps (machine: Fixture CPU (4 threads); device: CPU)" in html
    assert "left out" not in html and "the median guess does as well as the fit" not in html


def test_a_constant_judges_the_fit_on_the_same_unseen_steps():
    """constant_baseline predicts every held-out step with the median time of the steps the fit trained on; on flat
    steps it does as well as the fit, and the accuracy table says so."""
    from build_hooks import page
    from build_hooks.dataset import Dataset

    machine = machine_from_model(true_op=5e-6)
    fitted, constant = (cost_model.validate(machine, "cpu", calibrated=True),
                        cost_model.constant_baseline(machine, "cpu"))
    assert [p[:3] for p in constant.points] == [p[:3] for p in fitted.points]
    assert len({p[3] for p in constant.points}) == 1
    # Flat steps: every step the same time, so a constant is exact and the note says the fit proves nothing.
    for bench in machine.doc["benchmarks"]:
        if bench["group"] == "training_step":
            bench["stats"] = {**bench["stats"], "median": 1e-3, "q1": 1e-3, "q3": 1e-3}
    assert cost_model.constant_baseline(machine, "cpu").median_error == 0
    assert "the median guess does as well as the fit" in str(page.render_section("cost_model_accuracy", Dataset([machine])))


def test_gpu_extra_cost_gives_each_way_found_and_compares_the_fitted_one_with_the_launch():
    """The three-ways table: the published launch always; a bare op's GPU-minus-CPU and the fitted extra only where
    measured; the note compares the fitted extra with the launch, or says nothing checked it."""
    import re

    from build_hooks import gpu_estimate, page, untrusted
    from build_hooks.dataset import Dataset
    from build_hooks.views import cost_model as views
    from conftest import complete_doc

    with_gpu = Dataset([Machine(complete_doc(gpu="Fixture GPU"), "f", "t")])
    html = untrusted.restore(str(page.render_section("gpu_extra_cost", with_gpu)))
    rows = [re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", html)[1:]]
    assert [r[0] for r in rows] == ["published: one kernel launch (PETSc, on a V100)", "measured: one bare tiny operation",
                                    "fitted: a whole step, GPU minus CPU, per operation"]
    extra = views._measured_extra(with_gpu)[1]
    assert f"the extra was {extra / gpu_estimate.LAUNCH_HOST_S:.2g}× the published launch" in html
    ran_fast = bool(gpu_estimate.checks(with_gpu.machines)) and gpu_estimate.checks(with_gpu.machines)[0].median > 1.1
    assert ("one reason real steps took longer than the estimate" in html) == ran_fast
    cpu_only = untrusted.restore(str(page.render_section("gpu_extra_cost", Dataset([Machine(complete_doc(), "f", "t")]))))
    assert len(re.findall(r"<tr>", cpu_only)) == 2 and "No GPU step was fitted here" in cpu_only


def test_the_worked_step_table_prices_each_term_and_sums_them_beside_the_measured_step():
    """cost_model_worked_step gives the fitted model's three terms for one step, their sum, and that step as
    measured, each term at the rate its amount over its time implies."""
    from build_hooks import page
    from build_hooks.dataset import Dataset
    from build_hooks.render import si

    machine = machine_from_model(true_op=5e-6)
    fitted, work = cost_model.model(machine, "cpu"), cost_model.step_work(machine, "cpu")
    batch, width = sorted(work)[len(work) // 2] if (64, 512) not in work else (64, 512)
    terms = fitted.terms(work[(batch, width)], batch, width)
    html = bare_cells(page.render_section("cost_model_worked_step", Dataset([machine])))
    assert f"<td>operations it issues</td><td>{work[(batch, width)]['ops']}</td>" in html
    assert f"<td>{si(terms['overhead'], 's')}</td>" in html and f"<td>{si(sum(terms.values()), 's')}</td>" in html
    assert "the step, measured" in html and f"batch {batch} and width {width}" in html


def test_a_fit_no_better_than_a_constant_shows_its_steps_range_instead_of_a_plot(monkeypatch):
    """Where one constant predicts a device's steps as well as the fit, its validation plot gives way to a sentence
    with the measured range; a device whose fit beats the constant keeps its plot."""
    from build_hooks import cost_model as model
    from build_hooks import page
    from build_hooks.dataset import Dataset, Machine
    from conftest import complete_doc

    data = Dataset([Machine(complete_doc(gpu="Fixture GPU"), "f", "this build host")])
    monkeypatch.setattr(model, "no_better_than_constant", lambda machine, device: device != "cpu")
    shown = str(page.render_section("cost_model_validation", data))
    assert shown.count("class=\"crossover-figure\"") == 1 and "one constant does as well. So no plot is drawn" in shown


def test_the_worked_step_says_how_far_its_sum_is_from_the_measured_step():
    """cost_model_worked_step says by how much the model's sum is under or over the step it prices, from the two
    times in its own table."""
    from build_hooks import analysis, page
    from build_hooks.dataset import Dataset
    from build_hooks.views import cost_model as views

    machine = machine_from_model(true_op=5e-6)
    fitted, work = cost_model.model(machine, "cpu"), cost_model.step_work(machine, "cpu")
    batch, width = views.WORKED_STEP if views.WORKED_STEP in work else sorted(work)[len(work) // 2]
    priced = sum(fitted.terms(work[(batch, width)], batch, width).values())
    measured = next(p for p in analysis.step_curve(machine, "cpu", width) if p.batch == batch).seconds
    off = priced / measured - 1
    html = str(page.render_section("cost_model_worked_step", Dataset([machine])))
    assert (f"The sum is {100 * abs(off):.0f}% {'under' if off < 0 else 'over'} this step&#x27;s measured time"
            in html)
