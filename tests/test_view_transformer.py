"""The transformer page's claims follow the data: contradicting synthetic data changes the wording."""

from __future__ import annotations

import re

import pytest

from build_hooks import page, stats, untrusted
from build_hooks.dataset import Dataset, Machine
from build_hooks.views import transformer as view
from conftest import add_points, bare_cells, complete_doc

SEQ = 64


def text(rendered: str) -> str:
    """A fact as a reader sees it: placeholders restored, tags dropped."""
    return re.sub(r"<[^>]+>", "", untrusted.restore(rendered))


def dataset(gpu: str | None = None, **groups) -> Dataset:
    """A complete synthetic machine whose points of `groups` are replaced by the given ones."""
    doc = complete_doc(gpu)
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["group"] not in groups]
    for group, points in groups.items():
        add_points(doc, group, points)
    return Dataset([Machine(doc, "fixture", "this build host")])


def flops(batch: int, d_model: int) -> int:
    """The snippet's formula, from the view's torch-free constants."""
    return 3 * (2 * view.matmul_params(d_model) * batch * SEQ + view.MODEL["LAYERS"] * 4 * batch * SEQ**2 * d_model)


def steps(times: dict[int, float], device: str = "cpu", d_model: int = 128, ops: int = 500,
          flop_scale: float = 1.0) -> list:
    return [({"device": device, "batch": b, "d_model": d_model, "seq": SEQ}, t,
             {"flops": flops(b, d_model) * flop_scale, "counted_flops": 1, "params": 600_000, "tokens": b * SEQ,
              "ops": ops, "bytes": 1e6, "footprint": 1e6}) for b, t in times.items()]


def compiles(compile_s: float, eager: float, compiled: float, model: str = "mlp") -> list:
    base = {"model": model, "phase": "step"}
    return [({"model": model, "phase": "compile", "mode": "compiled", "batch": 16}, compile_s, {}),
            ({**base, "mode": "eager", "batch": 16}, eager, {}), ({**base, "mode": "compiled", "batch": 16}, compiled, {})]


def test_compiled_faster_or_slower_flips_the_compile_sentence_and_groups_the_batches():
    """The compile sentence says faster, slower or the same as the medians say, batch by batch, grouped by verdict
    (the ratios and medians are the table's)."""
    faster = page.render_fact("compile_summary", dataset(compile_speed=compiles(5.0, 2e-3, 1e-3)))
    slower = page.render_fact("compile_summary", dataset(compile_speed=compiles(5.0, 1e-3, 2e-3)))
    same = page.render_fact("compile_summary", dataset(compile_speed=compiles(5.0, 1e-3, 1.02e-3)))
    assert "Compiled steps were faster at batch 16" in faster and "slower" not in faster
    assert "Compiled steps were slower at batch 16" in slower and "faster" not in slower
    assert "Compiled steps were level at batch 16" in same and "Level: less than 1.1× apart" in same
    assert "Compiling the MLP took 5.00 s" in faster
    mixed = compiles(5.0, 2e-3, 1e-3) + [({"model": "mlp", "phase": "step", "mode": m, "batch": b}, t, {})
                                         for b in (64, 256) for m, t in (("eager", 1e-3), ("compiled", 2e-3))]
    assert "Compiled steps were faster at batch 16; slower at batches 64 and 256" in page.render_fact(
        "compile_summary", dataset(compile_speed=mixed))


def test_the_repay_column_divides_the_compile_time_by_the_time_saved():
    """Steps to repay = compile time ÷ (eager − compiled), and "no measured saving" where compiled is not faster."""
    repaid = bare_cells(page.render_section("compile_speed", dataset(compile_speed=compiles(1.0, 2e-3, 1e-3))))
    never = bare_cells(page.render_section("compile_speed", dataset(compile_speed=compiles(1.0, 1e-3, 2e-3))))
    assert "<td>about 1,000</td>" in repaid and "<td>no measured saving</td>" in never


@pytest.mark.parametrize("status", ["failed", "oom"])  # "oom": how files measured before "failed" existed stored it
def test_a_failed_compile_is_said_to_have_failed_with_its_error(status):
    """A compile point without a time (status "failed" with an error) is reported as a failure, never as a time."""
    data = dataset(compile_speed=compiles(5.0, 2e-3, 1e-3))
    point = next(b for b in data.machines[0].doc["benchmarks"]
                 if b["group"] == "compile_speed" and b["params"]["phase"] == "compile")
    point.update(status=status, extra_info={"error": "torch.compile failed: no C++ compiler"})
    del point["stats"]
    assert "On the MLP, torch.compile failed here" in text(page.render_fact("compile_summary", data))
    assert "failed" in page.render_section("compile_speed", data)
    assert "out of memory" not in page.render_section("compile_speed", data)


def test_a_quick_build_says_the_transformer_was_not_compiled():
    """Without transformer compile points the sentence says it was not compiled, instead of inventing a time."""
    text = page.render_fact("compile_summary", dataset(compile_speed=compiles(5.0, 2e-3, 1e-3)))
    assert "The transformer was not compiled in this build" in text
    both = page.render_fact("compile_summary", dataset(
        compile_speed=compiles(5.0, 2e-3, 1e-3) + compiles(30.0, 1e-2, 2e-2, "transformer")))
    assert "Compiling the transformer took 30.0 s" in both and "not compiled" not in both


def test_the_estimate_crossover_follows_the_cpu_times():
    """A CPU slower than the H200 estimate everywhere gives a crossover at the first batch; a CPU far faster, none."""
    slow_cpu = view.transformer_crossover(dataset(transformer_block=steps({1: 10.0, 8: 20.0})))
    fast_cpu = view.transformer_crossover(dataset(transformer_block=steps({1: 1e-9, 8: 2e-9})))
    slow_cpu = untrusted.restore(slow_cpu).replace("<bdi>", "").replace("</bdi>", "")
    assert slow_cpu == ("an estimate of the NVIDIA H200 SXM is faster than the build host (Fixture CPU (4 threads)) at "
                        "d_model 128 at every batch measured")
    assert "at d_model 128 at no batch measured (at batch 8 the CPU is faster)" in fast_cpu
    # The fixture's small block is issued more slowly than the modelled GPU runs it: said beside the band.
    band = page.render_fact("transformer_band", dataset(transformer_block=steps({1: 10.0, 8: 20.0})))
    assert "The estimate is flat: at every size here, it is the build host's time to issue the work" in band


def test_a_measured_gpu_replaces_the_estimate_and_its_crossover_is_read_from_it():
    """With a measured GPU the crossover is the measured one: here from batch 8, and no estimate is named."""
    points = steps({1: 1e-3, 8: 8e-3, 64: 64e-3}) + steps({1: 5e-3, 8: 2e-3, 64: 3e-3}, device="cuda")
    text = view.transformer_crossover(dataset(gpu="Fixture GPU", transformer_block=points))
    assert "is faster than its own CPU at d_model 128 from batch 8" in text
    assert "ESTIMATE" not in text


def test_a_gpu_machine_that_ran_the_transformer_answers_for_it_beside_a_cpu_only_build_host():
    """A committed GPU machine that ran the transformer (the GPU slot's file) gives the page's GPU verdict and its
    first line, against its own CPU; the build host without a GPU no longer falls back on the estimate."""
    host = complete_doc()
    host["benchmarks"] = [b for b in host["benchmarks"] if b["group"] != "transformer_block"]
    add_points(host, "transformer_block", steps({1: 1e-3, 8: 8e-3, 64: 64e-3}))
    box = complete_doc("Fixture GPU", machine_id="gpu-box")
    box["benchmarks"] = [b for b in box["benchmarks"] if b["group"] != "transformer_block"]
    add_points(box, "transformer_block", steps({1: 1e-3, 8: 8e-3, 64: 64e-3})
               + steps({1: 5e-3, 8: 2e-3, 64: 3e-3}, device="cuda"))
    data = Dataset([Machine(host, "h", "this build host"), Machine(box, "g", "committed reference")])
    answer = untrusted.restore(page.render_fact("transformer_gpu_answer", data)).replace("<bdi>", "").replace(
        "</bdi>", "")
    assert answer.startswith("Measured: the measured Fixture GPU is faster than its own CPU at d_model 128 from batch 8")
    assert page.render_fact("transformer_band", data).startswith("A GPU ran this transformer")


@pytest.mark.parametrize("worst, answer, band", [
    (1.5, "at d_model 128 from batch 8", "A lead counts only beyond its band, from 0.75× to 2.5× its value. "
                                                 "On the MLP, a real Checker step took 1.2× the estimate (median), "
                                                 "inside that band"),
    (4.0, "at d_model 128 from batch 8", "On the MLP, a real Checker took up to 4× what this estimate predicted"),
    (1e4, "An estimate of the NVIDIA H200 SXM is not ahead", "a real Checker took up to 1e+04× what this estimate predicted")])
def test_without_a_gpu_the_model_leads_only_beyond_a_band_as_wide_as_its_worst_measured_miss(monkeypatch, worst,
                                                                                             answer, band):
    """With no GPU run, the model's lead counts only beyond its band, whose top a measured GPU's worst miss raises:
    a slow CPU stays behind an estimate missed by 4×, but not one missed by 10,000× (not ahead); the band line
    states the top and says when a miss raised it."""
    from types import SimpleNamespace

    from build_hooks import gpu_estimate

    check = SimpleNamespace(highest=worst, median=1.2, machine=SimpleNamespace(gpu={"name": "Checker"}))
    monkeypatch.setattr(gpu_estimate, "checks", lambda machines, feeder=None: [check])
    data = dataset(transformer_block=steps({1: 1e-1, 8: 8e-1, 64: 6.4}))  # a slow CPU: the model leads
    said = page.render_fact("transformer_gpu_answer", data)
    assert answer in said and "robabl" not in said  # a model's lead is said as the estimate's, never as likely
    if worst < 1e4:
        assert ". By the labelled estimate, a GPU would lead at d_model 128 from batch 8" in said
    assert band in untrusted.restore(page.render_fact("transformer_band", data)).replace("<bdi>", "").replace(
        "</bdi>", "")
    fast = dataset(transformer_block=steps({1: 1e-6, 8: 2e-6, 64: 4e-6}))  # a CPU no model of a GPU catches
    assert "is not ahead at any batch measured" in page.render_fact("transformer_gpu_answer", fast)
    slowest = dataset(transformer_block=steps({1: 1e3, 8: 8e3, 64: 6.4e4}))  # behind even at batch 1
    assert "at d_model 128 at every batch measured" in page.render_fact("transformer_gpu_answer", slowest)
    # The take-over paragraph restates where, without the opening's sources.
    assert page.render_fact("transformer_takeover", slowest) == (
        "By the estimate, the GPU leads at d_model 128 at every batch measured")


def test_the_regime_follows_what_dominates_the_cost_model():
    """Many operations and few FLOPs read overhead-bound; a huge FLOP count reads compute-bound."""
    overhead = page.render_fact("transformer_regimes", dataset(transformer_block=steps({1: 1e-3, 8: 2e-3}, ops=10**6,
                                                                                       flop_scale=1e-6)))
    compute = page.render_fact("transformer_regimes", dataset(transformer_block=steps({1: 1e-3, 8: 2e-3}, ops=1,
                                                                                      flop_scale=1e6)))
    assert "every batch is overhead-bound" in overhead and "every batch is compute-bound" in compute


def test_step_growth_against_tokens_follows_the_data():
    """The step sentence reports the measured growth of the step time against the growth in tokens."""
    flat = page.render_fact("transformer_step_summary", dataset(transformer_block=steps({1: 1e-3, 8: 1.02e-3})))
    linear = page.render_fact("transformer_step_summary", dataset(transformer_block=steps({1: 1e-3, 8: 8e-3})))
    assert "(8× the tokens) left the step time the same within the spread" in flat
    assert "(8× the tokens) multiplied the step time by 8.0×" in linear


def test_size_fact_states_six_n_and_the_attention_share_from_the_formula():
    """6N per token and what the attention term adds to it are the formula's, for the measured d_model."""
    text = page.render_fact("transformer_size", dataset(transformer_block=steps({1: 1e-3, 8: 2e-3})))
    n = view.matmul_params(128)
    share = flops(8, 128) / (6 * n * 8 * SEQ) - 1  # added to 6N, not a share of the total
    assert f"N = {n:,}" in text and f"adds {100 * share:.0f}% to that" in text


def test_profile_summary_names_each_models_largest_kind():
    """Which kind took the largest share of each model's step is read from the data."""
    def profile(mlp_top: str, transformer_top: str) -> list:
        kinds = ["matrix products", "attention", "normalisation", "optimiser update"]
        return [({"model": model, "kind": kind}, 5e-3 if kind == top else 1e-3, {"calls_per_step": 4, "ops": "mm"})
                for model, top in (("mlp", mlp_top), ("transformer", transformer_top)) for kind in kinds]

    one = text(page.render_fact("transformer_profile_summary",
                                dataset(transformer_profile=profile("matrix products", "attention"))))
    two = text(page.render_fact("transformer_profile_summary",
                                dataset(transformer_profile=profile("optimiser update", "normalisation"))))
    assert "in the MLP's step, matrix products took the largest share, 62%" in one
    assert "In the transformer's step, attention took the largest share, 62%" in one
    assert "in the MLP's step, optimiser update took the largest share" in two
    assert "In the transformer's step, normalisation took the largest share" in two
    assert "Of the transformer's step, attention 62% and normalisation 12%" in one


def test_sections_render_tables_and_a_labelled_estimate_in_the_plot():
    """The steps section draws a figure whose legend labels the H200 lane an estimate, and tables every point."""
    html = page.render_section("transformer_steps", dataset(transformer_block=steps({1: 1e-3, 8: 2e-3})))
    assert "<svg" in html and "NVIDIA H200 SXM estimate" in html and "estimate (its band)" in html and "ahead beyond the band" in html
    assert stats.MEANINGFUL_RATIO > 1  # the verdict rule these sentences lean on


def test_a_build_without_the_experiments_says_not_measured():
    """Committed files older than these experiments render 'not measured', never an invented number."""
    doc = complete_doc()
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["group"] not in {view.STEP, view.COMPILE, view.PROFILE}]
    for group in (view.STEP, view.COMPILE, view.PROFILE):
        doc["experiments"].pop(group)
    data = Dataset([Machine(doc, "fixture", "this build host")])
    for name in ("transformer_size", "transformer_gpu_answer", "compile_summary", "transformer_profile_summary"):
        assert page.render_fact(name, data) == view.NOT_MEASURED
    assert "Not measured on any machine" in page.render_section("compile_speed", data)
    assert page.render_fact("transformer_takeover", data) == "Not measured on any machine in this build yet"


def test_a_near_tie_between_cost_terms_is_named_as_one():
    """Cost-model terms within 25% of the largest are named together as a near-tie, never as one regime."""
    from build_hooks.views.transformer import regime_words

    assert regime_words("overhead") == "overhead-bound"
    assert regime_words("overhead+memory") == "mixed (overhead and memory)"


def test_a_near_tie_is_named_in_one_order_whichever_term_is_larger():
    """Two runs whose tied terms swap places by a hair name the same tie: a fixed order, not the terms' sizes."""
    from types import SimpleNamespace

    from build_hooks.views.transformer import regime

    params = SimpleNamespace(op_seconds=1e-9, rate=lambda side: 1e9, bandwidth_at=lambda footprint: 1e9)
    fitted = SimpleNamespace(params=params, compute_factor=1.0, memory_factor=1.0)

    def key(flops, moved):
        bench = {"extra_info": {"ops": 1, "flops": flops, "bytes": moved, "footprint": 1, "tokens": 64},
                 "params": {"d_model": 128}, "stats": {"median": 1.0}}
        return regime(fitted, bench)[0]
    assert key(1.1e6, 1.0e6) == key(1.0e6, 1.1e6) == "compute+memory"


def test_the_opening_says_which_gpu_file_lacks_the_transformer_and_how_small_the_host_is(monkeypatch):
    """Without a GPU run, the first line names a GPU machine whose results lack the experiment (a reader saw it on
    other pages), and the band's line, that the build host is a small CPU."""
    from types import SimpleNamespace

    from build_hooks.views import transformer as views

    data = dataset(transformer_block=steps({1: 1e-1, 8: 8e-1, 64: 6.4}))
    assert views._no_gpu_words(data) == "No GPU has timed this model yet, so the estimate is unchecked here"
    gpu_box = SimpleNamespace(gpu={"name": "Fixture GPU"}, label="Fixture GPU box",
                              cpu={"brand": "Fixture box CPU", "clock_hz": 1e9})
    with_gpu = Dataset(data.machines + [gpu_box])
    said = views._no_gpu_words(with_gpu)
    assert said.startswith("No GPU has timed this model yet (the ") and said.endswith(
        " machine did not run it), so the estimate is unchecked here")
    threads = data.machines[0].cpu["threads_used"]
    small = f"The build host has {threads} threads: a CPU with more cores would be harder to beat"
    assert (small in page.render_fact("transformer_band", data)) == (threads <= views.SMALL_HOST_THREADS)
    monkeypatch.setattr(views, "SMALL_HOST_THREADS", threads)  # a host at the limit is called small
    assert small in page.render_fact("transformer_band", data)
    monkeypatch.setattr(views, "SMALL_HOST_THREADS", threads - 1)
    assert "harder to beat" not in page.render_fact("transformer_band", data)


def test_a_compile_ratio_within_the_spread_shows_its_direction_without_calling_it():
    """_within_spread says "same" only where the medians are level by the spread rule; else it shows the medians'
    direction, marked as within the spread."""
    from build_hooks import stats
    from build_hooks.views import transformer as views

    assert views._within_spread(stats.Ratio(1.02, 0.9, 1.1, paired=True)) == "same within the spread"
    assert views._within_spread(stats.Ratio(0.8, 0.7, 1.05, paired=True)) == "same within the spread (1.2× slower by median)"
    assert views._within_spread(stats.Ratio(1.2, 0.95, 1.3, paired=True)) == "same within the spread (1.2× faster by median)"


def test_the_band_line_says_when_the_models_cost_per_operation_is_stretched_past_its_fit():
    """The cost per operation is fitted on the MLP's steps: where this block issues more operations than any of
    them, the band's line says so with both counts; where it issues no more, it says nothing."""
    from build_hooks import cost_model
    from build_hooks.views import transformer as views

    data = dataset(transformer_block=steps({1: 1e-1, 8: 8e-1, 64: 6.4}))
    machine = data.machines[0]
    estimates = [views.estimate_for(machine, seq, data.machines) for _, seq in views.curves(machine, "cpu")]
    fitted = max(w["ops"] for w in cost_model.step_work(machine).values())
    issued = min(w["ops"] for e in estimates for w in e.work.values())
    assert (fitted, issued) == (8, 500)  # the fixture's MLP and block steps
    assert views._stretched_words(machine, estimates) == (
        ". Its cost per operation was fitted on the MLP's CPU steps, 8 operations each. Here it is charged on 500, "
        "so that cost is stretched past its fit")  # the operations the estimate charges (gpu_estimate.cuda_counts)
    for estimate in estimates:  # where CUDA's count is recorded, that is what the estimate charges
        estimate.work.update({key: {**w, "cuda_ops": 300} for key, w in estimate.work.items()})
    assert "Here it is charged on 300," in views._stretched_words(machine, estimates)
    for estimate in estimates:  # a block issuing no more than the fit's steps is inside it
        estimate.work.update({key: {**w, "ops": fitted, "cuda_ops": fitted} for key, w in estimate.work.items()})
    assert views._stretched_words(machine, estimates) == ""


def test_the_compile_reading_says_so_when_no_compiled_step_was_faster(monkeypatch):
    """compile_repaid points to the repay column only where some compiled step was faster beyond the spread; else it
    says the compile never paid for itself."""
    from build_hooks import stats
    from build_hooks.views import transformer as views

    data = dataset(transformer_block=steps({1: 1e-3, 8: 2e-3}))
    verdict = {"value": 1}

    def paired(steps):
        return [(16, {}, {}, stats.Ratio(2.0, 1.9, 2.1, True, 3, 3) if verdict["value"] > 0
                 else stats.Ratio(0.5, 0.4, 0.6, True, 3, 3))]
    monkeypatch.setattr(views, "_paired", paired)
    monkeypatch.setattr(views, "_compile_points", lambda machine, model: ({}, {}))
    monkeypatch.setattr(views, "unmeasured", lambda data, group: False)
    assert page.render_fact("compile_repaid", data).startswith("Where a compiled step was faster")
    verdict["value"] = -1
    assert page.render_fact("compile_repaid", data) == ("No compiled step here was faster than eager, so the compile "
                                                        "never paid for itself")


def test_the_band_line_says_at_how_many_sizes_the_estimate_is_the_hosts_issuing(monkeypatch):
    """Host-bound at every size: said so; at most sizes: said with the count; at half or fewer: nothing."""
    from build_hooks import gpu_estimate
    from build_hooks.views import transformer as views

    data = dataset(transformer_block=steps({1: 1e-1, 8: 8e-1, 64: 6.4}))
    machine = data.machines[0]
    assert views._host_bound_words(machine, data.machines).startswith(". The estimate is flat: at every size here")
    monkeypatch.setattr(gpu_estimate.Estimate, "bounded_by",
                        lambda self, batch, width: "the GPU" if batch == 64 else "the host")
    assert views._host_bound_words(machine, data.machines).startswith(". At 2 of 3 sizes here")
    monkeypatch.setattr(gpu_estimate.Estimate, "bounded_by",
                        lambda self, batch, width: "the host" if batch == 64 else "the GPU")
    assert views._host_bound_words(machine, data.machines) == ""


def test_the_profile_caption_says_which_timed_batches_its_batch_lies_between():
    """_between_steps names the two step-table batches around a profiled batch the table did not time, and nothing
    for a batch it timed or one outside its range."""
    from build_hooks.views.transformer import _between_steps

    machine = dataset(transformer_block=steps({1: 1e-1, 4: 4e-1, 16: 1.6})).machines[0]
    assert _between_steps(machine, 8) == " (between the step table's batches 4 and 16)"
    assert _between_steps(machine, 4) == "" and _between_steps(machine, 64) == ""


def test_the_compile_summary_sets_the_other_machines_compiled_steps_beside_the_first(monkeypatch):
    """_other_machines_compile counts another machine's compiled transformer steps by verdict, and says the gain
    depends on the machine where the first machine's faster steps have no twin there; nothing without others."""
    from types import SimpleNamespace

    from build_hooks.views import transformer as views

    first, other = "first", "other"
    points = {first: [1, 1, 0], other: [0, 0, 0]}
    data = SimpleNamespace(with_experiment=lambda group: [first, other])
    monkeypatch.setattr(views, "_compile_points", lambda m, model: (None, m))
    monkeypatch.setattr(views, "_paired", lambda m: [(b, {}, {}, SimpleNamespace(verdict=v))
                                                     for b, v in zip((4, 16, 64), points[m])])
    assert views._other_machines_compile(data, first) == (
        ". On the other machine that ran it, compiled transformer steps were level at all 3 "
        "batches. So compiling's gain depends on the machine: measure it on yours")
    points[other] = [1, -1, 0]
    assert views._other_machines_compile(data, first).endswith(
        "were faster at 1, slower at 1 and level at 1 of 3 batches")
    assert views._other_machines_compile(SimpleNamespace(with_experiment=lambda group: [first]), first) == ""


@pytest.mark.parametrize("twin_median, said", [(2e-4, False), (4e-4, True)])
def test_a_compile_rows_eager_step_far_from_its_own_experiments_is_said_under_the_table(twin_median, said):
    """Where the compile run's eager step and the same step in its own experiment (here the MLP's training step at the
    compiled width) differ beyond the consistency tolerance, a note under the table says by how much; else nothing."""
    import copy
    import html

    from build_hooks import experiments

    doc = complete_doc()
    twin = copy.deepcopy(next(b for b in doc["benchmarks"] if b["group"] == "training_step"))
    twin["params"].update(width=experiments.declared("compile_speed")["MLP_WIDTH"], batch=16)
    twin["stats"] = stats.summarise([twin_median, twin_median])
    doc["benchmarks"].append(twin)
    shown = html.unescape(str(page.render_section("compile_speed", Dataset([Machine(doc, "f", "this build host")]))))
    assert ("The MLP's eager step at batch 16 took 0.50× its time in the training-step experiment." in shown) is said


def test_a_share_of_the_matmul_rate_over_100_percent_is_explained():
    """A transformer step that beat the square product it is held against gets a note saying why that is no error;
    one below it gets none."""
    import html

    def shown(scale):
        doc = complete_doc()
        for b in doc["benchmarks"]:
            if b["group"] == "transformer_block":
                b["extra_info"]["flops"] *= scale  # 1e4: far past any square product's rate; 1e-4: far below
        return html.unescape(str(page.render_section("transformer_steps", Dataset([Machine(doc, "f", "t")]))))
    assert "Over 100%" in shown(1e4) and "Over 100%" not in shown(1e-4)
