"""Claims on the pages follow the data: contradicting data changes the wording, never the truth."""

import pytest

from build_hooks import gpu_estimate, markers, page, site_data, untrusted
from build_hooks.dataset import Dataset, Machine
from conftest import ROOT, add_points, bare_cells, synthetic_doc


def dataset(**groups) -> Dataset:
    doc = synthetic_doc()
    for group, points in groups.items():
        add_points(doc, group, points)
    return Dataset([Machine(doc, "fixture", "test")])


def precision(fp32: float, bf16: float):
    return [({"op": op, "dtype": dt}, t, {"flops": 1, "saved_bytes": 100 if dt == "fp32" else 50})
            for op in ("matmul", "train_step") for dt, t in (("fp32", fp32), ("bf16", bf16))]


def render_page(name: str, data: Dataset, monkeypatch) -> str:
    monkeypatch.setattr(site_data, "_current", data)
    return markers.fill((ROOT / "docs" / name).read_text(), data)


@pytest.mark.parametrize("fp32, bf16, says, never", [
    (2.0, 1.0, "faster in bf16", "slower in bf16"),
    (1.0, 2.0, "slower in bf16", "faster in bf16"),
    (1.0, 1.0, "the same time in bf16 and fp32 (less than", "faster in bf16"),
])
def test_precision_claim_follows_the_data(fp32, bf16, says, never):
    """Whether bf16 is called faster or slower on the CPU depends only on the measurement."""
    text = page.render_fact("precision_cpu_summary", dataset(precision=precision(fp32, bf16)))
    assert says in text and never not in text


def test_precision_explanation_switches_with_the_data():
    """The 'why' sentence explains native 16-bit paths only when bf16 measured faster."""
    fast = page.render_fact("precision_cpu_explanation", dataset(precision=precision(2.0, 1.0)))
    slow = page.render_fact("precision_cpu_explanation", dataset(precision=precision(1.0, 2.0)))
    much_slower = page.render_fact("precision_cpu_explanation", dataset(precision=precision(1.0, 300.0)))
    same = page.render_fact("precision_cpu_explanation", dataset(precision=precision(1.0, 1.05)))
    assert "native 16-bit" in fast and "converts bf16 to fp32" in slow
    assert "generic, untuned bf16 kernel" in much_slower and "Converting bf16 to fp32 and back" in much_slower
    assert "gained nothing" in same


def test_mixed_precision_page_wording_changes_with_contradicting_data(monkeypatch, plots_left_out):
    """The rendered mixed-precision page states the opposite claim when fed opposite data."""
    numpy = [({"op": "numpy_matmul", "dtype": dt}, t, {"flops": 1}) for dt, t in
             (("fp64", 2.0), ("fp32", 1.0), ("fp16", 50.0))]
    faster = render_page("mixed-precision.md", dataset(precision=precision(2.0, 1.0) + numpy), monkeypatch)
    slower = render_page("mixed-precision.md", dataset(precision=precision(1.0, 2.0) + numpy), monkeypatch)
    assert "ran 2.0× faster in bf16 than in fp32 (2.0× between the quartiles)" in faster and "faster in bf16" not in slower
    assert "ran 2.0× slower in bf16 than in fp32 (2.0× between the quartiles)" in slower


def loader(rates: dict[int, float]):
    return [({"workers": w, "pin_memory": False}, 1 / r, {"per": "sample"}) for w, r in rates.items()]


def test_loader_claim_names_the_counts_that_beat_no_workers():
    """Which worker counts beat num_workers=0, were slower, or were level with it is computed from the data."""
    up_to_2 = page.render_fact("loader_summary", dataset(data_loader=loader({0: 100, 1: 50, 2: 190, 4: 195})))
    up_to_4 = page.render_fact("loader_summary", dataset(data_loader=loader({0: 100, 1: 150, 2: 200, 4: 390})))
    level = page.render_fact("loader_summary", dataset(data_loader=loader({0: 100, 1: 100, 2: 190})))
    assert "2 and 4 workers beat the main process alone; 1 worker was slower than it." in up_to_2
    assert "2 workers beat the main process alone; 1 worker did not beat it." in level
    assert "1, 2 and 4 workers beat the main process alone." in up_to_4 and "did not" not in up_to_4
    assert "can only help by overlapping" in up_to_2  # a general truth, not a measured direction


def test_threads_claim_follows_the_data():
    """One thread is only called faster when it measured faster."""
    one_wins = [({"batch": 1, "threads": 1, "width": 512}, 1.0, {}), ({"batch": 1, "threads": 2, "width": 512}, 1.5, {})]
    all_win = [({"batch": 1, "threads": 1, "width": 512}, 2.0, {}), ({"batch": 1, "threads": 2, "width": 512}, 1.0, {})]
    assert "one thread was 1.5× faster (1.5× between the quartiles)" in page.render_section("threads_evidence", dataset(threads=one_wins))
    assert "2 threads were 2.0× faster (2.0× between the quartiles)" in page.render_section("threads_evidence", dataset(threads=all_win))
    assert "one thread was faster at batch 1." in page.render_fact("threads_summary", dataset(threads=one_wins))
    assert "2 threads were faster at batch 1." in page.render_fact("threads_summary", dataset(threads=all_win))


def test_a_doubted_all_thread_point_leaves_the_question_open_unless_one_thread_beats_its_trusted_twin():
    """Where the all-thread point disagrees with the training step's, only a one-thread win over the training step counts."""
    def data(one_thread_s):
        doc = synthetic_doc(step_times={("cpu", 512, 1): 1.0e-3})  # the trusted all-thread measurement
        add_points(doc, "threads", [({"batch": 1, "threads": 1, "width": 512}, one_thread_s, {}),
                                    ({"batch": 1, "threads": 4, "width": 512}, 3.0e-3, {})])  # slowed 3x
        return Dataset([Machine(doc, "fixture", "test")])
    slower, faster = (page.render_section("threads_evidence", data(t)) for t in (2.0e-3, 0.5e-3))
    assert "it cannot say which is faster there" in slower and "one thread was" not in slower
    assert "batch 1 is left open" in page.render_fact("threads_summary", data(2.0e-3))
    assert "one thread was 2.0× faster even than the training-step experiment&#x27;s 1.00 ms" in faster
    won = page.render_fact("one_thread_wins", data(0.5e-3))
    assert "at batch 1 (500 µs, against 1.00 ms for all threads in the training-step experiment)" in won
    assert "own all-thread point is marked ≠. The faster timing stands in" in won  # why a ≠ point may be compared
    never = untrusted.restore(page.render_fact("one_thread_wins", data(2.0e-3)))
    assert "-thread" in never and "no trusted comparison found one thread faster" in never  # scoped to the machine
    slower_twin = synthetic_doc(step_times={("cpu", 512, 1): 9.0e-3})  # the training step is the slowed one
    add_points(slower_twin, "threads", [({"batch": 1, "threads": 1, "width": 512}, 2.0e-3, {}),
                                        ({"batch": 1, "threads": 4, "width": 512}, 3.0e-3, {})])
    kept = page.render_section("threads_evidence", Dataset([Machine(slower_twin, "fixture", "test")]))
    assert "one thread was 1.5× faster (1.5× between the quartiles)" in kept  # its own paired rounds stand
    assert "not counted: the 4-thread point is marked ≠" in kept  # as the sentence under the table says


def test_ddp_claim_follows_the_data():
    """DDP is called slower or faster than one process according to the measurement."""
    def ddp(one, two):
        return [({"setup": "one_process", "processes": 1, "global_batch": 256}, one, {}),
                ({"setup": "ddp", "processes": 2, "global_batch": 256}, two, {}),
                ({"setup": "all_reduce", "processes": 2, "global_batch": 256}, two / 4, {})]
    assert "2.0× slower than one process (2.0× between" in page.render_fact("ddp_summary", dataset(data_parallel=ddp(1.0, 2.0)))
    assert "2.0× faster than one process (2.0× between" in page.render_fact("ddp_summary", dataset(data_parallel=ddp(2.0, 1.0)))


def test_transfer_claim_without_gpu_says_not_applicable():
    """With no GPU, the transfer page says no copy to a GPU was measured, and why, instead of showing numbers."""
    text = page.render_fact("transfer_summary", dataset())
    assert text.startswith("This build measured no copy to a GPU: ") and "GB/s" not in text


def test_a_noisy_copy_is_marked_in_the_transfer_table_and_said_in_its_sentence():
    """A copy whose time was noisy carries its mark in the transfer table (with the key) and "(noisy)" beside its rate
    in the summary; a steady copy carries neither."""
    doc = synthetic_doc(gpu="Fixture GPU")
    add_points(doc, "transfer", [({"device": "cuda", "direction": way, "memory": memory, "bytes": n},
                                  n / 1e10 + 1e-5, {"noisy": n == 4096 and memory == "pinned"})
                                 for way in ("host_to_device", "device_to_host") for memory in ("pinned", "pageable")
                                 for n in (4096, 2**28)])
    data = Dataset([Machine(doc, "fixture", "test")])
    said = page.render_fact("transfer_summary", data)
    # Two samples a point, so every rate is also marked as resting on too few.
    assert said.endswith("copy reached only 393 MB/s (noisy; from too few samples), because every copy has a fixed "
                         "cost.")
    assert "GB/s (from too few samples) from pinned memory" in said
    table = str(page.render_section("transfer", data))
    assert table.count("†</sup>") == 2 and "Noisy (†)" in table  # the pinned 4 kB copy, each way


def test_cache_claim_follows_the_copy_bandwidths():
    """'Slower once the data no longer fits in a cache' appears only when the largest copy was meaningfully slower."""
    def copies(small_seconds):  # a 1 MB copy against a 1 GB one moving 10 GB/s
        return [({"bytes": 5 * 10**5}, small_seconds, {"bytes": 10**6}),
                ({"bytes": 5 * 10**8}, 0.1, {"bytes": 10**9})]
    cached = page.render_fact("cache_versus_memory", dataset(memory_bandwidth=copies(2e-5)))
    flat = page.render_fact("cache_versus_memory", dataset(memory_bandwidth=copies(1e-4)))
    assert "5.0× slower once the data no longer fits in a cache" in cached
    assert "no cache made a difference" in flat and "slower" not in flat


def test_accumulation_claim_follows_the_data():
    """Accumulation is called slower only when the finer split measured slower; memory ratio is computed."""
    def accumulation(whole_s, finest_s):
        return [({"effective_batch": 256, "micro_batch": m, "width": 2048}, t,
                 {"activation_bytes": 2**21 // (256 // m), "micro_batches": 256 // m})
                for m, t in ((256, whole_s), (16, finest_s))]
    slower = page.render_fact("accumulation_summary", dataset(grad_accumulation=accumulation(1.0, 2.5)))
    same = page.render_fact("accumulation_summary", dataset(grad_accumulation=accumulation(1.0, 1.02)))
    assert "16× less" in slower and "2.5× slower (2.5× between the quartiles; timings from too few samples)" in slower
    assert "the same (less than 1.1× apart, or inside the spread)" in same and "slower" not in same


def test_checkpointing_claim_follows_the_data():
    """The memory saved is computed; extra time is claimed only beyond the spread."""
    def checkpoint(off_s, on_s):
        shape = {"depth": 16, "width": 1024, "batch": 64, "segments": 4}
        return [({**shape, "checkpoint": "off"}, off_s, {"activation_bytes": 4000}),
                ({**shape, "checkpoint": "on"}, on_s, {"activation_bytes": 1000})]
    slower = page.render_fact("checkpointing_summary", dataset(checkpointing=checkpoint(1.0, 1.3)))
    same = page.render_fact("checkpointing_summary", dataset(checkpointing=checkpoint(1.0, 1.01)))
    assert "75% less" in slower and "1.3× as long (1.3× between the quartiles" in slower
    assert "did not change beyond the measurements' spread" in same


def test_profile_claim_names_the_largest_and_the_busiest_kind():
    """The kind with the most time and the kind with the most calls are read from the data."""
    kinds = [({"batch": 64, "width": 512, "kind": "matrix products"}, 3e-4, {"calls_per_step": 7, "ops": "mm"}),
             ({"batch": 64, "width": 512, "kind": "bookkeeping"}, 1e-4, {"calls_per_step": 40, "ops": "t"})]
    text = page.render_fact("profile_summary", dataset(step_profile=kinds))
    assert "47 ATen operations" in text and "took the largest share, 75%" in text
    assert "made the most calls, 40 of 47, for 25% of the time" in text


def test_profile_claim_sets_its_count_beside_the_cost_models():
    """Where the same step's counted operations differ from the profiler's calls, the sentence says why the two
    counts differ and gives the cost model's, instead of a bare "nested calls included"."""
    kinds = [({"batch": 64, "width": 512, "kind": "matrix products"}, 3e-4, {"calls_per_step": 7, "ops": "mm"}),
             ({"batch": 64, "width": 512, "kind": "bookkeeping"}, 1e-4, {"calls_per_step": 40, "ops": "t"})]
    step = [({"device": "cpu", "batch": 64, "width": 512}, 5e-4, {"flops": 1e6, "ops": 20, "bytes": 1e5})]
    text = page.render_fact("profile_summary", dataset(step_profile=kinds, training_step=step))
    assert "in 47 ATen operations" in text and "The cost model counts only the 20 a step issues" in text
    assert "nested calls included" not in text


def test_cpu_choice_rule_reads_the_measured_gpu_when_there_is_one():
    """With a measured GPU the rule quotes where its epochs stay ahead; it never says estimate."""
    doc = synthetic_doc(gpu="Fixture GPU")
    add_points(doc, "epoch_time", [({"device": device, "batch": b, "width": 32, "rows": 2048}, t, {})
                                   for b in (1, 4, 16, 64)
                                   for device, t in (("cpu", 0.1), ("cuda", 0.5 if b < 16 else 0.05))])
    data = Dataset([Machine(doc, "f", "t")])
    text, table = page.render_fact("cpu_choice_rule", data), page.render_section("cpu_choice_table", data)
    assert "estimate" not in text and "estimated" not in table
    assert "<td>from batch 16</td>" in bare_cells(table) and "the GPU&#x27;s host" in table


def test_cpu_choice_rule_gives_every_cpu_its_own_row():
    """A second machine's faster CPU gets its own row, with its own (later) crossover."""
    def machine(machine_id, brand, gpu, cpu_s):
        doc = synthetic_doc(machine_id=machine_id, brand=brand, gpu=gpu)
        add_points(doc, "epoch_time", [({"device": d, "batch": b, "width": 32, "rows": 2048}, t, {})
                                       for b in (1, 4, 16, 64, 256)
                                       for d, t in [("cpu", cpu_s)] + ([("cuda", 1.0 / b)] if gpu else [])])
        return Machine(doc, machine_id, "t")
    data = Dataset([machine("slow-host", "Slow CPU", "Fixture GPU", 0.5), machine("fast-cpu", "Fast CPU", None, 0.01)])
    table = page.render_section("cpu_choice_table", data)
    slow, fast = table.split("Slow CPU")[1].split("</tr>")[0], table.split("Fast CPU")[1].split("</tr>")[0]
    assert "from batch 4<" in slow and "from batch 256<" in fast


def test_loader_overlap_claim_follows_the_data():
    """Workers are called faster only when an epoch with them measured faster beyond the spread."""
    def overlap(zero, two):
        return [({"workers": w}, t, {"samples": 1024, "batch": 64, "training_threads": 1})
                for w, t in ((0, zero), (1, zero), (2, two))]
    faster = page.render_fact("loader_overlap_summary", dataset(loader_overlap=overlap(1.0, 0.6)))
    same = page.render_fact("loader_overlap_summary", dataset(loader_overlap=overlap(1.0, 0.99)))
    assert "with 2 workers" in faster and "faster (1.7× between the quartiles). The workers prepared" in faster
    assert "no number of workers made it faster" in same and "prepared the next" not in same


def test_regime_claims_follow_the_model():
    """Steps whose per-operation term dominates are reported overhead-bound, at every width and batch."""
    from test_cost_model import machine_from_model

    data = Dataset([machine_from_model(true_op=1e-3)])  # a millisecond per operation dwarfs the rest
    text = page.render_fact("regimes_summary", data)
    assert text.startswith("By the cost model fitted to the build host's measured training steps, ")
    assert text.endswith("steps are overhead-bound")  # one regime: every step
    shown = str(page.render_section("regimes_by_width", data))  # one label everywhere: a sentence, not a table
    assert "<table" not in shown and "reads overhead-bound, at every width and batch (1–" in shown and "→" not in shown


def _lane(label, machine_id, kind, seconds, estimate=False):
    """A race lane at width 32 with one epoch time per batch (no spread: q1 = q3 = the time)."""
    low, high = (gpu_estimate.FASTER, gpu_estimate.SLOWER) if estimate else (1.0, 1.0)
    return {"label": label, "machine_id": machine_id, "kind": kind, "estimate": estimate, "band": [low, high],
            "epochs": {"32": {str(b): {"seconds": t, "q1": t * low, "q3": t * high} for b, t in seconds.items()}}}


def test_an_estimated_gpus_lead_is_also_set_against_the_other_cpus():
    """A lead over the estimate's own host says how each other CPU fares at that size, ahead, behind or level."""
    from build_hooks.views.race import _against_other_cpus

    estimate = _lane("Est GPU", "host", "GPU", {512: 1.0}, estimate=True)
    lanes = [_lane("Host CPU", "host", "CPU", {512: 5.0}), estimate,
             _lane("Quick CPU", "quick", "CPU", {512: 0.2}), _lane("Close CPU", "close", "CPU", {512: 1.5})]
    text = _against_other_cpus(lanes, estimate, "32", "512")
    assert "Host CPU" not in text
    assert "5.0× ahead of it" in text and "1.5× apart, level" in text


def test_the_estimate_trails_a_faster_cpu_at_the_sizes_named():
    """Another CPU beating the estimate beyond its band is counted at each size and named by machine and width."""
    from build_hooks.views.race import _estimate_trails, _sizes_words

    estimate = _lane("Est GPU", "host", "GPU", {1: 1.0, 2: 1.0, 4: 1.0}, estimate=True)
    lanes = [_lane("Host CPU", "host", "CPU", {1: 2.0, 2: 2.0, 4: 2.0}), estimate,
             _lane("Quick CPU", "quick", "CPU", {1: 0.1, 2: 0.1, 4: 0.9})]
    lost, sizes, beaten = _estimate_trails(lanes)
    assert (lost, sizes) == (2, 3) and _sizes_words(beaten["quick"]) == "width 32: batches 1 and 2"
    assert _estimate_trails(lanes[:2])[2] == {}


def test_the_workload_gap_is_stated_format_for_format():
    """The CPU's fp32 and bf16 rows come first, then the H200's FP32 peak and its bf16 peak, each named by format."""
    from conftest import complete_doc

    text = page.render_section("workload_table", Dataset([Machine(complete_doc(), "f", "t")]))
    cpu, cpu_bf16, fp32, bf16 = text.split("<tbody>")[1].split("</tr>")[:4]
    assert "fp32 (measured" in cpu and "bf16 (measured: one 8×8 product)" in cpu_bf16
    assert "plain FP32 (published peak)" in fp32 and "67.0 TFLOP/s" in fp32
    assert "bf16 tensor cores, dense (published peak)" in bf16


def test_the_inference_ratio_is_given_for_every_cpu():
    """Batch-1 step over forward pass is tabled for every machine that measured both: it depends on the CPU."""
    from conftest import complete_doc

    data = Dataset([Machine(complete_doc(machine_id=f"m{i}"), f"m{i}", "t") for i in range(2)])
    shown = page.render_section("inference_versus_step", data)
    assert shown.count("<tr>") == 3 and shown.count("×") >= 2  # a head, and one row with its ratio per machine
    assert page.render_section("inference_versus_step", Dataset(data.machines[:1])).count("<tr>") == 2


def test_an_estimate_bounded_by_its_host_everywhere_says_the_datasheet_changes_nothing():
    """When issuing on the host outlasts the modelled GPU at every size, the sentence says so and counts the sizes."""
    from conftest import complete_doc

    text = page.render_fact("gpu_estimate_host_bound", Dataset([Machine(complete_doc(), "f", "t")]))
    assert text.startswith("at every one of the ") and "change none of its numbers" in text


def test_a_cpu_control_that_moved_on_another_machine_is_named_as_state_not_sync():
    """Every CPU control gets a row: one whose two loss-reading ways differ beyond the spread has its difference put
    down to its state; a steady one reads about the same."""
    def machine(machine_id, every):
        doc = synthetic_doc(machine_id=machine_id, brand=machine_id)
        add_points(doc, "sync_cost", [({"read_loss": "every_step"}, every, {}), ({"read_loss": "on_device"}, 1e-3, {})])
        return Machine(doc, machine_id, "t")
    same = str(page.render_section("sync_answer", Dataset([machine("Host", 1e-3), machine("Steady", 1e-3)])))
    moved = str(page.render_section("sync_answer", Dataset([machine("Host", 1e-3), machine("Moved", 2e-3)])))
    assert "Steady" in untrusted_restored(same) and "no queue:" not in same and "about the same" in same
    assert "Moved" in untrusted_restored(moved) and "different, but a CPU has no queue: the machine" in moved


def untrusted_restored(text: str) -> str:
    """A fact's text with its placeholders turned back into the values they stand for."""
    from build_hooks import untrusted

    return untrusted.restore(text)


def test_the_tiny_operation_is_named_and_set_beside_the_cheapest_product():
    """The call-overhead sentence says which operation it timed and the per-call time of the smallest product."""
    data = dataset(call_overhead=[({"op": "add_"}, 8e-6, {})],
                   matmul_shapes=[({"side": 8, "calls": 1000}, 2e-3, {"flops": 1000 * 2 * 8**3}),
                                  ({"side": 64, "calls": 10}, 1e-3, {"flops": 10 * 2 * 64**3})])
    text = page.render_fact("call_overhead", data)
    assert "adding the number 1 in place to a one-element tensor" in text and "8×8 matrix products" in text
    assert "2.00 µs each" in text


def test_a_profiled_kind_the_step_never_ran_shows_no_time():
    """On All measurements, a profile kind with no calls says so instead of printing its placeholder time."""
    from build_hooks.views.reference import experiment_table

    data = dataset(transformer_profile=[({"model": "mlp", "kind": "attention"}, 1e-9, {"calls_per_step": 0, "ops": "none"}),
                                        ({"model": "mlp", "kind": "matrix products"}, 1e-4, {"calls_per_step": 6, "ops": "mm"})])
    table = experiment_table(data.machines[0], "transformer_profile")
    assert "none in this step" in table and "1.00 ns" not in table


def test_a_size_chosen_at_run_time_is_shown_beside_the_point():
    """On All measurements, precision's fitted sizes (stored with each point, not in its params) get a column."""
    from build_hooks.views.reference import experiment_table

    data = dataset(precision=[({"device": "cpu", "dtype": "fp32", "op": "matmul"}, 1e-3, {"flops": 2 * 256**3, "n": 256}),
                              ({"device": "cpu", "dtype": "fp32", "op": "train_step"}, 5e-3, {"batch": 64, "width": 512})])
    table = bare_cells(experiment_table(data.machines[0], "precision"))
    assert "<th>size</th>" in table and "<td>n = 256</td>" in table and "<td>batch = 64, width = 512</td>" in table
    assert "<th>size" not in experiment_table(dataset(call_overhead=[({"op": "add_"}, 8e-6, {})]).machines[0],
                                                   "call_overhead")


def test_a_time_per_sample_says_so_beside_its_batch():
    """A loader's median is per sample, so a row that names its batch says "per sample" after the time."""
    from build_hooks.views.reference import experiment_table

    data = dataset(data_loader=[({"device": "cpu", "workers": 0}, 6e-4, {"per": "sample", "batch": 64})])
    assert "µs per sample<sup" in experiment_table(data.machines[0], "data_loader")


def test_gpu_estimate_op_check_sets_the_cost_per_operation_against_the_fastest_cpu_step(monkeypatch):
    """The host side of the estimate is set against the fastest CPU step per operation; "only" marks a cheaper step."""
    from conftest import complete_doc

    data = Dataset([Machine(complete_doc(), "f", "t")])
    for charge, cheaper in ((1.0, True), (1e-12, False)):  # a charge above any real step, then below any
        monkeypatch.setattr(gpu_estimate, "host_op_seconds", lambda machine, charge=charge: charge)
        text = page.render_fact("gpu_estimate_op_check", data)
        assert text.startswith("The estimate charges ") and "fastest whole CPU step takes " in text
        assert ("step takes only " in text) == cheaper


def test_a_fit_over_steps_with_one_operation_count_says_it_cannot_separate_the_two_costs():
    """When every counted step issues the same operations, t_op is said to be a per-step constant in disguise."""
    from conftest import complete_doc

    text = page.render_fact("cost_model_ops_constant", Dataset([Machine(complete_doc(), "f", "t")]))
    assert text.startswith("Every step measured here issues the same 8 operations")


def test_the_faqs_one_thread_answer_counts_every_machine_in_the_data(monkeypatch):
    """"Not in this build's data" must hold for all of it: a one-thread lead on a machine no lesson page draws
    still makes the FAQ's answer a yes that names it."""
    from build_hooks.views import threads
    from conftest import complete_doc

    first, second = complete_doc(machine_id="a"), complete_doc(machine_id="b")
    second["machine_info"]["cpu"]["brand"] = "Other CPU"
    data = Dataset([Machine(first, "a", "this build host"), Machine(second, "b", "committed")])
    monkeypatch.setattr(threads, "_one_thread_leads", lambda m: ([1], {}, []) if m.id == "b" else ([], {}, []))
    monkeypatch.setattr(Dataset, "shown", lambda self, group=None: self.machines[:1])  # pages draw the host only
    answer = page.render_fact("one_thread_answer", data)
    assert answer.startswith("Yes, on 1 machine in this build's data: ") and "at batch 1" in answer
    assert "training step's" not in answer
    # Where its own all-thread point disagreed and the training step's stood in, the answer says which it used.
    monkeypatch.setattr(threads, "_one_thread_leads", lambda m: ([1], {4: {}}, []) if m.id == "b" else ([], {}, []))
    said = page.render_fact("one_thread_answer", data)
    assert said.startswith("Yes, on 1 machine") and "at batch 1 and 4. For " in said and said.endswith(
        ", the all-thread time comes from the training-step experiment. Its own all-thread run disagreed with that "
        "one, so it was set aside")
    # Where every yes rests on that stand-in, the answer's first words say it compares two experiments, with both times.
    monkeypatch.setattr(threads, "_one_thread_leads",
                        lambda m: ([], {4: {"median": 1e-3}}, []) if m.id == "b" else ([], {}, []))
    monkeypatch.setattr(threads, "_one_thread_time", lambda machine, batch: 5e-4)
    monkeypatch.setattr(threads, "_all_thread_time", lambda machine, batch: 2e-3)
    only = page.render_fact("one_thread_answer", data)
    assert only.startswith("Possibly, on 1 machine in this build's data: ")
    assert " at batch 4. In its threads run, one thread took 500 µs" in only
    assert ("In its threads run, one thread took 500 µs at batch 4 and all threads 2.00 ms. The training-step run "
            "timed all threads at 1.00 ms.") in only
    assert only.endswith("With the two runs at odds, treat it as unproven")


def test_the_step_profile_table_leaves_out_a_kind_the_step_never_ran():
    """The fixes page's profile table has no row for a kind with no calls (its stored time is a placeholder)."""
    data = dataset(step_profile=[({"batch": 64, "width": 512, "kind": "everything else"}, 1e-9,
                                  {"calls_per_step": 0, "ops": "none"}),
                                 ({"batch": 64, "width": 512, "kind": "matrix products"}, 1e-4,
                                  {"calls_per_step": 6, "ops": "mm"})])
    table = str(page.render_section("step_profile", data))
    assert "matrix products" in table and "everything else" not in table and "1.00 ns" not in table


def test_a_gpu_read_slower_in_every_round_but_under_the_rule_is_called_consistent_not_the_same():
    """A GPU whose every-step read is slower in every paired round, by less than the meaningful ratio, is said to be
    slower in all its rounds (small, but consistent); rounds that disagree stay "about the same"."""
    def said(every_rounds: list[float]) -> str:
        doc = synthetic_doc(machine_id="gpu-box", brand="Box", gpu="Fixture GPU")
        add_points(doc, "sync_cost", [({"device": "cuda", "read_loss": "every_step"}, 1.05e-3, {}),
                                      ({"device": "cuda", "read_loss": "on_device"}, 1e-3, {})])
        for bench in doc["benchmarks"]:
            if bench["group"] == "sync_cost":
                every = bench["params"]["read_loss"] == "every_step"
                bench["stats"]["round_medians"] = every_rounds if every else [1e-3, 1e-3, 1e-3]
        return str(page.render_section("sync_answer", Dataset([Machine(doc, "g", "t")])))

    consistent = said([1.04e-3, 1.05e-3, 1.06e-3])
    assert "1.05× (" in consistent and "slower in all 3 rounds, but under 1.1×: too small to count" in consistent
    mixed = said([0.97e-3, 1.05e-3, 1.12e-3])
    assert "about the same" in mixed and "in all 3 rounds" not in mixed


def test_a_cpu_control_whose_medians_differ_but_whose_rounds_disagree_is_named_as_unsteady():
    """Another machine's CPU control with medians 2× apart but a round that disagrees is named: its table shows a gap
    the rule does not call a difference, and the sentence puts it down to the machine's state."""
    def machine(machine_id, every, rounds):
        doc = synthetic_doc(machine_id=machine_id, brand=machine_id)
        add_points(doc, "sync_cost", [({"read_loss": "every_step"}, every, {}), ({"read_loss": "on_device"}, 1e-3, {})])
        for bench in doc["benchmarks"]:
            if bench["group"] == "sync_cost":
                bench["stats"]["round_medians"] = rounds if bench["params"]["read_loss"] == "every_step" else [1e-3] * 3
        return Machine(doc, machine_id, "t")
    said = str(page.render_section("sync_answer", Dataset([machine("Host", 1e-3, [1e-3] * 3),
                                                           machine("Wobbly", 2e-3, [0.9e-3, 2e-3, 3e-3])])))
    assert "Wobbly" in untrusted_restored(said) and "rounds disagree: the machine" in said
