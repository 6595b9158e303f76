"""Tests for build_hooks.views: sections and facts follow the data and show untrusted strings as text."""

import dataclasses
import re

import pytest

from build_hooks import page, untrusted, wording
from build_hooks.dataset import Dataset, Machine
from build_hooks.views import race as race_views
from build_hooks.views import training_step
from conftest import add_points, bare_cells, synthetic_doc

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def data(times, gpu=None):
    return Dataset([Machine(synthetic_doc(gpu=gpu, step_times=times), "f", "t")])


def test_crossover_summary_without_gpu_says_not_measured():
    """With only a CPU measured, the crossover sentence says no GPU was measured."""
    text = page.render_fact("crossover_summary", data({("cpu", 32, 1): 1e-3}))
    assert "No GPU has been measured" in text


def test_crossover_summary_follows_the_data():
    """Changing which device is faster changes the sentence: it never repeats a stale claim."""
    base = {("cpu", 32, b): b * 1e-4 for b in (1, 8, 64)}
    gpu_wins_from_8 = base | {("cuda", 32, 1): 1.0, ("cuda", 32, 8): 1e-5, ("cuda", 32, 64): 1e-5}
    gpu_never = base | {("cuda", 32, b): 1.0 for b in (1, 8, 64)}
    assert "from batch 8" in page.render_fact("crossover_summary", data(gpu_wins_from_8, "G"))
    assert "never" in page.render_fact("crossover_summary", data(gpu_never, "G"))


def test_step_answer_tables_both_ends_and_the_crossover_per_width():
    """batch-size's answer gives, per width, both devices' steps at the smallest and largest batch and the crossover or
    "never", from the data; with no GPU it says the answer is the labelled estimate's."""
    base = {("cpu", w, b): b * 1e-4 for w in (8, 32) for b in (1, 8, 64)}
    times = base | {("cuda", 32, 1): 1.0, ("cuda", 32, 8): 1e-5, ("cuda", 32, 64): 1e-5} | {
        ("cuda", 8, b): 1.0 for b in (1, 8, 64)}
    html = bare_cells(page.render_section("step_answer", data(times, "G")))
    rows = re.findall(r"<tr>(.*?)</tr>", html)
    assert "CPU, batch 1" in rows[0] and "GPU, batch 64" in rows[0]
    assert "<td>8</td>" in rows[1] and "never, up to batch 64" in rows[1] and "1.0 s" in rows[1]
    assert "<td>32</td>" in rows[2] and "from batch 8" in rows[2] and "6.4 ms" in rows[2]
    no_gpu = str(page.render_section("step_answer", data({("cpu", 32, 1): 1e-3})))
    assert "No GPU was measured here" in no_gpu and "<table" not in no_gpu.split("crossover-missing")[0]


def test_fraction_of_peak_is_computed_from_rate_and_peak():
    """The fraction of peak equals best achieved FLOP/s over the recorded peak."""
    times = {("cpu", 32, 512): 6 * 512 * 512 * 32 / 3.84e11 * 2}  # exactly half the fixture peak
    assert page.render_fact("cpu_best_step_fraction_of_peak", data(times)).startswith("at most 50% of")


def test_rate_above_nominal_peak_is_called_above_it():
    """A rate above the peak from the reported clock is called above it, with its share, never 'close to'."""
    times = {("cpu", 32, 512): 6 * 512 * 512 * 32 / 3.84e11 / 1.2}
    text = page.render_fact("cpu_best_step_fraction_of_peak", data(times))
    assert text.startswith("above its CPU's fp32 peak at the reported clock") and "(120% of it)" in text
    assert "close to" not in text


def test_unknown_fact_raises():
    """An unknown fact name raises KeyError listing the known ones."""
    with pytest.raises(page.UnknownName, match="known:"):
        page.render_fact("no_such_fact", Dataset([]))


def test_missing_data_raises_instead_of_inventing():
    """A fact whose data is absent raises MissingData rather than printing a placeholder."""
    with pytest.raises(page.MissingData):
        page.render_fact("cpu_best_step_rate", Dataset([]))


def test_the_fastest_step_names_every_step_as_fast_within_the_spread_and_its_own_caveats():
    """cpu_best_step_rate gives the best step with its caveat words, then every other step whose rate reaches it within
    both spreads, grouped by width; a step clearly slower is not named."""
    def said(batch_32_seconds):  # width 512 batch 64 runs at 10.1 GFLOP/s; batch 32 at the same rate, or slower
        times = {("cpu", 32, 64): 1e-3, ("cpu", 512, 64): 1e-2, ("cpu", 512, 32): batch_32_seconds}
        return page.render_fact("cpu_best_step_rate", Dataset([Machine(synthetic_doc(step_times=times), "f", "t")]))
    assert said(0.5e-2) == ("10.1 GFLOP/s (batch 32, width 512; from too few samples; as fast within the spread: "
                            "batch 64 at width 512)")
    assert said(0.6e-2) == "10.1 GFLOP/s (batch 64, width 512; from too few samples)"


def test_hostile_machine_name_is_escaped_everywhere():
    """A machine name with HTML in it appears only escaped in the section, table and plot."""
    doc = synthetic_doc(brand=HOSTILE, gpu=HOSTILE, step_times={
        ("cpu", 32, 1): 1e-3, ("cuda", 32, 1): 2e-3})
    data = Dataset([Machine(doc, "fixture", "test")])
    html = page.render_section("training_step", data) + page.render_section("machines", data)
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_cpu_only_machine_says_gpu_not_measured():
    """Without a GPU curve the section states that the GPU was not measured."""
    html = page.render_section("training_step", Dataset([Machine(synthetic_doc(), "f", "t")]))
    assert "GPU: not measured" in html


def test_plot_is_inline_svg_with_text_alternative_and_page_colours():
    """The plot is a labelled group of inline SVGs, one per panel, each with role=img, an aria-label and colours bound
    to currentColor; its title and legend are page text."""
    plot = training_step.step_plot(Machine(synthetic_doc(), "f", "t"))
    assert plot.startswith('<div class="crossover-panels" role="group" aria-label="Training-step time')
    assert plot.count('<svg role="img" aria-label="Step time (lower is better): Training-step') == 1
    assert plot.count('<svg role="img" aria-label="Throughput (higher is better): Training-step') == 1
    assert "currentColor" in plot and "#010203" not in plot
    assert "batch size (samples)" in plot and "time per training step (ms)" in plot
    assert '<p class="crossover-panels__title"><bdi>One training step' in plot
    assert re.search(r'<svg aria-hidden="true" class="crossover-panels__legend".*>CPU, width 32<', plot)


def test_empty_dataset_says_so():
    """No machine with the experiment renders an explicit 'not measured' message."""
    assert "No machine has measured" in page.render_section("training_step", Dataset([]))


def test_run_to_run_shows_ratios_when_the_host_remeasured_a_committed_machine(tmp_path):
    """A host that replaces its own committed file gets a table of now/before median ratios."""
    import json

    from build_hooks import dataset
    from conftest import complete_doc

    before = complete_doc(machine_id="same-machine")
    now = complete_doc(machine_id="same-machine")
    now["datetime"] = "2026-12-01T00:00:00+00:00"  # a later run
    for bench in now["benchmarks"]:
        if bench["group"] == "gemm_rate":
            for key in ("median", "q1", "q3", "mean", "min", "max"):
                bench["stats"][key] *= 2
            bench["stats"]["data"] = [x * 2 for x in bench["stats"]["data"]]
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "same.json").write_text(json.dumps(before))
    (tmp_path / "host.json").write_text(json.dumps(now))
    data = dataset.load(tmp_path / "results", tmp_path / "host.json", tmp_path)
    html = page.render_section("run_to_run", data)
    assert "gemm_rate" in html and "2.00" in html and "1.00" in html
    assert "No results file" not in page.render_section("measurement_conditions", data)
    now["datetime"] = before["datetime"]  # the committed file is this very run
    (tmp_path / "host.json").write_text(json.dumps(now))
    same = dataset.load(tmp_path / "results", tmp_path / "host.json", tmp_path)
    assert "nothing to compare yet" in page.render_section("run_to_run", same)


def test_a_share_below_a_peak_that_matrix_products_beat_says_it_overstates():
    """A step below a peak that a matrix product beat is given as a share of the fastest product measured, never of
    that peak; where the peak is explained, the sentence says the share of it overstates."""
    from conftest import add_points

    doc = synthetic_doc(step_times={("cpu", 32, 512): 6 * 512 * 512 * 32 / 3.84e11 * 2})
    add_points(doc, "gemm_rate", [({"n": 1024}, 2 * 1024**3 / 4e11, {"flops": 2 * 1024**3})])
    machine = Machine(doc, "f", "t")
    text = page.render_fact("cpu_best_step_fraction_of_peak", Dataset([machine]))
    # A peak its own products beat is no yardstick: the share is of the fastest product measured (400 GFLOP/s).
    assert text == "48% of the fastest matrix product measured on it (400 GFLOP/s)"
    explained = wording.versus_peak(0.5 * machine.cpu["fp32_peak_flops"], machine, 4e11 * 1.1)
    assert "the percentage overstates the share reached" in explained and "at most" not in explained
    assert "Its square products reached 400 GFLOP/s (median)" in explained  # the number the captions quote
    shapes = add_points(synthetic_doc(), "gemm_rate", [({"n": 1024}, 2 * 1024**3 / 2e11, {"flops": 2 * 1024**3})])
    add_points(shapes, "matmul_shapes", [({"side": 1024, "calls": 1}, 2 * 1024**3 / 4e11, {"flops": 2 * 1024**3})])
    assert "Timed in the shapes experiment (Worked examples), its matrix products reached 400 GFLOP/s" in \
        wording.versus_peak(1e11, Machine(shapes, "f", "t"), 4e11 * 1.1)  # named by the experiment that timed it
    below = Machine(add_points(synthetic_doc(), "gemm_rate", [({"n": 1024}, 2 * 1024**3 / 2e11,
                                                                {"flops": 2 * 1024**3})]), "f", "t")
    assert "At the fast end of their spread, this machine's matrix products reached 440 GFLOP/s" in \
        wording.versus_peak(1e11, below, 4e11 * 1.1)  # no median beat the peak: the fast end is what did


def test_a_split_product_above_the_peak_makes_the_sweeps_share_an_overstatement():
    """why-gpu's best square rate is called "at most" its share of the peak only while no product, square or split,
    beat that peak at the fast end of its spread; the FAQ then names the machine as above its peak too."""
    from conftest import add_points, synthetic_doc

    def facts(split_seconds):  # the fixture's peak is 384 GFLOP/s; the square product runs at 215 GFLOP/s
        doc = add_points(synthetic_doc(), "gemm_rate", [({"n": 1024}, 1e-2, {"flops": 2 * 1024**3})])
        doc = add_points(doc, "matmul_shapes", [({"side": 64, "calls": 4096}, split_seconds, {"flops": 2 * 1024**3})])
        data = Dataset([Machine(doc, "f", "t")])
        return page.render_fact("cpu_gemm_best", data), bare_cells(page.render_section("cpus_above_peak_table", data))
    best, faq = facts(split_seconds=2e-2)
    assert "at most this" in best and "overstates" not in best and "no machine had" in faq
    best, faq = facts(split_seconds=4e-3)
    assert "at most" not in best and "matrix products reached 537 GFLOP/s (median), above that peak" in best
    assert "its one machine had a median matrix-product rate at least 1.1× its computed peak" in faq
    assert "<td>384 GFLOP/s</td><td>537 GFLOP/s (shapes experiment)</td><td>+40%</td>" in faq
    best, faq = facts(split_seconds=2 * 1024**3 / 3.95e11)  # 3% over the peak: level with it, counted apart
    assert "no machine had a median matrix-product rate at least 1.1×" in faq
    assert "1 more was above it by less than that, which this site counts as level" in faq and "+3%: level" in faq


def test_bf16_on_the_other_cpus_names_where_it_lost_as_well_as_where_it_won():
    """The FAQ's bf16 answer counts the other CPUs whose bf16 matrix product was faster, slower or level against
    fp32, and names the largest gain and loss with their product's size; mixed precision's table gives every CPU a
    row."""
    from conftest import add_points, synthetic_doc

    def cpu(name, fp32_s, bf16_s):
        doc = synthetic_doc(machine_id=name.lower(), brand=name)
        return Machine(add_points(doc, "precision", [({"op": "matmul", "dtype": "fp32"}, fp32_s, {"n": 256}),
                                                     ({"op": "matmul", "dtype": "bf16"}, bf16_s, {"n": 256})]),
                       name, "t")
    host, fast, slow, same = cpu("Host", 1.0, 1.0), cpu("Fast", 3.0, 1.0), cpu("Slow", 1.0, 92.0), cpu("Same", 1.0, 1.0)
    text = page.render_fact("bf16_answer", Dataset([host, fast, slow, same]))
    assert text.startswith("On ") and ", the two were level. Of the 3 other machines, " in text  # the host, by name
    assert "bf16 was faster on 1, slower on 1 and level on 1. The largest gain was 3.0×, on " in text
    # The extremes, named: the positive case a learner can look up, and the worst loss.
    assert untrusted.restore(text).endswith(
        "The largest gain was 3.0×, on <bdi>Fast (4 threads)</bdi>, with a 256×256 product. The largest loss was "
        "92×, on <bdi>Slow (4 threads)</bdi>, with a 256×256 product")  # one size everywhere: no note that sizes differ
    rows = bare_cells(page.render_section("precision_cpu_table", Dataset([host, fast, slow, same]))).split("<tbody>")[1]
    assert rows.count("<tr>") == 4 and "<td>3.0× faster</td>" in rows and "<td>92× slower</td>" in rows


def test_the_gallery_shows_measured_rates_and_no_peak_from_the_reported_clock():
    """The gallery's machine table holds measured columns only: a CPU peak computed from the reported clock, which a
    measured product can beat, is not one of them."""
    doc = add_points(synthetic_doc(), "gemm_rate", [({"n": 1024}, 2 * 1024**3 / 4.3e11, {"flops": 2 * 1024**3})])
    html = str(page.render_section("gallery", Dataset([Machine(doc, "f", "t")])))
    assert "CPU 430 GFLOP/s" in html  # the fixture's computed peak is 384 GFLOP/s: not shown
    assert "384 GFLOP/s" not in html and "peak" not in html.lower() and "exceeded" not in html.lower()


PARAM_PAYLOADS = ['1" autofocus onfocus="window.__pwned = 1" data-pwned="', "<img src=x onerror=window.__pwned=2>"]
INJECTED_ATTRIBUTES = {"autofocus", "onfocus", "onerror", "data-pwned"}


# Experiments whose sections live in another view module than their own name.
VIEW_OF = {"transformer_block": "transformer", "compile_speed": "transformer", "transformer_profile": "transformer"}


def view_module(group: str):
    """The view module that renders an experiment's sections (None: epoch_time, drawn by other views)."""
    import importlib

    return importlib.import_module(f"build_hooks.views.{VIEW_OF.get(group, group)}") if group != "epoch_time" else None


def _poison_params(doc: dict, group: str) -> dict:
    """Every param of every point of `group` (device aside) replaced by a payload, bypassing the load check."""
    import copy

    doc = copy.deepcopy(doc)
    points = [b for b in doc["benchmarks"] if b["group"] == group]
    for i, bench in enumerate(points):
        for key in bench["params"]:
            if key != "device":
                bench["params"][key] = f"{PARAM_PAYLOADS[i % 2]} {i}"  # distinct, so points stay apart
        for key, value in bench["extra_info"].items():
            if isinstance(value, str):
                bench["extra_info"][key] = PARAM_PAYLOADS[i % 2]
    return doc


@pytest.mark.parametrize("group", sorted(__import__("build_hooks.experiments").experiments.REGISTRY))
def test_params_that_slip_past_the_load_check_are_still_only_text(group):
    """Defence in depth: with payloads in every param, an experiment's sections parse with no injected element or attribute."""
    import html5lib

    from conftest import complete_doc

    data = Dataset([Machine(_poison_params(complete_doc(gpu="Fixture GPU"), group), "f", "this build host")])
    module = view_module(group)
    names = [n for n, fn in page.SECTIONS.items() if module and fn.__module__ == module.__name__]
    rendered = []
    for name in names + [f"measurements_{group}", "gallery"]:
        try:
            rendered.append(page.render_section(name, data))
        except (TypeError, ValueError, KeyError, LookupError, ZeroDivisionError):
            continue  # a view that needs a number where the load check guarantees one may fail here
    assert rendered, f"no section of {group} rendered"
    for html in rendered:
        tree = html5lib.parseFragment(html, treebuilder="etree", namespaceHTMLElements=False)
        for element in tree.iter():
            assert element.tag != "img" and not INJECTED_ATTRIBUTES & set(element.attrib), (group, element.attrib)
    assert any(PARAM_PAYLOADS[0] in "".join(html5lib.parseFragment(html, treebuilder="etree").itertext())
               for html in rendered), "the payload should be shown as text somewhere"


def test_an_unsettled_point_is_listed_with_the_canary_that_moved():
    """About the data lists each § point with the round its all-thread canary read slow in."""
    from build_hooks.views import conditions as conditions_view

    doc = synthetic_doc()
    point = doc["benchmarks"][1]
    point["extra_info"]["unsettled"] = True
    point["stats"]["round_medians"] = [1e-4, 3e-4, 1.1e-4]
    point["options"] = {"rounds": 3, "canary_s": [0.010, 0.031, 0.010]}
    doc["experiments"]["training_step"]["conditions"] = {
        "rounds": 3, "canary_s": [1e-4] * 4, "foreign_cpu": 0.0, "steal": 0.0, "fastest_all_threads_s": 0.010}
    html = str(conditions_view.unsettled_points(Dataset([Machine(doc, "f", "t")])))
    assert "3.0×" in html and "all-thread canary 3.1× the run&#x27;s fastest as round 2 began" in html
    assert "No point in this build is marked" in str(conditions_view.unsettled_points(Dataset([Machine(synthetic_doc(), "f", "t")])))


def test_the_gallery_says_how_often_each_machine_began_a_round_slow():
    """A machine whose rounds kept their canary readings gets its slow-start share; one without is named as unrecorded."""
    from build_hooks import gate

    recorded = synthetic_doc(machine_id="recorded", brand="Kept CPU")
    recorded["experiments"]["training_step"] = {**recorded["experiments"].get("training_step", {}),
                                                "conditions": {"fastest_all_threads_s": 1.0}}
    for bench in recorded["benchmarks"]:
        bench["options"] = {"canary_s": [1.0, 2 * gate.SLOW_STATE_RATIO]}
    older = synthetic_doc(machine_id="older", brand="Old CPU")
    text = bare_cells(page.render_section("gallery", Dataset([Machine(recorded, "r", "t"), Machine(older, "o", "t")])))
    rows = {row.split("</td>")[0]: row for row in text.split("<tr>")[1:]}
    kept, old = (next(row for name, row in rows.items() if brand in name) for brand in ("Kept CPU", "Old CPU"))
    assert kept.rstrip().removesuffix("</tr>").rstrip().endswith("<td>50%</td>")
    assert "<td>not recorded</td>" in old and "Rounds begun slow: " in text


def test_a_tie_with_an_estimate_is_called_inside_its_band_not_the_measured_spread(monkeypatch):
    """A measured epoch level with an estimate only within its stated band is not said to be inside the spread."""
    from build_hooks import race

    def lane(kind, seconds, spread, estimate):
        return {"kind": kind, "estimate": estimate, "machine_id": "host", "label": f"Fixture {kind}",
                "epochs": {"32": {"1": {"seconds": seconds, "q1": seconds / spread, "q3": seconds * spread}}}}
    lanes = [lane("CPU", 1.2, 1.05, False), lane("GPU", 1.0, 2.0, True) | {"band": [0.5, 2.0]}]
    monkeypatch.setattr(race, "race_data", lambda data: {"lanes": lanes, "widths": [32], "batches": [1],
                                                               "opening": {"batch": 1, "width": 32}})
    empty = Dataset([])
    text = page.render_fact("race_smallest_batch", empty)
    assert "the 1.2× gap is inside the estimate's band and the measured spread" in text
    assert "measurements' spread" not in text
    lanes[1] |= {"estimate": False, "epochs": {"32": {"1": {"seconds": 1.15, "q1": 1.1, "q3": 1.25}}}}
    assert "the 1.04× gap is inside the measurements' spread" in page.render_fact("race_smallest_batch", empty)


def test_the_small_network_epoch_is_set_against_the_estimate_when_no_gpu_was_measured():
    """Without a measured GPU the small-network sentence gives the race's estimate and a verdict within its band."""
    steps = {("cpu", 32, b): 1e-4 * b for b in (1, 64)}
    doc = synthetic_doc(step_times=steps, epoch_times={("cpu", 32, 1): 2.0, ("cpu", 32, 64): 0.5})
    for bench in doc["benchmarks"]:
        if bench["group"] == "training_step":
            bench["extra_info"].update(ops=40, bytes=10**6)
    text = page.render_fact("small_network_epoch", Dataset([Machine(doc, "f", "t")]))
    assert "took 500 ms" in text and "The race's estimated" in text
    assert ("level with it within the estimate's stated band" in text) != ("beyond the estimate's" in text)
    with_gpu = synthetic_doc(gpu="Fixture GPU", step_times=steps | {("cuda", 32, 64): 1e-3},
                             epoch_times={("cpu", 32, 64): 0.5, ("cuda", 32, 64): 0.1})
    measured = page.render_fact("small_network_epoch", Dataset([Machine(with_gpu, "f", "t")]))
    assert "it took 100 ms" in measured and "estimated" not in measured


def test_an_unfinished_experiment_is_shown_as_not_measured_with_why():
    """A GPU run that published what finished: About the data and All measurements say what it did not measure, and
    why, as text (a reason carrying markup is escaped)."""
    from conftest import complete_doc

    doc = complete_doc(gpu="NVIDIA H200", machine_id="gpu-run")
    doc["experiments"].pop("grad_accumulation")
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["group"] != "grad_accumulation"]
    doc["unfinished"] = {"grad_accumulation": "failed: <b>RuntimeError</b>"}
    data = Dataset([Machine(doc, "f", "committed reference"), Machine(complete_doc(), "g", "this build host")])
    machines = page.render_section("machines", data)
    assert "not measured (why)" in machines and "grad_accumulation: failed: &lt;b&gt;RuntimeError" in machines
    listing = page.render_section("measurements_grad_accumulation", data)
    assert "Not measured on NVIDIA H200" in listing and "&lt;b&gt;RuntimeError&lt;/b&gt;" in listing


def test_a_measured_gpu_gets_its_own_break_even_against_its_own_cpu():
    """With a measured GPU, a second table gives its CPU's and its GPU's fitted cost × best rate, and the break-even:
    the GPU's extra cost per operation × its CPU's rate; without one, no such table."""
    from build_hooks.render import si
    from build_hooks.views.cost_model import measured_break_even
    from conftest import complete_doc

    machine = Machine(complete_doc(gpu="Fixture GPU"), "f", "t")
    found = measured_break_even(machine)
    assert found is not None
    (cpu_op, cpu_rate, _), (gpu_op, _, _) = found
    text = page.render_section("break_even_table", Dataset([machine]))
    measured = text.split("measured: Fixture GPU against the CPU in its own machine")[-1].split("</table>")[0]
    assert text.index("measured: Fixture GPU") < text.index("Estimated: ")  # the measurement first
    last = measured.split("</tr>")[-2]  # the break-even row, the last before the table ends
    if gpu_op > cpu_op:
        assert si(gpu_op - cpu_op, "s") in last and si((gpu_op - cpu_op) * cpu_rate, "FLOP") in last
    else:
        assert "the GPU pays no more" in last
    assert "measured:" not in page.render_section("break_even_table", Dataset([Machine(complete_doc(), "f", "t")]))


def test_the_break_even_work_is_a_fixed_cost_times_a_peak():
    """The one number, as a table: the CPU's per-operation cost × its best matrix-product rate, and the estimated
    GPU's issuing (that cost plus the published launch) × its datasheet FP32 peak, each row with its two factors."""
    from build_hooks import analysis
    from build_hooks import gpu_estimate as gpu_model
    from build_hooks.render import si
    from conftest import complete_doc

    machine = Machine(complete_doc(), "f", "t")
    text = page.render_section("break_even_table", Dataset([machine]))
    op, rate = gpu_model.host_op_seconds(machine), max(analysis.gemm_rates(machine, "cpu").values())
    peak = gpu_model.SHEET.fp32_flops
    issue = op + gpu_model.LAUNCH_HOST_S
    cpu_row, gpu_row = text.split("<tbody>")[1].split("</tr>")[:2]
    assert all(cell in cpu_row for cell in (si(op, "s"), si(rate, "FLOP/s"), si(op * rate, "FLOP")))
    assert all(cell in gpu_row for cell in (si(issue, "s"), si(peak, "FLOP/s"), si(issue * peak, "FLOP")))


def test_one_share_is_not_stated_as_a_range():
    """With one width the raw model's batch-1 share is one number, never 'from 60% to 60%'."""
    from conftest import complete_doc

    doc = complete_doc()
    widths = sorted({b["params"]["width"] for b in doc["benchmarks"] if b["group"] == "training_step"})
    doc["benchmarks"] = [b for b in doc["benchmarks"]
                         if b["group"] != "training_step" or b["params"]["width"] == widths[0]]
    try:
        text = page.render_fact("cost_model_small_batch_bias", Dataset([Machine(doc, "f", "t")]))
    except page.MissingData:
        pytest.skip("one width is too little to validate the model")
    assert " to " not in text.split("predicts", 1)[1].split("of the measured", 1)[0], text


def test_the_race_opens_with_who_wins_at_its_smallest_and_largest_setting(monkeypatch):
    """Two short sentences, from the grid's rule: the CPU ahead at the smallest setting, the GPU at the largest."""
    from build_hooks import race

    def lane(kind, times):
        return {"kind": kind, "estimate": False, "machine_id": "m", "label": f"Fixture {kind}",
                "epochs": {str(w): {str(b): {"seconds": t, "q1": t * 0.99, "q3": t * 1.01} for b, t in by.items()}
                           for w, by in times.items()}}
    lanes = [lane("CPU", {32: {1: 1.0, 512: 4.0}, 512: {1: 2.0, 512: 30.0}}),
             lane("GPU", {32: {1: 2.0, 512: 2.0}, 512: {1: 2.01, 512: 3.0}})]
    monkeypatch.setattr(race, "race_data", lambda data: {"lanes": lanes, "widths": [32, 512], "batches": [1, 512]})
    text = page.render_fact("race_corners", Dataset([]))
    assert text == ("At batch 1 and width 32, the CPU finishes first, 2.0× ahead. "
                    "At batch 512 and width 512, the GPU finishes first, 10× ahead")


def test_a_lead_that_barely_clears_the_spread_is_marked_narrow(monkeypatch):
    """A CPU lead whose quartile clears the estimate's band edge by under 1.1x is called narrow, in the home sentence
    and the grid; a lead with room to spare is not."""
    from build_hooks import race

    def lanes(gpu_low):
        return [{"kind": "CPU", "estimate": False, "machine_id": "m", "label": "Fixture CPU",
                 "epochs": {"8": {"1": {"seconds": 1.0, "q1": 0.98, "q3": 1.02}}}},
                {"kind": "GPU", "estimate": True, "machine_id": "m", "label": "Fixture GPU", "band": [0.75, 2.5],
                 "epochs": {"8": {"1": {"seconds": 1.4, "q1": gpu_low, "q3": 3.5}}}}]
    monkeypatch.setattr(race, "race_data", lambda data: {"lanes": lanes(1.05), "widths": [8], "batches": [1]})
    assert page.render_fact("race_corners", Dataset([])).endswith("1.4× ahead (it clears the two spreads by "
                                                                    "under 1.1×)")
    assert "1.4×, narrow" in str(page.render_section("verdict_grid_home", Dataset([])))
    monkeypatch.setattr(race, "race_data", lambda data: {"lanes": lanes(1.3), "widths": [8], "batches": [1]})
    assert page.render_fact("race_corners", Dataset([])).endswith("1.4× ahead")


def test_an_estimated_gpu_is_named_so_in_its_own_grid_cell(monkeypatch):
    """A grid cell the estimate wins says 'GPU (est.)', not a bare 'GPU' that reads as measured."""
    from build_hooks import race

    def lane(kind, seconds, estimate):
        return {"kind": kind, "estimate": estimate, "machine_id": "m", "label": f"Fixture {kind}",
                "epochs": {"32": {"512": {"seconds": seconds, "q1": seconds * 0.9, "q3": seconds * 1.1}}}}
    lanes = [lane("CPU", 5.0, False), lane("GPU", 1.0, True)]
    monkeypatch.setattr(race, "race_data", lambda data: {"lanes": lanes, "widths": [32], "batches": [512]})
    grid = str(page.render_section("verdict_grid_home", Dataset([])))
    assert "GPU (est.)<br>" in grid


def test_home_says_whether_the_grids_gpu_is_a_model_set_by_this_hosts_pace():
    """With no GPU measured, home says the grid's GPU is a model and at how many settings the host sets its time;
    with a measured GPU, that every GPU in the grid was measured."""
    from pathlib import Path

    from build_hooks import dataset

    root = Path(__file__).resolve().parent.parent
    cpu_only = Dataset([m for m in dataset.load_committed(root / "results", root) if m.gpu is None])
    assert race_views.home_estimate_pace(cpu_only).startswith("In the model, the GPU's time is how long")
    steps = {(d, 32, b): 1e-3 for d in ("cpu", "cuda") for b in (1, 64)}
    measured = synthetic_doc(gpu="Fixture GPU", step_times=steps, epoch_times=steps)
    assert race_views.home_estimate_pace(Dataset([Machine(measured, "f", "t")])) == \
        "Every GPU in the grid was measured"


def test_the_estimated_crossover_is_the_first_batch_of_an_unbroken_estimate_lead(monkeypatch):
    """Per width: the batch from which the estimate leads at every larger batch, with any lone lead below it named
    (as the grid shows it); a width with a lone lead only says so, and a width it never leads says that."""
    from build_hooks import race

    def lane(kind, times, estimate):
        return {"kind": kind, "estimate": estimate, "machine_id": "m", "label": f"Fixture {kind}",
                "epochs": {w: {b: {"seconds": t, "q1": t * 0.99, "q3": t * 1.01} for b, t in by.items()}
                           for w, by in times.items()}}
    cpu = {"8": {"1": 1.0, "64": 1.0, "512": 1.0}, "32": {"1": 1.0, "64": 1.0, "512": 1.0},
           "512": {"1": 1.0, "64": 5.0, "512": 9.0}, "2048": {"1": 1.0, "64": 5.0, "512": 9.0}}
    gpu = {"8": {"1": 2.0, "64": 2.0, "512": 2.0}, "32": {"1": 2.0, "64": 0.5, "512": 2.0},
           "512": {"1": 2.0, "64": 1.0, "512": 1.0}, "2048": {"1": 0.5, "64": 6.0, "512": 1.0}}
    monkeypatch.setattr(race, "race_data", lambda data: {"lanes": [lane("CPU", cpu, False), lane("GPU", gpu, True)],
                                                         "widths": [8, 32, 512, 2048], "batches": [1, 64, 512]})
    assert race_views.estimated_crossovers(Dataset([])) == (
        "By the labelled estimate against the build host's CPU, a GPU would win at width 32 only at batch 64, "
        "from batch 64 at width 512 and from batch 512 at width 2048 (and at batch 1, a lead the batches beside it do not share). "
        "At width 8 it wins at no batch raced")
    rows = page.render_section("estimated_crossover_table", Dataset([])).split("<tbody>")[1].split("</tr>")
    assert [r.count("<td>") for r in rows[:4]] == [3] * 4  # one row per width, in the sentence's order
    assert "<td>8</td><td>never in the batches raced</td><td>none</td>" in rows[0]
    assert "<td>2048</td><td>from batch 512</td><td>1</td>" in rows[3]


def test_activation_counts_alike_on_every_shown_machine_are_one_table():
    """Saved-activation bytes are counts: where every shown machine's CPU counted the same, the page shows one table
    (a machine with GPU counts, where one has them), names the others, and leaves out the CUDA column no CPU fills;
    where they differ, each machine keeps its own."""
    from conftest import add_points

    def cpu(name, bytes_at_64):  # each has a GPU (unused here), so a page draws both
        points = [({"batch": b}, v, {"weight_bytes": 4096, "unit": "bytes"}) for b, v in ((1, 1e3), (64, bytes_at_64))]
        return Machine(add_points(synthetic_doc(machine_id=name.lower(), brand=name, gpu="Fixture GPU"),
                                  "activation_memory", points), name, "t")
    alike = str(page.render_section("activation_memory", Dataset([cpu("Alpha", 6.4e4), cpu("Beta", 6.4e4)])))
    assert alike.count("<table") == 1 and "CUDA peak" not in alike
    assert ("The other machine shown counted the same bytes on its CPU: Fixture GPU + Beta (4 threads)." in alike
            and "They are counts" in alike)
    with_gpu = cpu("Gamma", 6.4e4)
    add_points(with_gpu.doc, "activation_memory", [({"batch": 64, "device": "cuda"}, 6.4e4,
                                                     {"weight_bytes": 4096, "peak_allocated_bytes": 9e4})])
    drawn = str(page.render_section("activation_memory", Dataset([cpu("Alpha", 6.4e4), with_gpu])))
    assert drawn.count("<table") == 1 and "CUDA peak" in drawn  # the GPU machine's figure, for both
    assert "counted the same bytes on its CPU: Fixture GPU + Alpha (4 threads)." in drawn
    apart = str(page.render_section("activation_memory", Dataset([cpu("Alpha", 6.4e4), cpu("Beta", 7e4)])))
    assert apart.count("<table") == 2 and "the same bytes" not in apart


def test_activation_counts_alike_on_cpu_and_gpu_are_one_column_beside_the_allocators_peak():
    """A machine whose CPU and GPU saved the same bytes gets one row per batch (saved activations, then the CUDA peak);
    a GPU that ran out of memory at a batch splits the column by device and says so in its cell."""
    def machine(oom: bool) -> str:
        points = [({"batch": b}, v, {"weight_bytes": 4096, "unit": "bytes"}) for b, v in ((1, 1e3), (64, 6.4e4))]
        doc = add_points(synthetic_doc(gpu="Fixture GPU"), "activation_memory", points + [
            ({"batch": b, "device": "cuda"}, v, {"weight_bytes": 4096, "peak_allocated_bytes": 3 * v, "unit": "bytes"})
            for b, v in ((1, 1e3), (64, 6.4e4))])
        if oom:
            doc["benchmarks"][-1]["status"] = "oom"  # the GPU ran out of memory at batch 64
        return bare_cells(page.render_section("activation_memory", Dataset([Machine(doc, "f", "t")])))
    alike = machine(oom=False)
    assert re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", alike) == ["batch", "saved activations", "CUDA peak allocated"]
    assert "<td>64</td><td>64.0 kB</td><td>192 kB</td>" in alike and "Every device counted the same bytes." in alike
    apart = machine(oom=True)
    assert re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", apart) == [
        "batch", "saved activations (CPU)", "saved activations (GPU)", "CUDA peak allocated"]
    assert "<td>64</td><td>64.0 kB</td><td><strong>out of memory</strong></td><td>–</td>" in apart
    assert "Every device counted the same bytes." not in apart


def test_the_cheat_sheets_key_numbers_are_the_lessons_own():
    """The cheat sheet's key numbers are computed by the functions its lessons quote (the break-even work, the
    ridge point), each row linking to its lesson; without a measured GPU the estimated GPU's row says it is a model."""
    from pathlib import Path

    from build_hooks import cost_model, dataset
    from build_hooks.render import si
    from build_hooks.views.cost_model import break_even
    from build_hooks.views.intensity import _cpu_ridge, _ridge

    root = Path(__file__).resolve().parent.parent
    committed = Dataset([m for m in dataset.load_committed(root / "results", root)
                         if m.gpu_device("training_step") is None])
    shown = bare_cells(page.render_section("key_numbers", committed))
    even = break_even(committed)
    params = cost_model.measured_params(committed.with_experiment("training_step")[0], "cpu")
    for value in (si(even.op_s, "s"), si(even.cpu_flop, "FLOP"), si(even.gpu_flop, "FLOP"),
                  f"<td>{_ridge(_cpu_ridge(committed.with_experiment('training_step')[0], params))} FLOP/B"):
        assert value in shown
    assert "(estimated: a model)" in shown and shown.count("<tr>") == shown.count('<a href="') + 1  # a link per row
    # A device with a bf16 product gets its bf16 ridge too: that rate over the same copy bandwidth.
    host = committed.with_experiment("training_step")[0]
    bf16 = host.measured("precision", device="cpu", op="matmul", dtype="bf16")[0]
    bf16_ridge = bf16["extra_info"]["flops"] / bf16["stats"]["median"] / params.bandwidth
    assert f"; bf16 {_ridge(bf16_ridge)} FLOP/B" in shown


def test_the_cheat_sheet_gives_a_measured_gpus_own_numbers_beside_the_estimates():
    """With a measured GPU, the key numbers give its machine's CPU and GPU a column each: the GPU's work per operation
    and its break-even against its own CPU, as the batch-size table computes them (measured_break_even), in place of
    the estimate's column."""
    import re

    from build_hooks.render import si
    from build_hooks.views.cost_model import measured_break_even
    from conftest import complete_doc

    machine = Machine(complete_doc(gpu="Fixture GPU"), "f", "this build host")
    (cpu_op, cpu_rate, _), (gpu_op, gpu_rate, _) = measured_break_even(machine)
    shown = bare_cells(page.render_section("key_numbers", Dataset([machine])))
    assert "<th>Fixture GPU</th>" in shown
    work = re.search(r"<td>work per operation for half its top speed.*?</tr>", shown).group(0)
    assert work.count("<td>") == 5 and f"<td>{si(gpu_op * gpu_rate, 'FLOP')}</td>" in work
    assert (si((gpu_op - cpu_op) * cpu_rate, "FLOP") in shown) == (gpu_op > cpu_op)
    assert "estimated" not in shown and "(a model)" not in shown
    assert "(measured)" not in str(page.render_section("key_numbers", Dataset([Machine(complete_doc(), "f", "t")])))


def test_each_bf16_row_is_its_own_products_rate_against_the_build_hosts_fp32():
    """why-gpu's table gives a CPU's bf16 product as a row of its own (its rate, its size), timed against the build
    host's fastest fp32 product like every row."""
    n, flops = 1024, 2 * 1024**3
    doc = add_points(synthetic_doc(), "gemm_rate", [({"n": 512}, 2 * 512**3 / 1e11, {"flops": 2 * 512**3})])
    add_points(doc, "precision", [({"op": "matmul", "dtype": "fp32"}, flops / 5e10, {"flops": flops, "n": n}),
                                  ({"op": "matmul", "dtype": "bf16"}, flops / 3e11, {"flops": flops, "n": n})])
    table = str(page.render_section("workload_table", Dataset([Machine(doc, "f", "t")])))
    row = table.split("bf16 (measured: one 1024×1024 product)")[1].split("</tr>")[0]
    assert "300 GFLOP/s" in row and "3.0× shorter" in row


@pytest.mark.parametrize("name, without, with_gpu", [
    ("gpu_profile_summary", "No GPU was profiled", "On the Fixture GPU, the host spent"),
    ("gpu_peak_memory", "This build has no GPU allocator peak", "On the Fixture GPU at batch"),
    ("break_even_answer", "On the build host, an operation's arithmetic alone outlasts",
     "Against the 4-thread Fixture in its own machine, the Fixture GPU's step got shorter "),
])
def test_a_gpu_fact_names_a_measured_gpu_and_says_plainly_when_there_is_none(name, without, with_gpu):
    """Each lesson fact about a GPU reads a measured GPU where the data has one (even on another machine than the
    host), and otherwise says that none was measured: never a GPU claim without a GPU point."""
    from conftest import complete_doc

    host = Machine(complete_doc(), "h", "this build host")
    gpu = Machine(complete_doc(gpu="Fixture GPU", machine_id="gpu-box"), "g", "committed reference")
    from build_hooks import untrusted

    def said(data: Dataset) -> str:  # the text a reader sees, names isolated by <bdi> taken out
        return untrusted.restore(page.render_fact(name, data)).replace("<bdi>", "").replace("</bdi>", "")
    assert without in said(Dataset([host]))
    assert with_gpu in said(Dataset([host, gpu]))


def test_home_gives_the_measured_break_even_in_one_number_and_the_estimate_without_a_gpu():
    """Under home's grid: the measured GPU's break-even work per operation, as the batch-size table gives it; with no
    GPU measured, where the labelled estimate leads and what sets its pace."""
    from pathlib import Path

    from build_hooks import dataset

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    cpu_only = Dataset([m for m in committed if m.gpu is None])
    assert page.render_fact("home_one_number", cpu_only).startswith("By the labelled estimate against the build host's CPU")
    with_gpu = Dataset(committed)
    said = page.render_fact("home_one_number", with_gpu)
    assert said.startswith("The rule behind it: ") and "pays a larger fixed cost per step than its CPU" in said
    assert "MFLOP" not in said  # one figure on home: the measured crossings, in its short answer
    table = bare_cells(page.render_section("break_even_table", with_gpu))
    per_step = table.split("Per step, the break-even is ")[1].split(". ")[0]  # the committed H200: a span
    low, high = (float(x) for x in per_step.split(" ")[0:3:2])
    # The table's two break-evens per operation, times the 38 operations each GPU step issues (same unit here).
    per_op = [float(table.split(row)[1].split("</tr>")[0].split("<td>")[-1].split(" ")[0])
              for row in ("break-even, bare operation", "break-even: the GPU")]
    assert low == pytest.approx(per_op[0] * 38, rel=0.01) and high == pytest.approx(per_op[1] * 38, rel=0.01)
    # The folded estimate says how far its break-even lies from the measured one, from the two tables' numbers.
    estimated = float(table.split("break-even: the estimated GPU")[1].split("</tr>")[0].split("<td>")[-1].split(" ")[0])
    ratios = table.split("The measured break-even above is ")[1].split(" this estimate")[0].split(" to ")
    assert float(ratios[0].rstrip("×")) == pytest.approx(per_op[0] * 1e3 / estimated, rel=0.02)  # MFLOP / kFLOP
    assert float(ratios[1].rstrip("×")) == pytest.approx(per_op[1] * 1e3 / estimated, rel=0.05)


def test_homes_short_answer_gives_the_measured_crossings_work_and_nothing_without_a_gpu():
    """The bold short answer quotes the work per step where the measured GPU's steps crossed (the fit's span is on
    batch-size), and no number where no GPU ran."""
    from pathlib import Path

    from build_hooks import dataset
    from build_hooks.render import si
    from build_hooks.views import cost_model as views

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    assert page.render_fact("home_answer_work", Dataset([m for m in committed if m.gpu is None])) == ""
    with_gpu = Dataset(committed)
    low, high, _ = views.crossing_bracket(next(m for m in committed if m.gpu is not None))
    said = page.render_fact("home_answer_work", with_gpu)
    assert said.startswith("Timed one step at a time, the GPU pulled ahead once a step did ")
    assert "operations" not in said  # per step only: an average per operation describes no real operation
    # The committed H200 crossed at widths 512 and 2048 between the same two step sizes: said, the work decides.
    brackets = views.crossing_brackets(next(m for m in committed if m.gpu is not None))
    assert ("crossed between those same two step sizes" in said) == (len(set(brackets.values())) == 1 < len(brackets))
    # The FAQ says the same span, joined by "to" (it once printed the bracket's third value between the two).
    assert f"once a step did {views.flop_span(low, high)} (a FLOP is" in page.render_fact("break_even_answer", with_gpu)
    assert f"{si(low, 'FLOP').split(' ')[0]} to {si(high, 'FLOP')}" in said



@pytest.mark.parametrize("bare, said", [(None, "about 20.0 MFLOP"), (10.5e-6, "about 20.0 MFLOP"),
                                        (0.5e-6, "1.00 to 20.0 MFLOP"), (30e-6, "20.0 to 60.0 MFLOP")])
def test_the_break_even_is_a_span_only_where_a_bare_operation_disagrees_with_the_fit(monkeypatch, bare, said):
    """The fitted extra (10 µs × 2 TFLOP/s = 20 MFLOP) stands alone unless a bare operation's extra gives a break-even
    beyond the spread rule; then both ends are given, low first, the unit once."""
    from build_hooks.views import cost_model as views

    monkeypatch.setattr(views, "first_measured_break_even", lambda data: ("m", ((5e-6, 2e12, ""), (15e-6, 1e14, ""))))
    monkeypatch.setattr(views, "bare_extra", lambda machine: bare)
    assert views.break_even_span(Dataset([])) == said


def test_why_gpu_leads_with_one_measured_machine_when_a_gpu_was_measured():
    """why-gpu's first sentence sets a measured GPU against its own machine's CPU, both at measured rates and format
    for format (the committed GPU machine measured bf16 on both, each product's size said); without a GPU it falls
    back to the datasheet, labelled published."""
    from pathlib import Path

    from build_hooks import dataset

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    said = page.render_fact("workload_headline", Dataset(committed))
    assert said.startswith("Take a 100-million-parameter language model")
    assert said.count("fp32") == said.count("at its measured bf16") == 2  # format for format, on both devices
    gpu_machine = next(m for m in committed if m.gpu is not None)
    for device in ("cpu", gpu_machine.gpu_device("gemm_rate")):  # each bf16 rate names the product it comes from
        side = gpu_machine.measured("precision", device=device, op="matmul", dtype="bf16")[0]["extra_info"]["n"]
        assert f"rate (one {side}×{side} product)" in said
    assert said.endswith("A real run takes longer than these floors")  # pure arithmetic, not a run's time
    assert "published" not in said
    cpu_only = page.render_fact("workload_headline", Dataset([m for m in committed if m.gpu is None]))
    assert cpu_only.endswith("(published)")


def test_with_measured_lanes_the_race_says_how_far_each_epoch_fell_across_the_batches(monkeypatch):
    """race_estimate_flat, with no estimate: the first GPU's and its own CPU's epoch fall from smallest to largest batch."""
    from build_hooks import race

    def lane(kind, machine, times):
        return {"kind": kind, "estimate": False, "machine_id": machine, "label": f"Fixture {kind}",
                "epochs": {"32": {b: {"seconds": t, "q1": t, "q3": t} for b, t in times.items()}}}
    lanes = [lane("CPU", "other", {"1": 9.0, "512": 1.0}), lane("GPU", "m", {"1": 8.0, "512": 2.0}),
             lane("CPU", "m", {"1": 4.0, "512": 2.0})]
    monkeypatch.setattr(race, "race_data", lambda data: {"lanes": lanes, "widths": [32], "batches": [1, 512]})
    said = page.render_fact("race_estimate_flat", Dataset([]))  # the lane's name is a placeholder until the page
    assert said.startswith("At width 32, between batch 1 and 512, ")
    assert said.endswith("'s epoch fell 4.0× and its CPU's 2.0×. So the gap moved 2.0× towards the GPU")
    lanes[2]["epochs"]["32"]["1"]["caveats"] = ["noisy", "unsettled"]  # the ratio carries its endpoints' marks
    assert "and its CPU's 2.0×†§. So" in page.render_fact("race_estimate_flat", Dataset([]))
    lanes[2]["epochs"]["32"]["1"]["seconds"] = 8.4  # both fell alike: within the meaningful ratio
    assert page.render_fact("race_estimate_flat", Dataset([])).endswith("So neither gained much on the other")
    for point in lanes[1]["epochs"]["32"].values():  # 1,024 rows: 1,024 steps at batch 1, 2 at batch 512 (512×)
        point["rows"] = 1024
    lanes[1]["epochs"]["32"]["1"].update(seconds=1100.0, q1=1100.0, q3=1100.0)  # fell 550×: within 1.1× of 512×
    assert "fall beats" not in page.render_fact("race_estimate_flat", Dataset([]))
    lanes[1]["epochs"]["32"]["1"].update(seconds=1200.0, q1=1200.0, q3=1200.0)  # fell 600×: beyond it
    assert page.render_fact("race_estimate_flat", Dataset([])).endswith(
        "The GPU's fall beats the 512× fewer steps: inside the epoch, its step at batch 512 ran faster than at batch 1")
    lanes[1]["epochs"]["32"]["512"]["q3"] = 2.4  # but not beyond the spread of the epoch it ends at
    assert "fall beats" not in page.render_fact("race_estimate_flat", Dataset([]))


def test_the_regimes_page_counts_a_measured_gpus_steps_by_regime():
    """With the committed H200 file, regimes_gpu_summary counts that GPU's steps as its table classifies them; with no
    GPU, it says only the CPU's are shown."""
    from collections import Counter
    from pathlib import Path

    from build_hooks import dataset
    from build_hooks.views.regimes import REGIME_WORDS, classified

    root = Path(__file__).resolve().parent.parent
    committed = Dataset(dataset.load_committed(root / "results", root)).machines  # as pages name them
    gpu_machine = next(m for m in committed if m.gpu)
    counts = Counter(r for _, _, r in classified(gpu_machine, gpu_machine.gpu_device("training_step")))
    said = page.render_fact("regimes_gpu_summary", Dataset(committed))
    for regime, n in counts.items():
        assert (f"{n} steps are {REGIME_WORDS[regime]}" in said or f"{n} {REGIME_WORDS[regime]}" in said
                or f"every one of its {n} steps is {REGIME_WORDS[regime]}" in said
                or f"every one of its {n} steps {REGIME_WORDS[regime]}" in said
                or set(counts) == {"overhead"} and "whose kernels ran for" in said)
    if set(counts) == {"overhead"}:  # the profile's evidence, timing host and kernels apart; the fit is not cited,
        assert "whose kernels ran for" in said and "the GPU waited on overhead" in said  # as it is made from them
        assert "fit agrees" not in said
    assert "only the CPU" in page.render_fact("regimes_gpu_summary", Dataset([m for m in committed if not m.gpu]))
    # The build host's CPU first, which the bold line counts; then the GPU beside the CPU in its own machine.
    tables = str(page.render_section("regimes_by_width", Dataset(committed)))
    # A device with one label everywhere is a sentence, not a table; one whose fit no constant beats is left out.
    from build_hooks import cost_model
    weak = cost_model.no_better_than_constant(gpu_machine, gpu_machine.gpu_device("training_step"))
    assert tables.count("<table>") + tables.count("at every width and batch") == 3 - weak
    assert "regime on the NVIDIA H200 machine&#x27;s own CPU, Intel(R) Xeon(R) Processor" in tables
    first = page.render_section("regimes_by_width", Dataset(committed)).split("<caption>")[1]
    assert first.startswith(f"Each CPU training step&#x27;s regime on {committed[0].label}") or \
        first.startswith("Each CPU training step&#x27;s regime on the build host")
    assert ("Each GPU training step" not in tables) == weak  # a GPU fit no better than a constant labels nothing
    assert "Its steps stayed between " in said and " while their arithmetic grew " in said


def test_the_transformer_page_leads_with_throughput_only_where_time_grew_less_than_tokens(monkeypatch):
    """transformer_lead: 64× the tokens in 16× the time is a 4.0× throughput gain; 64× in 64× is no claimed change."""
    from build_hooks.views import transformer

    machine = Machine(synthetic_doc(), "f", "t")

    def point(batch, t):
        return {"params": {"batch": batch}, "extra_info": {"tokens": 64 * batch},
                "stats": {"median": t, "q1": t * 0.99, "q3": t * 1.01}}
    monkeypatch.setattr(transformer, "curves", lambda m, device: {
        (128, 64): [point(1, 1e-3), point(64, 16e-3)], (256, 64): [point(1, 1e-3), point(64, 64e-3)]})
    monkeypatch.setattr(transformer, "first_with", lambda data, group: machine)
    monkeypatch.setattr(transformer, "unmeasured", lambda data, group: False)
    assert page.render_fact("transformer_lead", Dataset([machine])) == (
        "On the build host, going from batch 1 to 64 raised throughput 4.0× at d_model 128. At d_model 256 throughput did "
        "not change beyond the spread, from batch 1 to 64")


def test_accumulation_gpu_says_the_gpus_own_slowdown_or_that_none_was_measured():
    """The GPU's accumulation sentence divides its own finest split by its own whole batch; with no GPU it says so."""
    def split(device: str, whole: float, finest: float) -> list:
        return [({"device": device, "width": 2048, "effective_batch": 256, "micro_batch": size}, t,
                 {"micro_batches": 256 // size, "activation_bytes": 10 * size}) for size, t in ((256, whole), (16, finest))]
    doc = add_points(synthetic_doc(gpu="Fixture GPU"), "grad_accumulation",
                     split("cpu", 2e-3, 4e-3) + split("cuda", 1e-3, 8e-3))
    said = untrusted.restore(page.render_fact("accumulation_gpu", Dataset([Machine(doc, "f", "t")])))
    assert "Fixture GPU" in said and "8.0× slower" in said and "fixed costs again" in said
    cpu_only = add_points(synthetic_doc(), "grad_accumulation", split("cpu", 2e-3, 4e-3))
    assert page.render_fact("accumulation_gpu", Dataset([Machine(cpu_only, "f", "t")])).startswith("No GPU measured")


@pytest.mark.parametrize("memory_factor, physical", [(1.2, True), (0.0, False), (0.2, False)])
def test_a_gpu_fit_that_moves_bytes_for_free_or_faster_than_a_copy_is_called_a_fit(monkeypatch, memory_factor,
                                                                                      physical):
    """cost_model_gpu_parameters reads a GPU's fitted factors in words; where its bytes cost nothing or move faster
    than a plain copy (m of 0, or well under 1), it says the numbers describe the fit, not the GPU."""
    from types import SimpleNamespace

    from build_hooks import cost_model
    from conftest import complete_doc

    fitted = SimpleNamespace(compute_factor=4.0, memory_factor=memory_factor, params=SimpleNamespace(op_seconds=2e-5))
    monkeypatch.setattr(cost_model, "fit", lambda machine, device: fitted if device != "cpu" else None)
    gpu = Machine(complete_doc(gpu="Fixture GPU", machine_id="gpu-box"), "g", "t")
    said = page.render_fact("cost_model_gpu_parameters", Dataset([gpu]))
    assert "20.0 µs per operation" in said and "0.25× the square rate" in said
    assert ("describe the fit, not the GPU" not in said) == physical


def test_the_gallery_names_a_machine_that_began_most_of_its_rounds_slow(monkeypatch):
    """A machine whose rounds mostly began slow is named in the sentence above the gallery and flagged in its cell;
    one that rarely did is not."""
    from build_hooks import gate
    from conftest import complete_doc

    slow, quick = complete_doc(machine_id="slow-box"), complete_doc(machine_id="quick-box")
    share = {"slow-box": 0.61, "quick-box": 0.05}
    monkeypatch.setattr(gate, "slow_start_share", lambda doc, groups=None: share[doc["machine_id"]])
    data = Dataset([Machine(slow, "s", "t"), Machine(quick, "q", "t")])
    said = str(page.render_section("gallery", data))
    assert "61%: most rounds" in said and "5%: most" not in said
    takeaway = untrusted.restore(page.render_fact("gallery_takeaway", data))
    assert takeaway.count("Most rounds began slow on") == 1 and takeaway.endswith(
        "so its numbers may sit below what the hardware can do")
    monkeypatch.setattr(gate, "slow_start_share", lambda doc, groups=None: 0.05)
    assert "began slow" not in page.render_fact("gallery_takeaway", data)


def test_a_machine_that_began_most_rounds_slow_is_marked_wherever_its_numbers_are_read(monkeypatch):
    """A mostly slow machine says so in its provenance line, in the cheat sheet's column heads (with the key) and in
    the FAQ's break-even sentence; the same machine on a steady run carries none of it."""
    from build_hooks import gate, render
    from conftest import complete_doc

    gpu = Machine(complete_doc(gpu="Fixture GPU", machine_id="gpu-box"), "g", "committed reference")
    data = Dataset([Machine(complete_doc(), "h", "this build host"), gpu])

    def shown(share):
        monkeypatch.setattr(gate, "slow_start_share", lambda doc, groups=None: share if doc["machine_id"] == "gpu-box" else 0.0)
        return (str(render.provenance(gpu)), str(page.render_section("key_numbers", data)),
                untrusted.restore(page.render_fact("break_even_answer", data)))
    provenance, sheet, fitted = shown(0.61)
    assert "It began 61% of its measurements running slow, so its times may be pessimistic." in provenance
    assert "time box cut" not in provenance  # the fixture's runs finished their rounds
    cut = [meta["conditions"] for meta in gpu.doc["experiments"].values() if meta.get("conditions")]
    for conditions in cut[: len(cut) // 2 + 1]:  # most runs cut short: said beside the slow starts
        conditions.update(rounds=2, planned_rounds=3)
    assert (f"Its time box cut {len(cut) // 2 + 1} of {len(cut)} experiments short (About the data)."
            in str(render.provenance(gpu)))
    assert sheet.count('<sup title="began most rounds slow">°</sup>') == 2 and "Slow machine (°)" in sheet
    assert "That machine often began its rounds slow, so its times may run high" in fitted
    for text in shown(0.2):
        assert "rounds slow" not in text and "running slow" not in text and "°" not in text


def test_a_loader_gain_beyond_one_core_per_process_is_flagged_as_superlinear(monkeypatch):
    """Workers that beat the main process alone by more than one core per process (N workers + 1, and no more than the
    machine's threads) get a note saying the lone process was held back, and stay off the plot; a gain within that
    gets neither."""
    from build_hooks import plots
    drawn = []
    draw = plots.line_panels
    monkeypatch.setattr(plots, "line_panels", lambda panels, **kw: drawn.append(panels[0]["series"][0].x)
                        or draw(panels, **kw))

    def table(gain: float, threads: int = 8) -> str:
        doc = synthetic_doc()
        doc["machine_info"]["cpu"]["threads_used"] = threads
        add_points(doc, "data_loader", [({"workers": 0, "pin_memory": False}, 1e-3, {}),
                                        ({"workers": 4, "pin_memory": False}, 1e-3 / gain, {})])
        return str(page.render_section("data_loader", Dataset([Machine(doc, "f", "t")])))

    assert "Superlinear: 4 workers delivered 8× the main process alone" in table(8.0)
    assert list(drawn.pop()) == [0] and "The plot leaves out every such point" in table(8.0)
    assert "Superlinear" not in table(4.5)
    assert list(drawn[-1]) == [0, 4]
    # On 2 threads, 5 processes share 2 cores: 4.5× is beyond what they can give.
    assert "5 processes on 2 threads can give at most 2×" in table(4.5, threads=2)


def test_a_superlinear_loader_note_blames_the_old_timing_in_a_file_that_timed_from_the_first_batch():
    """Before bench_version 3 the loader's clock started after the first batch, which flatters many workers: the note
    says so for such a file, and blames the lone main process only for a file that timed a whole warm pass."""
    from build_hooks.views import data_loader as views

    def note(version: int) -> str:
        doc = synthetic_doc()
        add_points(doc, "data_loader", [({"workers": 0, "pin_memory": False}, 1e-3, {}),
                                        ({"workers": 4, "pin_memory": False}, 1e-3 / 8, {})])
        doc["experiments"]["data_loader"]["bench_version"] = version
        return str(page.render_section("data_loader", Dataset([Machine(doc, "f", "t")])))

    from build_hooks import experiments
    assert experiments.declared("data_loader")["BENCH_VERSION"] >= views.TIMED_WHOLE_PASS  # the snippet times so
    assert "timing began after the first batch" in note(views.TIMED_WHOLE_PASS - 1)
    assert "something else slowed the main process alone" in note(views.TIMED_WHOLE_PASS)


def test_mixed_precision_opens_with_a_table_of_the_gpus_bf16_against_fp32_and_its_rounds():
    """precision_gpu_answer: the measured GPU's product and step, each with both times, a verdict with its interval
    and its rounds; without a GPU anywhere in the data, a line that none was timed."""
    from conftest import complete_doc

    host = Machine(complete_doc(), "h", "this build host")
    gpu = Machine(complete_doc(gpu="Fixture GPU", machine_id="gpu-box"), "g", "committed reference")
    said = str(page.render_section("precision_gpu_answer", Dataset([host, gpu])))
    assert "measured on the Fixture GPU" in said and said.count("<tr>") == 3  # a head, the product and the step
    assert "matrix product" in said and "training step" in said
    assert "This build has no 16-bit timing from a GPU" in str(page.render_section("precision_gpu_answer",
                                                                                    Dataset([host])))


def test_mixed_precisions_first_line_gives_the_tables_verdicts_in_one_sentence(monkeypatch):
    """precision_gpu_takeaway says each operation's verdict as the table under it does, joined by "but" where they go
    opposite ways, with the interval of one that barely clears; without a GPU it says the measured results are the
    CPUs'."""
    import re

    from build_hooks import stats
    from conftest import complete_doc

    host = Machine(complete_doc(), "h", "this build host")
    gpu = Machine(complete_doc(gpu="Fixture GPU", machine_id="gpu-box"), "g", "committed reference")
    data = Dataset([host, gpu])
    table = str(page.render_section("precision_gpu_answer", data))
    verdicts = re.findall(r"<td[^>]*>([\d.,]+× (?:faster|slower))", table)
    said = untrusted.restore(page.render_fact("precision_gpu_takeaway", data))
    assert verdicts and all(v in said for v in verdicts), (verdicts, said)
    assert said.startswith("Measured on the ") and said.endswith(" than fp32")
    ratios = iter([stats.Ratio(2.0, 1.8, 2.2, paired=False), stats.Ratio(0.5, 0.45, 0.55, paired=False)])
    monkeypatch.setattr(stats, "paired_ratio", lambda a, b: next(ratios))
    assert "2.0× faster, but a training step 2.0× slower" in page.render_fact("precision_gpu_takeaway", data)
    # A verdict whose interval barely clears the meaningful ratio gives its interval too.
    ratios = iter([stats.Ratio(2.0, 1.8, 2.2, paired=False), stats.Ratio(1 / 1.2, 1 / 1.4, 1 / 1.04, paired=False)])
    said = page.render_fact("precision_gpu_takeaway", data)
    assert "2.0× faster, but a training step 1.2× slower (1.04× to 1.4× between the quartiles) than" in said
    assert "measured results below are CPUs'" in page.render_fact("precision_gpu_takeaway", Dataset([host]))


def test_the_gpu_step_floor_is_a_range_and_is_called_flat_only_within_a_factor_of_two():
    """gpu_step_floor gives the measured GPU's fastest and slowest step over every batch and width; it says the
    arithmetic never outgrew the fixed cost only when the two are within FLAT; without a GPU it says so."""
    from build_hooks.views.training_step import FLAT

    def said(slowest: float) -> str:
        times = {("cpu", 32, b): 1e-4 * b for b in (1, 64)} | {("cuda", 32, 1): 1e-3, ("cuda", 32, 64): slowest}
        data = Dataset([Machine(synthetic_doc(gpu="G", step_times=times), "f", "t")])
        return untrusted.restore(page.render_fact("gpu_step_floor", data)).replace("<bdi>", "").replace("</bdi>", "")

    flat, steep = said(FLAT * 1e-3), said(3 * FLAT * 1e-3)
    assert "From batch 1 to 64, at every width, the G's step stayed between 1.00 ms and 2.00 ms" in flat
    assert flat.endswith("never outgrew its fixed cost per step") and "never outgrew" not in steep
    assert steep.endswith("6× apart, so at its largest sizes the arithmetic shows")
    assert page.render_fact("gpu_step_floor", Dataset([Machine(synthetic_doc(), "f", "t")])).startswith("No GPU")


def test_the_memory_extrapolation_adds_a_gpus_allocator_peak_where_one_was_recorded():
    """memory_limits_table extrapolates saved activations alone and, where a GPU recorded its allocator's peak, that
    peak too: a line through each, batch = (memory − fixed) ÷ bytes per sample."""
    def machine(peaks: bool) -> Machine:
        doc = synthetic_doc(gpu="G" if peaks else None)
        points = [({"batch": b}, 1e6 * b, {"unit": "B", "weight_bytes": 1e5}) for b in (1, 2, 4)]
        if peaks:
            points += [({"device": "cuda", "batch": b}, 1e6 * b, {"unit": "B", "weight_bytes": 1e5,
                                                                   "peak_allocated_bytes": 2e6 + 2e6 * b})
                       for b in (1, 2, 4)]
        return Machine(add_points(doc, "activation_memory", points), "f", "t")

    both = bare_cells(page.render_section("memory_limits_table", Dataset([machine(True)])))
    assert "<td>8 GB</td><td>about 8,000</td><td>about 4,000</td>" in both and "allocator peak" in both
    alone = bare_cells(page.render_section("memory_limits_table", Dataset([machine(False)])))
    assert "<td>8 GB</td><td>about 8,000</td></tr>" in alone and "allocator" not in alone


def test_the_sync_table_reads_a_gpu_machine_beside_a_host_without_one_and_says_when_there_is_none():
    """sync_answer adds the first GPU machine's rows where the host has no GPU, and otherwise says the wait was not
    measured: never a GPU claim without a GPU point."""
    from conftest import complete_doc

    host = Machine(complete_doc(), "h", "this build host")
    gpu = Machine(complete_doc(gpu="Fixture GPU", machine_id="gpu-box"), "g", "committed reference")
    alone = str(page.render_section("sync_answer", Dataset([host])))
    both = untrusted.restore(str(page.render_section("sync_answer", Dataset([host, gpu]))))
    assert "No measurement here ran on a GPU" in alone and "the build host&#x27;s CPU" in alone
    assert "Fixture GPU</td>" in both and "No measurement here ran on a GPU" not in both


def test_a_step_plot_whose_every_point_has_too_few_samples_says_so_once_and_rings_only_other_caveats():
    """every_point_few holds only when every training step of a machine rests on fewer than MIN_SAMPLES samples;
    the section's caption then says so once instead of a ring on every point."""
    from build_hooks import stats
    from build_hooks.views.training_step import every_point_few

    doc = synthetic_doc()
    machine = Machine(doc, "f", "t")
    assert every_point_few(machine)  # the fixture's points carry two samples each
    for bench in doc["benchmarks"]:
        bench["stats"]["data"] = [bench["stats"]["median"]] * stats.MIN_SAMPLES
    assert not every_point_few(machine)


def test_home_says_where_the_gpu_numbers_come_from():
    """host_gpu_source: a build host without a GPU points to the measured GPU machine, or to the estimate when none
    was measured; one with a GPU names it."""
    cpu_only = Machine(synthetic_doc(), "h", "this build host")
    steps = {(d, 32, b): 1e-4 for d in ("cpu", "cuda") for b in (1, 8)}
    gpu_box = Machine(synthetic_doc("gpu-box", gpu="Fixture GPU", step_times=steps), "g", "committed reference")
    said = untrusted.restore(page.render_fact("host_gpu_source", Dataset([cpu_only, gpu_box])))
    assert said.startswith("It has no GPU, so the GPU numbers come from") and "Fixture GPU" in said
    assert "labelled estimate" in page.render_fact("host_gpu_source", Dataset([cpu_only]))
    assert "has its own GPU" in page.render_fact("host_gpu_source", Dataset([gpu_box]))


def test_the_workload_table_times_every_row_against_the_gpus_own_cpu_when_a_gpu_was_measured():
    """why-gpu's run table opens with the measured GPU machine's CPU and GPU, and its last column sets each row
    against that CPU's fp32 (the pair its first line compares), not against the build host."""
    def gemm(doc, device, flop_s):
        return add_points(doc, "gemm_rate", [({"device": device, "n": 512}, 2 * 512**3 / flop_s,
                                                {"flops": 2 * 512**3})])

    host = gemm(synthetic_doc(), "cpu", 1e11)
    box = gemm(gemm(synthetic_doc("gpu-box", gpu="Fixture GPU"), "cpu", 1e12), "cuda", 4e13)
    data = Dataset([Machine(host, "h", "this build host"), Machine(box, "g", "committed reference")])
    table = str(page.render_section("workload_table", data))
    rows = table.split("<tbody>")[1].split("</tr>")
    assert "against the GPU&#x27;s own CPU, fp32" in table
    assert "fp32 (measured" in rows[0] and rows[0].endswith("1×</td>")
    assert "Fixture GPU" in rows[1] and "40× shorter" in rows[1] and "10× longer" in rows[2]


def test_about_the_data_states_each_threshold_from_its_constant(monkeypatch):
    """The thresholds table reads every rule from the code: change a constant and its row changes with it."""
    from build_hooks import consistency, gate, stats

    data = Dataset([Machine(synthetic_doc(), "f", "t")])
    monkeypatch.setattr(stats, "MEANINGFUL_RATIO", 1.2)
    monkeypatch.setattr(gate, "SLOW_STATE_RATIO", 1.7)
    monkeypatch.setattr(consistency, "TOLERANCE", 1.6)
    cells = bare_cells(page.render_section("thresholds", data))
    for said in ("<td>1.2× and beyond the spread</td>", "<td>1.7× the run&#x27;s fastest canary</td>",
                 "<td>within 1.6× either way</td>", f"<td>fewer than {stats.MIN_SAMPLES}</td>"):
        assert said in cells, said


def test_the_workload_table_marks_a_noisy_rate_and_keys_it():
    """A row whose rate comes from a noisy point carries its mark, and the table's key explains it."""
    n, flops = 1024, 2 * 1024**3
    doc = add_points(synthetic_doc(), "gemm_rate", [({"n": 512}, 2 * 512**3 / 1e11, {"flops": 2 * 512**3})])
    add_points(doc, "precision", [({"op": "matmul", "dtype": "bf16"}, flops / 3e11, {"flops": flops, "n": n})])
    bf16 = next(b for b in doc["benchmarks"] if b["group"] == "precision")
    bf16["extra_info"]["noisy"] = True  # as the measurement flags a wide spread
    table = str(page.render_section("workload_table", Dataset([Machine(doc, "f", "t")])))
    row = table.split("bf16 (measured: one 1024×1024 product)")[1].split("</tr>")[0]
    assert "†" in row and "Noisy (†)" in table


def test_the_cheat_sheet_sets_a_measured_copy_beside_its_published_arithmetic():
    """transfer_measured_line gives the measured copy nearest the example's 256 MB, its time being that size over the
    measured rate, pinned and pageable; with no GPU measured it says so."""
    from pathlib import Path

    from build_hooks import analysis, dataset, untrusted

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    said = untrusted.restore(page.render_fact("transfer_measured_line", Dataset(committed)))
    gpu = next(m for m in committed if m.gpu is not None)
    pinned = analysis.transfer_bandwidth(gpu, "host_to_device", "pinned")
    size = min(pinned, key=lambda n: abs(n - 256e6))
    from build_hooks.render import si
    mib = f" ({size / 2**20:g} MiB)" if size & (size - 1) == 0 else ""
    assert f"{si(size, 'B')}{mib} took {si(size / pinned[size], 's')} from pinned memory" in said
    cpu_only = Dataset([m for m in committed if m.gpu is None])
    assert page.render_fact("transfer_measured_line", cpu_only) == "No copy to a GPU was measured for this build"


def test_the_cheat_sheets_crossover_table_gives_the_home_grids_epoch_crossover_beside_the_steps():
    """Each width's row has the step crossover and the home grid's (grid_leads): from the batch where the GPU leads
    at every larger batch, with a lone earlier lead in brackets, or never."""
    from build_hooks.views import training_step as views

    assert views._epoch_lead(512, ["64§"]) == "from batch 512 (also at 64§)"
    assert views._epoch_lead(64, []) == "from batch 64"
    assert views._epoch_lead(None, ["16"]) == "only at batch 16"
    assert views._epoch_lead(None, []) == "never"
    assert views._epoch_lead(None, [], [16]) == "never (batch 16 left out)"
    assert views._epoch_lead(512, ["64"], [16]) == "from batch 512 (also at 64; batch 16 left out)"
    from pathlib import Path

    from build_hooks import dataset, race
    from build_hooks.views.race import grid_leads

    root = Path(__file__).resolve().parent.parent
    data = Dataset(dataset.load_committed(root / "results", root))
    html = str(page.render_section("crossover_table", data))
    assert "GPU epoch first (home grid)" in html
    doubted = views._out_of_line_leads(data, next(m for m in data.machines if m.gpu is not None))
    for width, (first, lone) in grid_leads(data, lambda p: not p["estimate"]).items():
        row = html.split(f"<td>{width}</td>")[1].split("</tr>")[0]
        assert views._epoch_lead(first, lone, doubted.get(width, [])) in row
    assert race.verdicts(race.race_data(data))  # the committed data has a grid to read
    # One key for a lead left out in either column, under the table only where a cell leaves one out.
    assert (" left out" in html) == (views.LEFT_OUT_WORDS in html.replace("&#x27;", "'"))


def test_an_intensity_within_the_meaningful_ratio_of_a_ridge_is_called_at_the_ridge():
    """intensity's _regime names a side only beyond 1.1× of the ridge: 14.2 against 14 is at the ridge, 16 is
    compute-bound, 12 memory-bound."""
    from build_hooks.views import intensity

    assert intensity._regime(14.2, 14) == intensity.AT_RIDGE == intensity._regime(13.0, 14)
    assert intensity._regime(16, 14) == "compute-bound" and intensity._regime(12, 14) == "memory-bound"


@pytest.mark.parametrize("share, rounds, said", [
    (0.61, 2, ". Both rest on 2 rounds each, on a machine that began most rounds slow"),
    (0.0, 2, ". Both rest on 2 rounds each"),
    (0.61, 5, ". Both come from a machine that began most rounds slow"),
    (0.0, 5, "than fp32")])
def test_mixed_precisions_first_line_says_when_its_gpu_verdicts_rest_on_few_rounds_or_a_slow_machine(
        monkeypatch, share, rounds, said):
    """precision_gpu_takeaway ends with the weakness of its verdicts: fewer than 3 rounds, a mostly slow machine,
    both, or nothing."""
    from pathlib import Path

    from build_hooks import dataset, gate
    from build_hooks.views import precision

    root = Path(__file__).resolve().parent.parent
    data = Dataset(dataset.load_committed(root / "results", root))
    monkeypatch.setattr(gate, "slow_start_share", lambda doc, groups=None: share)
    real = precision._gpu_ratios

    def with_rounds(machine, device):
        found = real(machine, device)
        return [(op, ratio, {dt: {**s, "round_medians": [s["median"]] * rounds} for dt, s in took.items()})
                for op, ratio, took in found]
    monkeypatch.setattr(precision, "_gpu_ratios", with_rounds)
    assert page.render_fact("precision_gpu_takeaway", data).endswith(said)


def test_the_gallery_says_when_a_file_recorded_no_instruction_set():
    """A machine whose file lacks the CPU's instruction set is said to lack it, not shown as another CPU."""
    from conftest import complete_doc

    recorded_doc = complete_doc()
    recorded_doc["machine_info"]["cpu"]["isa"] = ["avx2", "fma"]
    bare_doc = complete_doc(machine_id="no-isa")  # the fixture records none
    machines = [Machine(recorded_doc, "h", "this build host"), Machine(bare_doc, "b", "committed reference")]
    html = str(page.render_section("gallery", Dataset(machines)))
    assert html.count("instruction set not recorded") == 1


def test_all_measurements_gives_each_points_sample_count_and_no_spread_from_too_few():
    """experiment_table has a samples (rounds) column, and a dash for the IQR of a point with fewer samples than
    stats.MIN_SAMPLES."""
    from build_hooks import stats
    from build_hooks.views import reference
    from conftest import complete_doc

    machine = Machine(complete_doc(), "h", "this build host")
    bench = next(b for b in machine.doc["benchmarks"] if b["group"] == "training_step")
    bench["stats"]["data"] = [1e-4] * (stats.MIN_SAMPLES - 1)
    bench["stats"]["round_medians"] = [1e-4, 1e-4]
    html = bare_cells(reference.experiment_table(machine, "training_step"))
    assert "samples (rounds)" in html and f"<td>{stats.MIN_SAMPLES - 1} (2)</td><td>—</td>" in html
    assert reference._samples({"data": [1, 2, 3]}) == "3" and reference._samples(None) == ""


def test_the_gpu_floor_says_when_its_steps_ran_longer_than_their_share_of_an_epoch(monkeypatch):
    """gpu_step_floor adds the epoch-share sentence only where most of the GPU's steps alone took clearly longer than
    their share of an epoch, counting them as consistency's epoch check does, and the CPU's opposite lean beside it."""
    from pathlib import Path

    from build_hooks import consistency, dataset, stats
    from build_hooks.views import training_step as views

    root = Path(__file__).resolve().parent.parent
    data = Dataset(dataset.load_committed(root / "results", root))
    machine = next(m for m in data.machines if m.gpu is not None)
    epochs = [c for c in consistency.checks(machine, "cuda") if c.kind == "epoch"]
    longer = sum(c.ratio >= stats.MEANINGFUL_RATIO for c in epochs)
    said = page.render_fact("gpu_step_floor", data)
    assert (f"at {longer} of {len(epochs)} settings" in said) == (2 * longer > len(epochs))
    monkeypatch.setattr(consistency, "checks", lambda machine, device: [
        consistency.Check("epoch", device, 1, 8, 1.0), consistency.Check("epoch", device, 2, 8, 1.5)])
    assert views._epoch_share_words(machine, "cuda") == ""  # one of two is not most
    # The CPU's opposite lean is said beside the GPU's, where it shows; a CPU that went both ways is said so.
    monkeypatch.setattr(consistency, "checks", lambda machine, device: [
        consistency.Check("epoch", device, 1, 8, 1.5 if device == "cuda" else 0.5),
        consistency.Check("epoch", device, 2, 8, 1.5 if device == "cuda" else 1.0)])
    said = views._epoch_share_words(machine, "cuda")
    assert "at 2 of 2 settings" in said and "its step took at least 1.1× as long as alone, at 1 of 2 settings" in said
    assert "the steps' crossing at a larger batch than the truth. The CPU's leaned the other way" in said and said.endswith(
        "That pushes the same way")
    monkeypatch.setattr(consistency, "checks", lambda machine, device: [
        consistency.Check("epoch", device, 1, 8, 1.5 if device == "cuda" else 0.5),
        consistency.Check("epoch", device, 2, 8, 1.5)])
    said = views._epoch_share_words(machine, "cuda")
    assert said.endswith("The CPU's went both ways: longer inside an epoch at 1 of 2 settings, longer alone at 1")


def test_why_gpu_gives_the_gpu_machines_share_of_each_peak():
    """gpu_machine_peak_shares divides each device's fastest matrix product by its peak (the CPU's computed one, the
    GPU's datasheet FP32); without a GPU it says only the build host is compared."""
    from pathlib import Path

    from build_hooks import analysis, dataset, datasheets

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    machine = next(m for m in committed if m.gpu is not None)
    said = page.render_fact("gpu_machine_peak_shares", Dataset(committed))
    cpu = analysis.best_matmul_rate(machine) / machine.cpu["fp32_peak_flops"]
    gpu = analysis.best_matmul_rate(machine, "cuda") / datasheets.for_gpu(machine.gpu["name"]).fp32_flops
    assert f"the CPU reached {100 * cpu:.0f}% of its computed peak" in said and f"Its GPU reached {100 * gpu:.0f}% of" in said
    cpu_only = Dataset([m for m in committed if m.gpu is None])
    assert "only the build host's peak is compared" in page.render_fact("gpu_machine_peak_shares", cpu_only)


def test_mixed_precision_says_how_much_of_the_gpu_step_its_arithmetic_explains():
    """step_flops counts forward and weight gradients for every layer and input gradients for all but the first;
    precision_step_arithmetic divides them by the GPU's fastest fp32 product and the step's median."""
    from pathlib import Path

    from build_hooks import analysis, dataset
    from build_hooks.views import precision
    from snippets.precision import STEP

    b, w, i, c = 2, 8, STEP["inputs"], STEP["classes"]
    assert precision.step_flops(b, w) == 2 * (2 * b * i * w + 2 * b * w * w + 2 * b * w * c) + 2 * b * w * w + 2 * b * w * c
    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    machine = next(m for m in committed if m.gpu is not None)
    point = machine.measured("precision", device="cuda", op="train_step", dtype="fp32")[0]
    flops = precision.step_flops(point["extra_info"]["batch"], point["extra_info"]["width"])
    share = flops / analysis.best_matmul_rate(machine, "cuda") / point["stats"]["median"]
    said = page.render_fact("precision_step_arithmetic", Dataset(committed))
    assert f"takes at least {100 * share:.0f}% of the step" in said  # the fastest rate: a lower bound
    assert "not known" in page.render_fact("precision_step_arithmetic", Dataset([m for m in committed if not m.gpu]))


def test_the_conditions_table_shows_rounds_cut_by_a_time_box():
    """measurement_conditions gives rounds "2 of 3" and the time box where a run stopped short, and says above the
    table how many experiments did; a run that finished its rounds shows the plain count."""
    from conftest import complete_doc

    doc = complete_doc()
    with_conditions = [meta for meta in doc["experiments"].values() if meta.get("conditions")]
    assert with_conditions  # the fixture records its conditions
    with_conditions[0]["conditions"].update(rounds=2, planned_rounds=3, time_box_s=12.0)
    html = bare_cells(page.render_section("measurement_conditions", Dataset([Machine(doc, "h", "this build host")])))
    assert "<td>2 of 3</td><td>12 s</td>" in html
    assert f"The time box ran out: 1 of its {len(with_conditions)} experiments ran fewer rounds than planned." in html
    machines = Dataset([Machine(doc, "h", "this build host")])
    assert "ran fewer rounds" not in str(page.render_section("consistency_checks", machines))  # said once, here


def test_transfer_sets_the_measured_bus_against_the_measured_memories():
    """bus_against_memory gives the pinned bus rate at the largest copy, then the GPU's and the CPU's memory, each
    counted one way (bytes read plus written, as the datasheets and the cost model count) and set against the bus;
    with no GPU it says none was measured."""
    from pathlib import Path

    from build_hooks import analysis, cost_model, dataset
    from build_hooks.render import multiple, si

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    machine = next(m for m in committed if m.gpu is not None)
    pinned = analysis.transfer_bandwidth(machine, "host_to_device", "pinned")
    bus, gpu = pinned[max(pinned)], cost_model.measured_params(machine, "cuda").bandwidth
    cpu = cost_model.measured_params(machine, "cpu").bandwidth
    said = untrusted.restore(page.render_fact("bus_against_memory", Dataset(committed)))
    assert said.startswith(f"Measured on <bdi>{machine.label}</bdi>, the bus delivered {si(bus, 'B/s')}. A copy inside the "
                           f"GPU's memory moved {si(gpu, 'B/s')}, {multiple(gpu / bus)} the bus")
    assert f"One inside the CPU's memory moved {si(cpu, 'B/s')}" in said
    assert si(gpu / 2, "B/s") not in said  # one convention: no half-rate twin
    assert ("less than the bus" in said) == (cpu * 1.1 <= bus)
    assert said.endswith("Memory rates count bytes read plus written, as datasheets do")
    assert page.render_fact("bus_against_memory", Dataset([m for m in committed if not m.gpu])).startswith("No machine")


def test_cpu_choice_opens_with_where_the_gpu_stayed_ahead_of_no_cpu_and_where_it_pulled_ahead(monkeypatch):
    """cpu_choice_answer names the widths where the GPU lane is ahead of no CPU lane, then each other width's range of
    crossover batches over the CPUs, from the same rule as the table."""
    from build_hooks.views import cpu_choice

    def lane(kind, machine, times):
        return {"kind": kind, "machine_id": machine, "estimate": False, "label": f"Fixture {kind} {machine}",
                "epochs": {w: {str(b): {"seconds": t, "q1": t, "q3": t} for b, t in by_batch.items()}
                           for w, by_batch in times.items()}}
    gpu = lane("GPU", "box", {"8": {1: 9.0, 64: 5.0}, "512": {1: 9.0, 64: 1.0}})
    cpus = [lane("CPU", "box", {"8": {1: 1.0, 64: 0.5}, "512": {1: 5.0, 64: 4.0}}),
            lane("CPU", "other", {"8": {1: 1.0, 64: 0.5}, "512": {1: 10.0, 64: 8.0}})]
    monkeypatch.setattr(cpu_choice, "_lanes", lambda data: (gpu, cpus))
    said = untrusted.restore(page.render_fact("cpu_choice_answer", Dataset([]))).replace("<bdi>", "").replace(
        "</bdi>", "")
    assert said.startswith("Measured here in whole epochs, ")  # the gallery's crossovers are per step
    assert said.endswith("with a hidden layer of width 8, the Fixture GPU box never stayed ahead of any of the "
                         "2 CPUs, up to batch 64. With a wider layer, it pulled ahead from a batch that depends on the "
                         "CPU. That batch is between 1 and 64 at width 512")
    # The CPUs' thread counts beside their count, where their files are in the data.
    box, other = synthetic_doc(machine_id="box"), synthetic_doc(machine_id="other")
    other["machine_info"]["cpu"]["threads_used"] = 16
    with_files = Dataset([Machine(box, "b", "t"), Machine(other, "o", "t")])
    assert "of any of the 2 CPUs (4 to 16 threads), up to" in page.render_fact("cpu_choice_answer", with_files)
    for epochs in gpu["epochs"].values():  # every GPU epoch on too few runs: the answer says to read the scale
        for point in epochs.values():
            point["caveats"] = ["few"]
    said = untrusted.restore(page.render_fact("cpu_choice_answer", Dataset([])))
    assert said.endswith("between 1 and 64 at width 512. Each GPU epoch rests on too few timed runs, so read these "
                         "batches as rough")


def test_cpu_choice_says_where_a_gpu_served_a_request_faster_than_its_own_cpu():
    """inference_gpu_lead compares each width's CPU and GPU request beyond both spreads, per batch: a GPU lead is
    named; a CPU lead at every width is said with its span of ratios; else "as fast or faster". Without a GPU it
    says only CPUs are compared."""
    from pathlib import Path

    from build_hooks import dataset, stats
    from build_hooks.wording import multiple

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    machine = next(m for m in committed if m.gpu is not None)
    said = page.render_fact("inference_gpu_lead", Dataset(committed))
    timed = {(b["params"]["device"], b["params"]["width"], b["params"]["batch"]): b["stats"]
             for b in machine.measured("inference_latency")}
    for batch in sorted({b for d, _, b in timed if d == "cpu"}):
        widths = [w for d, w, b in timed if d == "cpu" and b == batch and ("cuda", w, batch) in timed]
        clause = re.split(r"\. (?=[A-Z])", re.split(f"[Aa]t batch {batch} ", said)[1])[0]
        gpu_led = any(stats.compare_points(timed[("cpu", w, batch)], timed[("cuda", w, batch)]) > 0 for w in widths)
        cpu_ratios = sorted(timed[("cuda", w, batch)]["median"] / timed[("cpu", w, batch)]["median"] for w in widths
                            if stats.compare_points(timed[("cuda", w, batch)], timed[("cpu", w, batch)]) > 0)
        if gpu_led:
            assert clause.startswith("the GPU served faster"), clause
        elif len(cpu_ratios) == len(widths):
            assert clause.startswith("the CPU served faster at every width, by " + multiple(cpu_ratios[0])), clause
            assert clause.endswith(multiple(cpu_ratios[-1])), clause
        else:
            assert clause == "the CPU served as fast or faster at every width", clause
    assert "only CPUs" in page.render_fact("inference_gpu_lead", Dataset([m for m in committed if not m.gpu]))


def test_the_epoch_fall_skips_an_end_the_machine_changed_state_at(monkeypatch):
    """race_estimate_flat's fall starts at the first batch where neither lane is marked § or out of line with a
    neighbour when two such batches remain, so a changed-state or slowed epoch does not set the ratio."""
    from build_hooks import race

    def lane(kind, times):
        return {"kind": kind, "estimate": False, "machine_id": "m", "label": f"Fixture {kind}",
                "epochs": {"32": {b: {"seconds": t, "q1": t, "q3": t, "rows": 2048} for b, t in times.items()}}}
    lanes = [lane("GPU", {"1": 8.0, "2": 4.0, "512": 2.0}), lane("CPU", {"1": 7.0, "2": 3.5, "512": 1.0})]
    lanes[1]["epochs"]["32"]["1"]["caveats"] = ["unsettled"]
    monkeypatch.setattr(race, "race_data", lambda data: {"lanes": lanes, "widths": [32], "batches": [1, 2, 512]})
    said = page.render_fact("race_estimate_flat", Dataset([]))
    assert said.startswith("At width 32, between batch 2 and 512, ") and "fell 2.0× and its CPU's 3.5×" in said
    # A CPU epoch at batch 1 whose steps took longer than at batch 2 (9 s against 3 s for half the steps) is skipped.
    lanes[1] = lane("CPU", {"1": 9.0, "2": 3.0, "512": 1.0})
    said = page.render_fact("race_estimate_flat", Dataset([]))
    assert said.startswith("At width 32, between batch 2 and 512, ") and "fell 2.0× and its CPU's 3.0×" in said


def test_the_faq_gives_the_work_of_the_steps_where_the_gpu_crossed():
    """crossing_bracket brackets each width's crossing between the GPU step before its crossover batch and the step at
    it (the data places it no closer), and gives the span the brackets cover."""
    from pathlib import Path

    from build_hooks import analysis, dataset
    from build_hooks.views import cost_model as views

    root = Path(__file__).resolve().parent.parent
    machine = next(m for m in dataset.load_committed(root / "results", root) if m.gpu is not None)
    def flops(width, batch):
        return machine.measured("training_step", device="cuda", width=width, batch=batch)[0]["extra_info"]["flops"]
    crossings = [(w, b) for w in analysis.widths(machine) if (b := analysis.crossover_batch(machine, w))]
    assert len(crossings) == 2 and all(b > 1 for _, b in crossings)
    low, high = min(flops(w, b // 2) for w, b in crossings), max(flops(w, b) for w, b in crossings)
    assert views.crossing_bracket(machine) == (low, high, 2)


def test_the_cost_model_opens_with_its_error_on_unseen_steps_and_finds_where_gpu_copies_stop_being_fixed():
    """cost_model_takeaway quotes the calibrated check's median error on unseen steps and the raw model's; gpu_copy_fixed_cost gives the largest
    GPU copy within 1.5× of the smallest one's time, sized by the memory it occupies."""
    from pathlib import Path

    from build_hooks import cost_model, dataset
    from build_hooks.render import si
    from build_hooks.views import cost_model as views

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    host = next(m for m in committed if m.gpu is None)
    check = cost_model.validate(host, "cpu", calibrated=True)
    said = page.render_fact("cost_model_takeaway", Dataset([host]))
    raw = cost_model.validate(host, "cpu")
    assert said.startswith(f"A model fitted to the build host's steps predicted {len(check.points)} steps it never "
                           f"saw with a median error of {100 * check.median_error:.0f}%. Unfitted, it missed by "
                           f"{100 * raw.median_error:.0f}%")
    gpu = next(m for m in committed if m.gpu is not None)
    copies = sorted((b["params"]["bytes"], b["stats"]["median"]) for b in gpu.measured("memory_bandwidth",
                                                                                      device="cuda"))
    flat = [size for size, seconds in copies if seconds <= views.FLAT_COPY * copies[0][1]]
    assert f"up to {si(2 * flat[-1], 'B')} took" in page.render_fact("gpu_copy_fixed_cost", Dataset(committed))


def test_all_measurements_marks_a_step_another_experiment_contradicts():
    """experiment_table puts ≠ beside a training step consistency.disagreeing lists, and on no other."""
    from pathlib import Path

    from build_hooks import consistency, dataset
    from build_hooks.views import reference

    root = Path(__file__).resolve().parent.parent
    machine = next(m for m in dataset.load_committed(root / "results", root) if m.gpu is not None)
    expected = sum(len(consistency.disagreeing(machine, d)) for d in machine.devices("training_step"))
    html = str(reference.experiment_table(machine, "training_step"))
    assert expected and html.count(">≠</sup>") == expected


def test_more_machines_counts_only_machines_that_measured_points_of_the_experiment():
    """A machine whose file lists an experiment but holds no measured point of it (a CPU-only bus) is not sent to
    the gallery for it."""
    from types import SimpleNamespace

    from build_hooks.render import more_machines

    shown = SimpleNamespace(measured=lambda group: [1], gpu="G")
    empty, full = SimpleNamespace(measured=lambda group: [], gpu=None), SimpleNamespace(measured=lambda group: [1],
                                                                                         gpu=None)
    data = SimpleNamespace(shown=lambda group=None: [shown], with_experiment=lambda group: [shown, empty, full])
    assert 'gallery/">Measured on 1 more machine, CPU only.</a>' in str(more_machines(data, "transfer"))
    assert "Its numbers are in" in str(more_machines(data, "transfer"))  # the gallery lists machines only
    data.with_experiment = lambda group: [shown, empty]
    assert str(more_machines(data, "transfer")) == ""


def test_cpu_choice_says_once_when_every_gpu_lane_epoch_rests_on_too_few_samples():
    """_gpu_lane_doubts adds its note only when every epoch of a measured GPU lane is marked too few."""
    from build_hooks.views import cpu_choice

    few = {"kind": "GPU", "estimate": False, "epochs": {"8": {"1": {"caveats": ["few"]}, "2": {"caveats": ["few"]}}}}
    assert "fewer than" in str(cpu_choice._gpu_lane_doubts(few))
    few["epochs"]["8"]["2"]["caveats"] = []
    assert str(cpu_choice._gpu_lane_doubts(few)) == ""


def test_the_code_reference_leaves_brackets_that_only_name_code_out_of_its_summaries():
    """_reader_summary drops "(_doubts)" and "(race.matchup, analysis.crossover)" but keeps a bracket of words."""
    from build_hooks.views.code_reference import _reader_summary

    said = _reader_summary("The counts (_summary_parts), then the doubts (race.matchup, analysis.crossover).\n\n"
                           "Second paragraph.")
    assert said == "The counts, then the doubts."
    assert _reader_summary("A step (fused) stays.") == "A step (fused) stays."


def test_the_faq_tells_a_width_where_the_gpu_never_led_from_one_where_it_led_then_fell_back():
    """step_crossings: "never ahead" where no batch had the GPU's step shorter, "ahead only at batch 1" where one did
    and a larger batch took the lead back; the brief form says only that it never stayed ahead there."""
    from build_hooks.views import cost_model as views

    cpu = {b: 1e-3 * (1 + b / 8) for b in (1, 8, 64, 512)}
    gpu = {8: {1: 3.0, 8: 3.0, 64: 3.0, 512: 1 / 3}, 32: {1: 1 / 3, 8: 3.0, 64: 3.0, 512: 3.0},
           512: {1: 3.0, 8: 3.0, 64: 3.0, 512: 3.0}}
    times = {("cpu", w, b): t for w in gpu for b, t in cpu.items()} | \
            {("cuda", w, b): cpu[b] * gpu[w][b] for w in gpu for b in cpu}
    machine = Machine(synthetic_doc(gpu="Fixture GPU", step_times=times), "fixture", "this build host")
    assert views.step_crossings(machine) == ("from batch 512 at width 8. At width 512, it was never ahead, up to batch "
                                             "512. At width 32, it was ahead only at batch 1")
    # The FAQ's brief form: the crossings, then only that it stayed ahead nowhere else (a stray lead is not a stay).
    assert views.step_crossings(machine, brief=True) == ("from batch 512 at width 8. At the other widths, it never "
                                                         "stayed ahead, up to batch 512")


def test_the_gallery_names_the_fastest_cpu_by_its_own_name_and_gives_the_estimates_miss_as_a_ratio():
    """The committed GPU machine's CPU is the fastest: the takeaway names it as a CPU, not by the GPU-first label;
    the estimate column gives real ÷ estimate with its range, the key says the grid races epochs, the lead says one
    step, and a note names the experiments the fastest product reads."""
    from pathlib import Path

    from build_hooks import dataset, gpu_estimate

    root = Path(__file__).resolve().parent.parent
    data = Dataset(dataset.load_committed(root / "results", root))
    gpu = next(m for m in data.machines if m.gpu)
    said = untrusted.restore(page.render_fact("gallery_takeaway", data)).replace("<bdi>", "").replace("</bdi>", "")
    assert said.startswith("The fastest CPU matrix product here ran at ")
    assert f"on {gpu.device_label('cpu').removeprefix('CPU: ')} (the GPU machine's own CPU)" in said
    table = untrusted.restore(str(page.render_section("gallery", data)))
    check = gpu_estimate.check(gpu, data.machines[0])
    assert "real GPU step ÷ the GPU estimate" in table
    assert f"{check.median:.2g}× (median; {check.lowest:.2g}× to {check.highest:.2g}×)" in table
    assert "The home grid races whole epochs, so its crossover can differ." in table
    # The lead says one step, and the fastest figure says which experiments it reads.
    assert "one training step (not a whole epoch) beat its own CPU's clearly (by 1.1× and beyond the spread) only" in said
    assert "the best median of the square sweep and the shapes experiment" in table
    # Two tables a laptop shows whole: every machine's rates, then only the machines with a GPU, so a CPU-only
    # machine has no GPU cells to fill.
    every, gpus = (untrusted.restore(part) for part in table.split("Machines with a GPU", 1))
    gpus = gpus.split("Measured on")[0]  # the table, not the provenance lines under it
    assert all(m.label in every for m in data.machines)
    assert gpu.label in gpus and not any(m.label in gpus for m in data.machines if m.gpu is None)
    assert "none: it has no GPU" not in table and "No machine here has a GPU." in str(
        page.render_section("gallery", Dataset([m for m in data.machines if m.gpu is None])))


def test_the_code_page_indexes_every_pages_facts_and_sections_by_page():
    """code_by_page lists each page that names a fact or section, with a link to each name's row in the reference."""
    from build_hooks import code_view

    said = str(page.render_section("code_by_page", Dataset([])))
    assert '<a href="/cost-model/">Predicting a step: the cost model</a>' in said or "cost-model/" in said
    assert f'href="#{code_view.anchor("fact", "cost_model_takeaway")}"' in said
    assert f'href="#{code_view.anchor("section", "verdict_grid_home")}"' in said
    assert ">name</a>" not in said  # the page's quoted example marker names nothing


def test_cpu_choices_tables_mark_a_machine_that_began_most_rounds_slow_and_key_every_mark():
    """In the committed data the GPU machine began most rounds slow: its row in the request table and its lanes in the
    rule table carry °, each table keys °, and the request table keys the † its timings carry."""
    from pathlib import Path

    from build_hooks import dataset
    from build_hooks.render import mostly_slow

    root = Path(__file__).resolve().parent.parent
    data = Dataset(dataset.load_committed(root / "results", root))
    assert any(mostly_slow(m) for m in data.machines if m.gpu)
    for name in ("inference_versus_step", "cpu_choice_table"):
        said = str(page.render_section(name, data))
        assert ">°</sup>" in said and "Slow machine (°)" in said, name
    requests = str(page.render_section("inference_versus_step", data))
    assert (">†</sup>" in requests) == ("Noisy (†)" in requests)


def test_the_faqs_ddp_answer_names_the_machine_that_split_its_cores():
    """ddp_answer opens with the machine its two processes ran on: the build host with its thread count, else that
    machine's name (a FAQ reader assumes the GPU machine otherwise), each time with its caveats in words."""
    from pathlib import Path

    from build_hooks import dataset

    root = Path(__file__).resolve().parent.parent
    committed = Dataset(dataset.load_committed(root / "results", root)).machines  # as pages name them
    first = next(m for m in committed if m.benchmarks("data_parallel"))
    said = untrusted.restore(page.render_fact("ddp_answer", Dataset(committed))).replace("<bdi>", "").replace(
        "</bdi>", "")
    assert said.startswith(f"On {first.label}, ")
    # Each time carries its caveats in words, as the point has them (the FAQ has no key for marks).
    from build_hooks.render import caveat
    for setup in ("ddp", "one_process"):
        bench = first.measured("data_parallel", setup=setup)[0]
        assert f"{caveat(bench)} per step" in said if setup == "ddp" else said.endswith(caveat(bench))


def test_the_cheat_sheet_opens_with_where_the_measured_gpus_step_wins():
    """crossover_takeaway names each width's crossover batch, widest first, then the widths no batch wins; without a
    GPU it points to the estimate's table."""
    from build_hooks import analysis

    cpu = {b: 1e-3 * (1 + b / 8) for b in (1, 8, 64, 512)}
    gpu = {8: {1: 3.0, 8: 3.0, 64: 3.0, 512: 3.0}, 512: {1: 3.0, 8: 3.0, 64: 1 / 3, 512: 1 / 3}}
    times = {("cpu", w, b): t for w in gpu for b, t in cpu.items()} | \
            {("cuda", w, b): cpu[b] * gpu[w][b] for w in gpu for b in cpu}
    measured = Dataset([Machine(synthetic_doc(gpu="Fixture GPU", step_times=times), "f", "this build host")])
    assert analysis.crossover_batch(measured.machines[0], 512) == 64
    said = untrusted.restore(page.render_fact("crossover_takeaway", measured)).replace("<bdi>", "").replace(
        "</bdi>", "")
    assert ("step wins from batch 64 at width 512. At width 8, it never stays ahead, up to batch 512. On this pair, it pulled ahead "
            "once a step did somewhere between ") in said  # the rule in work per step, as home gives it
    cpu_only = data({k: t for k, t in times.items() if k[0] == "cpu"})
    assert page.render_fact("crossover_takeaway", cpu_only).startswith("No GPU was measured")


def test_why_gpu_states_the_bf16_ratio_format_for_format_and_the_peak_share_if_threads_are_hyper_threads():
    """The workload table adds the GPU's bf16 lead over its own CPU's bf16 (the last column is against fp32), and the
    peak sentence gives the share were the threads hyper-threads, saying the data cannot tell which; products of
    different sizes are said to differ."""
    from pathlib import Path

    from build_hooks import analysis, dataset
    from build_hooks.render import multiple
    from build_hooks.views import gemm_rate

    root = Path(__file__).resolve().parent.parent
    committed = Dataset(dataset.load_committed(root / "results", root))
    machine = next(m for m in committed.machines if m.gpu is not None)
    cpu = {fmt: rate for fmt, _, rate in gemm_rate._measured_rates(machine, "cpu")}
    gpu = {fmt: rate for fmt, _, rate in gemm_rate._measured_rates(machine, machine.gpu_device(gemm_rate.GROUP))}
    said = gemm_rate._bf16_like_for_like(machine)
    assert f"{multiple(gpu['bf16'] / cpu['bf16'])} shorter than its CPU's bf16" in said
    assert gemm_rate._bf16_like_for_like(None) == ""
    share = analysis.best_matmul_rate(machine) / machine.cpu["fp32_peak_flops"]
    peaks = page.render_fact("gpu_machine_peak_shares", committed)
    over = ", which would need a clock above the reported one" if share > 0.5 else ""
    assert f"the share is {200 * share:.0f}%{over}. This data cannot tell which" in peaks
    assert "differ in size" in said  # the committed products are 8192² on the GPU and 2048² on the CPU


def test_the_gpu_estimate_section_says_first_whether_this_build_needs_it_and_how_many_sizes_its_table_shows():
    """gpu_estimate_needed says a measured GPU makes the estimate matter only elsewhere, or that it stands in; the
    host-bound sentence says how many of its sizes the table shows, so 44 against 16 rows is not a contradiction."""
    from pathlib import Path

    from build_hooks import dataset

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    with_gpu = untrusted.restore(page.render_fact("gpu_estimate_needed", Dataset(committed)))
    assert with_gpu.startswith("This build's data holds a measured GPU, the ") and "only a fallback for builds without one" in with_gpu
    # The transformer no GPU ran still leans on the estimate: said, so "only" is not false.
    unrun = not any(m.gpu_device("transformer_block") for m in committed)
    assert ("no GPU ran it, so the estimate stands in there" in with_gpu) == unrun
    cpu_only = Dataset([m for m in committed if m.gpu is None])
    assert page.render_fact("gpu_estimate_needed", cpu_only) == (
        "This build measured no GPU, so the pages use this estimate in its place")
    assert re.search(r"of the \d+ sizes it covers \(the table below shows \d+\), the estimate",
                     page.render_fact("gpu_estimate_host_bound", cpu_only))


def test_a_cpu_choice_crossing_keeps_the_changed_state_mark_of_its_epochs():
    """_crossover_words marks the crossing batch with § where either lane's epoch there was timed in a changed state,
    and not where neither was."""
    from build_hooks.views import cpu_choice

    def lane(times, changed=()):
        return {"epochs": {"8": {str(b): {"seconds": t, "q1": t, "q3": t, "caveats": ["unsettled"] if b in changed
                                          else []} for b, t in times.items()}}}
    cpu = lane({1: 1.0, 4: 4.0, 16: 16.0}, changed={4})
    gpu = lane({1: 2.0, 4: 1.0, 16: 1.0})
    assert cpu_choice._crossover_words(cpu, gpu, 8) == "from batch 4§"
    assert cpu_choice._crossover_words(lane({1: 1.0, 4: 4.0, 16: 16.0}), gpu, 8) == "from batch 4"


def test_why_gpu_sets_a_measured_gpus_memory_against_its_own_cpus_at_the_largest_shared_copy():
    """gpu_memory_gap quotes the largest copy both devices made and their ratio; without a GPU copy, none measured."""
    from pathlib import Path

    from build_hooks import analysis, dataset, stats, untrusted
    from build_hooks.render import si
    from build_hooks.wording import multiple

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    machine = next(m for m in committed if m.gpu is not None)
    gpu, cpu = analysis.copy_bandwidths(machine, "cuda"), analysis.copy_bandwidths(machine, "cpu")
    size = max(set(gpu) & set(cpu))
    said = untrusted.restore(page.render_fact("gpu_memory_gap", Dataset(committed))).replace("<bdi>", "").replace(
        "</bdi>", "")
    # The buffer is half the memory the copy occupies; the rate counts bytes read plus written, and says so.
    assert f"Copying a {si(size / 2, 'B')} buffer" in said and "(bytes read plus written)" in said
    assert f"{multiple(gpu[size] / cpu[size])} as much" in said
    assert ("(noisy)" in said) == stats.is_noisy(analysis.largest_copy(machine, "cpu")["stats"])
    assert si(gpu[size], "B/s") in said and si(cpu[size], "B/s") in said
    cpu_only = page.render_fact("gpu_memory_gap", Dataset([m for m in committed if m.gpu is None]))
    assert cpu_only.startswith("No GPU's memory was measured")


def test_home_says_the_gpu_step_stayed_flat_only_where_it_did():
    """home_gpu_flat gives the measured GPU step's range and that it wins only where the CPU's step outgrows it, when
    its slowest step is within FLAT of its fastest; it says nothing where the arithmetic shows or no GPU ran."""
    from build_hooks.views.training_step import FLAT

    def said(slowest: float) -> str:
        times = {("cpu", 512, b): 1e-4 * b for b in (1, 64)}
        times |= {("cuda", 512, 1): 1e-3, ("cuda", 512, 64): slowest}
        doc = synthetic_doc(step_times=times, gpu="Fixture GPU")
        return untrusted.restore(page.render_fact("home_gpu_flat", Dataset([Machine(doc, "f", "t")])))

    flat = said(1.5e-3)
    assert "training step, timed alone, stayed between 1.00 ms and 1.50 ms at every size" in flat
    assert "It wins only where the CPU's step grows longer than that." in flat
    assert said(FLAT * 1.2e-3) == ""
    assert page.render_fact("home_gpu_flat", Dataset([Machine(synthetic_doc(), "f", "t")])) == ""


def test_the_estimates_lowered_edge_names_the_machine_that_lowered_it():
    """gpu_estimate_model says which machine's faster cost per operation lowered the band's edge, with both costs,
    so a reader can check the ratio."""
    from pathlib import Path

    from build_hooks import dataset, gpu_estimate
    from build_hooks.render import si

    root = Path(__file__).resolve().parent.parent
    committed = Dataset(dataset.load_committed(root / "results", root)).machines  # as pages name them
    host = max(committed, key=lambda m: gpu_estimate.host_op_seconds(m) or 0)  # the slowest issuer feeds the model
    fastest = min((m for m in committed if gpu_estimate.host_op_seconds(m)), key=gpu_estimate.host_op_seconds)
    data = Dataset([host] + [m for m in committed if m is not host])
    said = untrusted.restore(page.render_fact("gpu_estimate_model", data))
    assert f"not the model's default {gpu_estimate.FASTER:g}×" in said
    assert fastest.label in said and si(gpu_estimate.host_op_seconds(fastest), "s") in said
    assert f"against the build host's {si(gpu_estimate.host_op_seconds(host), 's')}" in said


def test_about_the_data_opens_with_how_much_to_lean_on_each_machine(monkeypatch):
    """machine_trust gives each machine's share of rounds begun slow, the experiments its time box cut short and its
    largest canary drift, from its recorded conditions; a file that recorded none says so."""
    from build_hooks import gate
    from conftest import complete_doc

    doc, bare = complete_doc(machine_id="a"), complete_doc(machine_id="b")
    recorded = [meta["conditions"] for meta in doc["experiments"].values() if meta.get("conditions")]
    recorded[0].update(rounds=2, planned_rounds=3, canaries={"memory": [1.0, 3.0]})
    for meta in bare["experiments"].values():
        meta.pop("conditions", None)
    monkeypatch.setattr(gate, "slow_start_share", lambda d, groups=None: 0.61 if d is doc else None)
    html = bare_cells(page.render_section("machine_trust", Dataset([Machine(doc, "a", "t"), Machine(bare, "b", "t")])))
    assert f"<td>61%</td><td>1 of {len(recorded)}</td><td>200%</td>" in html
    assert "<td>not recorded</td><td>not recorded</td><td>not recorded</td>" in html


def test_batch_size_draws_its_crossing_at_the_widest_width_the_gpu_crossed(plots_left_out):
    """crossing_plot draws the CPU and the GPU step at the widest width where the GPU's step got shorter, says from
    which batch, and says no crossing is drawn where no GPU was measured."""
    times = {("cpu", w, b): 1e-4 * b * w / 32 for w in (32, 512) for b in (1, 8, 64)}
    times |= {("cuda", w, b): 2e-3 for w in (32, 512) for b in (1, 8, 64)}
    doc = synthetic_doc(step_times=times, gpu="Fixture GPU")
    html = str(page.render_section("crossing_plot", Dataset([Machine(doc, "f", "t")])))
    assert "at width 512, CPU and GPU" in html and "The GPU&#x27;s step is shorter from batch 8." in html
    assert "no measured crossing" in str(page.render_section("crossing_plot", Dataset([Machine(synthetic_doc(), "f",
                                                                                                   "t")])))


def test_scaling_gives_the_other_machines_ddp_price_as_a_span():
    """ddp_elsewhere sets two DDP processes against one process on every machine but the first, as a span, and says
    the price depends on the machine only where the span is wider than the meaningful ratio."""
    def machine(name, ddp):
        doc = synthetic_doc(machine_id=name, brand=name)
        add_points(doc, "data_parallel", [({"setup": "one_process", "processes": 1, "global_batch": 64}, 1e-3, {}),
                                          ({"setup": "ddp", "processes": 2, "global_batch": 64}, ddp, {}),
                                          ({"setup": "all_reduce", "processes": 2, "global_batch": 64}, 1e-4, {})])
        return Machine(doc, name, "t")
    first = machine("first", 2e-3)
    said = page.render_fact("ddp_elsewhere", Dataset([first, machine("b", 1.5e-3), machine("c", 2.2e-3)]))
    assert said == ("On the 2 other machines that ran it, two processes took 1.5× to 2.2× one process's time per "
                    "step. So the price of coordination depends on the machine")
    assert page.render_fact("ddp_elsewhere", Dataset([first, machine("b", 1.5e-3)])).endswith(
        "took 1.5× one process's time per step")
    assert page.render_fact("ddp_elsewhere", Dataset([first])) == "No other machine in this build ran it"


def test_why_gpu_names_the_small_products_its_cpu_multiplied_faster():
    """small_products_on_the_cpu names the sizes where a GPU machine's CPU multiplied faster beyond the spread, as
    "up to n" where they are the smallest ones; a GPU never slower says so; no GPU, no comparison."""
    def doc(cpu_faster: set[int]):
        d = synthetic_doc(gpu="Fixture GPU")
        add_points(d, "gemm_rate", [({"n": n}, 1e-3 if n in cpu_faster else 4e-3, {"flops": 2 * n**3}) for n in
                                    (64, 128, 256)])
        add_points(d, "gemm_rate", [({"n": n, "device": "cuda"}, 2e-3, {"flops": 2 * n**3}) for n in (64, 128, 256)])
        return Dataset([Machine(d, "f", "t")])
    said = untrusted.restore(page.render_fact("small_products_on_the_cpu", doc({64, 128})))
    assert "On the Fixture GPU's own machine, the CPU multiplied faster than the GPU up to n = 128" in said.replace(
        "<bdi>", "").replace("</bdi>", "")
    assert "at n = 64 and 256" in page.render_fact("small_products_on_the_cpu", doc({64, 256}))
    assert page.render_fact("small_products_on_the_cpu", doc(set())).startswith("At every size swept, the ")
    assert page.render_fact("small_products_on_the_cpu", Dataset([Machine(synthetic_doc(), "f", "t")])).startswith(
        "No GPU's matrix products")


def test_batch_size_says_when_the_race_crosses_at_another_batch_and_which_to_lean_on(monkeypatch):
    """_race_differs names the race's epoch crossing where it differs from the steps' at that width. It leans on the
    epochs only where the GPU's steps timed alone ran long (a bias towards a larger batch); else it says the two
    disagree, bounding nothing. Where they agree, or the race never crossed, it says nothing."""
    from build_hooks.views import race as race_views
    from build_hooks.views import training_step as views

    machine = Machine(synthetic_doc(gpu="Fixture GPU"), "f", "t")
    for first, long, said in (
            (64, True, " At width 2048, the race's whole epochs put the first crossing at batch 64, not 128. The two experiments disagree, and the "
                       "steps are the side known to run long."),
            (64, False, " At width 2048, the race's whole epochs put the first crossing at batch 64, not 128. The two experiments disagree, and neither bounds "
                        "the other."),
            (256, True, " At width 2048, the race's whole epochs put the first crossing at batch 256, not 128. The two experiments disagree, and neither "
                        "bounds the other."),
            (128, True, ""), (None, True, "")):
        monkeypatch.setattr(race_views, "grid_leads", lambda data, keep, first=first: {2048: (first, [])})
        monkeypatch.setattr(views, "_steps_alone_run_long", lambda machine, device, long=long: (3, [1]) if long else None)
        assert views._race_differs(Dataset([machine]), machine, 2048, 128) == said


@pytest.mark.parametrize("memory_factor, caveat", [(0.5, True), (1.0, False), (0.0, False)])
def test_a_cpu_fit_moving_bytes_faster_than_a_copy_is_said_to_describe_the_fit(monkeypatch, memory_factor, caveat):
    """Where the CPU fit's memory price beats a copy by more than the meaningful ratio, the reading says its prices
    describe the fit, not the CPU (as the GPU's reading does); a plausible or zero factor gets no such words."""
    from pathlib import Path

    from build_hooks import cost_model, dataset

    root = Path(__file__).resolve().parent.parent
    data = Dataset(dataset.load_committed(root / "results", root))
    real = cost_model.fit

    def fit(machine, device):
        fitted = real(machine, device)
        return fitted and dataclasses.replace(fitted, memory_factor=memory_factor)
    monkeypatch.setattr(cost_model, "fit", fit)
    said = page.render_fact("cost_model_parameters_reading", data)
    assert ("so these prices describe the fit, not the CPU" in said) == caveat


def test_the_worked_examples_time_a_measured_gpu_beside_its_datasheet_and_cite_its_cost_per_call():
    """With a measured GPU, the FLOP table has a column at its fastest measured fp32 product beside the datasheet's,
    and the tiny-operation sentence gives that GPU's cost per call; a CPU-only build has neither."""
    from pathlib import Path

    from build_hooks import analysis, dataset
    from build_hooks.render import si

    root = Path(__file__).resolve().parent.parent
    committed = Dataset(dataset.load_committed(root / "results", root)).machines
    host = next(m for m in committed if m.gpu is None)
    gpu_box = next(m for m in committed if m.gpu is not None)
    both, alone = Dataset([host, gpu_box]), Dataset([host])
    table = untrusted.restore(str(page.render_section("flop_table", both)))
    rate = analysis.best_matmul_rate(gpu_box, gpu_box.gpu_device("gemm_rate"))
    assert "measured rate" in table and si(rate, "FLOP/s") in table and "FP32 peak (published)" in table
    assert "NVIDIA H200's measured rate" not in untrusted.restore(str(page.render_section("flop_table", alone)))
    said = untrusted.restore(page.render_fact("call_overhead", both))
    cost = analysis.tiny_op_seconds(gpu_box, gpu_box.gpu_device("call_overhead"))
    own = analysis.tiny_op_seconds(gpu_box, "cpu")  # beside its own CPU's: the fair comparison
    assert f"the same call took {si(cost, 's')}, host dispatch plus a kernel launch, against {si(own, 's')} on its own CPU" in said
    assert "kernel launch" not in page.render_fact("call_overhead", alone)


@pytest.mark.parametrize("brackets, said", [
    ({512: (2.76e8, 5.53e8), 2048: (2.76e8, 5.53e8)}, " Each crossing width flipped between steps of 276 and 553 MFLOP "
                                                     "(million multiplications or additions in its matrix products), "
                                                     "as it would if the work per step decides."),
    ({512: (1e8, 2e8), 2048: (2.76e8, 5.53e8)}, ""), ({2048: (2.76e8, 5.53e8)}, ""), ({}, "")])
def test_batch_size_says_the_work_decides_only_where_every_width_crossed_between_the_same_step_sizes(
        monkeypatch, brackets, said):
    """_same_work speaks only where two or more widths crossed, all between the same two step sizes."""
    from build_hooks.views import cost_model
    from build_hooks.views import training_step as views

    monkeypatch.setattr(cost_model, "crossing_brackets", lambda machine: brackets)
    assert views._same_work(Machine(synthetic_doc(gpu="Fixture GPU"), "f", "t")) == said


@pytest.mark.parametrize("isa, bf16_faster, said", [
    (["avx2", "avx512f"], False, True), (["avx512f", "amx_tile"], False, False), (None, False, False),
    (["avx2"], True, False)])
def test_a_cpus_slower_bf16_is_explained_only_where_its_file_lists_no_bf16_instructions(monkeypatch, isa, bf16_faster,
                                                                                      said):
    """_slow_bf16 explains a CPU's bf16 product slower than its fp32 one by its listed instruction set, only where the
    set is recorded and holds neither AVX-512 BF16 nor AMX."""
    from build_hooks.views import gemm_rate

    doc = synthetic_doc()
    doc["machine_info"]["cpu"]["isa"] = isa
    rates = [("fp32", "", 1e11), ("bf16", "", 2e11 if bf16_faster else 5e10)]
    monkeypatch.setattr(gemm_rate, "_measured_rates", lambda machine, device: rates)
    text = gemm_rate._slow_bf16(Machine(doc, "f", "t"))
    assert bool(text) == said and (not said or "lists no bf16 instructions" in text)


def test_the_rooflines_compute_roof_is_the_fastest_matrix_product_every_page_quotes():
    """The roofline's flat roof is analysis.best_matmul_rate (a faster matmul_shapes point included), as the ridge's
    sentence is, not the square sweep's own best."""
    from build_hooks import analysis
    from build_hooks.render import si
    from conftest import complete_doc

    doc = complete_doc()
    fast = next(b for b in doc["benchmarks"] if b["group"] == "matmul_shapes")
    fast["stats"]["median"] = fast["extra_info"]["flops"] / 5e12  # far faster than any square-sweep point
    machine = Machine(doc, "f", "t")
    best = analysis.best_matmul_rate(machine)
    assert best > max(analysis.gemm_rates(machine, "cpu").values())
    drawn = " ".join(re.sub(r"<[^>]+>", " ", str(page.render_section("roofline", Dataset([machine])))).split())
    assert f"best matmul {si(best, 'FLOP/s')}" in drawn  # the legend's words, wrapped over two lines


def test_the_cheat_sheets_work_rule_matches_the_experiments_own_flop_counts():
    """step_work_rule's FLOPs per sample and hidden unit, times batch and width, is every committed training step's
    recorded FLOP count; with the committed GPU it turns the crossing's work into a span of batch × width, read back
    as batches at the widths measured."""
    from pathlib import Path

    from build_hooks import dataset
    from build_hooks.views import training_step as views
    from build_hooks.views.cost_model import crossing_bracket

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    per = views.flops_per_sample_and_unit()
    counted = [(b["params"], b["extra_info"]["flops"]) for m in committed for b in m.measured("training_step")
               if b["extra_info"].get("flops")]
    assert counted and all(flops == per * p["batch"] * p["width"] for p, flops in counted)
    said = page.render_fact("step_work_rule", Dataset(committed))
    low, high, _ = crossing_bracket(next(m for m in committed if m.gpu is not None))
    assert said.startswith(f"For the race's network, a step does {per:,}·B·H FLOPs") and \
        f"B·H from {low / per:,.0f} to {high / per:,.0f}, on this pair" in said
    widest = max(views.analysis.widths(committed[0]))  # the span read back as batches at a width
    assert f"batch {low / per / widest:,.3g} to {high / per / widest:,.3g} at width {widest}" in said


def test_the_break_even_is_worked_through_in_words_before_its_table():
    """break_even_worked gives the measured GPU's extra cost per operation, from a bare operation's to a real step's,
    and the span of work its CPU does in that time, the numbers of the break-even table's two rows; without a measured
    GPU, the estimate's launch and the build host's work."""
    from pathlib import Path

    from build_hooks import dataset
    from build_hooks.render import si
    from build_hooks.views import cost_model as views

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    machine, ((cpu_op, cpu_rate, _), (gpu_op, _, _)) = views.first_measured_break_even(Dataset(committed))
    said = page.render_fact("break_even_worked", Dataset(committed))
    bare = views.bare_extra(machine)  # the committed H200 timed a bare operation too: the span's low end
    assert f"pays {si(bare, 's')} to {si(gpu_op - cpu_op, 's')} more per operation than its own CPU" in said
    span = views.flop_span(bare * cpu_rate, (gpu_op - cpu_op) * cpu_rate)
    assert f"the CPU does {span} at its best rate" in said and said.endswith("lies in that span")
    table = page.render_section("break_even_table", Dataset(committed))
    for end in (bare * cpu_rate, (gpu_op - cpu_op) * cpu_rate):  # the same figures as the table's two rows
        assert si(end, "FLOP") in table
    cpu_only = Dataset([m for m in committed if m.gpu is None])
    assert page.render_fact("break_even_worked", cpu_only).startswith("Worked through, for the estimate: a GPU adds a ")


def test_the_peak_plot_draws_a_gpus_published_peak_beside_its_cpus_in_one_colour_per_meaning(monkeypatch):
    """The square-product plot of a machine with a GPU that has a datasheet draws that datasheet's FP32 peak, labelled
    published; a CPU-only machine's plot has none; each meaning keeps one colour on every machine's plot."""
    from pathlib import Path

    from build_hooks import dataset, datasheets, plots
    from build_hooks.views import gemm_rate

    drawn = []
    draw = plots.line_panels
    monkeypatch.setattr(plots, "line_panels", lambda panels, **kw: drawn.append(panels[0]["series"])
                        or draw(panels, **kw))
    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    gpu_machine = next(m for m in committed if m.gpu is not None)
    cpu_machine = next(m for m in committed if m.gpu is None)
    for machine in (gpu_machine, cpu_machine):
        page.render_section("gemm_rate", Dataset([machine]))
    with_gpu, cpu_only = drawn[-2:]
    peak = next(s for s in with_gpu if s.colour_key == "gpu peak")
    sheet = datasheets.by_name("NVIDIA H200 SXM")
    assert peak.label == "GPU FP32 peak (published: NVIDIA H200 SXM datasheet)" and set(peak.y) == {sheet.fp32_flops / 1e9}
    assert not any(s.colour_key == "gpu peak" for s in cpu_only)
    colour = {s.colour_key: s.colour for s in with_gpu}
    assert all(colour.get(s.colour_key, s.colour) == s.colour for s in cpu_only)
    assert set(colour.values()) <= set(gemm_rate.PEAK_COLOURS.values())


def test_the_gallery_draws_every_machines_fastest_product_on_one_log_axis(monkeypatch):
    """The gallery's chart has one group per machine with a matrix product, its CPU's fastest rate and its GPU's where
    it has one (a gap where not), on a log axis; one machine alone gets no chart."""
    from pathlib import Path

    from build_hooks import analysis, dataset, plots

    drawn = []
    draw = plots.bars
    monkeypatch.setattr(plots, "bars", lambda groups, series, **kw: drawn.append((groups, series, kw))
                        or draw(groups, series, **kw))
    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    page.render_section("gallery", Dataset(committed))
    groups, series, kw = drawn[-1]
    assert len(groups) == len(committed) and kw["log"]
    assert series["CPU"] == [analysis.best_matmul_rate(m) for m in committed]
    assert series["GPU in the same machine"] == [analysis.best_matmul_rate(m, m.gpu_device("gemm_rate"))
                                                 if m.gpu_device("gemm_rate") else None for m in committed]
    drawn.clear()
    assert "<figure" not in str(page.render_section("gallery", Dataset(committed[:1]))) and not drawn


def test_the_shapes_summary_sets_a_gpu_against_its_own_cpu_at_the_smallest_and_largest_products():
    """shapes_summary ends, where a GPU swept the shapes beside its CPU, with the GPU against the CPU at the smallest
    and the largest products, each by the paired ratio's verdict; a CPU-only machine's says nothing of a GPU."""
    from pathlib import Path

    from build_hooks import analysis, dataset, stats

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    machine = next(m for m in committed if m.gpu_device("matmul_shapes"))
    said = page.render_fact("shapes_summary", Dataset(committed))
    cpu = analysis.point_stats(machine, "matmul_shapes", "side", device="cpu")
    gpu = analysis.point_stats(machine, "matmul_shapes", "side", device=machine.gpu_device("matmul_shapes"))
    for side in (min(cpu), max(cpu)):
        ratio = stats.paired_ratio(gpu[side], cpu[side])
        words = {1: "took", -1: "was", 0: "was level"}[ratio.verdict]
        assert f"As {side}×{side} products, the GPU {words}" in said
    cpu_only = page.render_fact("shapes_summary", Dataset([m for m in committed if m.gpu is None]))
    assert "the GPU" not in cpu_only


def test_a_profiled_kinds_aten_operations_fold_behind_their_count():
    """The profile table's ATen column folds two or more operation names behind their count, and shows one as is."""
    from build_hooks.views.step_profile import _ops_cell

    assert str(_ops_cell("as_strided, copy_, view")) == ("<details><summary>3 names</summary><small>as_strided, copy_, "
                                                         "view</small></details>")
    assert str(_ops_cell("addmm")) == "<small>addmm</small>"
    assert "&lt;b&gt;" in str(_ops_cell("<b>, x"))  # names from a results file are text


def test_why_gpu_puts_the_measured_gap_on_its_first_line():
    """gpu_gap_headline gives the measured GPU's fastest fp32 product over its own CPU's; with no GPU, the datasheet's
    peak over the build host's fastest product, said to be published."""
    from pathlib import Path

    from build_hooks import analysis, dataset, datasheets
    from build_hooks.render import multiple

    root = Path(__file__).resolve().parent.parent
    committed = dataset.load_committed(root / "results", root)
    machine = next(m for m in committed if m.gpu_device("gemm_rate"))
    gap = analysis.best_matmul_rate(machine, machine.gpu_device("gemm_rate")) / analysis.best_matmul_rate(machine)
    said = page.render_fact("gpu_gap_headline", Dataset(committed))
    assert said.startswith("Measured here, the ") and said.endswith(f"fastest fp32 product ran {multiple(gap)} its own CPU's")
    host = next(m for m in committed if m.gpu is None)
    peak = datasheets.by_name("NVIDIA H200 SXM").fp32_flops / analysis.best_matmul_rate(host)
    assert page.render_fact("gpu_gap_headline", Dataset([host])) == (
        f"No GPU was measured here. An NVIDIA H200 SXM's published FP32 peak is {multiple(peak)} the build host's "
        "fastest product")
